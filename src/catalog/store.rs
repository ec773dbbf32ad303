//! Stores as folders: which presented names a store version's keys get.
//!
//! The store's keys become paths (`/exp/run1/temps` → `exp/run1/temps/`,
//! an array folder). Groups are folders with a `meta.json` (their vlmeta);
//! a CTable (a group holding `_meta` and `_valid_rows`) is a folder with a
//! `meta.json` (schema, row count) and one array folder per column whose
//! `data` holds the valid rows only. Names follow one escape rule, so every
//! key gets a distinct name ([`escape`]).
//!
//! A [`StoreEntry`] presents one version of a store file; when the file
//! changes the tree gives the store a new node (or, for a mount root,
//! reloads it in place), and everything inside is found under new
//! locations, so open files keep the version they opened.

use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use serde_json::{json, Map, Value as Json};

use crate::format::{Error, Shape, Version};
use crate::read::RowMap;
use crate::source::local_version;
use crate::source::store::{Home, Store, StoreFormat};

use super::index_sidecar::{store_sidecars, Sidecar};
use super::meta_cache::MetaCache;
use super::versioned::{Reload, Versioned};
use crate::tables::type_names::{arrow_name, kind_name};
use crate::tables::{Parts, SharedTableSource, TableBatches, TableModel};
use crate::views::{
    json, piece_file::PieceFile, table_arrow::TableArrow, table_csv::TableCsv, table_meta,
    zarr3_group::described_group,
};

/// Names reserved in every store folder (group, store root, table).
const RESERVED: [&str; 2] = ["meta.json", "table.csv"];
/// Names a table folder's own files and subfolder take, beside [`RESERVED`].
const TABLE_RESERVED: [&str; 3] = ["indexes", "table.arrow", "zarr.json"];
/// The folder of a table's index sidecars.
pub const INDEXES: &str = "indexes";

/// The presented name of key segment `segment`: `%` becomes `%25`; a
/// segment equal to a reserved name (`meta.json`, `table.csv`), `.`, `..`
/// or empty gets its first character percent-encoded (`meta.json` →
/// `%6Deta.json`). A key that is both a value and a group shows the group
/// as the value's name followed by `%2F` (which no escaped segment holds).
pub fn escape(segment: &str) -> String {
    let s = segment.replace('%', "%25");
    if s.is_empty() {
        return "%".to_string() + "00";
    }
    if RESERVED.contains(&s.as_str()) || s == "." || s == ".." {
        let first = s.as_bytes()[0];
        return format!("%{first:02X}{}", &s[1..]);
    }
    s
}

/// What a presented child of a store folder is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildKind {
    /// A group (key prefix) shown as a folder.
    Group(String),
    /// A CTable rooted at the key.
    Table(String),
    /// A value (an array folder).
    Value(String),
    /// Logical column `column` of the table at `table`, whose first
    /// storage key is `key` (a computed column: the table's `_meta`).
    Column {
        /// The table's root key.
        table: String,
        /// The column's first storage key.
        key: String,
        /// Its place among the table's columns (schema order).
        column: usize,
    },
}

/// The key a child of a store folder stands for.
fn child_key(child: &ChildKind) -> &str {
    match child {
        ChildKind::Group(k)
        | ChildKind::Table(k)
        | ChildKind::Value(k)
        | ChildKind::Column { key: k, .. } => k,
    }
}

/// A CTable's presented state.
#[derive(Debug)]
pub struct TableInfo {
    /// Bytes of the table's `meta.json`.
    pub meta_json: Arc<Vec<u8>>,
    /// Its valid rows.
    pub rows: Arc<RowMap>,
    /// Its `table.csv`, when it has a column CSV can show.
    pub csv: Option<Arc<PieceFile>>,
    /// Its `table.arrow`.
    pub arrow: Arc<PieceFile>,
    /// Bytes of the table folder's `zarr.json` (a Zarr v3 group).
    pub zarr_json: Arc<Vec<u8>>,
    /// The table as logical columns and Arrow record batches (what its
    /// column folders and table files are rendered from).
    pub batches: Arc<TableBatches>,
    /// The folder's children: its logical columns, and `indexes/` when it
    /// has index sidecars; sorted by name.
    pub children: Vec<(OsString, ChildKind)>,
}

impl TableInfo {
    /// The table as a [`TableSource`](crate::tables::TableSource).
    pub fn source(&self) -> SharedTableSource {
        self.batches.clone()
    }
}

