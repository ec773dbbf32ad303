//! The filesystem as operations on inode numbers and handles, with no FUSE
//! in sight: lookup, getattr, readdir, open, read, release, xattrs. The
//! fuser adapter (`crate::mount::fuse`) only translates calls and replies;
//! tests drive this type directly (`tests/fs.rs`).
//!
//! Open files keep the array version they opened (an `Arc` of it) and their
//! sequential-read state; reads go through the read layer's planner.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::format::source::Pin;
use crate::format::{Array, Problem};
use crate::read::{Planner, Served, Stats, StreamRead, StreamState, View};

use crate::views::preview::PreviewPlan;
use crate::views::text::TextLayout;

use crate::views::{Content, ViewSet};

use super::computed::Computer;
use super::entry::{Loaded, Loading, OnLoad};
use super::error::FsError;
use super::listing::Fence;
use super::meta_cache::{MetaCache, DEFAULT_META_CACHE};
use super::namespace::{Attr, DirEntry, Tree};
#[cfg(feature = "remote")]
use super::remote::RemoteRoot;

/// Inodes whose last served array version is remembered (to keep the
/// kernel's page cache across opens of an unchanged file). Forgetting one
/// only costs a re-read: an inode not found here never keeps the cache.
const SERVED_VERSIONS: usize = 64 * 1024;

/// (array, chunk) pairs whose read errors were logged; once forgotten, an
/// error is logged again (the log repeats, the bytes never mix).
const REPORTED_ERRORS: usize = 4096;

/// Previews kept (one per array version; each at most about 1 MiB).
const PREVIEWS: usize = 32;

/// Directory entries a readdir call returns at most.
const READDIR_BATCH: usize = 4096;

/// Settings of the filesystem logic (ownership and timeouts are the adapter's).
#[derive(Debug, Clone)]
pub struct FsConfig {
    /// Open array files with direct I/O (no kernel page cache).
    pub direct_io: bool,
    /// Byte budget of what entries load (`--meta-cache`): parsed headers and
    /// chunk indexes, meta.json bytes, store listings.
    pub meta_cache: usize,
    /// The mount's own mountpoint, when it lies in the source tree: never
    /// listed, looked up or opened (the daemon would wait on itself).
    pub mountpoint: Option<std::path::PathBuf>,
    /// The presented files the mount offers (`--views`; `data` and
    /// `meta.json` always).
    pub views: ViewSet,
}

impl Default for FsConfig {
    fn default() -> FsConfig {
        FsConfig {
            direct_io: false,
            meta_cache: DEFAULT_META_CACHE,
            mountpoint: None,
            views: ViewSet::ALL,
        }
    }
}

/// What an open answers besides the handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opened {
    /// The handle to pass to `read` and `release`.
    pub fh: u64,
    /// The kernel may keep the file's cached pages (same version as last time).
    pub keep_cache: bool,
    /// Bypass the page cache for this handle.
    pub direct_io: bool,
}

struct OpenFile {
    content: Content,
    stream: StreamState,
    /// Opened without direct_io: the kernel reads ahead for this file.
    kernel_reads_ahead: bool,
    /// Keeps the version opened alive (and its inodes answering) while open.
    _version: Option<Arc<Loaded>>,
    /// Keeps the source's descriptor open while open, so a file replaced
    /// under it keeps reading the bytes it opened.
    _pin: Option<Pin>,
}

/// Hold the descriptor of the array `content` reads, for as long as the
/// file is open. A source replaced since it was loaded is ESTALE: the
/// kernel looks the name up again and finds the new node.
fn pin(content: &Content) -> Result<Option<Pin>, FsError> {
    let (Content::Array { array, .. }
    | Content::Text { array, .. }
    | Content::Preview { array, .. }) = content
    else {
        return Ok(None);
    };
    array.pin().map_err(|p| match p {
        Problem::SourceChanged(why) => {
            log::info!("{}: {why}", array.name().display());
            FsError::Io(std::io::Error::from_raw_os_error(libc::ESTALE))
        }
        p => FsError::Format(crate::format::Error::new(array.name(), p)),
    })
}

