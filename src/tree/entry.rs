//! One array as presented: its opened state, revalidated against the source.
//!
//! Each open and lookup stats the source; when its identity (device, inode,
//! size, mtime) changed, the array is opened again under a new id, so new
//! opens see the new content while open handles keep the version they got.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::SystemTime;

use serde_json::{json, Value as Json};

use crate::format::{simple_dtype_itemsize, Array, Shape, Version};

use crate::read::RowSelection;

use super::location::Origin;
use super::store::RowMap;
use super::{items, meta_json, npy, zarr, Access, OnLoad};

/// Everything presented for one version of an array.
#[derive(Debug)]
pub struct Loaded {
    /// Distinct for every load, so callers can tell versions apart.
    pub version: u64,
    /// Identity of the source when this version was loaded (for a sparse frame,
    /// of its `chunks.b2frame` index; for a store value, of its store); a
    /// different version now means the source changed.
    pub stamp: Version,
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
    /// For a table column: the views of its valid rows (`data`, `data.npy`);
    /// then `data` and `data.npy` show those rows only and there is no `chunks/`.
    pub rows: Option<[Arc<RowSelection>; 2]>,
    /// For an ObjectArray, BatchArray or ListArray: its `items.jsonl`.
    pub items: Option<Arc<Vec<u8>>>,
}

/// An array node: where its bytes come from and the version it presents.
///
/// A node presents one version of its source: once loaded it does not
/// change (its inodes keep their sizes and bytes, so open handles never see
/// a mix), and the tree gives the path a new node when [`Self::is_stale`].
/// Only a mount root (a single-file source, whose inode cannot change)
/// reloads in place. Once a newer node presents the path, this one is
/// retired: it keeps its version only while open files hold it.
pub struct ArrayEntry {
    /// Where the array's bytes come from.
    pub origin: Origin,
    in_place: bool,
    state: Mutex<State>,
    on_load: Option<OnLoad>,
    rows: Option<Arc<RowMap>>,
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
        f.debug_struct("ArrayEntry").field("origin", &self.origin.name()).field("in_place", &self.in_place).finish_non_exhaustive()
    }
}

impl ArrayEntry {
    /// An entry for the array at `origin`; `on_load` is told of every array
    /// opened for it (the read layer preloads its layouts).
    pub fn new(origin: Origin, in_place: bool, on_load: Option<OnLoad>) -> ArrayEntry {
        ArrayEntry { origin, in_place, state: Mutex::new(State::Empty), on_load, rows: None }
    }

    /// An entry for a table column: only the stored rows in `rows` are shown.
    pub fn column(origin: Origin, rows: Arc<RowMap>, on_load: Option<OnLoad>) -> ArrayEntry {
        ArrayEntry { origin, in_place: false, state: Mutex::new(State::Empty), on_load, rows: Some(rows) }
    }

    /// A newer node presents this path now: let go of this version (open
    /// files keep it alive as long as they need it).
    pub fn retire(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let State::Loaded(loaded) = &*state {
            *state = State::Retired(Arc::downgrade(loaded));
        }
    }

    /// The source's version and its permissions now (a `chmod` or `chown`
    /// makes a new version, so no entry keeps old bits), and its mtime.
    fn stat(&self) -> std::io::Result<((Version, Access), SystemTime)> {
        let (version, mtime) = self.origin.version()?;
        Ok(((version, self.origin.access()?), mtime))
    }

    /// Whether the source changed (or vanished) since this entry loaded it.
    pub fn is_stale(&self) -> bool {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match &*state {
            State::Empty => false,
            State::Loaded(loaded) => self.stat().map(|((stamp, access), _)| stamp != loaded.stamp || access != loaded.access).unwrap_or(true),
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
            let ((stamp, access), _) = self.stat()?;
            if loaded.stamp == stamp && loaded.access == access {
                return Ok(loaded.clone());
            }
            log::info!("{} changed; reopening", self.origin.name().display());
        }
        let ((stamp, access), mtime) = self.stat()?;
        let loaded = Arc::new(load(&self.origin, stamp, access, mtime, self.on_load.as_ref(), self.rows.as_deref()));
        *state = State::Loaded(loaded.clone());
        Ok(loaded)
    }
}

