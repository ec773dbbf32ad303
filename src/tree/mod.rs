//! The presented tree: which source files become which presented files,
//! their sizes and inode numbers.
//!
//! Source directories are mirrored; every Blosc2 file (contiguous frame or
//! sparse-frame directory) becomes a directory holding `meta.json`, `data`,
//! `data.npy` and `chunks/`, plus the views `data.txt` (numeric dtypes) and
//! `preview.png` (numeric arrays of at least one axis). Directories are scanned lazily, when listed or
//! looked up, so mounting a large tree opens nothing.

pub mod access;
pub mod entry;
pub mod error;
pub mod fs;
pub mod inode;
pub mod meta_json;
pub mod npy;
pub mod redact;
pub mod preview;
pub mod preview_png;
pub mod text;
pub mod zarr;

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

use crate::format::{grid_coords, linear, Array, Region, Shape, SPARSE_INDEX};
use crate::read::View;
use crate::source::{is_sparse_dir, sniff_frame, FileSource};

pub use access::Access;
pub use entry::{ArrayEntry, Loaded};
pub use error::FsError;
pub use fs::{Filesystem, FsConfig};
use inode::Role;
use preview::PreviewPlan;
use text::TextLayout;

/// Told of every array the tree opens (the read layer preloads its layouts).
pub type OnLoad = Arc<dyn Fn(&Arc<Array>) + Send + Sync>;

/// Extensions shown without looking inside the file.
const KNOWN_EXTENSIONS: [&str; 4] = ["b2nd", "b2frame", "b2f", "b2"];

/// What a presented inode is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A directory.
    Dir,
    /// A regular file.
    File,
}

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
        };
        Attr { perm, owner: Some((access.uid, access.gid)), ..self }
    }
}

/// One directory entry: (inode, kind, name).
pub type DirEntry = (u64, Kind, OsString);

/// What reading an opened file serves.
#[derive(Debug, Clone)]
pub enum Content {
    /// Bytes known at open (meta.json, .zarray).
    Static(Arc<Vec<u8>>),
    /// A view of an array, decoded on demand.
    Array {
        /// The array version the file was opened on.
        array: Arc<Array>,
        /// Which bytes of it the file shows.
        view: View,
    },
    /// The mount's statistics (filled in by the adapter at each read).
    Stats,
    /// `data.txt`: the array's values as text, rendered on demand.
    Text {
        /// The array version the file was opened on.
        array: Arc<Array>,
        /// Where each item's text lies.
        layout: Arc<TextLayout>,
    },
    /// `preview.png`, drawn at open (the filesystem keeps it per version).
    Preview {
        /// The array version the file was opened on.
        array: Arc<Array>,
        /// What to draw.
        plan: Arc<PreviewPlan>,
    },
}

/// The text layout of `data.txt` for `array`, when its dtype is numeric.
pub fn text_layout(array: &Array) -> Option<TextLayout> {
    let shape = match array.shape() {
        Shape::Nd { geometry, .. } => geometry.shape.clone(),
        Shape::Plain { .. } => vec![array.data_len() / (array.frame().typesize as u64).max(1)],
    };
    let layout = TextLayout::new(&entry::presented_dtype(array), &shape)?;
    (layout.itemsize() as u64 == array.frame().typesize as u64).then_some(layout)
}

#[derive(Debug)]
enum NodeKind {
    Dir,
    Array(Arc<ArrayEntry>),
}

#[derive(Debug)]
struct Node {
    path: PathBuf,
    kind: NodeKind,
}

#[derive(Debug, Default)]
struct Nodes {
    list: Vec<Node>,
    by_path: HashMap<PathBuf, u32>,
}

/// The presented tree of one mount.
pub struct Tree {
    root: PathBuf,
    nodes: RwLock<Nodes>,
    on_load: Option<OnLoad>,
}

