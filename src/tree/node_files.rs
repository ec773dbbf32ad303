//! Which of a folder's own files (the views' [`FOLDER_FILES`]: `.stats`,
//! `meta.json`, `zarr.json`, `table.csv`) a node holds, for the questions
//! that walk that table (attributes, listing, opening). A store's or
//! in-store folder's files come from its catalog view ([`FolderView`]),
//! found here; a file that tells of the mount reads nothing of the source.

use std::sync::Arc;

use crate::catalog::store_folder::FolderView;
use crate::views::table_csv::TableCsv;
use crate::views::zarr3_group::folder_group;
use crate::views::{FolderFile, FolderHolds, FOLDER_FILES};

use super::error::FsError;
use super::inode::{folder_file_role, Role};
use super::namespace::{NodeKind, Tree};

/// What one node holds of the folder files.
pub(super) struct NodeFiles<'a> {
    tree: &'a Tree,
    node: u32,
    /// A mirrored folder (its `zarr.json` is named after it).
    mirrored: bool,
    /// A store's or in-store folder's view (found only when a file of the
    /// folder's own is asked for).
    pub(super) view: Option<FolderView>,
}

impl FolderHolds for NodeFiles<'_> {
    fn is_mount_root(&self) -> bool {
        self.node == 0
    }

    fn meta_json(&self) -> Option<Arc<Vec<u8>>> {
        Some(self.view.as_ref()?.meta()?.0)
    }

    fn zarr_json(&self) -> Option<Arc<Vec<u8>>> {
        if self.mirrored {
            return self.tree.dir_zarr(self.node).map(Arc::new);
        }
        self.view.as_ref()?.zarr_json()
    }

    fn table_csv(&self) -> Option<Arc<TableCsv>> {
        self.view.as_ref()?.table_csv()
    }
}

/// The row of the folder files that inode role `role` names, if any.
pub(super) fn folder_row(role: Role) -> Option<&'static FolderFile> {
    FOLDER_FILES.iter().find(|f| folder_file_role(f.id) == role)
}

impl Tree {
    /// What node `node` (of kind `kind`) holds of the folder files; a
    /// store's or in-store folder's view is found now.
    pub(super) fn node_files(&self, node: u32, kind: &NodeKind) -> Result<NodeFiles<'_>, FsError> {
        Ok(NodeFiles {
            tree: self,
            node,
            mirrored: matches!(kind, NodeKind::Dir(_)),
            view: self.folder_view(kind)?,
        })
    }

    /// What node `node` holds of the folder files that tell of the mount:
    /// nothing of its source is read.
    pub(super) fn mount_files(&self, node: u32) -> NodeFiles<'_> {
        NodeFiles {
            tree: self,
            node,
            mirrored: false,
            view: None,
        }
    }

    /// What node `node` holds for the question of folder file `row`.
    pub(super) fn files_for(
        &self,
        node: u32,
        kind: &NodeKind,
        row: &FolderFile,
    ) -> Result<NodeFiles<'_>, FsError> {
        if row.of_mount {
            Ok(self.mount_files(node))
        } else {
            self.node_files(node, kind)
        }
    }

    /// The view of a store or in-store folder node (`None` for other
    /// kinds): a store is loaded if need be, and the versions that let go
    /// of are retired; an in-store folder of a version no longer presented
    /// is stale.
    pub(super) fn folder_view(&self, kind: &NodeKind) -> Result<Option<FolderView>, FsError> {
        Ok(match kind {
            NodeKind::Store(entry) => {
                let view = FolderView::of_store(entry, self.is_remote())?;
                self.retire_loads(&entry.take_dropped());
                Some(view)
            }
            NodeKind::Folder(folder) => Some(FolderView::of_folder(folder).ok_or(FsError::Stale)?),
            _ => None,
        })
    }

    /// Whether the mount's source is remote.
    fn is_remote(&self) -> bool {
        #[cfg(feature = "remote")]
        return self.remote.is_some();
        #[cfg(not(feature = "remote"))]
        false
    }

    /// The `zarr.json` of mirrored folder node `node` (a Zarr v3 group named
    /// after the folder; the mount root after the last name of its source:
    /// a folder, a bucket or prefix, a Caterva2 root).
    fn dir_zarr(&self, node: u32) -> Option<Vec<u8>> {
        let name = if node == 0 {
            self.root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        } else {
            let nodes = self.nodes.read();
            nodes.get(node)?.name.to_string_lossy().into_owned()
        };
        Some(folder_group(&name))
    }
}
