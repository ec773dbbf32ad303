//! A store's folders as the namespace presents them: the store root, a
//! group or a CTable inside one version of a store ([`StoreFolder`]), and
//! what such a folder shows ([`FolderView`]): its `meta.json`, `zarr.json`
//! and `table.csv`, its children, and its owner and mode.
//!
//! Answers are `Option`s and `io::Result`s: which errno a missing file or a
//! store that moved on becomes is the namespace's business, not the
//! catalog's.

use std::ffi::{OsStr, OsString};
use std::sync::Arc;
use std::time::SystemTime;

use crate::format::Error;
use crate::tables::SharedTableSource;
use crate::views::piece_file::PieceFile;

use super::access::Access;
#[cfg(feature = "remote")]
use super::remote::remote_access;
use super::store::{error_meta, ChildKind, LoadedStore, StoreEntry, TableInfo};

/// A group (or, `table`, a CTable) inside version number `load` of a store.
#[derive(Debug)]
pub struct StoreFolder {
    /// The store it lies in.
    pub store: Arc<StoreEntry>,
    /// The store version it was found in.
    pub load: u64,
    /// Its key in the store (`""` is the store root).
    pub key: String,
    /// It is a CTable's folder.
    pub table: bool,
}

/// What a store's folder shows now: the store version and the folder's
/// key, or the error that kept the store from loading.
pub enum FolderView {
    /// The store loaded.
    Ok {
        /// The store.
        entry: Arc<StoreEntry>,
        /// The version shown.
        store: Arc<LoadedStore>,
        /// The folder's key (`""` is the store root).
        key: String,
        /// It is a CTable's folder.
        table: bool,
        /// For a CTable's folder: the table (its children are its columns).
        info: Option<Arc<Result<TableInfo, Error>>>,
    },
    /// The store could not be loaded: its root shows only a `meta.json`
    /// saying why.
    Failed {
        /// That `meta.json`.
        meta_json: Arc<Vec<u8>>,
        /// The store's modification time when the load failed.
        mtime: SystemTime,
        /// The store's owner and mode.
        access: Access,
    },
}

impl FolderView {
    /// The root folder of store `entry`, in the version it presents now
    /// (loaded if need be); `remote`: the mount's source is remote, so a
    /// store that failed shows the remote entries' owner and mode. The
    /// caller retires the versions the load let go of
    /// ([`StoreEntry::take_dropped`]).
    #[cfg_attr(not(feature = "remote"), allow(unused_variables))]
    pub fn of_store(entry: &Arc<StoreEntry>, remote: bool) -> std::io::Result<FolderView> {
        Ok(match &*entry.current()? {
            Ok(store) => {
                let table = store.tables.iter().any(|t| t.is_empty());
                FolderView::Ok {
                    entry: entry.clone(),
                    store: store.clone(),
                    key: String::new(),
                    table,
                    info: table.then(|| store.table("")),
                }
            }
            Err((e, _, mtime)) => FolderView::Failed {
                meta_json: error_meta(&entry.path, e),
                mtime: *mtime,
                #[cfg(feature = "remote")]
                access: if remote {
                    remote_access()
                } else {
                    Access::of_path(&entry.path).unwrap_or(Access::DENY)
                },
                #[cfg(not(feature = "remote"))]
                access: Access::of_path(&entry.path).unwrap_or(Access::DENY),
            },
        })
    }

    /// In-store folder `folder`, in the version it was found in; `None`
    /// once its store presents another version (or none): the folder is
    /// stale.
    pub fn of_folder(folder: &StoreFolder) -> Option<FolderView> {
        let store = folder.store.loaded(folder.load).ok()?;
        Some(FolderView::Ok {
            entry: folder.store.clone(),
            info: folder.table.then(|| store.table(&folder.key)),
            store,
            key: folder.key.clone(),
            table: folder.table,
        })
    }

    /// Owner, group and mode of a store's folders: the store file's now.
    pub fn access(&self) -> Access {
        match self {
            FolderView::Failed { access, .. } => *access,
            #[cfg(feature = "remote")]
            FolderView::Ok { store, .. } if !store.store.is_local() => remote_access(),
            FolderView::Ok { store, .. } => {
                Access::of_path(store.store.path()).unwrap_or(Access::DENY)
            }
        }
    }

    /// The folder's `meta.json` bytes and its modification time.
    pub fn meta(&self) -> Option<(Arc<Vec<u8>>, SystemTime)> {
        match self {
            FolderView::Failed {
                meta_json, mtime, ..
            } => Some((meta_json.clone(), *mtime)),
            FolderView::Ok {
                store,
                key,
                table: true,
                ..
            } => match &*store.table(key) {
                Ok(info) => Some((info.meta_json.clone(), store.mtime)),
                Err(e) => Some((error_meta(&store.store.key_name(key), e), store.mtime)),
            },
            FolderView::Ok { store, key, .. } => {
                Some((store.group_meta.get(key).cloned()?, store.mtime))
            }
        }
    }

    /// The folder's `zarr.json` (a Zarr v3 group), when it could be read.
    pub fn zarr_json(&self) -> Option<Arc<Vec<u8>>> {
        match self {
            FolderView::Failed { .. } => None,
            FolderView::Ok {
                store,
                key,
                table: true,
                ..
            } => Some(store.table(key).as_ref().as_ref().ok()?.zarr_json.clone()),
            FolderView::Ok { store, key, .. } => store.group_zarr.get(key).cloned(),
        }
    }

    /// The `table.csv` of a table folder (`None` for other folders, and for
    /// tables with no column it can show).
    pub fn table_csv(&self) -> Option<Arc<PieceFile>> {
        self.table_info()?.csv.clone()
    }

    /// The `table.arrow` of a table folder (`None` for other folders).
    pub fn table_arrow(&self) -> Option<Arc<PieceFile>> {
        Some(self.table_info()?.arrow.clone())
    }

    /// The table a table folder presents, when it could be read.
    fn table_info(&self) -> Option<&TableInfo> {
        match self {
            FolderView::Ok {
                info: Some(info), ..
            } => info.as_ref().as_ref().ok(),
            _ => None,
        }
    }

    /// The folder's children, sorted by name (none when the store failed;
    /// a table's: its logical columns and `indexes/`, none when the table
    /// could not be read).
    pub fn children(&self) -> &[(OsString, ChildKind)] {
        match self {
            FolderView::Ok {
                info: Some(info), ..
            } => match &**info {
                Ok(info) => &info.children,
                Err(_) => &[],
            },
            FolderView::Ok { store, key, .. } => store
                .folders
                .get(key)
                .map(Vec::as_slice)
                .unwrap_or_default(),
            FolderView::Failed { .. } => &[],
        }
    }

    /// The table a table folder presents (`None` for other folders and for
    /// a table that could not be read).
    pub fn table_source(&self) -> Option<SharedTableSource> {
        match self {
            FolderView::Ok {
                info: Some(info), ..
            } => Some(info.as_ref().as_ref().ok()?.source()),
            _ => None,
        }
    }

    /// The child named `name`, when the folder has one.
    pub fn child(&self, name: &OsStr) -> Option<&ChildKind> {
        if matches!(self, FolderView::Failed { .. }) {
            return None;
        }
        let children = self.children();
        let i = children
            .binary_search_by(|(n, _)| n.as_os_str().cmp(name))
            .ok()?;
        Some(&children[i].1)
    }
}