impl Tree {
    /// A tree over `source`: a directory of arrays, or a single array (then
    /// the mount root is that array's directory).
    /// `on_load` is told of every array opened.
    pub fn new(source: &Path, on_load: Option<OnLoad>) -> std::io::Result<Tree> {
        let root = std::fs::canonicalize(source)?;
        let kind = if root.is_dir() && !is_sparse_dir(&root) {
            NodeKind::Dir
        } else {
            NodeKind::Array(Arc::new(ArrayEntry::new(root.clone(), true, on_load.clone())))
        };
        let mut nodes = Nodes::default();
        nodes.by_path.insert(root.clone(), 0);
        nodes.list.push(Node { path: root.clone(), kind });
        Ok(Tree { root, nodes: RwLock::new(nodes), on_load })
    }

    fn node_info(&self, node: u32) -> Result<(PathBuf, Option<Arc<ArrayEntry>>), FsError> {
        let nodes = self.nodes.read().unwrap_or_else(|e| e.into_inner());
        let n = nodes.list.get(node as usize).ok_or(FsError::NotFound)?;
        Ok((n.path.clone(), match &n.kind { NodeKind::Dir => None, NodeKind::Array(a) => Some(a.clone()) }))
    }

    /// The node presenting `path` now: the known one, or a new one when the
    /// path is new, changed kind, or its array source changed since loaded.
    fn intern(&self, path: PathBuf, is_array: bool) -> u32 {
        let reusable = |nodes: &Nodes| -> Option<u32> {
            let &n = nodes.by_path.get(&path)?;
            match (&nodes.list[n as usize].kind, is_array) {
                (NodeKind::Dir, false) => Some(n),
                (NodeKind::Array(entry), true) if !entry.is_stale() => Some(n),
                _ => None,
            }
        };
        if let Some(n) = reusable(&self.nodes.read().unwrap_or_else(|e| e.into_inner())) {
            return n;
        }
        let mut nodes = self.nodes.write().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = reusable(&nodes) {
            return n;
        }
        if let Some(&old) = nodes.by_path.get(&path) {
            if let NodeKind::Array(entry) = &nodes.list[old as usize].kind {
                entry.retire();
            }
        }
        let n = nodes.list.len() as u32;
        let kind = if is_array { NodeKind::Array(Arc::new(ArrayEntry::new(path.clone(), false, self.on_load.clone()))) } else { NodeKind::Dir };
        nodes.by_path.insert(path.clone(), n);
        nodes.list.push(Node { path, kind });
        n
    }

    fn array_of(&self, node: u32) -> Result<Arc<Loaded>, FsError> {
        let (_, entry) = self.node_info(node)?;
        let entry = entry.ok_or(FsError::NotFound)?;
        entry.current().map_err(FsError::from)
    }

