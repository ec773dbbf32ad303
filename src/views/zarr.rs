//! The `.zarray` that makes `chunks/` a zarr v2 array (no compressor).

use serde_json::{json, Value as Json};

use crate::format::dtype::{ByteOrder, Field, NumpyDtype, Record, RecordForm, Scalar};

/// A NumPy dtype (a plain dtype string, or a record's list of fields) in
/// zarr v2's JSON form: the string itself, or one `[name, dtype]` /
/// `[name, dtype, shape]` list per field (`[[title, name], dtype]` for a
/// titled one), each field's dtype as the string wrote it or a nested
/// record's list. `None` when it cannot be expressed (a dict-form record,
/// a subarray, a field whose dtype is a subarray written as a tuple).
pub fn zarr_dtype(descr: &str) -> Option<Json> {
    match NumpyDtype::parse(descr).ok()? {
        NumpyDtype::Scalar(_) => Some(Json::String(descr.to_string())),
        NumpyDtype::Record(record) => record_json(&record),
        NumpyDtype::Subarray(_) => None,
    }
}

/// A field's dtype string with its byte-order character, as NumPy's
/// `descr` writes it (`S3` becomes `|S3`, `i4` `<i4`, `?` `|b1`): zarr 2 took either,
/// zarr-python 3 only the full form.
fn with_order(spelled: &str, scalar: &Scalar) -> String {
    if spelled == "?" {
        return "|b1".into();
    }
    if !spelled.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return spelled.to_string();
    }
    let order = match scalar.order {
        ByteOrder::Big => '>',
        ByteOrder::Little => '<',
        ByteOrder::NotApplicable => '|',
    };
    format!("{order}{spelled}")
}

/// A list-form record's fields, as zarr v2 lists them.
fn record_json(record: &Record) -> Option<Json> {
    if record.form != RecordForm::List {
        return None;
    }
    record
        .fields
        .iter()
        .map(field_json)
        .collect::<Option<Vec<_>>>()
        .map(Json::Array)
}

fn field_json(field: &Field) -> Option<Json> {
    let name = match &field.title {
        Some(title) => json!([title, field.name]),
        None => json!(field.name),
    };
    let (base, shape) = match &field.dtype {
        NumpyDtype::Subarray(sub) => (sub.base.as_ref(), Some(&sub.shape)),
        other => (other, None),
    };
    let dtype = match (base, &field.spelled) {
        (NumpyDtype::Scalar(scalar), Some(spelled)) => json!(with_order(spelled, scalar)),
        (NumpyDtype::Record(inner), None) => record_json(inner)?,
        _ => return None,
    };
    Some(match shape {
        Some(shape) => json!([name, dtype, shape]),
        None => json!([name, dtype]),
    })
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
    parts
        .iter()
        .zip(grid)
        .map(|(p, &g)| super::zarr3::parse_coord(p, g))
        .collect()
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
            Some(json!([["a", "<i4"], ["b", "<f8"], ["c", "|S3"]]))
        );
        assert_eq!(
            zarr_dtype("[('a', '>U2', (2, 3)), ('b', [('x', 'u1')], (2,)), (('t', 'c'), '?')]"),
            Some(json!([
                ["a", ">U2", [2, 3]],
                ["b", [["x", "|u1"]], [2]],
                [["t", "c"], "|b1"]
            ]))
        );
        assert_eq!(
            zarr_dtype("[(\"it's\", 'u1')]"),
            Some(json!([["it's", "|u1"]]))
        );
        assert_eq!(zarr_dtype("[]"), Some(json!([])));
        for none in [
            "{'names': ['a'], 'formats': ['<i4']}",
            "('<i4', (2,))",
            "[('b', ('<f8', (3,)), (2,))]",
            "[('a', '<i4')",
        ] {
            assert_eq!(zarr_dtype(none), None, "{none}");
        }
    }
}
