//! The namespace of one mount: its nodes (source folders, array folders,
//! stores and their groups) with inode numbers, found and kept as the
//! questions about them come ([`super::attributes`] for getattr and
//! xattrs, [`super::folder_entries`] for lookup and readdir, [`super::opening`]
//! for open and readlink, [`super::node_files`] for the files a folder
//! holds of its own).
//!
//! A node is interned under its folder and name ([`super::nodes`]) the
//! first time it is listed or looked up, and gets a new number when its
//! source changes, so open files keep the version they opened. Local
//! folders are listed by the catalog's [`listing`], remote ones by its
//! [`remote`], stores by its [`store`] and [`store_folder`]; what an array
//! folder holds is the views' table ([`crate::views::ARRAY_FILES`]), what
//! any folder holds of its own the views' [`crate::views::FOLDER_FILES`].
//!
//! [`listing`]: crate::catalog::local_dir
//! [`remote`]: crate::catalog::remote
//! [`store`]: crate::catalog::store
//! [`store_folder`]: crate::catalog::store_folder

use parking_lot::RwLock;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::source::is_sparse_dir;
#[cfg(feature = "remote")]
use crate::source::remote::StatsSnapshot;
use crate::source::store::StoreFormat;
use crate::views::{folder_file, FileId, ViewSet};

use super::chunk_tree::{ChunkTree, Slot};
use super::error::FsError;
use super::inode::{self, Role};
use super::nodes::{Nodes, Place};
use crate::catalog::entry::{ArrayEntry, Loaded, OnLoad, TableColumn};
use crate::catalog::folder_listing::{ListingRules, Placed, Shows};
use crate::catalog::local_dir::{Class, Fence, ShownEntry};
use crate::catalog::location::Origin;
use crate::catalog::meta_cache::{MetaCache, MetaCacheStats};
use crate::catalog::plain_file::PlainFile;
#[cfg(feature = "remote")]
use crate::catalog::remote::{RemoteClass, RemoteObject, RemoteRoot};
use crate::catalog::store::{ChildKind, LoadedStore, StoreEntry};
use crate::catalog::store_folder::StoreFolder;

/// The name of the hidden child of a mount root that is an array, which
/// presents the root's files (see [`Tree::files_node`]); no presented name
/// holds a `/`.
const ROOT_FILES: &str = "/";

/// Whether a known node of kind `kind` still presents a location found to
/// be of class `class` (an array or store whose source changed does not).
fn fits(kind: &NodeKind, class: Class) -> bool {
    match (kind, class) {
        (NodeKind::Dir(_) | NodeKind::Folder(_), Class::Dir) => true,
        (NodeKind::Array(entry), Class::Array) => !entry.is_stale(),
        (NodeKind::Store(entry), Class::Store(f)) => entry.format == f && !entry.is_stale(),
        (NodeKind::Plain(_), Class::Plain) => true,
        _ => false,
    }
}

/// The relative target of a symlink to the folder `levels` above the one
/// holding it: `.`, `..`, `../..`, ...
fn loop_target(levels: usize) -> PathBuf {
    if levels == 0 {
        return PathBuf::from(".");
    }
    (0..levels).map(|_| "..").collect()
}

/// What a node presents.
#[derive(Debug, Clone)]
pub(super) enum NodeKind {
    /// A mirrored directory (local or remote); for a local one reached
    /// through a symlink, where it really is.
    Dir(Option<Arc<PathBuf>>),
    /// A directory symlink to its own folder or one above it, shown as a
    /// symlink (its relative target: `.`, `..`, `../..`) so a walk sees the
    /// tree once.
    Link(Arc<OsStr>),
    /// An array folder.
    Array(Arc<ArrayEntry>),
    /// A store at a local path, shown as a folder of its keys.
    Store(Arc<StoreEntry>),
    /// A group (or a CTable) inside one version of a store.
    Folder(Arc<StoreFolder>),
    /// The `indexes/` folder of the indexed array this entry presents (its
    /// parent node): the array's index sidecars ([`super::index_folder`]).
    Indexes(Arc<ArrayEntry>),
    /// A file shown as itself (not a Blosc2 object, or with `--originals`
    /// a Blosc2 file's own bytes).
    Plain(Arc<PlainFile>),
}

