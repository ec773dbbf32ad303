//! The namespace of one mount: its nodes (source folders, array folders,
//! stores and their groups) with inode numbers, and the presented entries
//! each holds: lookup, getattr, readdir, open and xattrs by inode.
//!
//! A node is interned under its folder and name ([`super::nodes`]) the
//! first time it is listed or looked up, and gets a new number when its
//! source changes, so open files keep the version they opened. Local
//! folders are listed by the catalog's [`listing`], remote ones by its
//! [`remote`], stores by its [`store`]; what an array folder holds is the
//! views' table ([`crate::views::ARRAY_FILES`]).
//!
//! [`listing`]: crate::catalog::listing
//! [`remote`]: crate::catalog::remote
//! [`store`]: crate::catalog::store

use parking_lot::RwLock;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use crate::format::{grid_coords, linear, Region};
use crate::source::is_sparse_dir;
#[cfg(feature = "remote")]
use crate::source::remote::StatsSnapshot;
use crate::source::store::StoreFormat;
use crate::views::table_csv::TableCsv;
use crate::views::zarr3_group::folder_group;
use crate::views::{
    array_file, array_files_in, find_array_file, zarr, Content, FileId, Folder, Kind, ViewSet,
};

use super::chunk_tree::{ChunkTree, Slot};
use super::error::FsError;
use super::inode::{self, Role};
use super::nodes::{Nodes, Place};
use crate::catalog::access::Access;
use crate::catalog::entry::{ArrayEntry, Loaded, OnLoad};
use crate::catalog::listing::{classify, node_meta, scan, Class, Fence, Found};
use crate::catalog::location::Origin;
use crate::catalog::meta_cache::{MetaCache, MetaCacheStats};
#[cfg(feature = "remote")]
use crate::catalog::remote::{
    io_error, join, remote_access, RemoteClass, RemoteObject, RemoteRoot,
};
use crate::catalog::store::{self, ChildKind, LoadedStore, StoreEntry};

/// Attributes of a presented entry (`--uid`/`--gid` are applied by the adapter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attr {
    /// Inode number.
    pub ino: u64,
    /// Directory or file.
    pub kind: Kind,
    /// Size in bytes (0 for directories).
    pub size: u64,
    /// The source's modification time.
    pub mtime: SystemTime,
    /// Permission bits, from the source's (see [`Access`]); never write bits.
    pub perm: u16,
    /// Owner and group, the source's; `None` for the mounting user (`.stats`).
    pub owner: Option<(u32, u32)>,
}

impl Attr {
    /// This attribute with the permissions `access` gives an array's entries
    /// (folders can be entered wherever the source can be read).
    fn of_array(self, access: &Access) -> Attr {
        let perm = match self.kind {
            Kind::Dir => access.folder_perm(),
            Kind::File => access.file_perm(),
            Kind::Symlink => 0o777,
        };
        Attr {
            perm,
            owner: Some((access.uid, access.gid)),
            ..self
        }
    }
}

