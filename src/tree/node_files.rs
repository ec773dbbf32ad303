//! Which of a folder's own files (the views' [`FOLDER_FILES`]: `.stats`,
//! `meta.json`, `zarr.json`, `table.csv`) a node holds, for the questions
//! that walk that table (attributes, listing, opening). A store's or
//! in-store folder's files come from its catalog view ([`FolderView`]),
//! found here; a file that tells of the mount reads nothing of the source.
//!
//! A group's `zarr.json` carries its subtree's consolidated metadata when
//! the subtree is small ([`Consolidation`]): found at each getattr and open
//! by listing the folders below as `ls` does and taking each node's own
//! `zarr.json` from the same tables, so it changes when they do.

use std::sync::Arc;

use crate::catalog::entry::ArrayEntry;
use crate::catalog::store_folder::FolderView;
use crate::views::piece_file::PieceFile;
use crate::views::zarr3_group::{folder_group, Consolidation};
use crate::views::{find_array_file, Content, Folder, FolderFile, FolderHolds, Kind, FOLDER_FILES};

use super::error::FsError;
use super::inode::{self, folder_file_role, Role};
use super::namespace::{Location, NodeKind, Tree};

/// What one node holds of the folder files.
pub(super) struct NodeFiles<'a> {
    tree: &'a Tree,
    node: u32,
    /// A mirrored folder (its `zarr.json` is named after it).
    mirrored: bool,
    /// A store's or in-store folder's view (found only when a file of the
    /// folder's own is asked for).
    pub(super) view: Option<FolderView>,
    /// An indexed array's `indexes/`: its `meta.json`.
    indexes_meta: Option<Arc<Vec<u8>>>,
}

impl FolderHolds for NodeFiles<'_> {
    fn is_mount_root(&self) -> bool {
        self.node == 0
    }

    fn meta_json(&self) -> Option<Arc<Vec<u8>>> {
        if let Some(meta) = &self.indexes_meta {
            return Some(meta.clone());
        }
        Some(self.view.as_ref()?.meta()?.0)
    }

    fn zarr_json(&self) -> Option<Arc<Vec<u8>>> {
        let own = self.group_zarr_json()?;
        Some(match self.tree.consolidate(self.node) {
            Some(below) => Arc::new(below.document(&own)),
            None => own,
        })
    }

    fn holds_zarr_json(&self) -> bool {
        self.group_zarr_json().is_some()
    }

    fn table_csv(&self) -> Option<Arc<PieceFile>> {
        self.view.as_ref()?.table_csv()
    }

    fn table_arrow(&self) -> Option<Arc<PieceFile>> {
        self.view.as_ref()?.table_arrow()
    }
}