/// What the tree computes of a node's place when it needs it: its local
/// path, its remote key, or that it lives in a store.
pub(super) enum Location {
    Local(PathBuf),
    InStore,
    #[cfg(feature = "remote")]
    Remote(String),
}

/// The presented tree of one mount.
pub struct Tree {
    /// The source's path (a remote root's redacted URL).
    pub(super) root: PathBuf,
    /// Every node named so far.
    pub(super) nodes: RwLock<Nodes<NodeKind>>,
    pub(super) on_load: Option<OnLoad>,
    /// Keeps the versions entries load, within the metadata budget.
    pub(super) meta: Arc<MetaCache>,
    /// What the walk of local folders never touches (the mount itself).
    pub(super) fence: Arc<Fence>,
    /// The presented files this mount offers (`--views`).
    pub(super) views: ViewSet,
    /// What folders show of their sources (`--blosc2-only`, `--originals`).
    pub(super) rules: ListingRules,
    /// The remote root, when the source is a URL (see [`crate::catalog::remote`]).
    #[cfg(feature = "remote")]
    pub(super) remote: Option<Arc<RemoteRoot>>,
}

impl Tree {
    /// A tree over `source`: a directory of arrays, a store, or a single
    /// array (then the mount root is that array's directory).
    /// `on_load` is told of every array opened; `meta` keeps what entries load.
    pub fn new(
        source: &Path,
        on_load: Option<OnLoad>,
        meta: Arc<MetaCache>,
    ) -> std::io::Result<Tree> {
        let root = std::fs::canonicalize(source)?;
        let kind = if let Some(format) = StoreFormat::of_path(&root) {
            NodeKind::Store(Arc::new(StoreEntry::new(root.clone(), format, true, &meta)))
        } else if root.is_dir() && !is_sparse_dir(&root) {
            NodeKind::Dir(None)
        } else {
            NodeKind::Array(Arc::new(ArrayEntry::new(
                Origin::Local(root.clone()),
                true,
                on_load.clone(),
                &meta,
            )))
        };
        Ok(Tree::with_root(
            root,
            Place::Local,
            kind,
            on_load,
            meta,
            #[cfg(feature = "remote")]
            None,
        ))
    }

    /// A tree whose root node (node 0) presents `root` as `kind`.
    fn with_root(
        root: PathBuf,
        place: Place,
        kind: NodeKind,
        on_load: Option<OnLoad>,
        meta: Arc<MetaCache>,
        #[cfg(feature = "remote")] remote: Option<Arc<RemoteRoot>>,
    ) -> Tree {
        let nodes = Nodes::new(place, kind);
        Tree {
            root,
            nodes: RwLock::new(nodes),
            on_load,
            meta,
            fence: Arc::default(),
            views: ViewSet::ALL,
            rules: ListingRules::default(),
            #[cfg(feature = "remote")]
            remote,
        }
    }

    /// Never touch `mountpoint` (the mount's own, canonical, taken before
    /// mounting) while walking the source.
    pub fn fenced(self, mountpoint: Option<&Path>) -> Tree {
        self.fenced_by(Arc::new(Fence::new(mountpoint)))
    }

    /// Never touch what `fence` holds (shared with whoever else walks the
    /// source for this mount: the operands of saved expressions).
    pub fn fenced_by(self, fence: Arc<Fence>) -> Tree {
        Tree { fence, ..self }
    }

    /// Offer only the presented files `views` names (`data` and
    /// `meta.json` always).
    pub fn with_views(self, views: ViewSet) -> Tree {
        Tree { views, ..self }
    }

    /// Show what `rules` say of the source's entries (plain files,
    /// originals).
    pub fn with_listing_rules(self, rules: ListingRules) -> Tree {
        Tree { rules, ..self }
    }

