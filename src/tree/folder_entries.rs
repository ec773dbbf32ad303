//! Which names a folder holds: lookup of one name and readdir of them all,
//! for every kind of folder the tree presents (a mirrored folder, local or
//! remote; an array's folder, its `chunks/` and its hidden chunk tree
//! `c/`; a store's folders). A folder's own files come first, from the
//! views' [`crate::views::FOLDER_FILES`]; then an array's files, from
//! [`crate::views::ARRAY_FILES`], or the folder's children.

use std::ffi::{OsStr, OsString};
#[cfg(feature = "remote")]
use std::sync::Arc;

use crate::catalog::array_indexes::INDEXES;
use crate::catalog::entry::ArrayEntry;
use crate::catalog::folder_listing::{arrange, resolve};
#[cfg(feature = "remote")]
use crate::catalog::folder_listing::{Placed, Shows};
use crate::catalog::local_dir::{classify, scan};
#[cfg(feature = "remote")]
use crate::catalog::remote::{io_error, join, RemoteClass, RemoteRoot};
use crate::catalog::store_folder::FolderView;
use crate::format::{grid_coords, linear};
use crate::views::{
    array_files_in, find_array_file, find_folder_file, folder_files_in, zarr, FileId, Folder, Kind,
};

use super::attributes::Attr;
use super::error::FsError;
use super::inode::{self, folder_file_role, Role};
use super::namespace::{Location, NodeKind, Tree};

/// One directory entry: (inode, kind, name).
pub type DirEntry = (u64, Kind, OsString);

impl Tree {
    /// Look `name` up in directory `parent`.
    pub fn lookup(&self, parent: u64, name: &OsStr) -> Result<Attr, FsError> {
        let (node, role) = self.decode(parent)?;
        let (_, kind) = self.node_info(node)?;
        if role == Role::Node {
            if let Some(own) = self.own_file_named(node, &kind, name)? {
                return self.getattr(inode::encode(node, own));
            }
        }
        // A root array's files are numbered by its current version's node.
        let (node, kind) = match self.files_node(node, &kind) {
            files if files != node && role == Role::Node => (files, self.node_info(files)?.1),
            _ => (node, kind),
        };
        let child = match (role, kind) {
            (Role::Node, NodeKind::Dir(real)) => {
                let loc = self.location(node)?;
                #[cfg(feature = "remote")]
                if let Location::Remote(key) = &loc {
                    return self.getattr(inode::encode(
                        self.remote_lookup(node, key, name)?,
                        Role::Node,
                    ));
                }
                let Location::Local(path) = &loc else {
                    return Err(FsError::NotFound);
                };
                let real = real.as_deref().unwrap_or(path);
                let own = self.own_names(node, &NodeKind::Dir(None))?;
                let placed = resolve(
                    name,
                    |n| own.iter().any(|o| n == *o),
                    |n| classify(&self.root, &self.fence, real, n).map(|f| (f.sort(), f)),
                    self.rules,
                )
                .ok_or(FsError::NotFound)?;
                inode::encode(self.intern_placed(node, path, real, placed), Role::Node)
            }
            (Role::Node, NodeKind::Array(entry)) if name == INDEXES => inode::encode(
                self.indexes_node(node, &entry)?.ok_or(FsError::NotFound)?,
                Role::Node,
            ),
            (Role::Node, NodeKind::Indexes(entry)) => {
                inode::encode(self.indexes_lookup(node, &entry, name)?, Role::Node)
            }
            (Role::Node, NodeKind::Array(entry)) if name == "c" => {
                let loaded = entry.current().map_err(FsError::from)?;
                let tree = self.chunk_tree(&loaded).ok_or(FsError::NotFound)?;
                inode::encode(node, tree.top().ok_or(FsError::NotFound)?)
            }
            (Role::Node, NodeKind::Array(entry)) => {
                let loaded = entry.current().map_err(FsError::from)?;
                let spec = find_array_file(
                    Folder::Array,
                    name.to_str().ok_or(FsError::NotFound)?,
                    &loaded,
                    self.views,
                )
                .ok_or(FsError::NotFound)?;
                inode::encode(node, Role::File(spec.id))
            }
            (Role::Node, kind @ (NodeKind::Store(_) | NodeKind::Folder(_))) => {
                let Some(view) = self.folder_view(&kind)? else {
                    return Err(FsError::NotFound);
                };
                let FolderView::Ok { entry, store, .. } = &view else {
                    return Err(FsError::NotFound);
                };
                let child = view.child(name).ok_or(FsError::NotFound)?;
                inode::encode(
                    self.intern_in_store(entry, store, node, name, child)?,
                    Role::Node,
                )
            }
            (Role::File(FileId::ChunksDir), NodeKind::Array(entry)) => {
                let loaded = entry.current().map_err(FsError::from)?;
                let name = name.to_str().ok_or(FsError::NotFound)?;
                if let Some(spec) = find_array_file(Folder::Chunks, name, &loaded, self.views) {
                    inode::encode(node, Role::File(spec.id))
                } else {
                    let coords = zarr::parse_chunk_name(name, &loaded.chunk_grid)
                        .ok_or(FsError::NotFound)?;
                    let c = linear(&coords, &loaded.chunk_grid);
                    if c >= inode::MAX_CHUNK_FILES {
                        return Err(FsError::NotFound);
                    }
                    inode::encode(node, Role::Chunk(c))
                }
            }
            (Role::Chunk(c), NodeKind::Array(entry)) => {
                let loaded = entry.current().map_err(FsError::from)?;
                let prefix = self.chunk_dir(&loaded, c).ok_or(FsError::NotDir)?;
                let tree = self.chunk_tree(&loaded).ok_or(FsError::NotFound)?;
                let role = tree
                    .child(&prefix, name.to_str().ok_or(FsError::NotFound)?)
                    .ok_or(FsError::NotFound)?;
                inode::encode(node, role)
            }
            _ => return Err(FsError::NotDir),
        };
        self.getattr(child)
    }

