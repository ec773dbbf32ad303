//! `meta.json`: what an array is, rendered from its frame and metalayers
//! (`blosc2fs info` prints the same document).

use serde_json::{json, Map, Value as Json};

use crate::format::codec::codec_name as codec_name_of;
use crate::format::filter::filter_name;
use crate::format::msgpack;
use crate::format::{
    codec_support, filter_support, simple_dtype_itemsize, Array, Elsewhere, Flavor, Shape, Support,
    MAX_VLMETA_BYTES,
};

use super::redact::redact_json;

/// Name of the metadata format: "b2nd", "caterva" or "frame".
pub fn format_name(array: &Array) -> &'static str {
    match array.shape() {
        Shape::Nd { meta, .. } if meta.flavor == Flavor::B2nd => "b2nd",
        Shape::Nd { .. } => "caterva",
        Shape::Plain { .. } => "frame",
    }
}

/// The codec id named by the frame header (ids 0-5 are C-Blosc2's codec
/// ids, 6 says the id is in the user-codec byte); None for a reserved code.
fn codec_id(array: &Array) -> Option<u8> {
    let frame = array.frame();
    match frame.codec_code {
        0..=5 => Some(frame.codec_code),
        6 => Some(frame.udcodec),
        _ => None,
    }
}

/// The codec named by the frame header.
pub fn codec_name(array: &Array) -> String {
    match codec_id(array) {
        Some(id) => codec_name_of(id),
        None => format!("unknown codec {}", array.frame().codec_code),
    }
}

/// Whether blosc2fs decodes what the frame header declares: the codec and
/// each filter (chunks are not scanned: one that differs is reported when read).
/// Returns the sentences saying what it cannot decode (empty when all is fine).
pub fn unsupported(array: &Array) -> Vec<String> {
    let f = array.frame();
    let mut out = Vec::new();
    let codec = codec_id(array)
        .map(codec_support)
        .unwrap_or(Support::Unknown);
    if !codec.decoded() {
        let id = codec_id(array)
            .map(|id| id.to_string())
            .unwrap_or_else(|| format!("format code {}", f.codec_code));
        out.push(format!("codec {} (id {id}) {codec}", codec_name(array)));
    }
    for &id in &f.filters {
        let support = filter_support(id);
        if !support.decoded() {
            out.push(format!("filter {} (id {id}) {support}", filter_name(id)));
        }
    }
    out
}

/// The `values` object: whether the file holds the array's values, and if
/// not, where they are (the recipe or reference, secrets redacted).
fn values(array: &Array) -> Json {
    let Some(elsewhere) = array.values_elsewhere() else {
        let uninit = array.uninitialized_chunks();
        let mut doc = json!({ "stored": true, "uninitialized_chunks": uninit });
        if uninit > 0 {
            doc["note"] = json!(format!(
                "{uninit} chunks were never written: they read as zeros, like holes in a sparse file (C-Blosc2 leaves their contents undefined)"
            ));
        }
        return doc;
    };
    let f = array.frame();
    let mut doc = json!({
        "stored": false,
        "what": elsewhere.to_string(),
        "marker": elsewhere.marker(),
        "note": "the file holds no values, so this folder has no data files",
    });
    if array.is_produced() && *elsewhere == Elsewhere::ServedRegions {
        doc["served"] = json!(true);
        doc["note"] = json!("read chunk by chunk as the regions the server builds (GET /api/fetch?slice_=), each checked against the dataset's ETag");
    } else if array.is_produced() {
        doc["computed"] = json!(true);
        doc["note"] = json!("computed on read from the operands below, block by block, with python-blosc2's dtype rules");
    }
    if let Some(name) = elsewhere.recipe_vlmeta() {
        if let Some((_, recipe)) = f.vlmeta.iter().find(|(n, _)| n == name) {
            for key in ["expression", "UDF", "name", "operands", "kind"] {
                if let Some(v) = recipe.get(key) {
                    doc[key] = v.clone();
                }
            }
            doc["recipe"] = recipe.clone();
        }
    }
    for name in ["proxy-source", "proxy"] {
        if let Some(bytes) = f.metalayer(name) {
            if let Ok(v) = msgpack::parse(bytes, "metalayer") {
                doc["source"] = msgpack::to_json(&v);
            }
        }
    }
    if let Some((_, dataset)) = f.vlmeta.iter().find(|(n, _)| n == "_dsetname") {
        doc["hdf5_dataset"] = dataset.clone();
    }
    redact_json(&mut doc);
    doc
}