/// The presented tree plus open files, read through the planner.
pub struct Filesystem {
    tree: Tree,
    planner: Arc<Planner>,
    config: FsConfig,
    handles: Mutex<HashMap<u64, Arc<OpenFile>>>,
    /// Listings of source directories taken at opendir (one scan per open).
    listings: Mutex<HashMap<u64, Arc<Vec<DirEntry>>>>,
    next_fh: AtomicU64,
    /// Array version last served per inode (bounded, see [`SERVED_VERSIONS`]).
    served: Mutex<lru::LruCache<u64, u64>>,
    /// Read errors already logged (bounded, see [`REPORTED_ERRORS`]).
    reported: Mutex<lru::LruCache<(u64, u64), ()>>,
    /// `preview.png` bytes by array id (bounded, see [`PREVIEWS`]); the
    /// slot's lock makes concurrent opens draw a preview once.
    previews: Mutex<lru::LruCache<u64, PreviewSlot>>,
}

/// One array version's preview, once drawn.
type PreviewSlot = Arc<Mutex<Option<Arc<Vec<u8>>>>>;

fn bounded<K: std::hash::Hash + Eq, V>(n: usize) -> Mutex<lru::LruCache<K, V>> {
    Mutex::new(lru::LruCache::new(
        NonZeroUsize::new(n).unwrap_or(NonZeroUsize::MIN),
    ))
}

impl Filesystem {
    /// The filesystem over `source` (a directory of arrays or one array).
    pub fn new(
        source: &Path,
        planner: Arc<Planner>,
        config: FsConfig,
    ) -> std::io::Result<Filesystem> {
        let fence = Arc::new(Fence::new(config.mountpoint.as_deref()));
        // Saved expressions are computed from operands inside the source only.
        let computer = Computer {
            root: std::fs::canonicalize(source)?,
            fence: fence.clone(),
            planner: planner.clone(),
        };
        let on_load = Self::on_load(&planner, Some(computer));
        let tree = Tree::new(
            source,
            Some(on_load),
            Arc::new(MetaCache::new(config.meta_cache)),
        )?
        .fenced_by(fence)
        .with_views(config.views);
        Ok(Self::with_tree(tree, planner, config))
    }

    /// The filesystem over a remote root (an object-store prefix, or the URL
    /// of one array or store).
    #[cfg(feature = "remote")]
    pub fn new_remote(
        root: Arc<RemoteRoot>,
        planner: Arc<Planner>,
        config: FsConfig,
    ) -> Filesystem {
        // Saved expressions are computed from operands under the same root.
        let computer = Computer {
            root: std::path::PathBuf::new(),
            fence: Arc::default(),
            planner: planner.clone(),
        };
        let on_load = Self::on_load(&planner, Some(computer));
        Self::with_tree(
            Tree::new_remote(
                root,
                Some(on_load),
                Arc::new(MetaCache::new(config.meta_cache)),
            )
            .with_views(config.views),
            planner,
            config,
        )
    }

    fn on_load(planner: &Arc<Planner>, computer: Option<Computer>) -> OnLoad {
        let preload = planner.clone();
        Arc::new(Loading {
            preload: Box::new(move |array| preload.opened(array)),
            computer,
        })
    }

    fn with_tree(tree: Tree, planner: Arc<Planner>, config: FsConfig) -> Filesystem {
        Filesystem {
            tree,
            planner,
            config,
            handles: Mutex::new(HashMap::new()),
            listings: Mutex::new(HashMap::new()),
            next_fh: AtomicU64::new(1),
            served: bounded(SERVED_VERSIONS),
            reported: bounded(REPORTED_ERRORS),
            previews: bounded(PREVIEWS),
        }
    }

    /// The counters of the mount.
    pub fn stats(&self) -> &Stats {
        self.planner.stats()
    }

