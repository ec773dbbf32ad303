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
//!
//! A group whose subtree is small enough also carries that subtree's
//! documents ([`Consolidation`]), in zarr-python 3's inline
//! `consolidated_metadata`, so a reader opens the whole hierarchy from one
//! file instead of walking it. The bound ([`MAX_MEMBERS`], [`MAX_MEMBER_BYTES`])
//! keeps the document, and the work of rendering it, small on any tree.

use std::collections::BTreeMap;
use std::sync::Arc;

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

/// The most nodes (arrays and groups) a group's consolidated metadata
/// describes; a group with more below it carries none.
pub const MAX_MEMBERS: usize = 10_000;

/// The most bytes of the nodes' own documents a group's consolidated
/// metadata holds (the document itself is somewhat larger: each line is
/// indented deeper).
pub const MAX_MEMBER_BYTES: usize = 12 << 20;

/// A subtree over the bound: its group carries no consolidated metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("over the bound of consolidated metadata ({MAX_MEMBERS} nodes, {MAX_MEMBER_BYTES} bytes of their documents)")]
pub struct OverBound;

/// The documents of the nodes below a group, gathered for its consolidated
/// metadata: by path relative to the group (`a`, `a/x`), within the bound.
#[derive(Debug, Default)]
pub struct Consolidation {
    /// Each node's document as it goes in (an array's own `zarr.json`; a
    /// group's with an empty `consolidated_metadata`, as zarr-python writes
    /// nested groups: their members are listed flat beside them).
    members: BTreeMap<String, Arc<Vec<u8>>>,
    /// Their bytes together.
    bytes: usize,
}

impl Consolidation {
    /// How many more nodes fit.
    pub fn room(&self) -> usize {
        MAX_MEMBERS.saturating_sub(self.members.len())
    }

    /// Add the array at `path` whose `zarr.json` is `doc`.
    pub fn add_array(&mut self, path: String, doc: Arc<Vec<u8>>) -> Result<(), OverBound> {
        self.add(path, doc)
    }

    /// Add the group at `path` whose own `zarr.json` (without consolidated
    /// metadata) is `doc`.
    pub fn add_group(&mut self, path: String, doc: &[u8]) -> Result<(), OverBound> {
        self.add(path, Arc::new(json_bytes(&with_inline(doc, Map::new()))))
    }

    fn add(&mut self, path: String, doc: Arc<Vec<u8>>) -> Result<(), OverBound> {
        self.bytes += doc.len();
        if self.room() == 0 || self.bytes > MAX_MEMBER_BYTES {
            return Err(OverBound);
        }
        self.members.insert(path, doc);
        Ok(())
    }

    /// The group's `zarr.json` whose own document (without consolidated
    /// metadata) is `group`, carrying these members. The members go in
    /// the order of their paths' bytes, which keeps the members of one
    /// group together at each depth, as zarr-python's reading of the flat
    /// form needs. The bytes are those [`json_bytes`] gives the whole
    /// document; each member's are indented in place, not parsed again.
    pub fn document(&self, group: &[u8]) -> Vec<u8> {
        // The empty `"metadata": {}` ends the document: the members go there.
        const EMPTY_TAIL: &[u8] = b"{}\n  }\n}\n";
        let mut out = json_bytes(&with_inline(group, Map::new()));
        if self.members.is_empty() {
            return out;
        }
        if !out.ends_with(EMPTY_TAIL) {
            // Never so (the field is put last); the slow way, then.
            return json_bytes(&with_inline(group, self.parsed()));
        }
        out.truncate(out.len() - EMPTY_TAIL.len());
        out.reserve(self.bytes + self.bytes / 4);
        out.extend_from_slice(b"{\n");
        for (i, (path, member)) in self.members.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(b",\n");
            }
            out.extend_from_slice(b"      ");
            out.extend_from_slice(Json::String(path.clone()).to_string().as_bytes());
            out.extend_from_slice(b": ");
            let text = member.strip_suffix(b"\n").unwrap_or(member);
            for (j, line) in text.split(|&b| b == b'\n').enumerate() {
                if j > 0 {
                    out.extend_from_slice(b"\n      ");
                }
                out.extend_from_slice(line);
            }
        }
        out.extend_from_slice(b"\n    }\n  }\n}\n");
        out
    }

    /// The members as JSON values, by path.
    fn parsed(&self) -> Map<String, Json> {
        self.members
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::from_slice(v).unwrap_or_default()))
            .collect()
    }
}

