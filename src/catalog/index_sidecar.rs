//! Which arrays are index sidecars: the `<stem>.__index__.*.b2nd` arrays
//! python-blosc2 writes beside an indexed NDArray `<stem>.b2nd`
//! (`create_index`), named by that array's `blosc2_indexes` vlmeta; inside
//! a store, the values `<key>.__index__.*` beside value `<key>`. They are
//! no data of their own: never listed beside their array, but under its
//! `indexes/` folder ([`super::array_indexes`]), outside the Zarr
//! hierarchy, so `find`, zarr and xarray never take them for variables.
//!
//! One rule decides both sides ([`named_sidecars`]): a sidecar is hidden
//! where it lies exactly when its array's vlmeta names it, so a file that
//! merely looks like one stays an ordinary array. Only names holding the
//! marker are checked, each base array's vlmeta read once per listing.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::format::Array;
use crate::source::store::Store;

/// The marker python-blosc2 puts between an indexed array's stem and the
/// rest of a sidecar's name.
pub const MARKER: &str = ".__index__.";

/// The extension of an indexed NDArray and of its sidecar files.
const EXTENSION: &str = ".b2nd";

/// The vlmeta entry naming an NDArray's indexes and their sidecars.
pub const VLMETA_KEY: &str = "blosc2_indexes";

/// One sidecar an indexed array's vlmeta names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sidecar {
    /// Its name without `.b2nd`: `<stem>.__index__.<rest>` (a store key's
    /// last segment, or a file's stem).
    pub stem: String,
    /// `<rest>`: its folder's name under the array's `indexes/`
    /// (`bucket.values`).
    pub folder: String,
    /// The index whose descriptor names it (`__self__`, a field's token).
    pub index: String,
}

/// The `blosc2_indexes` vlmeta document of `array`, if it has one.
pub fn indexes_doc(array: &Array) -> Option<&Json> {
    array
        .frame()
        .vlmeta
        .iter()
        .find(|(k, _)| k == VLMETA_KEY)
        .map(|(_, v)| v)
}

/// The sidecars `doc` (a `blosc2_indexes` document) names for the array
/// whose name is `stem` (a file's stem, or a store key's last segment):
/// each `*path` field's file name that is `<stem>.__index__.<rest>.b2nd`,
/// sorted by folder name. Paths are compared by file name only:
/// python-blosc2 records them as given (relative to where it ran, or in a
/// temporary folder for a zipped store), but always writes the sidecars
/// beside their array.
pub fn named_sidecars(doc: &Json, stem: &str) -> Vec<Sidecar> {
    let prefix = format!("{stem}{MARKER}");
    let mut found: BTreeMap<String, Sidecar> = BTreeMap::new();
    let Some(indexes) = doc.get("indexes").and_then(Json::as_object) else {
        return Vec::new();
    };
    for (index, descriptor) in indexes {
        let mut paths = Vec::new();
        path_fields(descriptor, &mut paths);
        for path in paths {
            let Some(name) = Path::new(path).file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let Some(rest) = name
                .strip_suffix(EXTENSION)
                .and_then(|s| s.strip_prefix(&prefix))
            else {
                continue;
            };
            if rest.is_empty() || rest.contains('/') {
                continue;
            }
            found.entry(rest.to_string()).or_insert_with(|| Sidecar {
                stem: format!("{prefix}{rest}"),
                folder: rest.to_string(),
                index: index.clone(),
            });
        }
    }
    found.into_values().collect()
}

/// Every string of a `*path` field anywhere in `doc`.
fn path_fields<'a>(doc: &'a Json, out: &mut Vec<&'a str>) {
    match doc {
        Json::Object(map) => {
            for (k, v) in map {
                match v.as_str() {
                    Some(p) if k.ends_with("path") => out.push(p),
                    _ => path_fields(v, out),
                }
            }
        }
        Json::Array(items) => items.iter().for_each(|v| path_fields(v, out)),
        _ => {}
    }
}

/// The stem of an indexed array's sidecar named `name` (`None`: the name
/// is not shaped like one).
fn base_stem(name: &str) -> Option<&str> {
    let stem = &name[..name.find(MARKER)?];
    (!stem.is_empty()).then_some(stem)
}

/// The indexed array whose `blosc2_indexes` vlmeta names the local file at
/// `path` as a sidecar (`None`: `path` is no index sidecar).
pub fn indexed_array(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let stem = base_stem(name)?;
    let base = path.with_file_name(format!("{stem}{EXTENSION}"));
    let named = local_sidecars(&base)?;
    let own = name.strip_suffix(EXTENSION)?;
    named.iter().any(|s| s.stem == own).then_some(base)
}

