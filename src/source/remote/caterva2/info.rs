//! What `GET /api/info/PATH` says of a path: a group (a folder, an HDF5
//! group, a store), or a dataset with its shape, grid, dtype and codec
//! settings, whether the server serves it in byte ranges (`accept_ranges:
//! "bytes"`: a stored frame, or a `.b2z` leaf kept whole), and the ETag
//! that changes whenever the bytes behind it do.

use std::time::Instant;

use serde_json::Value as Json;

use crate::format::Description;

/// A path as `/api/info` describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetInfo {
    /// What it is.
    pub kind: InfoKind,
    /// The ETag of the answer (the dataset's, or its container file's).
    pub etag: Option<String>,
    /// When the request was sent: the ETag was current at some moment
    /// after this (a served dataset counts its TTL from here).
    pub asked: Instant,
}

/// The kinds of path `/api/info` tells apart.
#[derive(Debug, Clone, PartialEq)]
pub enum InfoKind {
    /// A folder, an HDF5 group or a store: it is listed, not read.
    Group,
    /// An array.
    Dataset {
        /// Its shape, grid, dtype, codec and vlmeta.
        description: Description,
        /// Served in byte ranges (`Some(true)`: a stored frame, read as
        /// one), not (`Some(false)`), or not said (a store's leaf may be
        /// either: a ranged read tells).
        ranges: Option<bool>,
    },
    /// A frame without N-d metadata (an SChunk: `.b2frame`): readable only
    /// as stored, in byte ranges.
    Frame {
        /// As for [`InfoKind::Dataset`].
        ranges: Option<bool>,
    },
    /// Something else the server describes (a table, an object array...):
    /// the text says what.
    Other(String),
}

fn dims(v: &Json) -> Option<Vec<u64>> {
    v.as_array()?.iter().map(Json::as_u64).collect()
}

/// The NumPy dtype string of a dtype as the server names it (`float64`,
/// `int16`, `|S3`, `<U4`...).
fn numpy_dtype(name: &str) -> Option<String> {
    let typed = |kind: char, bits: &str| -> Option<String> {
        let bytes = bits.parse::<u32>().ok()? / 8;
        let order = if bytes == 1 { '|' } else { '<' };
        Some(format!("{order}{kind}{bytes}"))
    };
    match name {
        "bool" => Some("|b1".into()),
        // A simple dtype with its byte order, or a structured one's description list.
        _ if name.starts_with(['<', '>', '|', '=', '[']) => Some(name.to_string()),
        _ => {
            let (kind, bits) = if let Some(b) = name.strip_prefix("float") {
                ('f', b)
            } else if let Some(b) = name.strip_prefix("complex") {
                ('c', b)
            } else if let Some(b) = name.strip_prefix("uint") {
                ('u', b)
            } else if let Some(b) = name.strip_prefix("int") {
                ('i', b)
            } else {
                return None;
            };
            typed(kind, bits)
        }
    }
}

impl DatasetInfo {
    /// Parse an answer's JSON body, with the answer's ETag header, to a
    /// request sent at `asked`.
    pub fn parse(body: &Json, etag: Option<String>, asked: Instant) -> DatasetInfo {
        let kind = if body.get("kind").and_then(Json::as_str) == Some("group") {
            InfoKind::Group
        } else if let (Some(shape), Some(dtype)) = (
            body.get("shape").and_then(dims),
            body.get("dtype").and_then(Json::as_str),
        ) {
            let chunkshape = body.get("chunks").and_then(dims);
            let blockshape = body.get("blocks").and_then(dims);
            match (numpy_dtype(dtype), chunkshape, blockshape) {
                (Some(dtype), Some(chunkshape), Some(blockshape)) => {
                    let cparams = body.pointer("/schunk/cparams");
                    let num = |k: &str| {
                        cparams
                            .and_then(|c| c.get(k))
                            .and_then(Json::as_u64)
                            .unwrap_or(0)
                    };
                    let vlmeta = body
                        .pointer("/schunk/vlmeta")
                        .and_then(Json::as_object)
                        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                        .unwrap_or_default();
                    let typesize = Some(num("typesize")).filter(|&t| t > 0);
                    let description = Description {
                        shape,
                        chunkshape,
                        blockshape,
                        dtype,
                        typesize,
                        codec: num("codec").min(255) as u8,
                        clevel: num("clevel").min(15) as u8,
                        vlmeta,
                    };
                    let ranges = body
                        .get("accept_ranges")
                        .and_then(Json::as_str)
                        .map(|r| r == "bytes");
                    InfoKind::Dataset {
                        description,
                        ranges,
                    }
                }
                (None, _, _) => {
                    InfoKind::Other(format!("a dataset of dtype {dtype:?}, which is not read"))
                }
                _ => InfoKind::Other("a dataset without a chunk and block grid".into()),
            }
        } else if body.get("nchunks").is_some() && body.get("cparams").is_some() {
            InfoKind::Frame {
                ranges: body
                    .get("accept_ranges")
                    .and_then(Json::as_str)
                    .map(|r| r == "bytes"),
            }
        } else {
            InfoKind::Other("neither a group nor an array".into())
        };
        DatasetInfo { kind, etag, asked }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn datasets_groups_and_others() {
        let body = json!({"shape":[20,30],"chunks":[7,11],"blocks":[7,11],"dtype":"float32","schunk":{"cparams":{"codec":5,"clevel":5},"vlmeta":{"units":"K"}},"accept_ranges":null});
        let info = DatasetInfo::parse(&body, Some("\"e\"".into()), Instant::now());
        let InfoKind::Dataset {
            description,
            ranges,
        } = &info.kind
        else {
            panic!("{info:?}")
        };
        assert_eq!(*ranges, None);
        assert_eq!(
            (
                description.dtype.as_str(),
                description.codec,
                &description.chunkshape
            ),
            ("<f4", 5, &vec![7, 11])
        );
        assert_eq!(description.vlmeta, vec![("units".to_string(), json!("K"))]);
        let stored = DatasetInfo::parse(
            &json!({"shape":[],"chunks":[],"blocks":[],"dtype":"|S3","accept_ranges":"bytes"}),
            None,
            Instant::now(),
        );
        assert!(
            matches!(stored.kind, InfoKind::Dataset { ranges: Some(true), ref description } if description.dtype == "|S3")
        );
        assert_eq!(
            DatasetInfo::parse(&json!({"kind":"group","size":0}), None, Instant::now()).kind,
            InfoKind::Group
        );
        assert!(matches!(
            DatasetInfo::parse(&json!({"shape":[2],"dtype":"object"}), None, Instant::now()).kind,
            InfoKind::Other(_)
        ));
        let frame = DatasetInfo::parse(
            &json!({"cbytes":10,"nchunks":2,"cparams":{"codec":5},"accept_ranges":"bytes"}),
            None,
            Instant::now(),
        );
        assert_eq!(frame.kind, InfoKind::Frame { ranges: Some(true) });
        assert_eq!(numpy_dtype("int8").as_deref(), Some("|i1"));
        assert_eq!(numpy_dtype("uint64").as_deref(), Some("<u8"));
        assert_eq!(numpy_dtype("complex128").as_deref(), Some("<c16"));
        assert_eq!(numpy_dtype("bool").as_deref(), Some("|b1"));
        assert_eq!(
            numpy_dtype("[('a', '<i4')]").as_deref(),
            Some("[('a', '<i4')]")
        );
        assert_eq!(numpy_dtype("object"), None);
    }
}