    /// The node and role of `ino`, when this mount offers files of that
    /// role at all (`--views`); not found otherwise.
    pub(super) fn decode(&self, ino: u64) -> Result<(u32, Role), FsError> {
        let offered = |role: &Role| match *role {
            Role::File(id) => self.views.offers(id),
            Role::Folder(id) => (folder_file(id).offered)(&self.views),
            Role::Chunk(_) => self.views.offers(FileId::ChunksDir),
            Role::Node => true,
        };
        inode::decode(ino)
            .filter(|(_, role)| offered(role))
            .ok_or(FsError::NotFound)
    }

    /// The mount is up on device `dev`: nothing on it is ever walked into.
    pub fn set_mount_device(&self, dev: u64) {
        self.fence.set_device(dev);
    }

    /// What the metadata cache holds and has done.
    pub fn meta_stats(&self) -> MetaCacheStats {
        self.meta.stats()
    }

    /// Node `node`'s parent and kind.
    pub(super) fn node_info(&self, node: u32) -> Result<(u32, NodeKind), FsError> {
        let nodes = self.nodes.read();
        let n = nodes.get(node).ok_or(FsError::NotFound)?;
        Ok((n.parent, n.kind.clone()))
    }

    /// Node `node`'s place: its local path or remote key, built by walking
    /// up (only folders and symlinks need one; arrays carry their origin).
    pub(super) fn location(&self, node: u32) -> Result<Location, FsError> {
        let nodes = self.nodes.read();
        let n = nodes.get(node).ok_or(FsError::NotFound)?;
        Ok(match n.place {
            Place::Local => Location::Local(
                nodes
                    .names(node)
                    .into_iter()
                    .fold(self.root.clone(), |path, name| path.join(name)),
            ),
            Place::InStore => Location::InStore,
            #[cfg(feature = "remote")]
            Place::Remote => Location::Remote(
                nodes
                    .names(node)
                    .iter()
                    .map(|n| n.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/"),
            ),
            #[cfg(not(feature = "remote"))]
            Place::Remote => Location::InStore,
        })
    }

    /// The node presenting `name` in folder `parent` now: the known one, or
    /// a new one when the name is new, changed kind, or its source changed
    /// since loaded. `make` builds the node's kind when a new node is needed.
    fn intern(
        &self,
        parent: u32,
        name: &OsStr,
        place: Place,
        class: Class,
        make: &dyn Fn() -> NodeKind,
    ) -> u32 {
        self.intern_fitting(parent, name, place, &|kind| fits(kind, class), make)
    }

    /// [`Self::intern`], with the known node kept when `fits` says so.
    pub(super) fn intern_fitting(
        &self,
        parent: u32,
        name: &OsStr,
        place: Place,
        fits: &dyn Fn(&NodeKind) -> bool,
        make: &dyn Fn() -> NodeKind,
    ) -> u32 {
        let reusable = |nodes: &Nodes<NodeKind>| -> Option<u32> {
            let n = nodes.find(parent, name)?;
            fits(&nodes.get(n)?.kind).then_some(n)
        };
        if let Some(n) = reusable(&self.nodes.read()) {
            return n;
        }
        let mut nodes = self.nodes.write();
        if let Some(n) = reusable(&nodes) {
            return n;
        }
        let mut dropped = Vec::new();
        if let Some(old) = nodes.find(parent, name).and_then(|old| nodes.get(old)) {
            match &old.kind {
                NodeKind::Array(entry) => entry.retire(),
                NodeKind::Store(entry) => dropped = entry.retire(),
                _ => {}
            }
        }
        let n = nodes.add(parent, name, place, make());
        drop(nodes);
        self.retire_loads(&dropped);
        n
    }

    /// Intern `placed`, an entry of local folder node `parent` (at `path`,
    /// really at `real`), as the listing rules placed it.
    pub(super) fn intern_placed(
        &self,
        parent: u32,
        path: &Path,
        real: &Path,
        placed: Placed<ShownEntry>,
    ) -> u32 {
        let found = placed.item;
        if placed.shows == Shows::Original || found.class == Class::Plain {
            let file = Arc::new(PlainFile::Local {
                path: found.linked.unwrap_or_else(|| real.join(&placed.source)),
                listed: found.file,
            });
            return self.intern_plain(parent, &placed.name, Place::Local, file);
        }
        self.intern_local(parent, path, real, &placed.source, &placed.name, found)
    }

    /// Intern the file `file`, shown as itself under `name` in folder `parent`.
    pub(super) fn intern_plain(
        &self,
        parent: u32,
        name: &OsStr,
        place: Place,
        file: Arc<PlainFile>,
    ) -> u32 {
        let same = file.clone();
        self.intern_fitting(
            parent,
            name,
            place,
            &|k| matches!(k, NodeKind::Plain(old) if old.same_as(&same)),
            &|| NodeKind::Plain(file.clone()),
        )
    }

    /// Intern entry `source` of local folder node `parent` (at `path`, really
    /// at `real`), found to be `found`, under the name `name`. A directory
    /// symlink to its own folder or one of the folders above it becomes a
    /// symlink node.
    fn intern_local(
        &self,
        parent: u32,
        path: &Path,
        real: &Path,
        source: &OsStr,
        name: &OsStr,
        found: ShownEntry,
    ) -> u32 {
        let child_path = path.join(source);
        match found.class {
            Class::Dir => {
                if let Some(levels) = found
                    .linked
                    .as_ref()
                    .and_then(|target| self.levels_up_to(parent, target))
                {
                    let target: Arc<OsStr> = Arc::from(loop_target(levels).as_os_str());
                    let t = target.clone();
                    return self.intern_fitting(
                        parent,
                        name,
                        Place::Local,
                        &|k| matches!(k, NodeKind::Link(old) if *old == t),
                        &|| NodeKind::Link(target.clone()),
                    );
                }
                // Where the folder really is, when that is not its presented path.
                let real_child = found.linked.unwrap_or_else(|| real.join(source));
                let real_dir = (real_child != child_path).then(|| Arc::new(real_child));
                let want = real_dir.clone();
                self.intern_fitting(
                    parent,
                    name,
                    Place::Local,
                    &|k| matches!(k, NodeKind::Dir(old) if *old == want),
                    &|| NodeKind::Dir(real_dir.clone()),
                )
            }
            Class::Array => {
                let make = || {
                    NodeKind::Array(Arc::new(ArrayEntry::new(
                        Origin::Local(child_path.clone()),
                        false,
                        self.on_load.clone(),
                        &self.meta,
                    )))
                };
                self.intern(parent, name, Place::Local, Class::Array, &make)
            }
            Class::Store(format) => {
                let make = || {
                    NodeKind::Store(Arc::new(StoreEntry::new(
                        child_path.clone(),
                        format,
                        false,
                        &self.meta,
                    )))
                };
                self.intern(parent, name, Place::Local, found.class, &make)
            }
            Class::Plain => {
                let file = Arc::new(PlainFile::Local {
                    path: found.linked.unwrap_or_else(|| real.join(source)),
                    listed: found.file,
                });
                self.intern_plain(parent, name, Place::Local, file)
            }
        }
    }

    /// How many folders up from folder node `node` (0: itself) the
    /// presented folder really at `target` is; `None` when no folder on its
    /// presented path is.
    fn levels_up_to(&self, node: u32, target: &Path) -> Option<usize> {
        let mut at = node;
        for levels in 0.. {
            let (parent, kind) = self.node_info(at).ok()?;
            let real = match kind {
                NodeKind::Dir(Some(real)) => real.as_ref().clone(),
                NodeKind::Dir(None) => match self.location(at).ok()? {
                    Location::Local(path) => path,
                    _ => return None,
                },
                _ => return None,
            };
            if real == target {
                return Some(levels);
            }
            if at == 0 {
                return None;
            }
            at = parent;
        }
        None
    }

    /// Store versions `loads` are no longer presented: their values let go
    /// of their arrays (open files keep theirs).
    pub(super) fn retire_loads(&self, loads: &[u64]) {
        if loads.is_empty() {
            return;
        }
        let nodes = self.nodes.read();
        for node in nodes.iter() {
            if let NodeKind::Array(entry) = &node.kind {
                if entry
                    .origin
                    .store_load()
                    .is_some_and(|load| loads.contains(&load))
                {
                    entry.retire();
                }
            }
        }
    }

    /// Intern child `child`, named `name`, of a folder of version `store` of
    /// store `entry`.
    pub(super) fn intern_in_store(
        &self,
        entry: &Arc<StoreEntry>,
        store: &Arc<LoadedStore>,
        parent: u32,
        name: &OsStr,
        child: &ChildKind,
    ) -> Result<u32, FsError> {
        let (key, class) = match child {
            ChildKind::Group(k) | ChildKind::Table(k) => (k.clone(), Class::Dir),
            ChildKind::Value(k) | ChildKind::Column { key: k, .. } => (k.clone(), Class::Array),
        };
        let column = match child {
            ChildKind::Column { table, column, .. } => match &*store.table(table) {
                Ok(info) => Some(TableColumn {
                    batches: info.batches.clone(),
                    index: *column,
                }),
                Err(e) => return Err(FsError::Format(e.clone())),
            },
            _ => None,
        };
        let on_load = self.on_load.clone();
        let folder = |key: &String, table| {
            NodeKind::Folder(Arc::new(StoreFolder {
                store: entry.clone(),
                load: store.load,
                key: key.clone(),
                table,
            }))
        };
        let value = |key: &String| Origin::Value {
            store: entry.clone(),
            load: store.load,
            key: key.clone(),
            name: store.store.key_name(key),
        };
        // A node of another version of the store (a mount root reloaded in
        // place keeps its children's names) is never reused.
        let fits = |kind: &NodeKind| {
            let same = match kind {
                NodeKind::Folder(f) => f.load == store.load && f.key == key,
                NodeKind::Array(e) => e.origin.store_load() == Some(store.load),
                _ => false,
            };
            same && fits(kind, class)
        };
        Ok(self.intern_fitting(
            parent,
            name,
            Place::InStore,
            &fits,
            &|| match (child, &column) {
                (ChildKind::Group(k), _) => folder(k, false),
                (ChildKind::Table(k), _) => folder(k, true),
                (ChildKind::Column { key: k, .. }, Some(column)) => NodeKind::Array(Arc::new(
                    ArrayEntry::column(value(k), column.clone(), on_load.clone(), &self.meta),
                )),
                (ChildKind::Value(k) | ChildKind::Column { key: k, .. }, _) => {
                    NodeKind::Array(Arc::new(ArrayEntry::new(
                        value(k),
                        false,
                        on_load.clone(),
                        &self.meta,
                    )))
                }
            },
        ))
    }

    /// The hidden chunk tree `c/` of an array version, when it is a Zarr v3
    /// array and the mount offers the v3 hierarchy.
    pub(super) fn chunk_tree<'a>(&self, loaded: &'a Loaded) -> Option<ChunkTree<'a>> {
        let (grid, nchunks) = loaded.zarr_chunks()?;
        self.views
            .offers_zarr3()
            .then(|| ChunkTree::new(grid, nchunks))
    }

    /// The tree folder `c/...` chunk number `c` of `loaded` names, if any.
    pub(super) fn chunk_dir(&self, loaded: &Loaded, c: u64) -> Option<Vec<u64>> {
        match self.chunk_tree(loaded)?.slot(c)? {
            Slot::Dir(prefix) if c >= loaded.zarr_chunks()?.1 => Some(prefix),
            _ => None,
        }
    }

    pub(super) fn array_of(&self, node: u32) -> Result<Arc<Loaded>, FsError> {
        let (_, kind) = self.node_info(node)?;
        let NodeKind::Array(entry) = kind else {
            return Err(FsError::NotFound);
        };
        entry.current().map_err(FsError::from)
    }

    /// The node whose inode numbers the files of folder node `node` (of
    /// kind `kind`) take: `node` itself, except for a mount root that is
    /// an array, whose files are those of a hidden child presenting the
    /// root's current version. The root is inode 1 whatever its version,
    /// but its files must not keep their numbers across versions: the
    /// kernel reads an inode either by passthrough (every open of it on one
    /// backing file) or through the daemon, never both, so a new version
    /// opened under the old numbers while an old open is served by
    /// passthrough would fail (EIO). The child gets a new node when the
    /// source changes, as any changed name does; open files keep the old
    /// node and its version, which answers ESTALE once nothing holds it.
    pub(super) fn files_node(&self, node: u32, kind: &NodeKind) -> u32 {
        let NodeKind::Array(root) = kind else {
            return node;
        };
        if node != 0 {
            return node;
        }
        let place = self.nodes.read().get(0).map_or(Place::Local, |n| n.place);
        let origin = root.origin.clone();
        self.intern(0, OsStr::new(ROOT_FILES), place, Class::Array, &|| {
            NodeKind::Array(Arc::new(ArrayEntry::new(
                origin.clone(),
                false,
                self.on_load.clone(),
                &self.meta,
            )))
        })
    }

    /// The inode of the folder presenting array node `node`: its own, or
    /// the root's for the hidden child of a root array ([`Self::files_node`]).
    pub(super) fn folder_ino(&self, node: u32) -> u64 {
        let nodes = self.nodes.read();
        match nodes.get(node) {
            Some(n) if node != 0 && n.parent == 0 && &*n.name == OsStr::new(ROOT_FILES) => {
                inode::encode(0, Role::Node)
            }
            _ => inode::encode(node, Role::Node),
        }
    }

    /// The entry of array node `node`.
    pub(super) fn array_entry(&self, node: u32) -> Result<Arc<ArrayEntry>, FsError> {
        match self.node_info(node)?.1 {
            NodeKind::Array(entry) => Ok(entry),
            _ => Err(FsError::NotFound),
        }
    }
}