    /// The role of the folder file named `name` that folder node `node`
    /// holds of its own, when the mount offers one of that name and the
    /// folder holds it.
    fn own_file_named(
        &self,
        node: u32,
        kind: &NodeKind,
        name: &OsStr,
    ) -> Result<Option<Role>, FsError> {
        let Some(row) = name.to_str().and_then(|n| find_folder_file(n, self.views)) else {
            return Ok(None);
        };
        let files = self.files_for(node, kind, row)?;
        Ok((row.size)(&files).map(|_| folder_file_role(row.id)))
    }

    /// The names of the files folder node `node` holds of its own, as
    /// listing asks (without rendering them).
    fn own_names(&self, node: u32, kind: &NodeKind) -> Result<Vec<&'static str>, FsError> {
        let files = self.node_files(node, kind)?;
        Ok(folder_files_in(&files, self.views)
            .map(|row| row.name)
            .collect())
    }

    /// Entries of directory `ino` from index `from` on: (ino, kind, name).
    /// `.` and `..` come first. `limit` bounds how many are produced.
    pub fn readdir(&self, ino: u64, from: u64, limit: usize) -> Result<Vec<DirEntry>, FsError> {
        let (node, role) = self.decode(ino)?;
        let (parent, kind) = self.node_info(node)?;
        if let (Role::Chunk(c), NodeKind::Array(entry)) = (role, &kind) {
            return self.chunk_tree_readdir(node, entry, c, ino, from, limit);
        }
        let parent_ino = if role == Role::File(FileId::ChunksDir) {
            self.folder_ino(node)
        } else {
            // An `indexes/` under a root array's files node: the root.
            self.folder_ino(parent)
        };
        let mut fixed = vec![
            (ino, Kind::Dir, OsString::from(".")),
            (parent_ino, Kind::Dir, OsString::from("..")),
        ];
        match (role, kind) {
            (Role::Node, kind) => self.folder_entries(node, &kind, &mut fixed)?,
            (Role::File(FileId::ChunksDir), NodeKind::Array(entry)) => {
                let loaded = entry.current().map_err(FsError::from)?;
                let array = loaded.whole_array().ok_or(FsError::NotFound)?;
                for spec in array_files_in(Folder::Chunks, &loaded, self.views) {
                    fixed.push((
                        inode::encode(node, Role::File(spec.id)),
                        spec.kind,
                        OsString::from(spec.name),
                    ));
                }
                let mut out = Vec::new();
                let nfixed = fixed.len() as u64;
                let total = nfixed + array.nchunks().min(inode::MAX_CHUNK_FILES);
                let mut i = from;
                while i < total && out.len() < limit {
                    if i < nfixed {
                        out.push(fixed[i as usize].clone());
                    } else {
                        let c = i - nfixed;
                        let coords = grid_coords(c, &loaded.chunk_grid);
                        out.push((
                            inode::encode(node, Role::Chunk(c)),
                            Kind::File,
                            OsString::from(zarr::chunk_name(&coords)),
                        ));
                    }
                    i += 1;
                }
                return Ok(out);
            }
            _ => return Err(FsError::NotDir),
        }
        Ok(fixed.into_iter().skip(from as usize).take(limit).collect())
    }

    /// Append the entries of folder node `node` (of kind `kind`) to `out`:
    /// its own files, then an array's files or the folder's children.
    fn folder_entries(
        &self,
        node: u32,
        kind: &NodeKind,
        out: &mut Vec<DirEntry>,
    ) -> Result<(), FsError> {
        let files = self.node_files(node, kind)?;
        let mut own = Vec::new();
        for row in folder_files_in(&files, self.views) {
            own.push(row.name);
            out.push((
                inode::encode(node, folder_file_role(row.id)),
                Kind::File,
                OsString::from(row.name),
            ));
        }
        match kind {
            NodeKind::Dir(real) => {
                let loc = self.location(node)?;
                #[cfg(feature = "remote")]
                if let Location::Remote(key) = &loc {
                    return self.remote_readdir(node, key, &own, out);
                }
                let Location::Local(path) = &loc else {
                    return Err(FsError::NotFound);
                };
                let real = real.as_deref().unwrap_or(path);
                let listed = scan(&self.root, &self.fence, real)?
                    .into_iter()
                    .map(|(name, found)| (name, found.sort(), found))
                    .collect();
                let shown = arrange(&path.to_string_lossy(), listed, &own, self.rules);
                for placed in shown {
                    let name = placed.name.clone();
                    let child = self.intern_placed(node, path, real, placed);
                    out.push((
                        inode::encode(child, Role::Node),
                        self.entry_kind(child),
                        name,
                    ));
                }
            }
            NodeKind::Array(entry) => {
                let files = self.files_node(node, kind);
                let entry = if files == node {
                    entry.clone()
                } else {
                    self.array_entry(files)?
                };
                let loaded = entry.current().map_err(FsError::from)?;
                for spec in array_files_in(Folder::Array, &loaded, self.views) {
                    out.push((
                        inode::encode(files, Role::File(spec.id)),
                        spec.kind,
                        OsString::from(spec.name),
                    ));
                }
                if let Some(indexes) = self.indexes_node(files, &entry)? {
                    out.push((
                        inode::encode(indexes, Role::Node),
                        Kind::Dir,
                        OsString::from(INDEXES),
                    ));
                }
            }
            NodeKind::Indexes(entry) => self.indexes_entries(node, entry, out)?,
            NodeKind::Store(_) | NodeKind::Folder(_) => {
                if let Some(view @ FolderView::Ok { entry, store, .. }) = &files.view {
                    for (name, child) in view.children() {
                        match self.intern_in_store(entry, store, node, name, child) {
                            Ok(n) => {
                                out.push((inode::encode(n, Role::Node), Kind::Dir, name.clone()))
                            }
                            Err(e) => log::warn!("{e}"),
                        }
                    }
                }
            }
            NodeKind::Link(_) | NodeKind::Plain(_) => return Err(FsError::NotDir),
        }
        Ok(())
    }

    /// Entries of the chunk-tree folder `c/...` that chunk number `c` of
    /// array node `node` names (inode `ino`), from index `from` on.
    fn chunk_tree_readdir(
        &self,
        node: u32,
        entry: &ArrayEntry,
        c: u64,
        ino: u64,
        from: u64,
        limit: usize,
    ) -> Result<Vec<DirEntry>, FsError> {
        let loaded = entry.current().map_err(FsError::from)?;
        let prefix = self.chunk_dir(&loaded, c).ok_or(FsError::NotDir)?;
        let tree = self.chunk_tree(&loaded).ok_or(FsError::NotFound)?;
        let parent_ino = tree
            .parent(&prefix)
            .map_or_else(|| self.folder_ino(node), |role| inode::encode(node, role));
        let fixed = [
            (ino, Kind::Dir, OsString::from(".")),
            (parent_ino, Kind::Dir, OsString::from("..")),
        ];
        let mut out: Vec<DirEntry> = fixed.into_iter().skip(from as usize).take(limit).collect();
        let rest = limit - out.len();
        let start = from.saturating_sub(2);
        for (role, kind, name) in tree.entries(&prefix, start, rest) {
            out.push((inode::encode(node, role), kind, OsString::from(name)));
        }
        Ok(out)
    }

    /// Whether `ino` is a folder whose listing costs a scan (a mirrored
    /// source directory or a store), so callers list it once per open.
    pub fn is_source_dir(&self, ino: u64) -> bool {
        match inode::decode(ino) {
            Some((node, Role::Node)) => matches!(
                self.node_info(node),
                Ok((
                    _,
                    NodeKind::Dir(_) | NodeKind::Store(_) | NodeKind::Folder(_)
                ))
            ),
            _ => false,
        }
    }

    /// What the entry of node `node` is, as a listing tells it.
    fn entry_kind(&self, node: u32) -> Kind {
        match self.node_info(node) {
            Ok((_, NodeKind::Link(_))) => Kind::Symlink,
            Ok((_, NodeKind::Plain(_))) => Kind::File,
            _ => Kind::Dir,
        }
    }

    /// Look `name` up in the remote folder `key` (node `node`): its node.
    #[cfg(feature = "remote")]
    fn remote_lookup(&self, node: u32, key: &str, name: &OsStr) -> Result<u32, FsError> {
        let root = self.remote_root()?;
        let own = self.own_names(node, &NodeKind::Dir(None))?;
        let mut failed = None;
        let placed = resolve(
            name,
            |n| own.iter().any(|o| n == *o),
            |n| {
                let n = n.to_str()?;
                match root.child(key, n) {
                    Ok(class) => class.map(|c| (root.sort(c), c)),
                    Err(e) => {
                        failed = Some(e);
                        None
                    }
                }
            },
            self.rules,
        );
        if let Some(e) = failed {
            return Err(FsError::Io(io_error(e)));
        }
        let placed = placed.ok_or(FsError::NotFound)?;
        Ok(self.intern_remote_placed(root, key, node, placed))
    }

    /// Intern `placed`, an entry of the remote folder `key` (node `node`).
    #[cfg(feature = "remote")]
    fn intern_remote_placed(
        &self,
        root: &Arc<RemoteRoot>,
        key: &str,
        node: u32,
        placed: Placed<RemoteClass>,
    ) -> u32 {
        let class = match placed.shows {
            Shows::Original => RemoteClass::Plain,
            _ => placed.item,
        };
        let source = placed.source.to_string_lossy();
        self.intern_remote(root, join(key, &source), node, &placed.name, class)
    }

    /// Append the children of the remote folder `key` (node `node`, which
    /// holds the files `own` of its own) to `out`.
    #[cfg(feature = "remote")]
    fn remote_readdir(
        &self,
        node: u32,
        key: &str,
        own: &[&str],
        out: &mut Vec<DirEntry>,
    ) -> Result<(), FsError> {
        let root = self.remote_root()?;
        let listed = root
            .children(key)
            .map_err(|e| FsError::Io(io_error(e)))?
            .into_iter()
            .map(|(name, class)| (OsString::from(name), root.sort(class), class))
            .collect();
        let folder = root.folder_name(key);
        for placed in arrange(&folder, listed, own, self.rules) {
            let name = placed.name.clone();
            let child = self.intern_remote_placed(root, key, node, placed);
            out.push((
                inode::encode(child, Role::Node),
                self.entry_kind(child),
                name,
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;
    use crate::catalog::meta_cache::MetaCache;

    /// A source folder holding `sub/` with `a.b2nd`, a 2-D `<f4` array of
    /// 45 x 37 in chunks of 20 x 16 (a 3 x 3 chunk grid; python-blosc2 made
    /// it, see the fixtures' manifest), and `sub/up`, a symlink to the root.
    fn source() -> (tempfile::TempDir, Tree) {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/codec_blosclz_shuffle.b2nd");
        std::fs::copy(fixture, sub.join("a.b2nd")).unwrap();
        std::os::unix::fs::symlink("..", sub.join("up")).unwrap();
        let tree = Tree::new(dir.path(), None, Arc::new(MetaCache::new(1 << 20))).unwrap();
        (dir, tree)
    }

    const ROOT: u64 = 1;

    fn find(entries: &[DirEntry], name: &str) -> (u64, Kind) {
        entries
            .iter()
            .find(|(_, _, n)| n == name)
            .map(|(ino, kind, _)| (*ino, *kind))
            .unwrap_or_else(|| panic!("{name} not in {entries:?}"))
    }

    /// Every listing starts with `.` and `..`; each name it lists looks up
    /// to the same inode; reading from an offset gives the rest of the same
    /// listing, `limit` entries at most.
    #[test]
    fn listings_and_lookups_agree_and_page() {
        let (_dir, tree) = source();
        let root = tree.readdir(ROOT, 0, usize::MAX).unwrap();
        assert_eq!(root[0], (ROOT, Kind::Dir, OsString::from(".")));
        assert_eq!(root[1].2, OsString::from(".."));
        let (sub, kind) = find(&root, "sub");
        assert_eq!(kind, Kind::Dir);
        let listing = tree.readdir(sub, 0, usize::MAX).unwrap();
        assert_eq!(listing[0], (sub, Kind::Dir, OsString::from(".")));
        assert_eq!(listing[1], (ROOT, Kind::Dir, OsString::from("..")));
        assert_eq!(find(&listing, "a.b2nd").1, Kind::Dir);
        assert_eq!(find(&listing, "up").1, Kind::Symlink);
        for (ino, _, name) in &listing[2..] {
            assert_eq!(tree.lookup(sub, name).unwrap().ino, *ino, "{name:?}");
        }
        for from in 0..listing.len() {
            let page = tree.readdir(sub, from as u64, 2).unwrap();
            let want: Vec<_> = listing.iter().skip(from).take(2).cloned().collect();
            assert_eq!(page, want, "from {from}");
        }
        assert!(tree
            .readdir(sub, listing.len() as u64, 10)
            .unwrap()
            .is_empty());
    }

    /// Names that cannot be entries are not found; a file is not a folder.
    #[test]
    fn odd_names_and_files_are_refused() {
        let (_dir, tree) = source();
        let sub = tree.lookup(ROOT, OsStr::new("sub")).unwrap().ino;
        for name in [".", "..", "a.b2nd/data", "missing", ""] {
            assert!(
                matches!(tree.lookup(sub, OsStr::new(name)), Err(FsError::NotFound)),
                "{name:?}"
            );
        }
        let array = tree.lookup(sub, OsStr::new("a.b2nd")).unwrap().ino;
        let data = tree.lookup(array, OsStr::new("data")).unwrap();
        assert_eq!(data.kind, Kind::File);
        assert_eq!(data.size, 45 * 37 * 4);
        assert!(matches!(
            tree.lookup(data.ino, OsStr::new("x")),
            Err(FsError::NotDir)
        ));
        assert!(matches!(
            tree.readdir(data.ino, 0, 10),
            Err(FsError::NotDir)
        ));
        assert!(!tree.is_source_dir(array));
        assert!(!tree.is_source_dir(data.ino));
        assert!(tree.is_source_dir(sub));
    }

    /// `chunks/` lists one file per chunk of the grid, named by its grid
    /// coordinates in C order, after `.` and `..` (the array's folder); a
    /// chunk name looks up to that chunk, and names outside the grid do
    /// not.
    #[test]
    fn chunks_folder_names_the_grid() {
        let (_dir, tree) = source();
        let sub = tree.lookup(ROOT, OsStr::new("sub")).unwrap().ino;
        let array = tree.lookup(sub, OsStr::new("a.b2nd")).unwrap().ino;
        let chunks = tree.lookup(array, OsStr::new("chunks")).unwrap();
        assert_eq!(chunks.kind, Kind::Dir);
        let listing = tree.readdir(chunks.ino, 0, usize::MAX).unwrap();
        assert_eq!(listing[0], (chunks.ino, Kind::Dir, OsString::from(".")));
        assert_eq!(listing[1], (array, Kind::Dir, OsString::from("..")));
        let names: Vec<String> = listing
            .iter()
            .filter(|(_, kind, _)| *kind == Kind::File)
            .map(|(_, _, n)| n.to_string_lossy().into_owned())
            .filter(|n| n.chars().all(|c| c.is_ascii_digit() || c == '.'))
            .collect();
        let want: Vec<String> = (0..3)
            .flat_map(|i| (0..3).map(move |j| format!("{i}.{j}")))
            .collect();
        assert_eq!(names, want);
        let (ino, _) = find(&listing, "1.2");
        assert_eq!(tree.lookup(chunks.ino, OsStr::new("1.2")).unwrap().ino, ino);
        assert_eq!(inode::decode(ino).unwrap().1, Role::Chunk(5));
        for name in ["3.0", "0.3", "1", "1.2.0"] {
            assert!(tree.lookup(chunks.ino, OsStr::new(name)).is_err(), "{name}");
        }
        // Paging past the fixed entries lands on the chunks.
        let page = tree
            .readdir(chunks.ino, listing.len() as u64 - 1, 5)
            .unwrap();
        assert_eq!(page, vec![listing.last().unwrap().clone()]);
    }
}