/// One loaded version of a store, with its folders' listings.
#[derive(Debug)]
pub struct LoadedStore {
    /// Distinct for every load: in-store locations carry it.
    pub load: u64,
    /// The store's keys and bytes.
    pub store: Store,
    /// Modification time of the store file at load.
    pub mtime: SystemTime,
    /// Children of each folder key (`""` is the store root), sorted by name.
    pub folders: HashMap<String, Vec<(OsString, ChildKind)>>,
    /// Folder keys that are CTable roots.
    pub tables: Vec<String>,
    /// `meta.json` of each group folder (tables' are made on demand).
    pub group_meta: HashMap<String, Arc<Vec<u8>>>,
    /// Each group's `zarr.json` (a Zarr v3 group), by key as `group_meta`.
    pub group_zarr: HashMap<String, Arc<Vec<u8>>>,
    /// Each indexed NDArray value's index sidecars (values not listed in
    /// its folder: under the array's `indexes/`), by the array's key.
    pub index_sidecars: HashMap<String, Vec<(String, Sidecar)>>,
    table_info: Mutex<HashMap<String, Arc<Result<TableInfo, Error>>>>,
}

fn json_bytes(doc: &Json) -> Arc<Vec<u8>> {
    Arc::new(json::json_bytes(doc))
}

fn is_hidden_key(key: &str) -> bool {
    key.rsplit('/').next() == Some("__vlmeta__")
}

fn parent_key(key: &str) -> &str {
    key.rfind('/').map_or("", |i| &key[..i])
}

