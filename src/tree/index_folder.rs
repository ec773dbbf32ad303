//! An indexed array's `indexes/` folder as nodes: listed and looked up in
//! the array's folder when its version has index sidecars (the catalog's
//! [`ArrayIndexes`]), holding its own `meta.json` and one array folder per
//! sidecar. The folder belongs to one array node, so it changes when the
//! array does; each sidecar is an array node of its own, revalidated
//! against its file as any array is.

use std::ffi::{OsStr, OsString};
use std::sync::Arc;

use crate::catalog::array_indexes::{ArrayIndexes, INDEXES};
use crate::catalog::entry::{ArrayEntry, Loaded};
use crate::views::Kind;

use super::error::FsError;
use super::folder_entries::DirEntry;
use super::inode::{self, Role};
use super::namespace::{NodeKind, Tree};

impl Tree {
    /// The `indexes/` node of array node `node`, which presents `entry`,
    /// when the version it presents has index sidecars.
    pub(super) fn indexes_node(
        &self,
        node: u32,
        entry: &Arc<ArrayEntry>,
    ) -> Result<Option<u32>, FsError> {
        if entry.current().map_err(FsError::from)?.indexes.is_none() {
            return Ok(None);
        }
        let place = self.nodes.read().get(node).ok_or(FsError::NotFound)?.place;
        Ok(Some(self.intern_fitting(
            node,
            OsStr::new(INDEXES),
            place,
            &|kind| matches!(kind, NodeKind::Indexes(e) if Arc::ptr_eq(e, entry)),
            &|| NodeKind::Indexes(entry.clone()),
        )))
    }

    /// The version of the indexed array `entry` and its `indexes/`.
    pub(super) fn indexes_of(
        &self,
        entry: &ArrayEntry,
    ) -> Result<(Arc<Loaded>, Arc<ArrayIndexes>), FsError> {
        let loaded = entry.current().map_err(FsError::from)?;
        let indexes = loaded.indexes.clone().ok_or(FsError::NotFound)?;
        Ok((loaded, indexes))
    }

    /// Look up sidecar folder `name` in `indexes/` node `node` of the array
    /// `entry` presents: its node.
    pub(super) fn indexes_lookup(
        &self,
        node: u32,
        entry: &ArrayEntry,
        name: &OsStr,
    ) -> Result<u32, FsError> {
        let (_, indexes) = self.indexes_of(entry)?;
        self.intern_sidecar(node, entry, &indexes, name)
            .ok_or(FsError::NotFound)
    }

    /// Append the sidecar folders of `indexes/` node `node` to `out`.
    pub(super) fn indexes_entries(
        &self,
        node: u32,
        entry: &ArrayEntry,
        out: &mut Vec<DirEntry>,
    ) -> Result<(), FsError> {
        let (_, indexes) = self.indexes_of(entry)?;
        for sidecar in &indexes.sidecars {
            if let Some(child) = self.intern_sidecar(node, entry, &indexes, &sidecar.name) {
                out.push((
                    inode::encode(child, Role::Node),
                    Kind::Dir,
                    OsString::from(&sidecar.name),
                ));
            }
        }
        Ok(())
    }

    /// The array node of sidecar `name` under `indexes/` node `node`: the
    /// known one while its source is unchanged.
    fn intern_sidecar(
        &self,
        node: u32,
        entry: &ArrayEntry,
        indexes: &ArrayIndexes,
        name: &OsStr,
    ) -> Option<u32> {
        let origin = ArrayIndexes::origin(&entry.origin, indexes.sidecar(name)?)?;
        let place = self.nodes.read().get(node)?.place;
        Some(self.intern_fitting(
            node,
            name,
            place,
            &|kind| matches!(kind, NodeKind::Array(e) if !e.is_stale()),
            &|| {
                NodeKind::Array(Arc::new(ArrayEntry::sidecar(
                    origin.clone(),
                    indexes.of.clone(),
                    self.on_load.clone(),
                    &self.meta,
                )))
            },
        ))
    }
}