fn load(origin: &Origin, stamp: Version, access: Access, mtime: SystemTime, on_load: Option<&OnLoad>, rows: Option<&RowMap>) -> Loaded {
    // A version that presents only meta.json (no array to read).
    let meta_only = |doc: &Json| Loaded {
        version: next_version(),
        stamp: stamp.clone(),
        access,
        mtime,
        array: None,
        meta_json: Arc::new(json_bytes(doc)),
        npy_header: Arc::new(Vec::new()),
        zarray: None,
        chunk_grid: Vec::new(),
        xattrs: Vec::new(),
        rows: None,
        items: None,
    };
    match origin.open() {
        Ok(array) => match array.values_elsewhere() {
            // Only meta.json: the file's chunks hold no values, and zeros
            // served as data would be made up.
            Some(why) => {
                log::info!("{}: values live elsewhere: {why}", origin.name().display());
                meta_only(&meta_json::render(&array))
            }
            None => {
                let array = Arc::new(array);
                if let Some(on_load) = on_load {
                    on_load(&array);
                }
                present(array, stamp, access, mtime, rows)
            }
        },
        Err(e) => {
            log::warn!("{e}");
            meta_only(&json!({ "file": origin.name().display().to_string(), "error": e.problem.to_string() }))
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

fn present(array: Arc<Array>, stamp: Version, access: Access, mtime: SystemTime, rows: Option<&RowMap>) -> Loaded {
    let dtype = presented_dtype(&array);
    let typesize = array.frame().typesize as u64;
    #[allow(unused_mut)]
    let (mut shape, chunkshape, chunk_grid, mut zarr_chunks): (Vec<u64>, Option<Vec<u64>>, Vec<u64>, Option<Vec<u64>>) = match array.shape() {
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
    let mut row_views = None;
    let mut meta_doc = meta_json::render(&array);
    if let Some(rows) = rows {
        // A column: the valid rows among its first dimension.
        let stored_rows = shape.first().copied().unwrap_or(0);
        let row_bytes = super::store::row_bytes(&array).unwrap_or(typesize);
        let clipped = rows.clipped(stored_rows);
        if shape.is_empty() {
            shape.push(clipped.count);
        } else {
            shape[0] = clipped.count;
        }
        zarr_chunks = None;
        if let Some(obj) = meta_doc.as_object_mut() {
            obj.insert("rows_shown".into(), json!(clipped.count));
            obj.insert("rows_stored".into(), json!(stored_rows));
        }
        let npy_header = Arc::new(npy::header(&dtype, &shape));
        row_views = Some([
            Arc::new(RowSelection::new(clipped.runs.clone(), row_bytes, Arc::new(Vec::new()))),
            Arc::new(RowSelection::new(clipped.runs, row_bytes, npy_header)),
        ]);
    }
    let items = items::kind_of(&array).and_then(|kind| match items::items_jsonl(&array, kind) {
        Ok(bytes) => Some(Arc::new(bytes)),
        Err(p) => {
            if let Some(obj) = meta_doc.as_object_mut() {
                obj.insert("items_error".into(), json!(p.to_string()));
            }
            None
        }
    });
    let (npy_dtype, npy_shape) = if row_views.is_some() || array.data_len().is_multiple_of(typesize) {
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
        access,
        mtime,
        meta_json: Arc::new(json_bytes(&meta_doc)),
        npy_header: Arc::new(npy::header(&npy_dtype, &npy_shape)),
        zarray,
        chunk_grid,
        xattrs,
        rows: row_views,
        items,
        array: Some(array),
    }
}