impl LoadedStore {
    /// Build the listings of `store`, the store version numbered `load`.
    pub fn new(store: Store, mtime: SystemTime, load: u64) -> LoadedStore {
        let keys: Vec<&String> = store
            .values()
            .keys()
            .filter(|k| !is_hidden_key(k))
            .collect();
        // Every group: each proper prefix of a key.
        let mut groups: BTreeMap<String, ()> = BTreeMap::new();
        groups.insert(String::new(), ());
        for key in &keys {
            let mut at = 0;
            while let Some(i) = key[at + 1..].find('/') {
                at += 1 + i;
                groups.insert(key[..at].to_string(), ());
            }
        }
        let values = store.values();
        let tables: Vec<String> = groups
            .keys()
            .filter(|g| {
                values.contains_key(&format!("{g}/_meta"))
                    && values.contains_key(&format!("{g}/_valid_rows"))
            })
            .cloned()
            .collect();
        let in_table = |key: &str| tables.iter().any(|t| key.starts_with(&format!("{t}/")));
        let mut folders: HashMap<String, Vec<(OsString, ChildKind)>> = HashMap::new();
        for g in groups.keys() {
            if in_table(g) {
                continue;
            }
            folders.entry(g.clone()).or_default();
            if !g.is_empty() {
                let parent = parent_key(g).to_string();
                let name = escape(&g[parent.len() + 1..]);
                let kind = if tables.contains(g) {
                    ChildKind::Table(g.clone())
                } else {
                    ChildKind::Group(g.clone())
                };
                let name = if values.contains_key(g) {
                    format!("{name}%2F")
                } else {
                    name
                };
                folders
                    .entry(parent)
                    .or_default()
                    .push((OsString::from(name), kind));
            }
        }
        // An indexed NDArray's sidecars are listed under its indexes/.
        let index_sidecars = store_sidecars(&store, keys.iter().copied().filter(|k| !in_table(k)));
        let sidecar_keys: HashSet<&str> = index_sidecars
            .values()
            .flatten()
            .map(|(k, _)| k.as_str())
            .collect();
        for key in &keys {
            if in_table(key) || sidecar_keys.contains(key.as_str()) {
                continue;
            }
            let parent = parent_key(key).to_string();
            let name = escape(&key[parent.len() + 1..]);
            folders
                .entry(parent)
                .or_default()
                .push((OsString::from(name), ChildKind::Value((*key).clone())));
        }
        // A table folder's children (its logical columns) come with the
        // table (LoadedStore::table); its index sidecars are folders of
        // their own under `indexes/`, outside the Zarr hierarchy.
        let mut index_groups: Vec<String> = Vec::new();
        for t in &tables {
            folders.insert(t.clone(), Vec::new());
            let root = format!("{t}/_indexes");
            for key in keys.iter().filter(|k| k.starts_with(&format!("{root}/"))) {
                if !index_groups.contains(&root) {
                    index_groups.push(root.clone());
                    folders.entry(root.clone()).or_default();
                }
                let mut parent = root.clone();
                let rel = &key[root.len() + 1..];
                let segments: Vec<&str> = rel.split('/').collect();
                for (n, seg) in segments.iter().enumerate() {
                    let here = format!("{parent}/{seg}");
                    let child = if n + 1 == segments.len() {
                        ChildKind::Value((*key).clone())
                    } else {
                        if !index_groups.contains(&here) {
                            index_groups.push(here.clone());
                            folders.entry(parent.clone()).or_default().push((
                                OsString::from(escape(seg)),
                                ChildKind::Group(here.clone()),
                            ));
                        }
                        folders.entry(here.clone()).or_default();
                        parent = here;
                        continue;
                    };
                    folders
                        .entry(parent.clone())
                        .or_default()
                        .push((OsString::from(escape(seg)), child));
                }
            }
        }
        for list in folders.values_mut() {
            list.sort_by(|a, b| a.0.cmp(&b.0));
        }
        let mut group_meta = HashMap::new();
        let mut group_zarr = HashMap::new();
        for g in &index_groups {
            let doc = json!({
                "kind": "indexes",
                "key": g,
                "about": "index sidecars python-blosc2 keeps to speed up queries: not data of the table, and outside the Zarr hierarchy (no zarr.json)",
            });
            group_meta.insert(g.clone(), json_bytes(&doc));
        }
        for g in folders
            .keys()
            .filter(|g| !tables.contains(g) && !index_groups.contains(g))
        {
            let vlmeta = match store.group_vlmeta(g) {
                None => json!({}),
                Some(Ok(v)) => v,
                Some(Err(e)) => json!({ "error": e.to_string() }),
            };
            let doc = if g.is_empty() {
                let registry = store
                    .embed_vlmeta()
                    .iter()
                    .find(|(n, _)| n == "_object_registry")
                    .map(|(_, v)| v.clone())
                    .unwrap_or(json!({}));
                let skipped: Map<String, Json> = store
                    .skipped()
                    .iter()
                    .map(|(k, why)| (k.clone(), json!(why)))
                    .collect();
                json!({
                    "kind": "store",
                    "format": store.format().name(),
                    "class": store.class(),
                    "keys": keys,
                    "vlmeta": vlmeta,
                    "objects": registry,
                    "not_shown": skipped,
                })
            } else {
                json!({ "kind": "group", "key": g, "vlmeta": vlmeta })
            };
            group_zarr.insert(g.clone(), Arc::new(described_group(&doc)));
            group_meta.insert(g.clone(), json_bytes(&doc));
        }
        LoadedStore {
            load,
            store,
            mtime,
            folders,
            tables,
            group_meta,
            group_zarr,
            index_sidecars,
            table_info: Mutex::new(HashMap::new()),
        }
    }

    /// Bytes this version holds, roughly (its listings, group meta.json
    /// bytes and key map): what the metadata cache charges for it.
    pub fn weight(&self) -> usize {
        let listings: usize = self
            .folders
            .iter()
            .map(|(k, list)| {
                64 + k.len()
                    + list
                        .iter()
                        .map(|(n, c)| 96 + n.len() + child_key(c).len())
                        .sum::<usize>()
            })
            .sum();
        let metas: usize = self
            .group_meta
            .iter()
            .map(|(k, m)| 64 + k.len() + m.len())
            .sum();
        let keys: usize = self.store.values().keys().map(|k| 160 + k.len()).sum();
        let sidecars: usize = self
            .index_sidecars
            .values()
            .flatten()
            .map(|(k, s)| 128 + k.len() + s.stem.len() + s.folder.len() + s.index.len())
            .sum();
        4096 + listings + metas + keys + sidecars
    }

    /// The table rooted at `table`: its meta.json and valid rows (read once
    /// per store version).
    pub fn table(&self, table: &str) -> Arc<Result<TableInfo, Error>> {
        if let Some(info) = self.table_info.lock().get(table) {
            return info.clone();
        }
        let info = Arc::new(self.read_table(table));
        self.table_info
            .lock()
            .insert(table.to_string(), info.clone());
        info
    }

