//! A folder's `zarr.json`: the Zarr v3 group metadata that makes every
//! folder of the presented tree (the mount root, source folders, remote
//! prefixes, stores, their groups and CTables) a v3 group, so that readers
//! (zarr-python 3, xarray's `open_datatree`) walk the whole mount. v3 has
//! no implicit groups: each level needs its own document.
//!
//! The attributes say what the folder is, under `blosc2fs` (kind, name, a
//! store's format, a table's column names in stored order), beside the
//! folder's own variable-length metadata (a store's or group's vlmeta, a
//! table's). They are small by construction: a store's list of keys or a
//! table's schema stay in `meta.json`.

use serde_json::{json, Map, Value as Json};

use super::json::json_bytes;

/// The fields of a store, group or table `meta.json` document carried
/// under `blosc2fs` in its group's attributes.
const DESCRIBING: [&str; 6] = ["kind", "format", "class", "key", "rows", "columns"];

/// The group document with `attributes`.
fn group(attributes: Map<String, Json>) -> Vec<u8> {
    json_bytes(&json!({
        "zarr_format": 3,
        "node_type": "group",
        "attributes": attributes,
    }))
}

/// The `zarr.json` of a plain folder (a source directory, a remote prefix,
/// a Caterva2 root or folder) named `name` (empty for the mount root).
pub fn folder_group(name: &str) -> Vec<u8> {
    let mut about = Map::new();
    about.insert("kind".into(), json!("folder"));
    about.insert("name".into(), json!(name));
    let mut attributes = Map::new();
    attributes.insert("blosc2fs".into(), Json::Object(about));
    group(attributes)
}

/// The `zarr.json` of a store, group or table folder whose `meta.json`
/// document is `doc`: a store's or group's vlmeta as attributes, and what
/// it is under `blosc2fs` (a vlmeta entry of that name is kept, ours is
/// dropped). A table's vlmeta is python-blosc2's own bookkeeping (schema,
/// indexes), not the user's, and can be large: it is left out, and the
/// columns are given in the schema's order.
pub fn described_group(doc: &Json) -> Vec<u8> {
    let table = doc.get("kind") == Some(&json!("ctable"));
    let mut attributes = Map::new();
    if let (false, Some(Json::Object(vlmeta))) = (table, doc.get("vlmeta")) {
        attributes.extend(vlmeta.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    let mut about: Map<String, Json> = DESCRIBING
        .iter()
        .filter_map(|&k| Some((k.to_string(), doc.get(k)?.clone())))
        .collect();
    let ordered = doc
        .pointer("/schema/columns")
        .and_then(Json::as_array)
        .and_then(|cols| {
            cols.iter()
                .map(|c| c.get("name").cloned())
                .collect::<Option<Vec<_>>>()
        });
    if let (true, Some(ordered)) = (table, ordered) {
        about.insert("columns".into(), Json::Array(ordered));
    }
    attributes.entry("blosc2fs").or_insert(Json::Object(about));
    group(attributes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8]) -> Json {
        serde_json::from_slice(bytes).unwrap()
    }

    #[test]
    fn a_folder_is_a_group_named_by_its_name() {
        assert_eq!(
            parse(&folder_group("run1")),
            json!({"zarr_format": 3, "node_type": "group",
                   "attributes": {"blosc2fs": {"kind": "folder", "name": "run1"}}})
        );
    }

    #[test]
    fn a_store_or_table_carries_its_vlmeta_and_what_it_is() {
        let doc = json!({"kind": "store", "format": "b2z", "class": "TreeStore",
                         "keys": ["/a", "/b"], "vlmeta": {"author": "me", "n": 3},
                         "objects": {}, "not_shown": {}});
        assert_eq!(
            parse(&described_group(&doc)),
            json!({"zarr_format": 3, "node_type": "group", "attributes": {
                "author": "me", "n": 3,
                "blosc2fs": {"kind": "store", "format": "b2z", "class": "TreeStore"}}})
        );
        let table = json!({"kind": "ctable", "key": "/", "rows": 5, "columns": ["a", "b"],
                           "schema": {"columns": [{"name": "b"}, {"name": "a"}]},
                           "vlmeta": {"index_catalog": {"big": 1}}});
        assert_eq!(
            parse(&described_group(&table))["attributes"],
            json!({"blosc2fs": {"kind": "ctable", "key": "/", "rows": 5, "columns": ["b", "a"]}})
        );
        let clash = json!({"kind": "group", "vlmeta": {"blosc2fs": 1}});
        assert_eq!(
            parse(&described_group(&clash))["attributes"],
            json!({"blosc2fs": 1})
        );
    }
}
