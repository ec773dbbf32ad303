//! The `.zarray` that makes `chunks/` a zarr v2 array (no compressor).

use serde_json::{json, Value as Json};

/// Convert a NumPy dtype (simple string or python list-of-tuples literal)
/// into zarr v2's JSON form, or None when it cannot be expressed.
pub fn zarr_dtype(descr: &str) -> Option<Json> {
    if !descr.starts_with('[') {
        return Some(Json::String(descr.to_string()));
    }
    // "[('a', '<i4'), ('b', '<f8', (2,))]" → [["a","<i4"],["b","<f8",[2]]]
    let converted = descr
        .replace('(', "[")
        .replace(')', "]")
        .replace('\'', "\"")
        .replace(",]", "]");
    serde_json::from_str(&converted).ok()
}

/// The `.zarray` document for an array of `shape` in chunks of `chunks`
/// (a zero chunk extent, possible only for an empty array, is written as 1:
/// zarr needs positive chunks and the array has no chunk files anyway).
pub fn zarray(shape: &[u64], chunks: &[u64], dtype: Json) -> Vec<u8> {
    let chunks: Vec<u64> = chunks.iter().map(|&c| c.max(1)).collect();
    let doc = json!({
        "zarr_format": 2,
        "shape": shape,
        "chunks": chunks,
        "dtype": dtype,
        "compressor": null,
        "fill_value": null,
        "order": "C",
        "filters": null,
        "dimension_separator": ".",
    });
    super::json::json_bytes(&doc)
}

/// File name of the chunk at grid `coords` (0-d: "0").
pub fn chunk_name(coords: &[u64]) -> String {
    if coords.is_empty() {
        return "0".into();
    }
    coords
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(".")
}

/// Grid coordinates named by `name`, if it names a chunk of `grid`.
pub fn parse_chunk_name(name: &str, grid: &[u64]) -> Option<Vec<u64>> {
    if grid.is_empty() {
        return (name == "0").then(Vec::new);
    }
    let parts: Vec<&str> = name.split('.').collect();
    if parts.len() != grid.len() {
        return None;
    }
    let mut coords = Vec::with_capacity(parts.len());
    for (p, &g) in parts.iter().zip(grid) {
        if p.is_empty()
            || (p.len() > 1 && p.starts_with('0'))
            || !p.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let v: u64 = p.parse().ok()?;
        if v >= g {
            return None;
        }
        coords.push(v);
    }
    Some(coords)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_roundtrip_and_reject_aliases() {
        assert_eq!(chunk_name(&[]), "0");
        assert_eq!(chunk_name(&[7]), "7");
        assert_eq!(chunk_name(&[1, 0, 2]), "1.0.2");
        assert_eq!(parse_chunk_name("1.0.2", &[2, 1, 3]), Some(vec![1, 0, 2]));
        assert_eq!(parse_chunk_name("01.0.2", &[2, 1, 3]), None);
        assert_eq!(parse_chunk_name("2.0.2", &[2, 1, 3]), None);
        assert_eq!(parse_chunk_name("1.0", &[2, 1, 3]), None);
        assert_eq!(parse_chunk_name("0", &[]), Some(vec![]));
    }

    #[test]
    fn structured_dtype_becomes_json_list() {
        assert_eq!(zarr_dtype("<f8"), Some(json!("<f8")));
        assert_eq!(
            zarr_dtype("[('a', '<i4'), ('b', '<f8'), ('c', 'S3')]"),
            Some(json!([["a", "<i4"], ["b", "<f8"], ["c", "S3"]]))
        );
    }
}
