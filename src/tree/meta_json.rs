//! `meta.json`: what an array is, rendered from its frame and metalayers
//! (`blosc2fs info` prints the same document).

use serde_json::{json, Map, Value as Json};

use crate::format::codec::codec_name as codec_name_of;
use crate::format::filter::filter_name;
use crate::format::msgpack;
use crate::format::{simple_dtype_itemsize, Array, Flavor, Shape, MAX_VLMETA_BYTES};

/// Name of the metadata format: "b2nd", "caterva" or "frame".
pub fn format_name(array: &Array) -> &'static str {
    match array.shape() {
        Shape::Nd { meta, .. } if meta.flavor == Flavor::B2nd => "b2nd",
        Shape::Nd { .. } => "caterva",
        Shape::Plain { .. } => "frame",
    }
}

/// The codec named by the frame header (ids 0-5 are C-Blosc2's codec ids,
/// 6 says the id is in the user-codec byte).
pub fn codec_name(array: &Array) -> String {
    let frame = array.frame();
    match frame.codec_code {
        0..=5 => codec_name_of(frame.codec_code),
        6 => codec_name_of(frame.udcodec),
        other => format!("unknown codec {other}"),
    }
}

/// The `meta.json` document.
pub fn render(array: &Array) -> Json {
    let f = array.frame();
    let (shape, chunkshape, blockshape, dtype) = match array.shape() {
        Shape::Nd { meta, .. } => (json!(meta.shape), json!(meta.chunkshape), json!(meta.blockshape), json!(meta.dtype)),
        Shape::Plain { .. } => (json!([array.data_len() / f.typesize as u64]), Json::Null, Json::Null, Json::Null),
    };
    let filters: Vec<Json> = f
        .filters
        .iter()
        .zip(&f.filters_meta)
        .filter(|(&id, _)| id != 0)
        .map(|(&id, &meta)| json!({ "id": id, "name": filter_name(id), "meta": meta }))
        .collect();
    let mut metalayers = Map::new();
    for (name, bytes) in &f.metalayers {
        let value = if bytes.len() > MAX_VLMETA_BYTES {
            json!({ "bytes": bytes.len(), "note": "too large to show" })
        } else {
            msgpack::parse(bytes, "metalayer").map(|v| msgpack::to_json(&v)).unwrap_or_else(|_| json!({ "base64": msgpack::base64(bytes) }))
        };
        metalayers.insert(name.clone(), value);
    }
    let vlmeta: Map<String, Json> = f.vlmeta.iter().cloned().collect();
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
        "clevel": f.clevel,
        "filters": filters,
        "splitmode": match f.splitmode { 1 => "always", 2 => "never", 3 => "auto", _ => "forward_compat" },
        "use_dict": f.use_dict,
        "chunksize": f.chunksize,
        "blocksize": f.blocksize,
        "frame_version": f.version,
        "metalayers": metalayers,
        "vlmeta": vlmeta,
    });
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