impl NodeFiles<'_> {
    /// The folder's own `zarr.json` as a group, without consolidated
    /// metadata (what the consolidated metadata of a folder above holds).
    fn group_zarr_json(&self) -> Option<Arc<Vec<u8>>> {
        if self.mirrored {
            return self.tree.dir_zarr(self.node).map(Arc::new);
        }
        self.view.as_ref()?.zarr_json()
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
            indexes_meta: match kind {
                NodeKind::Indexes(entry) => Some(self.indexes_of(entry)?.1.meta_json.clone()),
                _ => None,
            },
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
            indexes_meta: None,
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

/// The consolidated metadata of a group's `zarr.json` (see [`Consolidation`]).
impl Tree {
    /// The arrays and groups below group node `top` with their own
    /// `zarr.json`, each folder listed as `readdir` lists it (its children
    /// found and revalidated as `ls` finds them). `None`, and readers walk,
    /// when there are more than the bound, when a folder below cannot be
    /// listed, or when a node below is closed to someone who may read
    /// `top`'s `zarr.json`. Nodes without a `zarr.json` (an array v3
    /// cannot describe or that cannot be read, a store that failed) are
    /// left out with what lies below them, as a walk leaves them out.
    fn consolidate(&self, top: u32) -> Option<Consolidation> {
        let readers = self.access_of(top)?;
        let mut found = Consolidation::default();
        // The folders first, down to the bottom: a subtree over the bound
        // is known so before any array in it is loaded.
        let mut arrays = Vec::new();
        let mut folders = vec![(top, String::new())];
        while let Some((folder, path)) = folders.pop() {
            let room = found.room().saturating_sub(arrays.len());
            for (child, name) in self.listed_children(folder, room)? {
                let path = if path.is_empty() {
                    name
                } else {
                    format!("{path}/{name}")
                };
                let Ok((_, kind)) = self.node_info(child) else {
                    continue;
                };
                match &kind {
                    NodeKind::Array(entry) => arrays.push((child, path, entry.clone())),
                    NodeKind::Dir(_) | NodeKind::Store(_) | NodeKind::Folder(_) => {
                        let own = self.node_files(child, &kind).ok();
                        let Some(doc) = own.and_then(|f| f.group_zarr_json()) else {
                            continue;
                        };
                        self.open_to(child, &readers, &path)?;
                        found.add_group(path.clone(), &doc).ok()?;
                        folders.push((child, path));
                    }
                    // Under arrays only, which are not walked into.
                    NodeKind::Link(_) | NodeKind::Indexes(_) => {}
                    // Files shown as themselves are no Zarr nodes.
                    NodeKind::Plain(_) => {}
                }
                if arrays.len() > found.room() {
                    return None;
                }
            }
        }
        // Then the arrays' own documents.
        for (child, path, entry) in arrays {
            let Some(doc) = self.array_zarr_json(&entry) else {
                continue;
            };
            self.open_to(child, &readers, &path)?;
            found.add_array(path, doc).ok()?;
        }
        Some(found)
    }

    /// The child nodes of folder node `folder` as `readdir` lists them,
    /// with their names (those JSON can hold); `None` when it cannot be
    /// listed or holds more than `room` entries.
    fn listed_children(&self, folder: u32, room: usize) -> Option<Vec<(u32, String)>> {
        if self.more_entries_than(folder, room) {
            return None;
        }
        let entries = match self.readdir(inode::encode(folder, Role::Node), 0, usize::MAX) {
            Ok(entries) => entries,
            Err(e) => {
                log::debug!("no consolidated metadata above a folder that cannot be listed: {e}");
                return None;
            }
        };
        let children = entries.into_iter().skip(2).filter_map(|(ino, kind, name)| {
            match (kind, inode::decode(ino)) {
                (Kind::Dir, Some((child, Role::Node))) => Some((child, name.into_string().ok()?)),
                // Its own files, symlinks.
                _ => None,
            }
        });
        Some(children.collect())
    }

    /// The presented access of node `node`'s folder.
    fn access_of(&self, node: u32) -> Option<FolderAccess> {
        let attr = self.getattr(inode::encode(node, Role::Node)).ok()?;
        Some(FolderAccess {
            perm: attr.perm,
            owner: attr.owner,
        })
    }

    /// `Some` when node `node` (at `path`) lets in everyone who may read
    /// the group whose folder's access is `readers` (see [`lets_in`]).
    fn open_to(&self, node: u32, readers: &FolderAccess, path: &str) -> Option<()> {
        if lets_in(&self.access_of(node)?, readers) {
            return Some(());
        }
        log::debug!(
            "no consolidated metadata above {path:?}: it is closed to some of the group's readers"
        );
        None
    }

    /// An array's own `zarr.json`, from the table of its files (`None` when
    /// it cannot be read or v3 cannot describe it).
    fn array_zarr_json(&self, entry: &ArrayEntry) -> Option<Arc<Vec<u8>>> {
        let loaded = entry.current().ok()?;
        let row = find_array_file(Folder::Array, "zarr.json", &loaded, self.views)?;
        match (row.open)(&loaded)? {
            Content::Static(doc) => Some(doc),
            _ => None,
        }
    }

    /// Whether local folder node `folder` holds more than `room` entries in
    /// its source directory (counted without looking at them: a folder of
    /// a million files is not listed only to find it is over the bound).
    fn more_entries_than(&self, folder: u32, room: usize) -> bool {
        let Ok((_, NodeKind::Dir(real))) = self.node_info(folder) else {
            return false;
        };
        let Ok(Location::Local(path)) = self.location(folder) else {
            return false;
        };
        let dir = real.as_deref().map_or(path.as_path(), |p| p.as_path());
        std::fs::read_dir(dir).is_ok_and(|items| items.take(room + 1).count() > room)
    }
}

/// A folder's presented permission bits and owner (as getattr gives them).
struct FolderAccess {
    perm: u16,
    owner: Option<(u32, u32)>,
}

/// Whether everyone who may read a group's `zarr.json` (a reader of its
/// folder, whose access is `group`: read and search bits) may also read
/// the node below whose folder's access is `node`, so the consolidated
/// metadata tells nobody of what they could not list. Group memberships
/// are not known here: a node closed to "others" passes only when the
/// group's readers are its owner and group too.
fn lets_in(node: &FolderAccess, group: &FolderAccess) -> bool {
    let rx = |perm: u16, shift: u32| (perm >> shift) & 0o5 == 0o5;
    if rx(node.perm, 0) {
        return true;
    }
    if rx(group.perm, 0) {
        return false;
    }
    let (Some((uid, gid)), Some((group_uid, group_gid))) = (node.owner, group.owner) else {
        return false;
    };
    let owner = !rx(group.perm, 6) || (uid == group_uid && rx(node.perm, 6));
    let members = !rx(group.perm, 3) || (gid == group_gid && rx(node.perm, 3) && rx(node.perm, 6));
    owner && members
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(perm: u16, uid: u32, gid: u32) -> FolderAccess {
        FolderAccess {
            perm,
            owner: Some((uid, gid)),
        }
    }

    #[test]
    fn a_node_below_must_let_in_every_reader_of_the_group() {
        let open = access(0o555, 1, 1);
        // Open to all: anyone's group may list it.
        assert!(lets_in(&access(0o555, 7, 7), &open));
        assert!(lets_in(&access(0o005, 7, 7), &access(0o500, 1, 1)));
        // Closed to others while others read the group.
        assert!(!lets_in(&access(0o550, 1, 1), &open));
        // The group is read by its owner alone: the same owner suffices.
        assert!(lets_in(&access(0o500, 1, 9), &access(0o500, 1, 1)));
        assert!(!lets_in(&access(0o500, 2, 1), &access(0o500, 1, 1)));
        // Read by owner and group: both must be the node's, both let in.
        assert!(lets_in(&access(0o550, 1, 1), &access(0o550, 1, 1)));
        assert!(!lets_in(&access(0o550, 1, 2), &access(0o550, 1, 1)));
        assert!(!lets_in(&access(0o050, 1, 1), &access(0o550, 1, 1)));
        // Read bits without search bits let nobody in.
        assert!(!lets_in(&access(0o544, 1, 1), &open));
        // Only root reads the group: nothing to hide from anyone.
        assert!(lets_in(&access(0o000, 5, 5), &access(0o000, 1, 1)));
    }
}
