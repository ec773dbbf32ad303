//! One object or sparse-frame prefix under a remote root: an array's or a
//! store's origin, with its version (from its folder's listing), its name
//! in messages (the redacted URL), and what is read through it: the array,
//! the store, or an operand of a saved expression kept beside it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use crate::format::{Array, Error, Version, SPARSE_INDEX};
use crate::source::store::{Store, StoreFormat, EMBED_NAME};

use super::keys::sibling_key;
use super::members::RemoteMembers;
use super::root::{io_error, RemoteRoot};

/// One object or sparse-frame prefix under a [`RemoteRoot`]: an array's or
/// a store's origin.
#[derive(Debug, Clone)]
pub struct RemoteObject {
    root: Arc<RemoteRoot>,
    key: String,
    sparse: bool,
    /// For a prefix (a sparse frame, a `.b2d` store): the object under it
    /// whose identity is the whole's version (`chunks.b2frame`, `embed.b2e`).
    stamp: Option<&'static str>,
}

impl RemoteObject {
    /// The object (or sparse-frame prefix) `key` under `root`.
    pub fn new(root: Arc<RemoteRoot>, key: String, sparse: bool) -> RemoteObject {
        RemoteObject {
            root,
            key,
            sparse,
            stamp: sparse.then_some(SPARSE_INDEX),
        }
    }

    /// The store kept as `format` at `key` under `root` (an object, or a
    /// prefix for a `.b2d`).
    pub fn store(root: Arc<RemoteRoot>, key: String, format: StoreFormat) -> RemoteObject {
        RemoteObject {
            root,
            key,
            sparse: false,
            stamp: (format == StoreFormat::Dir).then_some(EMBED_NAME),
        }
    }

    /// Its version now (from its folder's listing, at most a TTL old) and
    /// its modification time.
    pub fn version(&self) -> std::io::Result<(Version, SystemTime)> {
        self.root.version(&self.key, self.stamp).map_err(io_error)
    }

    /// Its redacted URL, as the name in messages.
    pub fn name(&self) -> PathBuf {
        PathBuf::from(self.root.location(&self.key).redacted())
    }

    /// Open the array stored here.
    pub fn open(&self) -> Result<Array, Error> {
        self.root.open_array(&self.key, self.sparse, &self.name())
    }

    /// The object at `relative` (a `/`-separated path, `..` allowed) from
    /// this object's folder, when it stays under the same root; `None` for
    /// an absolute path or one that climbs above the root.
    pub fn sibling(&self, relative: &str) -> Option<RemoteObject> {
        Some(RemoteObject::new(
            self.root.clone(),
            sibling_key(&self.key, relative)?,
            false,
        ))
    }

    /// The dataset a `c2array` operand names (`path` from its `@root`, on
    /// the server at `urlbase`), when that is the mounted Caterva2 server
    /// and the path lies in the mounted folder; otherwise the reason it is
    /// not read (no other server is ever asked).
    pub fn caterva2_dataset(
        &self,
        path: &str,
        urlbase: Option<&str>,
    ) -> Result<RemoteObject, String> {
        let served = self
            .root
            .served()
            .ok_or("a Caterva2 operand is read only when the mount is of its server")?;
        let key = served.operand_key(path, urlbase)?;
        Ok(RemoteObject::new(self.root.clone(), key, false))
    }

    /// The geometry nnU-Net's plans beside it give it, as an array of
    /// `shape` (see [`crate::catalog::nnunet_plans`]).
    pub fn plans_geometry(
        &self,
        memo: &crate::catalog::nnunet_plans::PlansMemo,
        shape: &[u64],
    ) -> Option<crate::views::imaging::Geometry> {
        let files = super::plans::RemotePlans(&self.root);
        memo.geometry_in(&files, Path::new(&self.key), shape, &self.name().display())
    }

    /// Its key under the root (for messages and cycle checks).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Open the object's bytes as they are (a file shown as itself):
    /// ranged GETs, through the disk cache's remote tier when there is one.
    pub fn open_bytes(&self) -> Result<Arc<dyn crate::format::ByteSource>, Error> {
        self.root
            .location(&self.key)
            .open()
            .map_err(|e| Error::new(&self.name(), e.into()))
    }

    /// Open the store kept here as `format`, reporting `version` as its version.
    pub fn open_store(&self, format: StoreFormat, version: Version) -> Result<Store, Error> {
        let name = self.name();
        if format == StoreFormat::Dir {
            let members = RemoteMembers::new(self.root.listings().clone(), self.key.clone());
            return Store::open_members(&name, Arc::new(members), version);
        }
        let source = self
            .root
            .location(&self.key)
            .open()
            .map_err(|e| Error::new(&name, e.into()))?;
        Store::open_source(&name, source, format, version)
    }
}
