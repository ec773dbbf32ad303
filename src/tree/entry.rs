//! One array as presented: its opened state, revalidated against the source.
//!
//! Each open and lookup stats the source; when its identity (device, inode,
//! size, mtime) changed, the array is opened again under a new id, so new
//! opens see the new content while open handles keep the version they got.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::SystemTime;

use serde_json::{json, Value as Json};

use crate::format::{simple_dtype_itemsize, Array, Shape, SPARSE_INDEX};
use crate::source::open_array;

use super::{meta_json, npy, zarr, Access, OnLoad};

/// Identity of a source file version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
}

impl Stamp {
    /// The stamp of a file from its metadata: device, inode, size and
    /// modification time (in nanoseconds). Two stamps differ when `stat` can see
    /// that the file changed.
    pub fn of(meta: &std::fs::Metadata) -> Stamp {
        Stamp { dev: meta.dev(), ino: meta.ino(), size: meta.size(), mtime_ns: meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128 }
    }
}

/// Everything presented for one version of an array.
#[derive(Debug)]
pub struct Loaded {
    /// Distinct for every load, so callers can tell versions apart.
    pub version: u64,
    /// Identity of the source when this version was loaded (for a sparse frame,
    /// of its `chunks.b2frame` index); a different stamp now means the source
    /// changed.
    pub stamp: Stamp,
    /// Modification time of that file: the mtime of every presented entry of
    /// this version.
    pub mtime: SystemTime,
    /// Owner, group and mode of the source when this version was loaded: the
    /// permissions of every presented entry of this version (see [`Access`]).
    pub access: Access,
    /// The opened array, or None when the file cannot be read or holds no
    /// values of its own (meta.json says why).
    pub array: Option<Arc<Array>>,
    /// Bytes of `meta.json`: the array's metadata as pretty-printed JSON ending
    /// in a newline, or `{"file", "error"}` when the array could not be opened.
    pub meta_json: Arc<Vec<u8>>,
    /// The `.npy` header that `data.npy` presents before the data (empty when
    /// the array could not be opened).
    pub npy_header: Arc<Vec<u8>>,
    /// Bytes of `chunks/.zarray`, when zarr can describe the chunks (chunks of
    /// one shape and a dtype zarr knows); `None` otherwise, and then there is no
    /// `.zarray` file.
    pub zarray: Option<Arc<Vec<u8>>>,
    /// Chunk-grid dimensions for `chunks/` names (plain frames: [nchunks]).
    pub chunk_grid: Vec<u64>,
    /// Extended attributes of `data` and `data.npy`, name and value:
    /// `user.blosc2.dtype`, `user.blosc2.shape` (JSON), `user.blosc2.chunkshape`
    /// (JSON, N-d arrays only) and `user.blosc2.codec`. Empty when the array could
    /// not be opened.
    pub xattrs: Vec<(String, Vec<u8>)>,
}

/// What tells a version apart: the source's identity and its permissions
/// (a `chmod` or `chown` makes a new version, so no entry keeps old bits).
type Version = (Stamp, Access);

/// An array node: its source path and the version it presents.
///
/// A node presents one version of its source: once loaded it does not
/// change (its inodes keep their sizes and bytes, so open handles never see
/// a mix), and the tree gives the path a new node when [`Self::is_stale`].
/// Only a mount root (a single-file source, whose inode cannot change)
/// reloads in place. Once a newer node presents the path, this one is
/// retired: it keeps its version only while open files hold it.
pub struct ArrayEntry {
    /// Path of the source: a frame file or a sparse frame's directory.
    pub path: PathBuf,
    in_place: bool,
    state: Mutex<State>,
    on_load: Option<OnLoad>,
}

/// What an entry holds of its version.
enum State {
    /// Not loaded yet.
    Empty,
    /// The version it presents.
    Loaded(Arc<Loaded>),
    /// Superseded by a newer node: the version lives on only in open files.
    Retired(Weak<Loaded>),
}

impl std::fmt::Debug for ArrayEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArrayEntry").field("path", &self.path).field("in_place", &self.in_place).finish_non_exhaustive()
    }
}

impl ArrayEntry {
    /// An entry for the array at `path`; `on_load` is told of every array
    /// opened for it (the read layer preloads its layouts).
    pub fn new(path: PathBuf, in_place: bool, on_load: Option<OnLoad>) -> ArrayEntry {
        ArrayEntry { path, in_place, state: Mutex::new(State::Empty), on_load }
    }

    /// A newer node presents this path now: let go of this version (open
    /// files keep it alive as long as they need it).
    pub fn retire(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let State::Loaded(loaded) = &*state {
            *state = State::Retired(Arc::downgrade(loaded));
        }
    }

    /// The file whose identity tells the version (the index file of a sparse frame).
    fn stamp_path(&self) -> PathBuf {
        if self.path.is_dir() {
            self.path.join(SPARSE_INDEX)
        } else {
            self.path.clone()
        }
    }

    /// The source's identity, and its permissions alongside it (one place).
    fn stat(&self) -> std::io::Result<(Version, SystemTime)> {
        let stamp_path = self.stamp_path();
        let meta = std::fs::metadata(&stamp_path)?;
        let access = if stamp_path == self.path { Access::of(&meta) } else { Access::of_sparse(&std::fs::metadata(&self.path)?, &meta) };
        Ok(((Stamp::of(&meta), access), meta.modified().unwrap_or(SystemTime::UNIX_EPOCH)))
    }

    /// Whether the source changed (or vanished) since this entry loaded it.
    pub fn is_stale(&self) -> bool {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match &*state {
            State::Empty => false,
            State::Loaded(loaded) => self.stat().map(|(version, _)| version != (loaded.stamp, loaded.access)).unwrap_or(true),
            State::Retired(_) => true,
        }
    }

