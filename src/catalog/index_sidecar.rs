//! Which local arrays are index sidecars: the `<stem>.__index__.*.b2nd`
//! arrays python-blosc2 writes beside an indexed NDArray `<stem>.b2nd`
//! (`create_index`), named by that array's `blosc2_indexes` vlmeta. They
//! are no data of their own: shown as arrays, but outside the Zarr
//! hierarchy, so zarr and xarray never take them for variables.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

/// The marker python-blosc2 puts between an indexed array's stem and the
/// rest of a sidecar's name.
const MARKER: &str = ".__index__.";

/// The indexed array whose `blosc2_indexes` vlmeta names the file at
/// `path` as a sidecar (`None`: `path` is no index sidecar).
pub fn indexed_array(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let stem = &name[..name.find(MARKER)?];
    let base = path.with_file_name(format!("{stem}.b2nd"));
    if !base.is_file() {
        return None;
    }
    let array = crate::source::open_array(&base).ok()?;
    let indexes = array
        .frame()
        .vlmeta
        .iter()
        .find(|(k, _)| k == "blosc2_indexes")
        .map(|(_, v)| v.clone())?;
    names_file(&indexes, name).then_some(base)
}

/// Whether a `*path` field anywhere in `doc` ends with file name `name`.
fn names_file(doc: &Json, name: &str) -> bool {
    match doc {
        Json::Object(map) => map.iter().any(|(k, v)| {
            (k.ends_with("path")
                && v.as_str()
                    .is_some_and(|p| Path::new(p).file_name().is_some_and(|f| f == name)))
                || names_file(v, name)
        }),
        Json::Array(items) => items.iter().any(|v| names_file(v, name)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_sidecar_is_named_by_a_path_field() {
        let doc = json!({"version": 1, "indexes": {"__self__": {"levels": {"chunk": {"path": "dir/a.__index__.bucket.summary.chunk.b2nd"}}, "values_path": "a.__index__.bucket.values.b2nd"}}});
        assert!(names_file(&doc, "a.__index__.bucket.summary.chunk.b2nd"));
        assert!(names_file(&doc, "a.__index__.bucket.values.b2nd"));
        assert!(!names_file(&doc, "a.__index__.bucket.offsets.b2nd"));
        assert!(indexed_array(Path::new("/nonexistent/x.b2nd")).is_none());
    }
}
