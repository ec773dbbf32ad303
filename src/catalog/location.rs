//! Where an array's bytes come from, kept apart from what it presents.
//!
//! An array node opens its bytes through an [`Origin`]: a local path, a key
//! inside one loaded version of a store, or a key under a remote root (an
//! object-store prefix or a URL; see [`super::remote`]); each answers the
//! same questions: what is its current version and access, and open it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use crate::format::{Array, Error, Problem, Version};
use crate::source::{local_version, open_array};

use super::access::Access;
#[cfg(feature = "remote")]
use super::remote::{remote_access, RemoteObject};
use super::store::StoreEntry;

/// Where an array's bytes come from.
#[derive(Debug, Clone)]
pub enum Origin {
    /// A local frame file or sparse-frame directory.
    Local(PathBuf),
    /// A value of one loaded store version (a zip member window, a `.b2d`
    /// member file, or an embedded frame). Once the store presents another
    /// version, the value answers ESTALE (files already open keep their bytes).
    Value {
        /// The store the value belongs to.
        store: Arc<StoreEntry>,
        /// The number of the store version it belongs to.
        load: u64,
        /// Its key.
        key: String,
        /// `STORE:KEY`, for messages.
        name: PathBuf,
    },
    /// A remote frame object or sparse-frame prefix; its version is its
    /// identity (size and ETag) as its folder's listing gives it.
    #[cfg(feature = "remote")]
    Remote(RemoteObject),
}

impl Origin {
    /// The source's version now and its modification time. A store value's
    /// version is that of the store version it belongs to (which never
    /// changes: a changed store is loaded again under new locations).
    pub fn version(&self) -> std::io::Result<(Version, SystemTime)> {
        match self {
            Origin::Local(path) => local_version(path),
            Origin::Value { store, load, .. } => {
                let store = store.loaded(*load)?;
                Ok((store.store.version().clone(), store.mtime))
            }
            #[cfg(feature = "remote")]
            Origin::Remote(object) => object.version(),
        }
    }

    /// Owner, group and mode the presented entries take: the source's own
    /// (a sparse frame: its directory's, with the read bits its index
    /// grants); a store value takes its store file's; a remote source is the
    /// mounting user's, readable by all.
    pub fn access(&self) -> std::io::Result<Access> {
        match self {
            Origin::Local(path) => Access::of_path(path),
            Origin::Value { store, load, .. } => {
                let store = store.loaded(*load)?;
                #[cfg(feature = "remote")]
                if !store.store.is_local() {
                    return Ok(remote_access());
                }
                Access::of_path(store.store.path())
            }
            #[cfg(feature = "remote")]
            Origin::Remote(_) => Ok(remote_access()),
        }
    }

    /// Open the array.
    pub fn open(&self) -> Result<Array, Error> {
        match self {
            Origin::Local(path) => open_array(path),
            Origin::Value {
                store,
                load,
                key,
                name,
            } => match store.loaded(*load) {
                Ok(store) => store.store.open_value(key),
                Err(_) => Err(Error::new(
                    name,
                    Problem::SourceChanged("the store changed".into()),
                )),
            },
            #[cfg(feature = "remote")]
            Origin::Remote(object) => object.open(),
        }
    }

    /// Whether it is an object of a remote root (whose failures may pass).
    pub fn is_remote(&self) -> bool {
        #[cfg(feature = "remote")]
        if let Origin::Remote(_) = self {
            return true;
        }
        false
    }

    /// The name used in messages and in the `meta.json` of an unreadable array.
    pub fn name(&self) -> PathBuf {
        match self {
            Origin::Local(path) => path.clone(),
            Origin::Value { name, .. } => name.clone(),
            #[cfg(feature = "remote")]
            Origin::Remote(object) => object.name(),
        }
    }

    /// The number of the store version a store value belongs to.
    pub fn store_load(&self) -> Option<u64> {
        match self {
            Origin::Value { load, .. } => Some(*load),
            _ => None,
        }
    }

    /// Whether the source can change under this origin (a store value is
    /// fixed to its store version).
    pub fn can_change(&self) -> bool {
        !matches!(self, Origin::Value { .. })
    }
}
