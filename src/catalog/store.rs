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
use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use serde_json::{json, Map, Value as Json};

use crate::format::{Error, Problem, Region, Shape, Version};
use crate::read::{read_uncached, RowMap};
use crate::source::local_version;
use crate::source::store::{Home, Store, StoreFormat};

use super::meta_cache::MetaCache;
use super::versioned::{Reload, Versioned};
use crate::views::zarr3_group::described_group;

/// Names reserved in every store folder (group, store root, table).
const RESERVED: [&str; 2] = ["meta.json", "table.csv"];
/// Most runs of valid rows a table's row map holds (bounds its memory).
const MAX_ROW_RUNS: usize = 1 << 22;
/// Bytes of the valid-rows mask decoded at a time.
const MASK_STEP: u64 = 1 << 20;

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
    /// A column of the table at `table`, stored at `key`.
    Column {
        /// The table's root key.
        table: String,
        /// The column array's key.
        key: String,
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
    /// Its `table.csv`, when every column is a 1-D array of a dtype
    /// `data.txt` can show (the table's meta.json says why not otherwise).
    pub csv: Option<Arc<crate::views::table_csv::TableCsv>>,
    /// Bytes of the table folder's `zarr.json` (a Zarr v3 group).
    pub zarr_json: Arc<Vec<u8>>,
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
    table_info: Mutex<HashMap<String, Arc<Result<TableInfo, Error>>>>,
}

fn json_bytes(doc: &Json) -> Arc<Vec<u8>> {
    Arc::new(crate::views::json::json_bytes(doc))
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
        for key in &keys {
            if in_table(key) {
                continue;
            }
            let parent = parent_key(key).to_string();
            let name = escape(&key[parent.len() + 1..]);
            folders
                .entry(parent)
                .or_default()
                .push((OsString::from(name), ChildKind::Value((*key).clone())));
        }
        for t in &tables {
            let prefix = format!("{t}/_cols/");
            let mut cols = Vec::new();
            for key in keys.iter().filter(|k| k.starts_with(&prefix)) {
                let name = escape(&key[prefix.len()..].replace('/', "."));
                cols.push((
                    OsString::from(name),
                    ChildKind::Column {
                        table: t.clone(),
                        key: (*key).clone(),
                    },
                ));
            }
            folders.insert(t.clone(), cols);
        }
        for list in folders.values_mut() {
            list.sort_by(|a, b| a.0.cmp(&b.0));
        }
        let mut group_meta = HashMap::new();
        let mut group_zarr = HashMap::new();
        for g in folders.keys().filter(|g| !tables.contains(g)) {
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
        4096 + listings + metas + keys
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
        let meta_key = format!("{table}/_meta");
        let meta = self.store.open_value(&meta_key)?;
        let vl: Map<String, Json> = meta.frame().vlmeta.iter().cloned().collect();
        let schema = match vl.get("schema") {
            Some(Json::String(s)) => {
                serde_json::from_str(s).unwrap_or_else(|_| Json::String(s.clone()))
            }
            Some(other) => other.clone(),
            None => Json::Null,
        };
        let rows_key = format!("{table}/_valid_rows");
        let mask = self.store.open_value(&rows_key)?;
        let name = self.store.key_name(&rows_key);
        if mask.frame().typesize != 1 {
            return Err(Error::new(
                &name,
                Problem::corrupt(
                    "valid rows",
                    format!("items of {} bytes, not bool", mask.frame().typesize),
                ),
            ));
        }
        let total = mask.data_len();
        let mut rows = RowMap::default();
        let mut buf = Vec::new();
        let mut at = 0;
        while at < total {
            let n = MASK_STEP.min(total - at);
            buf.resize(n as usize, 0);
            read_uncached(&mask, Region::Data, at, &mut buf).map_err(|p| Error::new(&name, p))?;
            for (i, &b) in buf.iter().enumerate() {
                if b != 0 {
                    let row = at + i as u64;
                    match rows.runs.last_mut() {
                        Some((start, n)) if *start + *n == row => *n += 1,
                        _ => {
                            if rows.runs.len() == MAX_ROW_RUNS {
                                return Err(Error::new(
                                    &name,
                                    Problem::Limit(format!(
                                        "more than {MAX_ROW_RUNS} runs of valid rows"
                                    )),
                                ));
                            }
                            rows.runs.push((row, 1));
                        }
                    }
                    rows.count += 1;
                }
            }
            at += n;
        }
        let columns: Vec<String> = self
            .folders
            .get(table)
            .map(|c| {
                c.iter()
                    .map(|(n, _)| n.to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let csv = self.table_csv(table, &rows);
        let mut doc = json!({
            "kind": "ctable",
            "key": if table.is_empty() { "/" } else { table },
            "rows": rows.count,
            "columns": columns,
            "schema": schema,
            "vlmeta": vl,
        });
        if csv.is_none() {
            doc["table_csv"] = json!("none: a column is not a 1-D array of a numeric dtype, or the columns hold different rows");
        }
        Ok(TableInfo {
            zarr_json: Arc::new(described_group(&doc)),
            meta_json: json_bytes(&doc),
            rows: Arc::new(rows),
            csv,
        })
    }

    /// The `table.csv` of the table at `table`: its columns in stored order
    /// of the folder listing (by name), over the valid rows.
    fn table_csv(
        &self,
        table: &str,
        rows: &RowMap,
    ) -> Option<Arc<crate::views::table_csv::TableCsv>> {
        let mut columns = Vec::new();
        for (name, child) in self.folders.get(table)? {
            let ChildKind::Column { key, .. } = child else {
                continue;
            };
            let array = Arc::new(self.store.open_value(key).ok()?);
            let dtype = crate::views::presented_dtype(&array);
            columns.push((name.to_string_lossy().into_owned(), array, dtype));
        }
        crate::views::table_csv::TableCsv::new(columns, rows).map(Arc::new)
    }
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
        let Some(children) = store.folders.get(key) else {
            return;
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
                ChildKind::Value(k) | ChildKind::Column { key: k, .. } => {
                    let home = store.store.values().get(k).map(home_label).unwrap_or("?");
                    let what = match store.store.open_value(k) {
                        Ok(a) => match a.shape() {
                            Shape::Nd { meta, .. } => {
                                format!("{} {:?}", meta.dtype.as_deref().unwrap_or("?"), meta.shape)
                            }
                            Shape::Plain { .. } => format!("frame of {} bytes", a.data_len()),
                        },
                        Err(e) => format!("error: {}", e.problem),
                    };
                    out.push_str(&format!("{pad}{name}  {home}, {what}\n"));
                }
            }
        }
    }
    walk(store, "", 0, &mut out);
    out
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