    /// The version this entry presents (loaded on first use). An error when
    /// the source is gone before it was ever loaded, or when the entry was
    /// retired and no open file holds its version any more.
    pub fn current(&self) -> std::io::Result<Arc<Loaded>> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let State::Retired(weak) = &*state {
            // ESTALE makes the kernel look the name up again, finding the new node.
            return weak.upgrade().ok_or_else(|| std::io::Error::from_raw_os_error(libc::ESTALE));
        }
        if let State::Loaded(loaded) = &*state {
            if !self.in_place {
                return Ok(loaded.clone());
            }
            let (version, _) = self.stat()?;
            if (loaded.stamp, loaded.access) == version {
                return Ok(loaded.clone());
            }
            log::info!("{} changed; reopening", self.path.display());
        }
        let ((stamp, access), mtime) = self.stat()?;
        let loaded = Arc::new(load(&self.path, stamp, access, mtime, self.on_load.as_ref()));
        *state = State::Loaded(loaded.clone());
        Ok(loaded)
    }
}

fn load(path: &Path, stamp: Stamp, access: Access, mtime: SystemTime, on_load: Option<&OnLoad>) -> Loaded {
    match open_array(path) {
        Ok(array) if array.values_elsewhere().is_some() => {
            // Only meta.json: the file's chunks hold no values, and zeros
            // served as data would be made up.
            log::info!("{}: values live elsewhere ({})", path.display(), meta_json::render(&array)["values"]["what"]);
            Loaded {
                version: next_version(),
                stamp,
                access,
                mtime,
                array: None,
                meta_json: Arc::new(json_bytes(&meta_json::render(&array))),
                npy_header: Arc::new(Vec::new()),
                zarray: None,
                chunk_grid: Vec::new(),
                xattrs: Vec::new(),
            }
        }
        Ok(array) => {
            let array = Arc::new(array);
            if let Some(on_load) = on_load {
                on_load(&array);
            }
            present(array, stamp, access, mtime)
        }
        Err(e) => {
            log::warn!("{e}");
            let doc = json!({ "file": path.display().to_string(), "error": e.problem.to_string() });
            Loaded {
                version: next_version(),
                stamp,
                mtime,
                access,
                array: None,
                meta_json: Arc::new(json_bytes(&doc)),
                npy_header: Arc::new(Vec::new()),
                zarray: None,
                chunk_grid: Vec::new(),
                xattrs: Vec::new(),
            }
        }
    }
}

fn next_version() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

fn json_bytes(doc: &Json) -> Vec<u8> {
    let mut text = serde_json::to_vec_pretty(doc).unwrap_or_default();
    text.push(b'\n');
    text
}

/// The NumPy dtype that describes the data's items: the declared dtype when
/// its size matches the frame's typesize, otherwise a void of the typesize.
pub fn presented_dtype(array: &Array) -> String {
    let typesize = array.frame().typesize as u64;
    if let Shape::Nd { meta, .. } = array.shape() {
        if let Some(dtype) = meta.dtype.as_deref() {
            match simple_dtype_itemsize(dtype) {
                Some(size) if size == typesize => return dtype.to_string(),
                None if dtype.starts_with('[') => return dtype.to_string(),
                _ => {}
            }
        }
    }
    format!("|V{typesize}")
}

fn present(array: Arc<Array>, stamp: Stamp, access: Access, mtime: SystemTime) -> Loaded {
    let dtype = presented_dtype(&array);
    let typesize = array.frame().typesize as u64;
    let (shape, chunkshape, chunk_grid, zarr_chunks): (Vec<u64>, Option<Vec<u64>>, Vec<u64>, Option<Vec<u64>>) = match array.shape() {
        Shape::Nd { geometry, .. } => (
            geometry.shape.clone(),
            Some(geometry.chunkshape.clone()),
            geometry.chunk_grid.clone(),
            Some(geometry.chunkshape.clone()),
        ),
        Shape::Plain { .. } => {
            let items = array.data_len() / typesize;
            let chunksize = array.frame().chunksize;
            let uniform = chunksize > 0 && chunksize.is_multiple_of(typesize) && array.data_len().is_multiple_of(typesize);
            let chunks = uniform.then(|| vec![chunksize / typesize]);
            (vec![items], None, vec![array.nchunks()], chunks)
        }
    };
    let (npy_dtype, npy_shape) = if array.data_len().is_multiple_of(typesize) {
        (dtype.clone(), shape.clone())
    } else {
        ("|u1".to_string(), vec![array.data_len()])
    };
    let zarray = zarr_chunks.and_then(|chunks| {
        let zdtype = zarr::zarr_dtype(&dtype)?;
        Some(Arc::new(zarr::zarray(&shape, &chunks, zdtype)))
    });
    let mut xattrs = vec![
        ("user.blosc2.dtype".to_string(), dtype.clone().into_bytes()),
        ("user.blosc2.shape".to_string(), serde_json::to_vec(&shape).unwrap_or_default()),
    ];
    if let Some(chunkshape) = &chunkshape {
        xattrs.push(("user.blosc2.chunkshape".to_string(), serde_json::to_vec(chunkshape).unwrap_or_default()));
    }
    xattrs.push(("user.blosc2.codec".to_string(), meta_json::codec_name(&array).into_bytes()));
    Loaded {
        version: next_version(),
        stamp,
        mtime,
        access,
        meta_json: Arc::new(json_bytes(&meta_json::render(&array))),
        npy_header: Arc::new(npy::header(&npy_dtype, &npy_shape)),
        zarray,
        chunk_grid,
        xattrs,
        array: Some(array),
    }
}