/// Remote folders (a mount whose source is a URL).
#[cfg(feature = "remote")]
impl Tree {
    /// A tree over the remote root `root` (a prefix, an array or a store).
    /// `on_load` is told of every array opened.
    pub fn new_remote(
        root: Arc<RemoteRoot>,
        on_load: Option<OnLoad>,
        meta: Arc<MetaCache>,
    ) -> Tree {
        let kind = Self::remote_kind(&root, String::new(), root.class(), true, &on_load, &meta);
        Tree::with_root(
            PathBuf::from(root.redacted()),
            Place::Remote,
            kind,
            on_load,
            meta,
            Some(root),
        )
    }

    fn remote_kind(
        root: &Arc<RemoteRoot>,
        key: String,
        class: RemoteClass,
        in_place: bool,
        on_load: &Option<OnLoad>,
        meta: &Arc<MetaCache>,
    ) -> NodeKind {
        match class {
            RemoteClass::Dir => NodeKind::Dir(None),
            RemoteClass::Array { sparse } => {
                let origin = Origin::Remote(RemoteObject::new(root.clone(), key, sparse));
                NodeKind::Array(Arc::new(ArrayEntry::new(
                    origin,
                    in_place,
                    on_load.clone(),
                    meta,
                )))
            }
            RemoteClass::Store(format) => NodeKind::Store(Arc::new(StoreEntry::remote(
                RemoteObject::store(root.clone(), key, format),
                format,
                in_place,
                meta,
            ))),
            RemoteClass::Plain => NodeKind::Plain(Arc::new(PlainFile::Remote(RemoteObject::new(
                root.clone(),
                key,
                false,
            )))),
        }
    }

    /// Intern remote child `key` of class `class`, shown under `name`.
    pub(super) fn intern_remote(
        &self,
        root: &Arc<RemoteRoot>,
        key: String,
        parent: u32,
        name: &OsStr,
        class: RemoteClass,
    ) -> u32 {
        let on_load = self.on_load.clone();
        let k = key.clone();
        self.intern(parent, name, Place::Remote, class.class(), &move || {
            Self::remote_kind(root, k.clone(), class, false, &on_load, &self.meta)
        })
    }

    pub(super) fn remote_root(&self) -> Result<&Arc<RemoteRoot>, FsError> {
        self.remote.as_ref().ok_or(FsError::NotFound)
    }

    /// What the mount's remote connection has cost, when its source is remote.
    pub fn remote_stats(&self) -> Option<StatsSnapshot> {
        self.remote.as_ref().map(|r| r.stats())
    }
}

#[cfg(test)]
#[path = "namespace_tests.rs"]
mod tests;
