//! An indexed NDArray's `indexes/` folder: the index sidecars its
//! `blosc2_indexes` vlmeta names ([`super::index_sidecar`]), one array
//! folder each, and the folder's `meta.json` (that vlmeta document). As a
//! table's `indexes/`, it lies outside the Zarr hierarchy: neither the
//! folder nor its arrays have a `zarr.json`. Found once per loaded
//! version of the array, so the folder changes when the array does.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Value as Json};

use crate::format::Array;

use super::index_sidecar::{indexes_doc, named_sidecars, Sidecar, VLMETA_KEY};
use super::location::Origin;

/// The folder of an indexed array's sidecars: the name a table's takes.
pub use super::store::INDEXES;

/// Where one sidecar is: beside a local array, or a value of the same
/// store version as its array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SidecarAt {
    /// A local file.
    File(PathBuf),
    /// A key of the indexed array's store.
    Key(String),
}

/// One sidecar folder of `indexes/`.
#[derive(Debug, Clone)]
pub struct SidecarFolder {
    /// The folder's name (`bucket.values`).
    pub name: OsString,
    /// Where the sidecar is.
    pub at: SidecarAt,
    /// The index whose descriptor names it.
    pub index: String,
}

/// The `indexes/` folder of one version of an indexed array.
#[derive(Debug)]
pub struct ArrayIndexes {
    /// The indexed array's name (for the sidecars' `meta.json`).
    pub of: String,
    /// Its sidecars, sorted by folder name.
    pub sidecars: Vec<SidecarFolder>,
    /// Bytes of `indexes/meta.json`.
    pub meta_json: Arc<Vec<u8>>,
}

impl SidecarFolder {
    fn new(sidecar: Sidecar, at: SidecarAt) -> SidecarFolder {
        SidecarFolder {
            name: OsString::from(sidecar.folder),
            at,
            index: sidecar.index,
        }
    }
}

impl ArrayIndexes {
    /// The `indexes/` folder of `array`, opened at `origin` (`None`: it has
    /// no index, or none of the sidecars its vlmeta names is there).
    /// Remote arrays have none: their sidecars stay listed beside them.
    pub fn find(origin: &Origin, array: &Array) -> Option<ArrayIndexes> {
        let doc = indexes_doc(array)?;
        let (of, sidecars): (String, Vec<SidecarFolder>) = match origin {
            Origin::Local(path) => {
                let name = path.file_name()?.to_str()?;
                let stem = name.strip_suffix(".b2nd")?;
                let sidecars = named_sidecars(doc, stem)
                    .into_iter()
                    .filter_map(|s| {
                        let file = path.with_file_name(format!("{}.b2nd", s.stem));
                        // A regular file only: a link could lead out of the source.
                        let meta = std::fs::symlink_metadata(&file).ok()?;
                        meta.is_file()
                            .then(|| SidecarFolder::new(s, SidecarAt::File(file)))
                    })
                    .collect();
                (name.to_string(), sidecars)
            }
            Origin::Value {
                store, load, key, ..
            } => {
                let store = store.loaded(*load).ok()?;
                let sidecars = store
                    .index_sidecars
                    .get(key)?
                    .iter()
                    .map(|(k, s)| SidecarFolder::new(s.clone(), SidecarAt::Key(k.clone())))
                    .collect();
                (key.rsplit('/').next().unwrap_or(key).to_string(), sidecars)
            }
            #[cfg(feature = "remote")]
            Origin::Remote(_) => return None,
        };
        if sidecars.is_empty() {
            return None;
        }
        let meta_json = Arc::new(crate::views::json::json_bytes(&json!({
            "kind": "indexes",
            "of": of,
            "about": "index sidecars python-blosc2 keeps to speed up queries (create_index): not data of the array, and outside the Zarr hierarchy (no zarr.json)",
            "sidecars": sidecars.iter().map(|s| s.name.to_string_lossy()).collect::<Vec<_>>(),
            VLMETA_KEY: doc,
        })));
        Some(ArrayIndexes {
            of,
            sidecars,
            meta_json,
        })
    }

    /// The sidecar whose folder is named `name`.
    pub fn sidecar(&self, name: &std::ffi::OsStr) -> Option<&SidecarAt> {
        let i = self
            .sidecars
            .binary_search_by(|s| s.name.as_os_str().cmp(name))
            .ok()?;
        Some(&self.sidecars[i].at)
    }

    /// Where the sidecar at `at` of the array at `base` is read from.
    pub fn origin(base: &Origin, at: &SidecarAt) -> Option<Origin> {
        match (base, at) {
            (_, SidecarAt::File(path)) => Some(Origin::Local(path.clone())),
            (Origin::Value { store, load, .. }, SidecarAt::Key(key)) => {
                let name = store.loaded(*load).ok()?.store.key_name(key);
                Some(Origin::Value {
                    store: store.clone(),
                    load: *load,
                    key: key.clone(),
                    name,
                })
            }
            _ => None,
        }
    }

    /// Bytes it holds, roughly (what the metadata cache charges).
    pub fn weight(&self) -> usize {
        self.meta_json.len()
            + self
                .sidecars
                .iter()
                .map(|s| {
                    96 + s.name.len()
                        + s.index.len()
                        + match &s.at {
                            SidecarAt::File(p) => p.as_os_str().len(),
                            SidecarAt::Key(k) => k.len(),
                        }
                })
                .sum::<usize>()
    }

    /// The indexed array's own `meta.json` document `doc`, telling of its
    /// indexes: each index's name, kind and field, and the folders of its
    /// sidecars under `indexes/`.
    pub fn mark_indexed(&self, doc: &mut Json, array: &Array) {
        let Some(obj) = doc.as_object_mut() else {
            return;
        };
        let Some(indexes) = indexes_doc(array)
            .and_then(|d| d.get("indexes"))
            .and_then(Json::as_object)
        else {
            return;
        };
        let list: Vec<Json> = indexes
            .iter()
            .map(|(name, d)| {
                let folders: Vec<String> = self
                    .sidecars
                    .iter()
                    .filter(|s| &s.index == name)
                    .map(|s| format!("{INDEXES}/{}", s.name.to_string_lossy()))
                    .collect();
                json!({
                    "name": name,
                    "kind": d.get("kind").cloned().unwrap_or(Json::Null),
                    "field": d.get("field").cloned().unwrap_or(Json::Null),
                    "stale": d.get("stale").cloned().unwrap_or(Json::Null),
                    "sidecars": folders,
                })
            })
            .collect();
        obj.insert(INDEXES.into(), json!(list));
    }
}

/// The indexed array named `of`'s sidecar: no Zarr array, and its
/// `meta.json` document `doc` says whose sidecar it is.
pub fn mark_sidecar(doc: &mut Json, of: &str) {
    if let Some(obj) = doc.as_object_mut() {
        obj.insert("index_sidecar_of".into(), json!(of));
        obj.insert(
            "zarr".into(),
            json!({"v3": false, "reason": format!("an index sidecar of {of} (python-blosc2's create_index), not data: outside the Zarr hierarchy")}),
        );
    }
}