/// Group document `group` (its bytes) with zarr-python's inline
/// consolidated metadata holding `metadata`, as its last field.
fn with_inline(group: &[u8], metadata: Map<String, Json>) -> Json {
    let mut doc: Map<String, Json> = serde_json::from_slice::<Map<String, Json>>(group)
        .unwrap_or_default()
        .into_iter()
        .filter(|(k, _)| k != "consolidated_metadata")
        .collect();
    doc.insert(
        "consolidated_metadata".into(),
        json!({"kind": "inline", "must_understand": false, "metadata": metadata}),
    );
    Json::Object(doc)
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

    fn array(n: u64) -> Arc<Vec<u8>> {
        Arc::new(json_bytes(&json!({"zarr_format": 3, "node_type": "array",
                                    "shape": [n], "attributes": {"s": "a\nb \u{e9}"}})))
    }

    #[test]
    fn a_consolidated_group_is_its_document_with_the_members_flat() {
        let own = folder_group("top");
        let mut below = Consolidation::default();
        assert_eq!(
            parse(&below.document(&own))["consolidated_metadata"],
            json!({"kind": "inline", "must_understand": false, "metadata": {}})
        );
        below.add_group("g".into(), &folder_group("g")).unwrap();
        below.add_array("g/x".into(), array(3)).unwrap();
        below.add_array("z \"q\"".into(), array(0)).unwrap();
        below.add_group("g/h".into(), &folder_group("h")).unwrap();
        let doc = below.document(&own);
        let empty = json!({"kind": "inline", "must_understand": false, "metadata": {}});
        let mut g = parse(&folder_group("g"));
        g["consolidated_metadata"] = empty.clone();
        let mut h = parse(&folder_group("h"));
        h["consolidated_metadata"] = empty;
        let mut want = parse(&own);
        want["consolidated_metadata"] = json!({"kind": "inline", "must_understand": false,
            "metadata": {"g": g, "g/h": h, "g/x": parse(&array(3)), "z \"q\"": parse(&array(0))}});
        // The very bytes the JSON files' one rule gives the whole document,
        // the members in the order of their paths.
        assert_eq!(
            String::from_utf8(doc.clone()).unwrap(),
            String::from_utf8(json_bytes(&want)).unwrap()
        );
        let keys: Vec<_> = parse(&doc)["consolidated_metadata"]["metadata"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["g", "g/h", "g/x", "z \"q\""]);
    }

    #[test]
    fn byte_order_keeps_each_groups_members_together_at_each_depth() {
        // zarr-python reads the flat form by sorting on depth (stably) and
        // grouping consecutive paths by parent: each parent must come once.
        let mut below = Consolidation::default();
        let paths = [
            "a", "a b", "a-", "a0", "B", "a/x", "a b/y", "a/z", "a-/w", "a0/q", "B/k", "a/z/1",
            "a b/y/2", "a/x/3",
        ];
        for p in paths {
            below.add_array(p.to_string(), array(1)).unwrap();
        }
        let order: Vec<String> = below.members.keys().cloned().collect();
        let mut by_depth = order.clone();
        by_depth.sort_by_key(|k| k.matches('/').count());
        let parents: Vec<&str> = by_depth
            .iter()
            .filter_map(|k| k.rsplit_once('/').map(|(p, _)| p))
            .collect();
        let mut runs = parents.clone();
        runs.dedup();
        let mut distinct = runs.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(runs.len(), distinct.len(), "{by_depth:?}");
    }

    #[test]
    fn the_bound_is_on_nodes_and_on_bytes() {
        let mut below = Consolidation::default();
        for i in 0..MAX_MEMBERS {
            below.add_array(format!("a{i}"), array(1)).unwrap();
        }
        assert_eq!(below.room(), 0);
        assert_eq!(below.add_array("one more".into(), array(1)), Err(OverBound));
        let mut big = Consolidation::default();
        let doc = Arc::new(vec![b' '; MAX_MEMBER_BYTES / 2]);
        big.add_array("x".into(), doc.clone()).unwrap();
        big.add_array("y".into(), doc.clone()).unwrap();
        assert_eq!(
            big.add_array("z".into(), Arc::new(b"{}".to_vec())),
            Err(OverBound)
        );
    }
}