/// Whether a known node of kind `kind` still presents a location found to
/// be of class `class` (an array or store whose source changed does not).
fn fits(kind: &NodeKind, class: Class) -> bool {
    match (kind, class) {
        (NodeKind::Dir(_) | NodeKind::Folder(_), Class::Dir) => true,
        (NodeKind::Array(entry), Class::Array) => !entry.is_stale(),
        (NodeKind::Store(entry), Class::Store(f)) => entry.format == f && !entry.is_stale(),
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

/// One directory entry: (inode, kind, name).
pub type DirEntry = (u64, Kind, OsString);

/// What a node presents.
#[derive(Debug, Clone)]
enum NodeKind {
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
}

/// A group (or, `table`, a CTable) inside version number `load` of a store.
#[derive(Debug)]
struct StoreFolder {
    store: Arc<StoreEntry>,
    load: u64,
    key: String,
    table: bool,
}

/// What the tree computes of a node's place when it needs it: its local
/// path, its remote key, or that it lives in a store.
enum Location {
    Local(PathBuf),
    InStore,
    #[cfg(feature = "remote")]
    Remote(String),
}

/// The folder view of a store or in-store node: the store version (or the
/// error that kept it from loading) and the folder's key.
enum FolderView {
    Ok {
        entry: Arc<StoreEntry>,
        store: Arc<LoadedStore>,
        key: String,
        table: bool,
    },
    Failed {
        meta_json: Arc<Vec<u8>>,
        mtime: SystemTime,
        access: Access,
    },
}

/// The presented tree of one mount.
pub struct Tree {
    root: PathBuf,
    nodes: RwLock<Nodes<NodeKind>>,
    on_load: Option<OnLoad>,
    /// Keeps the versions entries load, within the metadata budget.
    meta: Arc<MetaCache>,
    /// What the walk of local folders never touches (the mount itself).
    fence: Arc<Fence>,
    /// The presented files this mount offers (`--views`).
    views: ViewSet,
    /// The remote root, when the source is a URL (see [`crate::catalog::remote`]).
    #[cfg(feature = "remote")]
    remote: Option<Arc<RemoteRoot>>,
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

    /// The node and role of `ino`, when this mount offers files of that
    /// role at all (`--views`); not found otherwise.
    fn decode(&self, ino: u64) -> Result<(u32, Role), FsError> {
        let offered = |role: &Role| match *role {
            Role::File(id) => self.views.offers(id),
            Role::TableCsv => self.views.offers_table_csv(),
            Role::Chunk(_) => self.views.offers(FileId::ChunksDir),
            Role::Node | Role::Stats => true,
        };
        inode::decode(ino)
            .filter(|(_, role)| offered(role))
            .ok_or(FsError::NotFound)
    }

    /// The mount is up on device `dev`: nothing on it is ever walked into.
    pub fn set_mount_device(&self, dev: u64) {
        self.fence.set_device(dev);
    }

    fn is_link(&self, node: u32) -> bool {
        matches!(self.node_info(node), Ok((_, NodeKind::Link(_))))
    }

    /// The target of symlink `ino` (relative, inside the mount).
    pub fn readlink(&self, ino: u64) -> Result<OsString, FsError> {
        match inode::decode(ino).ok_or(FsError::NotFound)? {
            (node, Role::Node) => match self.node_info(node)?.1 {
                NodeKind::Link(target) => Ok(target.to_os_string()),
                _ => Err(FsError::Io(std::io::Error::from_raw_os_error(libc::EINVAL))),
            },
            _ => Err(FsError::Io(std::io::Error::from_raw_os_error(libc::EINVAL))),
        }
    }

    /// What the metadata cache holds and has done.
    pub fn meta_stats(&self) -> MetaCacheStats {
        self.meta.stats()
    }

    /// Node `node`'s parent and kind.
    fn node_info(&self, node: u32) -> Result<(u32, NodeKind), FsError> {
        let nodes = self.nodes.read();
        let n = nodes.get(node).ok_or(FsError::NotFound)?;
        Ok((n.parent, n.kind.clone()))
    }

    /// Node `node`'s place: its local path or remote key, built by walking
    /// up (only folders and symlinks need one; arrays carry their origin).
    fn location(&self, node: u32) -> Result<Location, FsError> {
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
    fn intern_fitting(
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

    /// Intern entry `name` of local folder node `parent` (at `path`, really
    /// at `real`), found to be `found`. A directory symlink to its own
    /// folder or one of the folders above it becomes a symlink node.
    fn intern_local(
        &self,
        parent: u32,
        path: &Path,
        real: &Path,
        name: &OsStr,
        found: Found,
    ) -> u32 {
        let child_path = path.join(name);
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
                let real_child = found.linked.unwrap_or_else(|| real.join(name));
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
    fn retire_loads(&self, loads: &[u64]) {
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
    fn intern_in_store(
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
        let rows = match child {
            ChildKind::Column { table, .. } => match &*store.table(table) {
                Ok(info) => Some(info.rows.clone()),
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
        Ok(
            self.intern_fitting(parent, name, Place::InStore, &fits, &|| match child {
                ChildKind::Group(k) => folder(k, false),
                ChildKind::Table(k) => folder(k, true),
                ChildKind::Value(k) => NodeKind::Array(Arc::new(ArrayEntry::new(
                    value(k),
                    false,
                    on_load.clone(),
                    &self.meta,
                ))),
                ChildKind::Column { key: k, .. } => NodeKind::Array(Arc::new(ArrayEntry::column(
                    value(k),
                    rows.clone().unwrap_or_default(),
                    on_load.clone(),
                    &self.meta,
                ))),
            }),
        )
    }

    fn folder_view(&self, kind: &NodeKind) -> Result<Option<FolderView>, FsError> {
        let stale = || FsError::Stale;
        Ok(match kind {
            NodeKind::Store(entry) => Some(
                match &*{
                    let load = entry.current().map_err(FsError::from)?;
                    self.retire_loads(&entry.take_dropped());
                    load
                } {
                    Ok(store) => FolderView::Ok {
                        entry: entry.clone(),
                        store: store.clone(),
                        key: String::new(),
                        table: store.tables.iter().any(|t| t.is_empty()),
                    },
                    Err((e, _, mtime)) => FolderView::Failed {
                        meta_json: store::error_meta(&entry.path, e),
                        mtime: *mtime,
                        #[cfg(feature = "remote")]
                        access: if self.remote.is_some() {
                            remote_access()
                        } else {
                            Access::of_path(&entry.path).unwrap_or(Access::DENY)
                        },
                        #[cfg(not(feature = "remote"))]
                        access: Access::of_path(&entry.path).unwrap_or(Access::DENY),
                    },
                },
            ),
            NodeKind::Folder(f) => Some(FolderView::Ok {
                entry: f.store.clone(),
                store: f.store.loaded(f.load).map_err(|_| stale())?,
                key: f.key.clone(),
                table: f.table,
            }),
            _ => None,
        })
    }

    /// Owner, group and mode of a store's folders: the store file's now.
    fn folder_access(view: &FolderView) -> Access {
        match view {
            FolderView::Failed { access, .. } => *access,
            #[cfg(feature = "remote")]
            FolderView::Ok { store, .. } if !store.store.is_local() => remote_access(),
            FolderView::Ok { store, .. } => {
                Access::of_path(store.store.path()).unwrap_or(Access::DENY)
            }
        }
    }

    /// The `table.csv` of a table folder (None for other folders, and for
    /// tables whose columns it cannot show).
    fn folder_csv(view: &FolderView) -> Option<Arc<TableCsv>> {
        match view {
            FolderView::Ok {
                store,
                key,
                table: true,
                ..
            } => store.table(key).as_ref().as_ref().ok()?.csv.clone(),
            _ => None,
        }
    }

    /// The `meta.json` bytes and mtime of a folder view.
    fn folder_meta(view: &FolderView) -> Result<(Arc<Vec<u8>>, SystemTime), FsError> {
        match view {
            FolderView::Failed {
                meta_json, mtime, ..
            } => Ok((meta_json.clone(), *mtime)),
            FolderView::Ok {
                store,
                key,
                table: true,
                ..
            } => match &*store.table(key) {
                Ok(info) => Ok((info.meta_json.clone(), store.mtime)),
                Err(e) => Ok((
                    store::error_meta(&store.store.key_name(key), e),
                    store.mtime,
                )),
            },
            FolderView::Ok { store, key, .. } => Ok((
                store
                    .group_meta
                    .get(key)
                    .cloned()
                    .ok_or(FsError::NotFound)?,
                store.mtime,
            )),
        }
    }

    /// The `zarr.json` of a folder view (a Zarr v3 group), when the mount
    /// offers the v3 hierarchy and the folder could be read.
    fn folder_zarr(&self, view: &FolderView) -> Option<Arc<Vec<u8>>> {
        if !self.views.offers_zarr3() {
            return None;
        }
        match view {
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

    /// The `zarr.json` of mirrored folder node `node` (a Zarr v3 group named
    /// after the folder; the mount root after the last name of its source:
    /// a folder, a bucket or prefix, a Caterva2 root), when the mount offers
    /// the v3 hierarchy.
    fn dir_zarr(&self, node: u32) -> Option<Vec<u8>> {
        if !self.views.offers_zarr3() {
            return None;
        }
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

    /// The hidden chunk tree `c/` of an array version, when it is a Zarr v3
    /// array and the mount offers the v3 hierarchy.
    fn chunk_tree<'a>(&self, loaded: &'a Loaded) -> Option<ChunkTree<'a>> {
        let array = loaded.whole_array()?;
        (self.views.offers_zarr3() && loaded.zarr3.is_some())
            .then(|| ChunkTree::new(&loaded.chunk_grid, array.nchunks()))
    }

    /// The tree folder `c/...` chunk number `c` of `loaded` names, if any.
    fn chunk_dir(&self, loaded: &Loaded, c: u64) -> Option<Vec<u64>> {
        match self.chunk_tree(loaded)?.slot(c)? {
            Slot::Dir(prefix) if c >= loaded.whole_array()?.nchunks() => Some(prefix),
            _ => None,
        }
    }

    fn array_of(&self, node: u32) -> Result<Arc<Loaded>, FsError> {
        let (_, kind) = self.node_info(node)?;
        let NodeKind::Array(entry) = kind else {
            return Err(FsError::NotFound);
        };
        entry.current().map_err(FsError::from)
    }

    /// Attributes of `ino`.
    /// `stats_size` tells the size of `.stats` (computed only when asked about it).
    pub fn getattr(&self, ino: u64, stats_size: &dyn Fn() -> u64) -> Result<Attr, FsError> {
        let (node, role) = self.decode(ino)?;
        let (_, kind) = self.node_info(node)?;
        let dir = |mtime| Attr {
            ino,
            kind: Kind::Dir,
            size: 0,
            mtime,
            perm: 0,
            owner: None,
        };
        let file = |size, mtime| Attr {
            ino,
            kind: Kind::File,
            size,
            mtime,
            perm: 0,
            owner: None,
        };
        if role == Role::Stats {
            // The mounting user's, readable as before (it holds no source bytes).
            return if node == 0 {
                Ok(Attr {
                    perm: 0o444,
                    ..file(stats_size(), SystemTime::now())
                })
            } else {
                Err(FsError::NotFound)
            };
        }
        let entry = match kind {
            NodeKind::Array(entry) => entry,
            NodeKind::Link(target) => {
                if role != Role::Node {
                    return Err(FsError::NotFound);
                }
                let Location::Local(path) = self.location(node)? else {
                    return Err(FsError::NotFound);
                };
                let mtime = std::fs::symlink_metadata(path)
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                return Ok(Attr {
                    ino,
                    kind: Kind::Symlink,
                    size: target.len() as u64,
                    mtime,
                    perm: 0o777,
                    owner: None,
                });
            }
            NodeKind::Dir(real) => {
                let group = match role {
                    Role::Node => None,
                    Role::File(FileId::ZarrJson) => {
                        Some(self.dir_zarr(node).ok_or(FsError::NotFound)?)
                    }
                    _ => return Err(FsError::NotFound),
                };
                let (mtime, access) = match &self.location(node)? {
                    Location::Local(path) => node_meta(real.as_deref().unwrap_or(path)),
                    #[cfg(feature = "remote")]
                    Location::Remote(_) => self.remote_dir_meta(),
                    Location::InStore => return Err(FsError::NotFound),
                };
                if let Some(group) = group {
                    return Ok(file(group.len() as u64, mtime).of_array(&access));
                }
                return Ok(Attr {
                    perm: access.dir_perm(),
                    owner: Some((access.uid, access.gid)),
                    ..dir(mtime)
                });
            }
            kind => {
                let view = self.folder_view(&kind)?.ok_or(FsError::NotFound)?;
                let (meta, mtime) = Self::folder_meta(&view)?;
                let access = Self::folder_access(&view);
                return match role {
                    Role::Node => Ok(dir(mtime).of_array(&access)),
                    Role::File(FileId::MetaJson) => {
                        Ok(file(meta.len() as u64, mtime).of_array(&access))
                    }
                    Role::TableCsv => Ok(file(
                        Self::folder_csv(&view).ok_or(FsError::NotFound)?.len(),
                        mtime,
                    )
                    .of_array(&access)),
                    Role::File(FileId::ZarrJson) => Ok(file(
                        self.folder_zarr(&view).ok_or(FsError::NotFound)?.len() as u64,
                        mtime,
                    )
                    .of_array(&access)),
                    _ => Err(FsError::NotFound),
                };
            }
        };
        let loaded = entry.current().map_err(FsError::from)?;
        let mtime = loaded.mtime;
        let attr = match role {
            Role::Node => dir(mtime),
            Role::File(id) => {
                let spec = array_file(id);
                let size = (spec.size)(&loaded).ok_or(FsError::NotFound)?;
                Attr {
                    ino,
                    kind: spec.kind,
                    size,
                    mtime,
                    perm: 0,
                    owner: None,
                }
            }
            Role::Chunk(c) if self.chunk_dir(&loaded, c).is_some() => dir(mtime),
            Role::Chunk(c) => {
                let array = loaded
                    .whole_array()
                    .filter(|a| c < a.nchunks())
                    .ok_or(FsError::NotFound)?;
                file(
                    array
                        .region_len(Region::Chunk(c))
                        .map_err(|p| crate::format::Error::new(array.name(), p))?,
                    mtime,
                )
            }
            _ => return Err(FsError::NotFound),
        };
        Ok(attr.of_array(&loaded.access))
    }

    /// Look `name` up in directory `parent`.
    pub fn lookup(
        &self,
        parent: u64,
        name: &OsStr,
        stats_size: &dyn Fn() -> u64,
    ) -> Result<Attr, FsError> {
        let (node, role) = self.decode(parent)?;
        let (_, kind) = self.node_info(node)?;
        if node == 0 && role == Role::Node && name == ".stats" {
            return self.getattr(inode::encode(0, Role::Stats), stats_size);
        }
        let child = match (role, kind) {
            (Role::Node, NodeKind::Dir(_)) if name == "zarr.json" && self.views.offers_zarr3() => {
                inode::encode(node, Role::File(FileId::ZarrJson))
            }
            (Role::Node, NodeKind::Dir(real)) => {
                let loc = self.location(node)?;
                #[cfg(feature = "remote")]
                if let Location::Remote(key) = &loc {
                    return self.getattr(
                        inode::encode(self.remote_lookup(node, key, name)?, Role::Node),
                        stats_size,
                    );
                }
                let Location::Local(path) = &loc else {
                    return Err(FsError::NotFound);
                };
                if name.as_bytes().contains(&b'/') || name == "." || name == ".." {
                    return Err(FsError::NotFound);
                }
                let real = real.as_deref().unwrap_or(path);
                let found =
                    classify(&self.root, &self.fence, real, name).ok_or(FsError::NotFound)?;
                inode::encode(self.intern_local(node, path, real, name, found), Role::Node)
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
                if name == "meta.json" {
                    inode::encode(node, Role::File(FileId::MetaJson))
                } else if name == "zarr.json"
                    && self
                        .folder_view(&kind)?
                        .as_ref()
                        .and_then(|v| self.folder_zarr(v))
                        .is_some()
                {
                    inode::encode(node, Role::File(FileId::ZarrJson))
                } else if name == "table.csv"
                    && self.views.offers_table_csv()
                    && self
                        .folder_view(&kind)?
                        .as_ref()
                        .and_then(Self::folder_csv)
                        .is_some()
                {
                    inode::encode(node, Role::TableCsv)
                } else {
                    let Some(FolderView::Ok {
                        entry, store, key, ..
                    }) = self.folder_view(&kind)?
                    else {
                        return Err(FsError::NotFound);
                    };
                    let children = store.folders.get(&key).ok_or(FsError::NotFound)?;
                    let i = children
                        .binary_search_by(|(n, _)| n.as_os_str().cmp(name))
                        .map_err(|_| FsError::NotFound)?;
                    inode::encode(
                        self.intern_in_store(&entry, &store, node, name, &children[i].1)?,
                        Role::Node,
                    )
                }
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
        self.getattr(child, stats_size)
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
            inode::encode(node, Role::Node)
        } else {
            inode::encode(parent, Role::Node)
        };
        let mut fixed = vec![
            (ino, Kind::Dir, OsString::from(".")),
            (parent_ino, Kind::Dir, OsString::from("..")),
        ];
        if node == 0 && role == Role::Node {
            fixed.push((
                inode::encode(0, Role::Stats),
                Kind::File,
                OsString::from(".stats"),
            ));
        }
        match (role, kind) {
            (Role::Node, NodeKind::Dir(real)) => {
                if self.views.offers_zarr3() {
                    fixed.push((
                        inode::encode(node, Role::File(FileId::ZarrJson)),
                        Kind::File,
                        OsString::from("zarr.json"),
                    ));
                }
                let loc = self.location(node)?;
                #[cfg(feature = "remote")]
                if let Location::Remote(key) = &loc {
                    self.remote_readdir(node, key, &mut fixed)?;
                    return Ok(fixed.into_iter().skip(from as usize).take(limit).collect());
                }
                let Location::Local(path) = &loc else {
                    return Err(FsError::NotFound);
                };
                let real = real.as_deref().unwrap_or(path);
                for (name, found) in scan(&self.root, &self.fence, real)? {
                    let child = self.intern_local(node, path, real, &name, found);
                    let kind = if self.is_link(child) {
                        Kind::Symlink
                    } else {
                        Kind::Dir
                    };
                    fixed.push((inode::encode(child, Role::Node), kind, name));
                }
            }
            (Role::Node, NodeKind::Array(entry)) => {
                let loaded = entry.current().map_err(FsError::from)?;
                for spec in array_files_in(Folder::Array, &loaded, self.views) {
                    fixed.push((
                        inode::encode(node, Role::File(spec.id)),
                        spec.kind,
                        OsString::from(spec.name),
                    ));
                }
            }
            (Role::Node, kind @ (NodeKind::Store(_) | NodeKind::Folder(_))) => {
                fixed.push((
                    inode::encode(node, Role::File(FileId::MetaJson)),
                    Kind::File,
                    OsString::from("meta.json"),
                ));
                let view = self.folder_view(&kind)?;
                if view.as_ref().and_then(|v| self.folder_zarr(v)).is_some() {
                    fixed.push((
                        inode::encode(node, Role::File(FileId::ZarrJson)),
                        Kind::File,
                        OsString::from("zarr.json"),
                    ));
                }
                if self.views.offers_table_csv()
                    && view.as_ref().and_then(Self::folder_csv).is_some()
                {
                    fixed.push((
                        inode::encode(node, Role::TableCsv),
                        Kind::File,
                        OsString::from("table.csv"),
                    ));
                }
                if let Some(FolderView::Ok {
                    entry, store, key, ..
                }) = view
                {
                    for (name, child) in store
                        .folders
                        .get(&key)
                        .map(Vec::as_slice)
                        .unwrap_or_default()
                    {
                        match self.intern_in_store(&entry, &store, node, name, child) {
                            Ok(n) => {
                                fixed.push((inode::encode(n, Role::Node), Kind::Dir, name.clone()))
                            }
                            Err(e) => log::warn!("{e}"),
                        }
                    }
                }
            }
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
        let parent_ino = inode::encode(node, tree.parent(&prefix).unwrap_or(Role::Node));
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

    /// What reading `ino` serves, plus the array version it serves.
    pub fn open(&self, ino: u64) -> Result<(Content, Option<Arc<Loaded>>), FsError> {
        let (node, role) = self.decode(ino)?;
        if role == Role::Stats {
            return if node == 0 {
                Ok((Content::Stats, None))
            } else {
                Err(FsError::NotFound)
            };
        }
        if role == Role::Node || role == Role::File(FileId::ChunksDir) {
            return Err(FsError::IsDir);
        }
        let (_, kind) = self.node_info(node)?;
        if let NodeKind::Dir(_) = kind {
            return match role {
                Role::File(FileId::ZarrJson) => Ok((
                    Content::Static(Arc::new(self.dir_zarr(node).ok_or(FsError::NotFound)?)),
                    None,
                )),
                _ => Err(FsError::NotFound),
            };
        }
        if let Some(view) = self.folder_view(&kind)? {
            return match role {
                Role::File(FileId::MetaJson) => {
                    Ok((Content::Static(Self::folder_meta(&view)?.0), None))
                }
                Role::File(FileId::ZarrJson) => Ok((
                    Content::Static(self.folder_zarr(&view).ok_or(FsError::NotFound)?),
                    None,
                )),
                Role::TableCsv => Ok((
                    Content::TableCsv(Self::folder_csv(&view).ok_or(FsError::NotFound)?),
                    None,
                )),
                _ => Err(FsError::NotFound),
            };
        }
        let loaded = self.array_of(node)?;
        let content = match role {
            Role::File(id) => (array_file(id).open)(&loaded).ok_or(FsError::NotFound)?,
            Role::Chunk(c) if self.chunk_dir(&loaded, c).is_some() => return Err(FsError::IsDir),
            Role::Chunk(c) => {
                let array = loaded
                    .whole_array()
                    .filter(|a| c < a.nchunks())
                    .ok_or(FsError::NotFound)?;
                Content::Array {
                    array: array.clone(),
                    view: crate::read::View::Chunk(c),
                }
            }
            _ => return Err(FsError::NotFound),
        };
        Ok((content, Some(loaded)))
    }

    /// Extended attributes of `ino` (only the files the views' table marks,
    /// `data` and `data.npy`, carry any).
    pub fn xattrs(&self, ino: u64) -> Result<Vec<(String, Vec<u8>)>, FsError> {
        let (node, role) = self.decode(ino)?;
        match role {
            Role::File(id)
                if array_file(id).xattrs
                    && matches!(self.node_info(node)?.1, NodeKind::Array(_)) =>
            {
                Ok(self.array_of(node)?.xattrs.clone())
            }
            _ => {
                self.getattr(ino, &|| 0)?;
                Ok(Vec::new())
            }
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
        }
    }

    /// Intern remote child `key` of class `class`.
    fn intern_remote(
        &self,
        root: &Arc<RemoteRoot>,
        key: String,
        parent: u32,
        class: RemoteClass,
    ) -> u32 {
        let on_load = self.on_load.clone();
        let k = key.clone();
        let name = OsString::from(key.rsplit('/').next().unwrap_or_default());
        self.intern(parent, &name, Place::Remote, class.class(), &move || {
            Self::remote_kind(root, k.clone(), class, false, &on_load, &self.meta)
        })
    }

    fn remote_root(&self) -> Result<&Arc<RemoteRoot>, FsError> {
        self.remote.as_ref().ok_or(FsError::NotFound)
    }

    /// Look `name` up in the remote folder `key` (node `node`): its node.
    fn remote_lookup(&self, node: u32, key: &str, name: &std::ffi::OsStr) -> Result<u32, FsError> {
        let root = self.remote_root()?;
        let name = name.to_str().ok_or(FsError::NotFound)?;
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(FsError::NotFound);
        }
        let class = root
            .child(key, name)
            .map_err(|e| FsError::Io(io_error(e)))?
            .ok_or(FsError::NotFound)?;
        Ok(self.intern_remote(root, join(key, name), node, class))
    }

    /// Append the children of the remote folder `key` (node `node`) to `out`.
    fn remote_readdir(&self, node: u32, key: &str, out: &mut Vec<DirEntry>) -> Result<(), FsError> {
        let root = self.remote_root()?;
        for (name, class) in root.children(key).map_err(|e| FsError::Io(io_error(e)))? {
            let child = self.intern_remote(root, join(key, &name), node, class);
            out.push((
                inode::encode(child, Role::Node),
                Kind::Dir,
                OsString::from(name),
            ));
        }
        Ok(())
    }

    /// Modification time (the mount's start) and access of a remote folder
    /// (0555: anyone may list it).
    fn remote_dir_meta(&self) -> (SystemTime, Access) {
        let mtime = self
            .remote
            .as_ref()
            .map_or(SystemTime::UNIX_EPOCH, |r| r.made());
        (
            mtime,
            Access {
                mode: 0o555,
                ..remote_access()
            },
        )
    }

    /// What the mount's remote connection has cost, when its source is remote.
    pub fn remote_stats(&self) -> Option<StatsSnapshot> {
        self.remote.as_ref().map(|r| r.stats())
    }
}