    /// Decide whether a source directory entry is shown, and as what.
    /// Symlinks are followed only when they resolve inside the source root.
    fn classify(&self, path: &Path) -> Option<bool> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        let target = if meta.file_type().is_symlink() {
            let resolved = std::fs::canonicalize(path).ok()?;
            if !resolved.starts_with(&self.root) {
                log::debug!("not following {} (points outside the source)", path.display());
                return None;
            }
            resolved
        } else {
            path.to_path_buf()
        };
        let meta = std::fs::metadata(&target).ok()?;
        if meta.is_dir() {
            return Some(target.join(SPARSE_INDEX).is_file());
        }
        if !meta.is_file() {
            return None;
        }
        let known = path.extension().and_then(OsStr::to_str).is_some_and(|e| KNOWN_EXTENSIONS.contains(&e));
        if known || FileSource::open(&target).is_ok_and(|source| sniff_frame(&source)) {
            Some(true)
        } else {
            None
        }
    }

    /// Children of a mirrored source directory: (name, is_array), sorted by name.
    fn scan(&self, dir: &Path) -> Result<Vec<(OsString, bool)>, FsError> {
        let mut out = Vec::new();
        for item in std::fs::read_dir(dir).map_err(FsError::from)? {
            let Ok(item) = item else { continue };
            let name = item.file_name();
            if let Some(is_array) = self.classify(&item.path()) {
                out.push((name, is_array));
            }
        }
        out.sort();
        Ok(out)
    }

    /// Modification time and access of a mirrored directory (a directory that
    /// cannot be stat'ed any more is shown to root only).
    fn node_meta(path: &Path) -> (SystemTime, Access) {
        match std::fs::metadata(path) {
            Ok(meta) => (meta.modified().unwrap_or(SystemTime::UNIX_EPOCH), Access::of(&meta)),
            Err(_) => (SystemTime::UNIX_EPOCH, Access::DENY),
        }
    }

    /// Attributes of `ino`.
    /// `stats_size` tells the size of `.stats` (computed only when asked about it).
    pub fn getattr(&self, ino: u64, stats_size: &dyn Fn() -> u64) -> Result<Attr, FsError> {
        let (node, role) = inode::decode(ino).ok_or(FsError::NotFound)?;
        let (path, entry) = self.node_info(node)?;
        let dir = |mtime| Attr { ino, kind: Kind::Dir, size: 0, mtime, perm: 0, owner: None };
        let file = |size, mtime| Attr { ino, kind: Kind::File, size, mtime, perm: 0, owner: None };
        if role == Role::Stats {
            // The mounting user's, readable as before (it holds no source bytes).
            return if node == 0 { Ok(Attr { perm: 0o444, ..file(stats_size(), SystemTime::now()) }) } else { Err(FsError::NotFound) };
        }
        let Some(entry) = entry else {
            if role != Role::Node {
                return Err(FsError::NotFound);
            }
            let (mtime, access) = Self::node_meta(&path);
            return Ok(Attr { perm: access.dir_perm(), owner: Some((access.uid, access.gid)), ..dir(mtime) });
        };
        let loaded = entry.current().map_err(FsError::from)?;
        let mtime = loaded.mtime;
        let Some(array) = &loaded.array else {
            return match role {
                Role::Node => Ok(dir(mtime).of_array(&loaded.access)),
                Role::MetaJson => Ok(file(loaded.meta_json.len() as u64, mtime).of_array(&loaded.access)),
                _ => Err(FsError::NotFound),
            };
        };
        let attr = match role {
            Role::Node | Role::ChunksDir => dir(mtime),
            Role::MetaJson => file(loaded.meta_json.len() as u64, mtime),
            Role::Data => file(array.data_len(), mtime),
            Role::Npy => file(loaded.npy_header.len() as u64 + array.data_len(), mtime),
            Role::Text => file(text_layout(array).ok_or(FsError::NotFound)?.len(), mtime),
            Role::Preview => file(PreviewPlan::new(array).ok_or(FsError::NotFound)?.len(), mtime),
            Role::Zarray => file(loaded.zarray.as_ref().ok_or(FsError::NotFound)?.len() as u64, mtime),
            Role::Chunk(c) if c < array.nchunks() => {
                file(array.region_len(Region::Chunk(c)).map_err(|p| crate::format::Error::new(array.name(), p))?, mtime)
            }
            _ => return Err(FsError::NotFound),
        };
        Ok(attr.of_array(&loaded.access))
    }

    /// Look `name` up in directory `parent`.
    pub fn lookup(&self, parent: u64, name: &OsStr, stats_size: &dyn Fn() -> u64) -> Result<Attr, FsError> {
        let (node, role) = inode::decode(parent).ok_or(FsError::NotFound)?;
        let (path, entry) = self.node_info(node)?;
        let child = match (role, entry) {
            (Role::Node, None) => {
                if node == 0 && name == ".stats" {
                    inode::encode(0, Role::Stats)
                } else {
                    if name.as_bytes().contains(&b'/') || name == "." || name == ".." {
                        return Err(FsError::NotFound);
                    }
                    let child_path = path.join(name);
                    let is_array = self.classify(&child_path).ok_or(FsError::NotFound)?;
                    inode::encode(self.intern(child_path, is_array), Role::Node)
                }
            }
            (Role::Node, Some(entry)) => {
                let loaded = entry.current().map_err(FsError::from)?;
                let role = match name.to_str() {
                    Some("meta.json") => Role::MetaJson,
                    Some(".stats") if node == 0 => Role::Stats,
                    Some("data") if loaded.array.is_some() => Role::Data,
                    Some("data.npy") if loaded.array.is_some() => Role::Npy,
                    Some("data.txt") if loaded.array.as_deref().and_then(text_layout).is_some() => Role::Text,
                    Some("preview.png") if loaded.array.as_deref().and_then(PreviewPlan::new).is_some() => Role::Preview,
                    Some("chunks") if loaded.array.is_some() => Role::ChunksDir,
                    _ => return Err(FsError::NotFound),
                };
                inode::encode(node, role)
            }
            (Role::ChunksDir, Some(entry)) => {
                let loaded = entry.current().map_err(FsError::from)?;
                let name = name.to_str().ok_or(FsError::NotFound)?;
                if name == ".zarray" && loaded.zarray.is_some() {
                    inode::encode(node, Role::Zarray)
                } else {
                    let coords = zarr::parse_chunk_name(name, &loaded.chunk_grid).ok_or(FsError::NotFound)?;
                    let c = linear(&coords, &loaded.chunk_grid);
                    if c >= inode::MAX_CHUNK_FILES {
                        return Err(FsError::NotFound);
                    }
                    inode::encode(node, Role::Chunk(c))
                }
            }
            _ => return Err(FsError::NotDir),
        };
        self.getattr(child, stats_size)
    }

    /// Entries of directory `ino` from index `from` on: (ino, kind, name).
    /// `.` and `..` come first. `limit` bounds how many are produced.
    pub fn readdir(&self, ino: u64, from: u64, limit: usize) -> Result<Vec<DirEntry>, FsError> {
        let (node, role) = inode::decode(ino).ok_or(FsError::NotFound)?;
        let (path, entry) = self.node_info(node)?;
        let out: Vec<DirEntry>;
        let parent_ino = if node == 0 && role == Role::Node { ino } else if role == Role::ChunksDir { inode::encode(node, Role::Node) } else { self.parent_of(&path) };
        let mut fixed = vec![(ino, Kind::Dir, OsString::from(".")), (parent_ino, Kind::Dir, OsString::from(".."))];
        match (role, entry) {
            (Role::Node, None) => {
                if node == 0 {
                    fixed.push((inode::encode(0, Role::Stats), Kind::File, OsString::from(".stats")));
                }
                for (name, is_array) in self.scan(&path)? {
                    let child = self.intern(path.join(&name), is_array);
                    fixed.push((inode::encode(child, Role::Node), Kind::Dir, name));
                }
                out = fixed;
            }
            (Role::Node, Some(entry)) => {
                let loaded = entry.current().map_err(FsError::from)?;
                if node == 0 {
                    fixed.push((inode::encode(0, Role::Stats), Kind::File, OsString::from(".stats")));
                }
                fixed.push((inode::encode(node, Role::MetaJson), Kind::File, OsString::from("meta.json")));
                if loaded.array.is_some() {
                    fixed.push((inode::encode(node, Role::Data), Kind::File, OsString::from("data")));
                    fixed.push((inode::encode(node, Role::Npy), Kind::File, OsString::from("data.npy")));
                    if loaded.array.as_deref().and_then(text_layout).is_some() {
                        fixed.push((inode::encode(node, Role::Text), Kind::File, OsString::from("data.txt")));
                    }
                    if loaded.array.as_deref().and_then(PreviewPlan::new).is_some() {
                        fixed.push((inode::encode(node, Role::Preview), Kind::File, OsString::from("preview.png")));
                    }
                    fixed.push((inode::encode(node, Role::ChunksDir), Kind::Dir, OsString::from("chunks")));
                }
                out = fixed;
            }
            (Role::ChunksDir, Some(entry)) => {
                let loaded = entry.current().map_err(FsError::from)?;
                let array = loaded.array.as_ref().ok_or(FsError::NotFound)?;
                if loaded.zarray.is_some() {
                    fixed.push((inode::encode(node, Role::Zarray), Kind::File, OsString::from(".zarray")));
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
                        out.push((inode::encode(node, Role::Chunk(c)), Kind::File, OsString::from(zarr::chunk_name(&coords))));
                    }
                    i += 1;
                }
                return Ok(out);
            }
            _ => return Err(FsError::NotDir),
        }
        Ok(out.into_iter().skip(from as usize).take(limit).collect())
    }

    /// Whether `ino` is a mirrored source directory (whose listing costs a
    /// scan of the source, so callers list it once per open).
    pub fn is_source_dir(&self, ino: u64) -> bool {
        match inode::decode(ino) {
            Some((node, Role::Node)) => matches!(self.node_info(node), Ok((_, None))),
            _ => false,
        }
    }

    fn parent_of(&self, path: &Path) -> u64 {
        let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let nodes = self.nodes.read().unwrap_or_else(|e| e.into_inner());
        nodes.by_path.get(&parent).map(|&n| inode::encode(n, Role::Node)).unwrap_or(1)
    }

    /// What reading `ino` serves, plus the array version it serves.
    pub fn open(&self, ino: u64) -> Result<(Content, Option<Arc<Loaded>>), FsError> {
        let (node, role) = inode::decode(ino).ok_or(FsError::NotFound)?;
        if role == Role::Stats {
            return if node == 0 { Ok((Content::Stats, None)) } else { Err(FsError::NotFound) };
        }
        if role == Role::Node || role == Role::ChunksDir {
            return Err(FsError::IsDir);
        }
        let loaded = self.array_of(node)?;
        let content = match role {
            Role::MetaJson => Content::Static(loaded.meta_json.clone()),
            Role::Zarray => Content::Static(loaded.zarray.clone().ok_or(FsError::NotFound)?),
            Role::Text => {
                let array = loaded.array.clone().ok_or(FsError::NotFound)?;
                let layout = Arc::new(text_layout(&array).ok_or(FsError::NotFound)?);
                Content::Text { array, layout }
            }
            Role::Preview => {
                let array = loaded.array.clone().ok_or(FsError::NotFound)?;
                let plan = Arc::new(PreviewPlan::new(&array).ok_or(FsError::NotFound)?);
                Content::Preview { array, plan }
            }
            Role::Data | Role::Npy | Role::Chunk(_) => {
                let array = loaded.array.clone().ok_or(FsError::NotFound)?;
                let view = match role {
                    Role::Data => View::Data,
                    Role::Npy => View::Npy(loaded.npy_header.clone()),
                    Role::Chunk(c) if c < array.nchunks() => View::Chunk(c),
                    _ => return Err(FsError::NotFound),
                };
                Content::Array { array, view }
            }
            _ => return Err(FsError::NotFound),
        };
        Ok((content, Some(loaded)))
    }

    /// Extended attributes of `ino` (only `data` and `data.npy` carry any).
    pub fn xattrs(&self, ino: u64) -> Result<Vec<(String, Vec<u8>)>, FsError> {
        let (node, role) = inode::decode(ino).ok_or(FsError::NotFound)?;
        match role {
            Role::Data | Role::Npy => Ok(self.array_of(node)?.xattrs.clone()),
            _ => {
                self.getattr(ino, &|| 0)?;
                Ok(Vec::new())
            }
        }
    }
}
