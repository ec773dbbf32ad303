//! One array as presented: its opened state, revalidated against the source.
//!
//! Each open and lookup stats the source; when its identity (device, inode,
//! size, mtime) changed, the array is opened again under a new id, so new
//! opens see the new content while open handles keep the version they got.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::SystemTime;

use serde_json::json;

use crate::format::Version;
use crate::read::RowMap;
use crate::views::{meta_json, Presented};

use super::access::Access;
use super::location::Origin;

/// Told of every array an entry opens (the read layer preloads its layouts).
pub type OnLoad = Arc<dyn Fn(&Arc<crate::format::Array>) + Send + Sync>;

/// One loaded version of an array: what it presents, and the identity of
/// the source it was loaded from.
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
    /// What it presents (rendered by the views when loaded).
    pub presented: Presented,
}

impl std::ops::Deref for Loaded {
    type Target = Presented;
    fn deref(&self) -> &Presented {
        &self.presented
    }
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
    let presented = match origin.open() {
        Ok(array) => match array.values_elsewhere() {
            // Only meta.json: the file's chunks hold no values, and zeros
            // served as data would be made up.
            Some(why) => {
                log::info!("{}: values live elsewhere: {why}", origin.name().display());
                Presented::meta_only(&meta_json::render(&array))
            }
            None => {
                let array = Arc::new(array);
                if let Some(on_load) = on_load {
                    on_load(&array);
                }
                Presented::of_array(array, rows)
            }
        },
        Err(e) => {
            log::warn!("{e}");
            Presented::meta_only(&json!({ "file": origin.name().display().to_string(), "error": e.problem.to_string() }))
        }
    };
    Loaded { version: next_version(), stamp, access, mtime, presented }
}

fn next_version() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