    /// The `.stats` document.
    pub fn stats_json(&self) -> Vec<u8> {
        let cache = self.planner.blocks().cache();
        let (bytes, entries) = cache.usage();
        let mut doc = self
            .stats()
            .to_json(bytes as u64, cache.budget() as u64, entries as u64);
        let meta = self.tree.meta_stats();
        let fds = crate::source::fds::pool().stats();
        if let Some(obj) = doc.as_object_mut() {
            obj.insert(
                "meta_cache".into(),
                serde_json::json!({ "budget": meta.budget, "bytes": meta.bytes, "entries": meta.entries, "loads": meta.loads, "evictions": meta.evictions }),
            );
            obj.insert(
                "descriptors".into(),
                serde_json::json!({
                    "capacity": fds.capacity, "cached": fds.cached, "opens": fds.opens,
                    "reopens": fds.reopens, "evictions": fds.evictions, "retries": fds.retries,
                }),
            );
        }
        #[cfg(feature = "remote")]
        if let (Some(remote), Some(obj)) = (self.tree.remote_stats(), doc.as_object_mut()) {
            let mut shown = serde_json::json!({
                "requests": remote.requests(),
                "gets": remote.gets,
                "heads": remote.heads,
                "lists": remote.lists,
                "bytes_fetched": remote.bytes,
                "errors": remote.errors,
                "span_hits": remote.span_hits,
                "hint_gets": remote.hint_gets,
                "hint_bytes": remote.hint_bytes,
                "hint_hits": remote.hint_hits,
                "hints_dropped": remote.hints_dropped,
                "bytes_in_flight": remote.inflight,
                "bytes_in_flight_peak": remote.inflight_peak,
                "bytes_held_and_in_flight_peak": remote.pool_peak,
                "budget": remote.budget,
            });
            if remote.endpoints.iter().any(|&n| n > 0) {
                use crate::source::remote::caterva2::Endpoint;
                let endpoints: serde_json::Map<String, serde_json::Value> = Endpoint::ALL
                    .iter()
                    .map(|e| (e.name().to_string(), remote.endpoints[e.index()].into()))
                    .collect();
                shown["endpoints"] = endpoints.into();
            }
            obj.insert("remote".into(), shown);
        }
        let mut text = serde_json::to_vec_pretty(&doc).unwrap_or_default();
        text.push(b'\n');
        text
    }

    fn stats_size(&self) -> u64 {
        self.stats_json().len() as u64
    }

    /// Look `name` up in directory `parent`.
    pub fn lookup(&self, parent: u64, name: &OsStr) -> Result<Attr, FsError> {
        self.tree.lookup(parent, name, &|| self.stats_size())
    }

    /// The target of symlink `ino` (EINVAL for anything else).
    pub fn readlink(&self, ino: u64) -> Result<std::ffi::OsString, FsError> {
        self.tree.readlink(ino)
    }

    /// The mount is up on device `dev`: the walk of the source never enters it.
    pub fn set_mount_device(&self, dev: u64) {
        self.tree.set_mount_device(dev);
    }

    /// Attributes of `ino`.
    pub fn getattr(&self, ino: u64) -> Result<Attr, FsError> {
        self.tree.getattr(ino, &|| self.stats_size())
    }

    /// Whether `ino` may be accessed; any write access is refused.
    pub fn access(&self, ino: u64, write: bool) -> Result<(), FsError> {
        if write {
            return Err(FsError::ReadOnly);
        }
        self.tree.getattr(ino, &|| 0).map(|_| ())
    }

