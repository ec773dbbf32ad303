//! The embed map of an EmbedStore frame (`embed.b2e`, or a `.b2e` file):
//! which key's frame lies at which bytes of the frame's decoded data.
//!
//! The map is the vlmeta `estore_metadata` = `{"embed_map": {key: {"offset",
//! "length"} | {"urlbase", "path"}}, "current_offset"}`; the decoded data is
//! the frames of the embedded values back to back (with gaps where values
//! were replaced). Every entry is checked to lie inside the decoded data.

use serde_json::Value as Json;

use crate::format::{PResult, Problem};

/// Largest decoded embed frame accepted (it holds only small values).
pub const MAX_EMBED_BYTES: u64 = 256 << 20;

/// Where one embedded key's value is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmbedValue {
    /// A frame at `offset..offset + length` of the decoded data.
    Frame {
        /// First byte in the decoded data.
        offset: u64,
        /// Length of the frame.
        length: u64,
    },
    /// A reference to a remote array (not readable here).
    Remote {
        /// The server's base URL.
        urlbase: String,
        /// The array's path on the server.
        path: String,
    },
}

/// The entries of an embed map, checked against `data_len` decoded bytes:
/// (key, value) in stored order. An error names the first bad key.
pub fn parse_embed_map(
    vlmeta: &[(String, Json)],
    data_len: u64,
) -> PResult<Vec<(String, EmbedValue)>> {
    let Some((_, meta)) = vlmeta.iter().find(|(n, _)| n == "estore_metadata") else {
        return Ok(Vec::new());
    };
    if let Some(err) = meta.get("error") {
        return Err(Problem::corrupt(
            "embed map",
            format!("estore_metadata: {err}"),
        ));
    }
    let map = meta
        .get("embed_map")
        .and_then(Json::as_object)
        .ok_or_else(|| Problem::corrupt("embed map", "estore_metadata has no embed_map object"))?;
    let mut out = Vec::with_capacity(map.len());
    for (key, entry) in map {
        let bad = |detail: &str| Problem::corrupt("embed map", format!("key {key}: {detail}"));
        if let Some(urlbase) = entry
            .get("urlbase")
            .and_then(Json::as_str)
            .filter(|s| !s.is_empty())
        {
            let path = entry.get("path").and_then(Json::as_str).unwrap_or_default();
            out.push((
                key.clone(),
                EmbedValue::Remote {
                    urlbase: urlbase.to_string(),
                    path: path.to_string(),
                },
            ));
            continue;
        }
        let offset = entry
            .get("offset")
            .and_then(Json::as_u64)
            .ok_or_else(|| bad("no offset"))?;
        let length = entry
            .get("length")
            .and_then(Json::as_u64)
            .ok_or_else(|| bad("no length"))?;
        let end = offset
            .checked_add(length)
            .ok_or_else(|| bad("offset overflows"))?;
        if end > data_len {
            return Err(bad(&format!(
                "bytes {offset}..{end} lie outside the embed frame's {data_len} decoded bytes"
            )));
        }
        out.push((key.clone(), EmbedValue::Frame { offset, length }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_inside_and_outside() {
        let vl = vec![(
            "estore_metadata".to_string(),
            json!({"embed_map": {"/a": {"offset": 0, "length": 10}, "/r": {"urlbase": "https://x", "path": "p"}}, "current_offset": 10}),
        )];
        let map = parse_embed_map(&vl, 10).unwrap();
        assert_eq!(
            map[0],
            (
                "/a".to_string(),
                EmbedValue::Frame {
                    offset: 0,
                    length: 10
                }
            )
        );
        assert!(matches!(map[1].1, EmbedValue::Remote { .. }));
        let err = parse_embed_map(&vl, 9).unwrap_err();
        assert_eq!(
            err.to_string(),
            "corrupt embed map: key /a: bytes 0..10 lie outside the embed frame's 9 decoded bytes"
        );
        assert!(parse_embed_map(&[], 0).unwrap().is_empty());
    }
}