/// The sidecars the vlmeta of the local array at `base` (a frame file or
/// a sparse frame's directory) names (`None`: no such array, or it cannot
/// be read).
fn local_sidecars(base: &Path) -> Option<Vec<Sidecar>> {
    let meta = std::fs::metadata(base).ok()?;
    if !meta.is_file() && !meta.is_dir() {
        // FIFOs, sockets, devices: never opened.
        return None;
    }
    let stem = base.file_name()?.to_str()?.strip_suffix(EXTENSION)?;
    let array = crate::source::open_array(base).ok()?;
    Some(named_sidecars(indexes_doc(&array)?, stem))
}

/// The answers of one listing of a local folder: each base array's vlmeta
/// read once, however many of its sidecars the folder holds.
#[derive(Debug, Default)]
pub struct LocalSidecars {
    named: HashMap<PathBuf, Option<Vec<Sidecar>>>,
}

impl LocalSidecars {
    /// Whether entry `name` of the folder at `dir` is a sidecar its indexed
    /// array names (only names holding [`MARKER`] are looked at, and the
    /// array is opened only when `may_open` allows its path).
    pub fn is_sidecar(&mut self, dir: &Path, name: &str, may_open: impl Fn(&Path) -> bool) -> bool {
        let Some(stem) = base_stem(name) else {
            return false;
        };
        let Some(own) = name.strip_suffix(EXTENSION) else {
            return false;
        };
        let base = dir.join(format!("{stem}{EXTENSION}"));
        if !may_open(&base) {
            return false;
        }
        self.named
            .entry(base)
            .or_insert_with_key(|base| local_sidecars(base))
            .as_ref()
            .is_some_and(|named| named.iter().any(|s| s.stem == own))
    }
}

/// The index sidecars among a store's values `keys`: for each indexed
/// value's key, its sidecars' keys (`<key>.__index__.<rest>`) and folder
/// names, the ones its vlmeta names and the store holds.
pub fn store_sidecars<'a>(
    store: &Store,
    keys: impl Iterator<Item = &'a String>,
) -> HashMap<String, Vec<(String, Sidecar)>> {
    let mut named: HashMap<String, Option<Vec<Sidecar>>> = HashMap::new();
    let mut out: HashMap<String, Vec<(String, Sidecar)>> = HashMap::new();
    for key in keys {
        let Some(at) = key.find(MARKER) else { continue };
        let base = &key[..at];
        if base.is_empty() || base.ends_with('/') || !store.values().contains_key(base) {
            continue;
        }
        let stem = base.rsplit('/').next().unwrap_or(base);
        let sidecars = named.entry(base.to_string()).or_insert_with(|| {
            let array = store.open_value(base).ok()?;
            Some(named_sidecars(indexes_doc(&array)?, stem))
        });
        let own = &key[at - stem.len()..];
        if let Some(sidecar) = sidecars.iter().flatten().find(|s| s.stem == own) {
            out.entry(base.to_string())
                .or_default()
                .push((key.clone(), sidecar.clone()));
        }
    }
    for list in out.values_mut() {
        list.sort_by(|a, b| a.1.folder.cmp(&b.1.folder));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_sidecar_is_named_by_a_path_field_of_its_array() {
        let doc = json!({"version": 1, "indexes": {"__self__": {
            "kind": "bucket",
            "levels": {"chunk": {"path": "dir/a.__index__.bucket.summary.chunk.b2nd"}},
            "bucket": {"values_path": "/tmp/x/a.__index__.bucket.values.b2nd",
                       "other_path": "b.__index__.bucket.offsets.b2nd",
                       "l1_path": "a.__index__.bucket.l1.b2frame"}}}});
        let named = named_sidecars(&doc, "a");
        let folders: Vec<&str> = named.iter().map(|s| s.folder.as_str()).collect();
        assert_eq!(folders, ["bucket.summary.chunk", "bucket.values"]);
        assert_eq!(named[1].stem, "a.__index__.bucket.values");
        assert_eq!(named[1].index, "__self__");
        assert!(named_sidecars(&doc, "b").len() == 1);
        assert!(named_sidecars(&json!({"indexes": null}), "a").is_empty());
        assert!(indexed_array(Path::new("/nonexistent/x.__index__.y.b2nd")).is_none());
        assert!(indexed_array(Path::new("/nonexistent/x.b2nd")).is_none());
        assert_eq!(base_stem(".__index__.y.b2nd"), None);
        let mut memo = LocalSidecars::default();
        let dir = Path::new("/nonexistent");
        assert!(!memo.is_sidecar(dir, "x.__index__.y.b2nd", |_| true));
        assert!(!memo.is_sidecar(dir, "x.b2nd", |_| true));
    }
}