    fn read_table(&self, table: &str) -> Result<TableInfo, Error> {
        let model = Arc::new(TableModel::load(&self.store, table)?);
        let batches = Arc::new(TableBatches::new(model.clone()));
        let mut children: Vec<(OsString, ChildKind)> = model
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let key = c
                    .keys
                    .first()
                    .cloned()
                    .unwrap_or_else(|| format!("{table}/_meta"));
                (
                    OsString::from(table_child_name(c.name())),
                    ChildKind::Column {
                        table: table.to_string(),
                        key,
                        column: i,
                    },
                )
            })
            .collect();
        if !model.index_keys.is_empty() {
            children.push((
                OsString::from(INDEXES),
                ChildKind::Group(format!("{table}/_indexes")),
            ));
        }
        children.sort_by(|a, b| a.0.cmp(&b.0));
        children.dedup_by(|a, b| a.0 == b.0);
        let (csv, arrow) = self.table_files(&model, &batches);
        let doc = table_meta::table_doc(&batches);
        Ok(TableInfo {
            zarr_json: Arc::new(described_group(&doc)),
            meta_json: json_bytes(&doc),
            rows: model.rows.clone(),
            csv,
            arrow,
            batches,
            children,
        })
    }

    /// The table's `table.csv` (when it has a column CSV can show) and
    /// `table.arrow`, rendered from its batches when read. `to_pandas`
    /// shows the structs `from_arrow` flattened (`struct_parents`) as their
    /// dotted leaves, so the CSV does.
    fn table_files(
        &self,
        model: &TableModel,
        batches: &Arc<TableBatches>,
    ) -> (Option<Arc<PieceFile>>, Arc<PieceFile>) {
        let source: SharedTableSource = batches.clone();
        let may_wait = !self.store.is_local();
        let name = |file: &str| model.name.join(file).display().to_string();
        let leaf_structs: Vec<String> = model
            .schema
            .struct_parents
            .iter()
            .map(|(parent, _)| parent.clone())
            .collect();
        let csv = TableCsv::new(source.clone(), &leaf_structs)
            .map(|csv| Arc::new(PieceFile::new(name("table.csv"), Box::new(csv), may_wait)));
        let arrow = TableArrow::new(source);
        let arrow = Arc::new(PieceFile::new(
            name("table.arrow"),
            Box::new(arrow),
            may_wait,
        ));
        (csv, arrow)
    }
}

/// The presented name of a table's column `name`: as [`escape`], with `/`
/// percent-encoded too, and the table folder's own names
/// (`indexes`, `table.arrow`, `zarr.json`) escaped like reserved names.
pub fn table_child_name(name: &str) -> String {
    let s = escape(name).replace('/', "%2F");
    if TABLE_RESERVED.contains(&s.as_str()) {
        let first = s.as_bytes()[0];
        return format!("%{first:02X}{}", &s[1..]);
    }
    s
}

/// A store node: the store at a local path and the version it presents.
///
/// Like an array entry (the same [`Versioned`] state machine): it presents
/// one version, kept by the metadata cache and loaded again (under the same
/// load number) when the cache let go of it; the tree gives the path a new
/// node when [`Self::is_stale`], except for a mount root, which reloads in
/// place (its in-store children are found under the new load number).
pub struct StoreEntry {
    /// The store's path.
    pub path: PathBuf,
    /// How it is kept.
    pub format: StoreFormat,
    version: Versioned<(Version, SystemTime), StoreResult>,
    /// Load numbers this entry presented and no longer does (reloaded in
    /// place), not yet told to the tree.
    dropped: Mutex<Vec<u64>>,
    /// For a store that is a remote object: where it is (then `path` is its
    /// redacted URL, for messages).
    #[cfg(feature = "remote")]
    remote: Option<super::remote::RemoteObject>,
}

/// What loading a store gave: the store, or the error (with the version it
/// was met at, so a fixed file is tried again).
pub type StoreResult = Result<Arc<LoadedStore>, (Error, Version, SystemTime)>;

/// A store load as the tree holds it.
pub type StoreLoad = Arc<StoreResult>;

impl std::fmt::Debug for StoreEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreEntry")
            .field("path", &self.path)
            .field("format", &self.format)
            .finish_non_exhaustive()
    }
}