    /// Open `ino` for reading (`write` asks for write access: refused).
    pub fn open(&self, ino: u64, write: bool) -> Result<Opened, FsError> {
        if write {
            return Err(FsError::ReadOnly);
        }
        let (content, loaded) = self.tree.open(ino)?;
        let pin = pin(&content)?;
        let content = match content {
            Content::Preview { array, plan } => Content::Static(self.preview(&array, &plan)?),
            other => other,
        };
        let (keep_cache, direct_io) = match &content {
            Content::Stats => (false, true),
            Content::Array { .. } | Content::Text { .. } if self.config.direct_io => (false, true),
            _ => (
                self.same_version_as_last_served(ino, loaded.as_deref()),
                false,
            ),
        };
        let fh = self.next_fh.fetch_add(1, Ordering::Relaxed);
        self.handles
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                fh,
                Arc::new(OpenFile {
                    content,
                    stream: StreamState::default(),
                    kernel_reads_ahead: !direct_io,
                    _version: loaded,
                    _pin: pin,
                }),
            );
        Stats::add(&self.stats().open_files, 1);
        Ok(Opened {
            fh,
            keep_cache,
            direct_io,
        })
    }

    /// The `preview.png` of `array`: kept from an earlier open, or drawn now
    /// (a failure is logged and not kept).
    fn preview(&self, array: &Arc<Array>, plan: &PreviewPlan) -> Result<Arc<Vec<u8>>, FsError> {
        let slot = self
            .previews
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(array.id(), PreviewSlot::default)
            .clone();
        let mut kept = slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(bytes) = &*kept {
            return Ok(bytes.clone());
        }
        let bytes = Arc::new(plan.render(array, &self.planner).map_err(|e| {
            Stats::add(&self.stats().read_errors, 1);
            log::error!("{e} (drawing preview.png)");
            FsError::from(e)
        })?);
        *kept = Some(bytes.clone());
        Ok(bytes)
    }

    /// Immutable while the source is unchanged: the kernel may keep its page
    /// cache across opens, unless this open serves a new version.
    fn same_version_as_last_served(&self, ino: u64, loaded: Option<&Loaded>) -> bool {
        let version = loaded.map(|l| l.version).unwrap_or(0);
        self.served
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .put(ino, version)
            == Some(version)
    }

    /// Whether a read of open file `fh` may wait on a network (see
    /// [`crate::format::ByteSource::may_wait`]).
    pub fn may_wait(&self, fh: u64) -> bool {
        let Some(handle) = self
            .handles
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&fh)
            .cloned()
        else {
            return false;
        };
        match &handle.content {
            Content::Array { array, .. } | Content::Text { array, .. } => array.may_wait(),
            Content::TableCsv(csv) => csv.may_wait(),
            _ => false,
        }
    }

    /// Bytes `[offset, offset + size)` of open file `fh` (shorter at its end).
    pub fn read(&self, fh: u64, offset: u64, size: u32) -> Result<Vec<u8>, FsError> {
        let mut out = Vec::new();
        self.read_served(fh, offset, size, &mut out)?
            .into_buffer(&mut out);
        Ok(out)
    }

    /// [`Self::read`] into `out` (resized to the bytes read; its old bytes
    /// are all overwritten), so a caller can reuse one buffer for every
    /// request; except that a read inside one decoded block answers with
    /// that block ([`Served::Shared`]) and leaves `out` alone, so its
    /// bytes go to the kernel without a copy.
    pub fn read_served(
        &self,
        fh: u64,
        offset: u64,
        size: u32,
        out: &mut Vec<u8>,
    ) -> Result<Served, FsError> {
        let handle = self
            .handles
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&fh)
            .cloned()
            .ok_or(FsError::BadHandle)?;
        Stats::add(&self.stats().reads, 1);
        let mut slice = |bytes: &[u8]| {
            let start = (offset as usize).min(bytes.len());
            let end = start.saturating_add(size as usize).min(bytes.len());
            out.clear();
            out.extend_from_slice(&bytes[start..end]);
        };
        let failed = |e: crate::format::Error, array: Option<u64>| {
            Stats::add(&self.stats().read_errors, 1);
            if let Some(id) = array {
                self.report(id, &e);
            }
            FsError::from(e)
        };
        match &handle.content {
            Content::Static(bytes) => slice(bytes),
            Content::Stats => slice(&self.stats_json()),
            // Never kept by a handle: open draws it into a Static.
            Content::Preview { .. } => return Err(FsError::BadHandle),
            Content::Array { array, view } => {
                return self
                    .planner
                    .read_stream_served(
                        array,
                        view,
                        StreamRead {
                            stream: &handle.stream,
                            kernel_reads_ahead: handle.kernel_reads_ahead,
                        },
                        offset,
                        size as u64,
                        out,
                    )
                    .map_err(|e| failed(e, Some(array.id())));
            }
            Content::Text { array, layout } => {
                *out = self
                    .read_text(array, layout, &handle.stream, offset, size as u64)
                    .map_err(|e| failed(e, Some(array.id())))?;
            }
            Content::TableCsv(csv) => {
                *out = csv
                    .read(offset, size as u64, |column, start, len| {
                        self.planner
                            .read(&column.array, &column.view, start, len)
                            .inspect_err(|e| self.report(column.array.id(), e))
                    })
                    .map_err(|e| failed(e, None))?;
            }
        }
        Ok(Served::Buffer)
    }

    /// Bytes of `data.txt`: the items they show, read through the planner.
    /// A first item cut by the read's start is read on its own, so that a
    /// sequential reader's data reads stay sequential (and prefetched).
    fn read_text(
        &self,
        array: &Arc<Array>,
        layout: &TextLayout,
        stream: &StreamState,
        offset: u64,
        size: u64,
    ) -> Result<Vec<u8>, crate::format::Error> {
        let itemsize = layout.itemsize() as u64;
        let cut = !offset.is_multiple_of(layout.item_width());
        layout.read(offset, size, |start, len| {
            if cut && len > itemsize {
                let mut data = self.planner.read(array, &View::Data, start, itemsize)?;
                data.extend(self.planner.read_stream(
                    array,
                    &View::Data,
                    stream,
                    start + itemsize,
                    len - itemsize,
                )?);
                Ok(data)
            } else {
                self.planner
                    .read_stream(array, &View::Data, stream, start, len)
            }
        })
    }

    /// Log a read failure once per (array, chunk).
    fn report(&self, array_id: u64, error: &crate::format::Error) {
        let chunk = error.problem.chunk().unwrap_or(u64::MAX);
        let mut reported = self.reported.lock().unwrap_or_else(|e| e.into_inner());
        if reported.put((array_id, chunk), ()).is_none() {
            match &error.problem {
                Problem::InChunk { .. } => log::error!("{error}"),
                _ => log::error!("{error} (no chunk involved)"),
            }
        }
    }

    /// Close open file `fh`.
    pub fn release(&self, fh: u64) {
        if self
            .handles
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&fh)
            .is_some()
        {
            self.stats().open_files.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Open directory `ino`; a source directory is listed now, once.
    pub fn opendir(&self, ino: u64) -> Result<u64, FsError> {
        let fh = self.next_fh.fetch_add(1, Ordering::Relaxed);
        if self.tree.is_source_dir(ino) {
            let entries = self.tree.readdir(ino, 0, usize::MAX)?;
            self.listings
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(fh, Arc::new(entries));
        }
        Ok(fh)
    }

    /// Entries of directory `ino` (opened as `fh`) from index `offset` on;
    /// entry i's cookie for the kernel is `offset + i + 1`.
    pub fn readdir(&self, ino: u64, fh: u64, offset: u64) -> Result<Vec<DirEntry>, FsError> {
        let listing = self
            .listings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&fh)
            .cloned();
        match listing {
            Some(all) => Ok(all
                .iter()
                .skip(offset as usize)
                .take(READDIR_BATCH)
                .cloned()
                .collect()),
            None => self.tree.readdir(ino, offset, READDIR_BATCH),
        }
    }

    /// Close directory handle `fh`.
    pub fn releasedir(&self, fh: u64) {
        self.listings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&fh);
    }

    /// Value of extended attribute `name` of `ino`.
    pub fn getxattr(&self, ino: u64, name: &OsStr) -> Result<Vec<u8>, FsError> {
        let attrs = self.tree.xattrs(ino)?;
        attrs
            .into_iter()
            .find(|(n, _)| OsStr::new(n) == name)
            .map(|(_, v)| v)
            .ok_or(FsError::NoAttr)
    }

    /// Names of the extended attributes of `ino`, each NUL-terminated.
    pub fn listxattr(&self, ino: u64) -> Result<Vec<u8>, FsError> {
        let attrs = self.tree.xattrs(ino)?;
        Ok(attrs
            .iter()
            .flat_map(|(n, _)| n.bytes().chain(std::iter::once(0)))
            .collect())
    }
}