/// The `meta.json` document.
pub fn render(array: &Array) -> Json {
    let f = array.frame();
    let (shape, chunkshape, blockshape, dtype) = match array.shape() {
        Shape::Nd { meta, .. } => (
            json!(meta.shape),
            json!(meta.chunkshape),
            json!(meta.blockshape),
            json!(meta.dtype),
        ),
        Shape::Plain { .. } => (
            json!([array.data_len() / f.typesize as u64]),
            Json::Null,
            Json::Null,
            Json::Null,
        ),
    };
    let filters: Vec<Json> = f
        .filters
        .iter()
        .zip(&f.filters_meta)
        .filter(|(&id, _)| id != 0)
        .map(|(&id, &meta)| json!({ "id": id, "name": filter_name(id), "meta": meta, "decoded": filter_support(id).decoded() }))
        .collect();
    let mut metalayers = Map::new();
    for (name, bytes) in &f.metalayers {
        let value = if bytes.len() > MAX_VLMETA_BYTES {
            json!({ "bytes": bytes.len(), "note": "too large to show" })
        } else {
            msgpack::parse(bytes, "metalayer")
                .map(|v| msgpack::to_json(&v))
                .unwrap_or_else(|_| json!({ "base64": msgpack::base64(bytes) }))
        };
        metalayers.insert(name.clone(), value);
    }
    let mut metalayers = Json::Object(metalayers);
    redact_json(&mut metalayers);
    let mut vlmeta = Json::Object(f.vlmeta.iter().cloned().collect());
    redact_json(&mut vlmeta);
    let unsupported = unsupported(array);
    let mut doc = json!({
        "format": format_name(array),
        "storage": if f.sparse { "sparse" } else { "contiguous" },
        "shape": shape,
        "chunkshape": chunkshape,
        "blockshape": blockshape,
        "dtype": dtype,
        "itemsize": f.typesize,
        "nchunks": array.nchunks(),
        "nbytes": array.data_len(),
        "cbytes": f.cbytes,
        "codec": codec_name(array),
        "codec_decoded": codec_id(array).map(codec_support).unwrap_or(Support::Unknown).decoded(),
        "clevel": f.clevel,
        "filters": filters,
        "splitmode": match f.splitmode { 1 => "always", 2 => "never", 3 => "auto", _ => "forward_compat" },
        "use_dict": f.use_dict,
        "chunksize": f.chunksize,
        "blocksize": f.blocksize,
        "frame_version": f.version,
        "metalayers": metalayers,
        "vlmeta": vlmeta,
        "decodable": unsupported.is_empty(),
        "values": values(array),
    });
    if !unsupported.is_empty() {
        doc["unsupported"] = json!(unsupported);
    }
    if let (Shape::Nd { meta, .. }, Some(obj)) = (array.shape(), doc.as_object_mut()) {
        if let Some(declared) = meta.dtype.as_deref().and_then(simple_dtype_itemsize) {
            obj.insert("dtype_itemsize".into(), json!(declared));
            if declared != f.typesize as u64 {
                obj.insert(
                    "note".into(),
                    json!(format!("declared dtype {} has items of {declared} bytes but the frame's typesize is {}; the data layout follows the typesize", meta.dtype.as_deref().unwrap_or(""), f.typesize)),
                );
            }
        }
    }
    doc
}

/// Mark `doc` (an array's `meta.json`) as a saved expression left
/// uncomputed, saying why: `values.computed` false, `values.why_not_computed`
/// the reason. `blosc2fs info` and a mount's folder show the same fields.
pub fn mark_not_computed(doc: &mut Json, why: &str) {
    if let Some(values) = doc.get_mut("values").and_then(Json::as_object_mut) {
        values.insert("computed".into(), Json::Bool(false));
        values.insert("why_not_computed".into(), why.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::testing::fixture;

    /// The fields a user reads first, against the fixture manifest (what
    /// python-blosc2 wrote): dtype_le_f8.b2nd is (33, 21) '<f8' in (12, 8)
    /// chunks of (5, 3) blocks, zlib + shuffle.
    #[test]
    fn describes_a_b2nd_array_as_written() {
        let doc = render(&fixture("dtype_le_f8.b2nd"));
        assert_eq!(doc["format"], "b2nd");
        assert_eq!(doc["storage"], "contiguous");
        assert_eq!(doc["shape"], json!([33, 21]));
        assert_eq!(doc["chunkshape"], json!([12, 8]));
        assert_eq!(doc["blockshape"], json!([5, 3]));
        assert_eq!(doc["dtype"], "<f8");
        assert_eq!(doc["itemsize"], 8);
        assert_eq!(doc["nchunks"], 9);
        assert_eq!(doc["nbytes"], 33 * 21 * 8);
        assert_eq!(doc["codec"], "zlib");
        assert_eq!(doc["clevel"], 5);
        assert_eq!(
            doc["filters"],
            json!([{ "id": 1, "name": "shuffle", "meta": 0, "decoded": true }])
        );
        assert_eq!(doc["decodable"], true);
        assert!(doc.get("unsupported").is_none());
    }

    #[test]
    fn an_uncomputed_expression_says_why_in_values() {
        let mut doc = render(&fixture("frame_f32.b2frame"));
        mark_not_computed(&mut doc, "an operand is missing");
        assert_eq!(doc["values"]["computed"], false);
        assert_eq!(doc["values"]["why_not_computed"], "an operand is missing");
        assert_eq!(doc["values"]["stored"], true, "the rest of values stays");
    }

    /// A plain frame has no b2nd shape: one axis of items, no dtype.
    #[test]
    fn describes_a_plain_frame() {
        let doc = render(&fixture("frame_f32.b2frame"));
        assert_eq!(doc["shape"], json!([2500]));
        assert_eq!(
            (doc["chunkshape"].is_null(), doc["dtype"].is_null()),
            (true, true)
        );
        assert_eq!(
            (
                doc["itemsize"].as_u64(),
                doc["nchunks"].as_u64(),
                doc["codec"].as_str()
            ),
            (Some(4), Some(3), Some("zstd"))
        );
    }
}