impl StoreEntry {
    /// An entry for the store at `path`, its versions kept by `cache`.
    pub fn new(
        path: PathBuf,
        format: StoreFormat,
        in_place: bool,
        cache: &Arc<MetaCache>,
    ) -> StoreEntry {
        StoreEntry {
            path,
            format,
            version: Versioned::new(cache.clone(), in_place),
            dropped: Mutex::new(Vec::new()),
            #[cfg(feature = "remote")]
            remote: None,
        }
    }

    /// An entry for the store that is the remote object `object`.
    #[cfg(feature = "remote")]
    pub fn remote(
        object: super::remote::RemoteObject,
        format: StoreFormat,
        in_place: bool,
        cache: &Arc<MetaCache>,
    ) -> StoreEntry {
        StoreEntry {
            remote: Some(object.clone()),
            ..StoreEntry::new(object.name(), format, in_place, cache)
        }
    }

    /// The store's version now and its modification time.
    fn version_now(&self) -> std::io::Result<(Version, SystemTime)> {
        #[cfg(feature = "remote")]
        if let Some(object) = &self.remote {
            return object.version();
        }
        local_version(&self.stamp_path())
    }

    #[cfg_attr(not(feature = "remote"), allow(unused_variables))]
    fn open_store(&self, version: &Version) -> Result<Store, Error> {
        #[cfg(feature = "remote")]
        if let Some(object) = &self.remote {
            return object.open_store(self.format, version.clone());
        }
        Store::open(&self.path, self.format)
    }

    fn stamp_path(&self) -> PathBuf {
        stamp_path(&self.path, self.format)
    }

    /// Let go of this version (a newer node presents the path); the load
    /// numbers no longer presented.
    pub fn retire(&self) -> Vec<u64> {
        let mut dropped = self.take_dropped();
        let number = self.version.retire();
        if number != 0 {
            dropped.push(number);
        }
        dropped
    }

    /// Load numbers dropped by reloads in place since last asked.
    pub fn take_dropped(&self) -> Vec<u64> {
        std::mem::take(&mut *self.dropped.lock())
    }

    /// Whether the store file changed (or vanished) since loaded.
    pub fn is_stale(&self) -> bool {
        self.version.is_stale(|| self.version_now())
    }

    /// The version presented (loaded on first use and after eviction; a
    /// mount root reloads when the file changed).
    pub fn current(&self) -> std::io::Result<StoreLoad> {
        // The Err is a failed load kept as the entry's value (StoreResult),
        // not an error passed up with `?`: its size costs nothing here.
        #[allow(clippy::result_large_err)]
        let load = |(version, mtime): &(Version, SystemTime), why: Reload, number: u64| {
            if why == Reload::Changed {
                log::info!("{} changed; reopening", self.path.display());
            }
            match self.open_store(version) {
                // A change between the stat and the open shows as stale next
                // time (the store keeps the version it read).
                Ok(store) => Ok(Arc::new(LoadedStore::new(store, *mtime, number))),
                Err(e) => {
                    log::warn!("{e}");
                    Err((e, version.clone(), *mtime))
                }
            }
        };
        let weigh = |load: &StoreResult| load.as_ref().map_or(1024, |s| s.weight());
        let (load, replaced) = self.version.current(|| self.version_now(), load, weigh)?;
        if let Some(Ok(old)) = replaced.as_deref() {
            self.dropped.lock().push(old.load);
        }
        Ok(load)
    }

    /// Version number `load` of the store, which in-store nodes were made
    /// from: ESTALE once the entry presents another version (or none).
    pub fn loaded(&self, load: u64) -> std::io::Result<Arc<LoadedStore>> {
        match &*self.current()? {
            Ok(store) if store.load == load => Ok(store.clone()),
            _ => Err(super::versioned::stale()),
        }
    }
}

/// The file whose version tells a store's version: the archive or `.b2e`
/// file, or a `.b2d`'s `embed.b2e` (python-blosc2 rewrites it on every change).
pub fn stamp_path(path: &Path, format: StoreFormat) -> PathBuf {
    match format {
        StoreFormat::Dir => path.join(crate::source::store::EMBED_NAME),
        _ => path.to_path_buf(),
    }
}

/// The `meta.json` of a store that could not be opened.
pub fn error_meta(path: &Path, error: &Error) -> Arc<Vec<u8>> {
    json_bytes(&json!({ "file": path.display().to_string(), "error": error.problem.to_string() }))
}

/// The store's presented tree as text (`blosc2fs info STORE --tree`): one
/// line per folder and value, indented by depth, with where each value lies
/// and its dtype and shape (or why it cannot be opened).
pub fn tree_text(store: &LoadedStore) -> String {
    let root_table = match store
        .tables
        .iter()
        .any(|t| t.is_empty())
        .then(|| store.table(""))
    {
        Some(info) => match &*info {
            Ok(info) => format!(", ctable of {} rows", info.rows.count),
            Err(e) => format!(", ctable: {e}"),
        },
        None => String::new(),
    };
    let mut out = format!(
        "{} ({} {}, {} keys{root_table})\n",
        store.store.path().display(),
        store.store.format().name(),
        store.store.class(),
        store
            .store
            .values()
            .keys()
            .filter(|k| !is_hidden_key(k))
            .count()
    );
    fn walk(store: &LoadedStore, key: &str, depth: usize, out: &mut String) {
        let info;
        let children: &[(OsString, ChildKind)] = if store.tables.iter().any(|t| t == key) {
            info = store.table(key);
            match &*info {
                Ok(info) => &info.children,
                Err(_) => return,
            }
        } else {
            match store.folders.get(key) {
                Some(children) => children,
                None => return,
            }
        };
        for (name, child) in children {
            let pad = "  ".repeat(depth + 1);
            let name = name.to_string_lossy();
            match child {
                ChildKind::Group(k) => {
                    out.push_str(&format!("{pad}{name}/\n"));
                    walk(store, k, depth + 1, out);
                }
                ChildKind::Table(k) => {
                    let rows = match &*store.table(k) {
                        Ok(info) => format!("{} rows", info.rows.count),
                        Err(e) => format!("error: {e}"),
                    };
                    out.push_str(&format!("{pad}{name}/  ctable, {rows}\n"));
                    walk(store, k, depth + 1, out);
                }
                ChildKind::Column { table, column, key } => {
                    let what = match &*store.table(table) {
                        Ok(info) => {
                            let c = &info.batches.model().columns[*column];
                            let kind = kind_name(c);
                            match &c.parts {
                                Parts::Fixed { .. } => {
                                    format!("{}, {kind} column", value_text(store, key))
                                }
                                _ => format!(
                                    "{kind} column ({})",
                                    arrow_name(c).as_str().unwrap_or("no Arrow type")
                                ),
                            }
                        }
                        Err(e) => format!("error: {e}"),
                    };
                    out.push_str(&format!("{pad}{name}  {what}\n"));
                }
                ChildKind::Value(k) => {
                    out.push_str(&format!("{pad}{name}  {}\n", value_text(store, k)));
                    if let Some(sidecars) = store.index_sidecars.get(k.as_str()) {
                        out.push_str(&format!("{pad}  indexes/\n"));
                        for (key, sidecar) in sidecars {
                            let text = value_text(store, key);
                            out.push_str(&format!("{pad}    {}  {text}\n", sidecar.folder));
                        }
                    }
                }
            }
        }
    }
    walk(store, "", 0, &mut out);
    out
}

/// Where value `key` lies, and its dtype and shape (or why it cannot be
/// opened), for `info --tree`.
fn value_text(store: &LoadedStore, key: &str) -> String {
    let home = store.store.values().get(key).map(home_label).unwrap_or("?");
    let what = match store.store.open_value(key) {
        Ok(a) => match a.shape() {
            Shape::Nd { meta, .. } => {
                format!("{} {:?}", meta.dtype.as_deref().unwrap_or("?"), meta.shape)
            }
            Shape::Plain { .. } => format!("frame of {} bytes", a.data_len()),
        },
        Err(e) => format!("error: {}", e.problem),
    };
    format!("{home}, {what}")
}

/// Whether `home` is an embedded value (for `info --tree`).
pub fn home_label(home: &Home) -> &'static str {
    match home {
        Home::Member(_) => "member",
        Home::File(_) | Home::Listed(_) => "file",
        Home::Embedded { .. } => "embedded",
        Home::Remote { .. } => "remote",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_distinct_and_documented() {
        assert_eq!(escape("temps"), "temps");
        assert_eq!(escape("meta.json"), "%6Deta.json");
        assert_eq!(escape("table.csv"), "%74able.csv");
        assert_eq!(escape("50%"), "50%25");
        assert_eq!(escape(".."), "%2E.");
        assert_ne!(escape("%6Deta.json"), escape("meta.json"));
    }
}
