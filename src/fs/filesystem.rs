//! The filesystem as operations on inode numbers and handles, with no FUSE
//! in sight: lookup, getattr, readdir, open, read, release, xattrs. The
//! fuser adapter (`crate::mount::fuse`) only translates calls and replies;
//! tests drive this type directly (`tests/fs.rs`).
//!
//! Open files keep the array version they opened (an `Arc` of it) and their
//! sequential-read state; reads go through the read layer's planner.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::format::{Array, Problem};
use crate::read::{Planner, Served, Stats, StreamRead, StreamState, View};

use crate::views::preview::PreviewPlan;
use crate::views::text::TextLayout;

use crate::views::Content;

use crate::catalog::computed::Computer;
use crate::catalog::entry::{Loaded, Loading, OnLoad};
use crate::catalog::local_dir::Fence;
use crate::catalog::meta_cache::MetaCache;
use crate::catalog::nnunet_plans::PlansMemo;
use crate::tables::PartReader;
use crate::tree::error::FsError;
use crate::tree::{Attr, DirEntry, Tree};

use super::config::FsConfig;
use super::disk_read::DiskUse;
use super::open_handle::{pin, OpenFile, Opened};
#[cfg(feature = "remote")]
use crate::catalog::remote::RemoteRoot;

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
    /// Opens of local files shown as themselves: (daemon, passthrough).
    plain_opens: (AtomicU64, AtomicU64),
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
            allow_other: config.allow_other,
        };
        let on_load = Self::on_load(&planner, Some(computer));
        let tree = Tree::new(
            source,
            Some(on_load),
            Arc::new(MetaCache::new(config.meta_cache)),
        )?
        .fenced_by(fence)
        .with_views(config.views)
        .with_listing_rules(config.listing);
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
            allow_other: config.allow_other,
        };
        let on_load = Self::on_load(&planner, Some(computer));
        Self::with_tree(
            Tree::new_remote(
                root,
                Some(on_load),
                Arc::new(MetaCache::new(config.meta_cache)),
            )
            .with_views(config.views)
            .with_listing_rules(config.listing),
            planner,
            config,
        )
    }

    fn on_load(planner: &Arc<Planner>, computer: Option<Computer>) -> OnLoad {
        let preload = planner.clone();
        // nnU-Net plans are read only inside a local source (the root that
        // saved expressions are confined to, too), or under a remote root
        // (whose keys never climb above it).
        let plans = match &computer {
            Some(c) if !c.root.as_os_str().is_empty() => PlansMemo::within(c.root.clone()),
            _ => PlansMemo::default(),
        };
        Arc::new(Loading {
            preload: Box::new(move |array| preload.opened(array)),
            computer,
            table_reads: PartReader::shared(planner.blocks().clone()),
            plans,
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
            plain_opens: Default::default(),
        }
    }

    /// The counters of the mount.
    pub fn stats(&self) -> &Stats {
        self.planner.stats()
    }

    /// The `.stats` document.
    pub fn stats_json(&self) -> Vec<u8> {
        super::stats::document(
            &self.planner,
            &self.tree,
            self.config.disk_cache.as_deref(),
            self.plain_opens(),
        )
    }

    /// `attr` as the kernel is told it: `.stats` sized (see [`super::stats::sized`]).
    fn sized(&self, attr: Attr) -> Attr {
        super::stats::sized(
            attr,
            &self.planner,
            &self.tree,
            self.config.disk_cache.as_deref(),
            self.plain_opens(),
        )
    }

    /// Look `name` up in directory `parent`.
    pub fn lookup(&self, parent: u64, name: &OsStr) -> Result<Attr, FsError> {
        Ok(self.sized(self.tree.lookup(parent, name)?))
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
        Ok(self.sized(self.tree.getattr(ino)?))
    }

    /// Whether `ino` may be accessed; any write access is refused.
    pub fn access(&self, ino: u64, write: bool) -> Result<(), FsError> {
        if write {
            return Err(FsError::ReadOnly);
        }
        self.tree.getattr(ino).map(|_| ())
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
        let disk = match (&content, &self.config.disk_cache) {
            (Content::Array { array, view }, Some(cache)) => {
                DiskUse::open(cache, self.planner.blocks(), array, view)
            }
            _ => None,
        };
        // `data` read again while its cache entry fills: bypass the page
        // cache, so the next open (handed the complete cache file) has no
        // pages of this one to drop (see DiskUse::rereading).
        let rereading = disk
            .as_ref()
            .zip(self.config.disk_cache.as_deref())
            .is_some_and(|(d, cache)| d.rereading(cache));
        let (keep_cache, direct_io) = match &content {
            Content::Stats => (false, true),
            // A file shown as itself keeps the page cache while the source
            // file is the one served last (mmap works; --direct-io is for
            // decoded files).
            Content::Plain(source) => (
                self.same_plain_as_last_served(ino, &source.opened_version()),
                false,
            ),
            Content::Array { .. } | Content::Text { .. } if self.config.direct_io => (false, true),
            Content::Array { .. } if rereading => (false, true),
            // A folder's own document has no version of its own: a group's
            // zarr.json (its subtree's consolidated metadata) is rendered
            // at each open and may differ from what getattr measured, in
            // bytes or in length; read to its end, never from old pages.
            Content::Static(_) if loaded.is_none() => (false, true),
            _ => (
                self.same_version_as_last_served(ino, loaded.as_deref()),
                false,
            ),
        };
        let cache_file = disk.as_ref().is_some_and(DiskUse::complete_data);
        let plain_file = matches!(&content, Content::Plain(_))
            && pin.as_ref().is_some_and(|p| p.is::<std::fs::File>());
        // A file whose cache entry has holes (fills dropped while the
        // writer was behind) is read through the daemon again, not from the
        // kernel's pages: whole parts come from the cache file and the holes
        // are decoded and filled, so the entry completes.
        let keep_cache = keep_cache && disk.as_ref().is_none_or(|d| d.entry.is_complete());
        let fh = self.next_fh.fetch_add(1, Ordering::Relaxed);
        self.handles.lock().insert(
            fh,
            Arc::new(OpenFile {
                content,
                stream: StreamState::default(),
                kernel_reads_ahead: !direct_io,
                _version: loaded,
                _pin: pin,
                disk,
                stats_doc: Default::default(),
            }),
        );
        Stats::add(&self.stats().open_files, 1);
        Ok(Opened {
            fh,
            keep_cache,
            direct_io,
            cache_file,
            plain_file,
        })
    }

    /// The `preview.png` of `array`: kept from an earlier open, or drawn now
    /// (a failure is logged and not kept).
    fn preview(&self, array: &Arc<Array>, plan: &PreviewPlan) -> Result<Arc<Vec<u8>>, FsError> {
        let slot = self
            .previews
            .lock()
            .get_or_insert(array.id(), PreviewSlot::default)
            .clone();
        let mut kept = slot.lock();
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
        self.served.lock().put(ino, version) == Some(version)
    }

    /// [`Self::same_version_as_last_served`] for a file shown as itself,
    /// whose identity is the source file's `version`.
    fn same_plain_as_last_served(&self, ino: u64, version: &crate::format::Version) -> bool {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        version.hash(&mut hasher);
        let token = hasher.finish() | 1;
        self.served.lock().put(ino, token) == Some(token)
    }

    /// Whether the mount's source is remote (lookups, attributes and
    /// listings may then wait on a server).
    pub fn is_remote(&self) -> bool {
        #[cfg(feature = "remote")]
        return self.tree.remote_stats().is_some();
        #[cfg(not(feature = "remote"))]
        false
    }

    /// Whether a read of open file `fh` may wait on a network (see
    /// [`crate::format::ByteSource::may_wait`]).
    pub fn may_wait(&self, fh: u64) -> bool {
        let Some(handle) = self.handles.lock().get(&fh).cloned() else {
            return false;
        };
        match &handle.content {
            Content::Array { array, .. } | Content::Text { array, .. } => array.may_wait(),
            Content::Table(file) => file.may_wait(),
            Content::Plain(source) => source.may_wait(),
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
            Content::Stats => slice(handle.stats_doc.get_or_init(|| self.stats_json())),
            // Never kept by a handle: open draws it into a Static.
            Content::Preview { .. } => return Err(FsError::BadHandle),
            Content::Array { array, view } => {
                let disk = handle.disk.as_ref().zip(self.config.disk_cache.as_deref());
                if let Some((disk, cache)) = disk {
                    if disk.read(cache, offset, size as u64, out) {
                        return Ok(Served::Buffer);
                    }
                    cache.busy();
                }
                let served = self
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
                    .map_err(|e| failed(e, Some(array.id())))?;
                if let Some((disk, cache)) = disk {
                    disk.served(cache, offset, served.bytes(out));
                }
                return Ok(served);
            }
            Content::Text { array, layout } => {
                *out = self
                    .read_text(array, layout, &handle.stream, offset, size as u64)
                    .map_err(|e| failed(e, Some(array.id())))?;
            }
            Content::Plain(source) => {
                let len = source.len();
                let start = offset.min(len);
                let end = offset.saturating_add(size as u64).min(len);
                out.clear();
                out.resize((end - start) as usize, 0);
                if let Err(p) = source.read_at(start, out) {
                    let e = crate::format::Error::new(Path::new(&source.describe()), p);
                    log::error!("{e}");
                    return Err(failed(e, None));
                }
            }
            Content::Table(file) => {
                *out = file.read(offset, size as u64).map_err(|e| {
                    let e = crate::format::Error::from(e);
                    log::error!("{e}");
                    failed(e, None)
                })?;
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
        let mut reported = self.reported.lock();
        if reported.put((array_id, chunk), ()).is_none() {
            match &error.problem {
                Problem::InChunk { .. } => log::error!("{error}"),
                _ => log::error!("{error} (no chunk involved)"),
            }
        }
    }

    /// The complete cache file of open file `fh` (opened with
    /// [`Opened::cache_file`]), for the adapter to hand to the kernel.
    pub fn backing(&self, fh: u64) -> Option<Arc<crate::disk_cache::Entry>> {
        let handle = self.handles.lock().get(&fh).cloned()?;
        handle.disk.as_ref().map(|d| d.entry.clone())
    }

    /// The descriptor of open file `fh` (opened with [`Opened::plain_file`]:
    /// a local file shown as itself), for the adapter to hand to the kernel.
    pub fn plain_backing(&self, fh: u64) -> Option<Arc<std::fs::File>> {
        let handle = self.handles.lock().get(&fh).cloned()?;
        handle._pin.clone()?.downcast::<std::fs::File>().ok()
    }

    /// The adapter served open file `fh`, opened with [`Opened::cache_file`],
    /// by passthrough (`true`) or by the daemon reading the cache file.
    pub fn note_cache_file_open(&self, passthrough: bool) {
        if let Some(cache) = &self.config.disk_cache {
            let stats = cache.stats();
            let counter = if passthrough {
                &stats.passthrough_opens
            } else {
                &stats.cache_file_opens
            };
            crate::disk_cache::DiskStats::add(counter, 1);
        }
    }

    /// The adapter opened a local file shown as itself, by passthrough
    /// (`true`) or through the daemon.
    pub fn note_plain_open(&self, passthrough: bool) {
        let counter = if passthrough {
            &self.plain_opens.1
        } else {
            &self.plain_opens.0
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Opens of local files shown as themselves: (through the daemon, by
    /// passthrough).
    pub fn plain_opens(&self) -> (u64, u64) {
        (
            self.plain_opens.0.load(Ordering::Relaxed),
            self.plain_opens.1.load(Ordering::Relaxed),
        )
    }

    /// Whether the adapter may hand cache files to the kernel (a disk
    /// cache is on); the adapter still checks the kernel takes them.
    pub fn has_disk_cache(&self) -> bool {
        self.config.disk_cache.is_some()
    }

    /// Write what the disk cache has queued and persist its maps (unmount).
    pub fn flush(&self) {
        if let Some(cache) = &self.config.disk_cache {
            cache.flush();
        }
    }

    /// Close open file `fh`.
    pub fn release(&self, fh: u64) {
        if self.handles.lock().remove(&fh).is_some() {
            self.stats().open_files.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Open directory `ino`; a source directory is listed now, once.
    pub fn opendir(&self, ino: u64) -> Result<u64, FsError> {
        let fh = self.next_fh.fetch_add(1, Ordering::Relaxed);
        if self.tree.is_source_dir(ino) {
            let entries = self.tree.readdir(ino, 0, usize::MAX)?;
            self.listings.lock().insert(fh, Arc::new(entries));
        }
        Ok(fh)
    }

    /// Entries of directory `ino` (opened as `fh`) from index `offset` on;
    /// entry i's cookie for the kernel is `offset + i + 1`.
    pub fn readdir(&self, ino: u64, fh: u64, offset: u64) -> Result<Vec<DirEntry>, FsError> {
        let listing = self.listings.lock().get(&fh).cloned();
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
        self.listings.lock().remove(&fh);
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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use sha2::{Digest, Sha256};

    use super::*;
    use crate::read::planner::layout_budget;
    use crate::read::Blocks;
    use crate::tree::inode::{encode, Role};
    use crate::views::Kind;

    const ROOT: u64 = 1;
    const FIXTURE: &str = "codec_blosclz_shuffle";

    fn fixtures() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
    }

    /// The fixture's `data` length and sha256, as python-blosc2 wrote them
    /// in the fixtures' manifest.
    fn expected() -> (u64, String) {
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(fixtures().join("manifest.json")).unwrap())
                .unwrap();
        let case = &manifest[FIXTURE];
        (
            case["size"].as_u64().unwrap(),
            case["sha256"].as_str().unwrap().to_string(),
        )
    }

    /// A filesystem over a folder holding `a.b2nd` (45 x 37 `<f4`, in
    /// 20 x 16 chunks of 8 x 5 blocks), with a small block cache.
    fn filesystem() -> (tempfile::TempDir, Filesystem) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(
            fixtures().join(format!("{FIXTURE}.b2nd")),
            dir.path().join("a.b2nd"),
        )
        .unwrap();
        let stats = Arc::new(Stats::default());
        let blocks = Arc::new(Blocks::new(1 << 20, layout_budget(1 << 20), stats));
        let planner = Arc::new(Planner::new(blocks, None, 1 << 20));
        let fs = Filesystem::new(dir.path(), planner, FsConfig::default()).unwrap();
        (dir, fs)
    }

    fn data_ino(fs: &Filesystem) -> u64 {
        let array = fs.lookup(ROOT, OsStr::new("a.b2nd")).unwrap().ino;
        fs.lookup(array, OsStr::new("data")).unwrap().ino
    }

    /// Reads of any size and offset give the array's C-order bytes (reads
    /// that cross chunk and block edges included), shorter at the end and
    /// empty past it; a released handle reads no more.
    #[test]
    fn reads_give_the_data_bytes_and_handles_end() {
        let (_dir, fs) = filesystem();
        let (size, sha) = expected();
        let ino = data_ino(&fs);
        assert_eq!(fs.getattr(ino).unwrap().size, size);
        for step in [1000u32, 4096, 6659, 1 << 20] {
            let fh = fs.open(ino, false).unwrap().fh;
            let mut all = Vec::new();
            loop {
                let got = fs.read(fh, all.len() as u64, step).unwrap();
                assert!(got.len() <= step as usize);
                if got.is_empty() {
                    break;
                }
                all.extend_from_slice(&got);
            }
            assert_eq!(all.len() as u64, size, "step {step}");
            assert_eq!(format!("{:x}", Sha256::digest(&all)), sha, "step {step}");
            assert_eq!(fs.read(fh, size - 10, 100).unwrap(), &all[all.len() - 10..]);
            assert!(fs.read(fh, size + 5, 100).unwrap().is_empty());
            fs.release(fh);
            assert!(matches!(fs.read(fh, 0, 10), Err(FsError::BadHandle)));
            fs.release(fh);
        }
        assert_eq!(fs.stats().open_files.load(Ordering::Relaxed), 0);
    }

    /// Nothing can be written; a folder is not opened as a file.
    #[test]
    fn writes_are_refused() {
        let (_dir, fs) = filesystem();
        let ino = data_ino(&fs);
        assert!(matches!(fs.open(ino, true), Err(FsError::ReadOnly)));
        assert!(matches!(fs.access(ino, true), Err(FsError::ReadOnly)));
        assert!(fs.access(ino, false).is_ok());
        assert!(matches!(fs.open(ROOT, false), Err(FsError::IsDir)));
        assert!(matches!(
            fs.access(encode(4000, Role::Node), false),
            Err(FsError::NotFound)
        ));
    }

    /// The kernel may keep a file's pages from one open to the next while
    /// its source is unchanged; the first open has none to keep.
    #[test]
    fn a_reopened_unchanged_file_keeps_its_pages() {
        let (_dir, fs) = filesystem();
        let ino = data_ino(&fs);
        let first = fs.open(ino, false).unwrap();
        assert!(!first.keep_cache);
        assert!(!first.direct_io);
        let second = fs.open(ino, false).unwrap();
        assert!(second.keep_cache);
        fs.release(first.fh);
        fs.release(second.fh);
    }

    /// A source folder is listed once per opendir: entries made after it
    /// are seen by the next opendir, not by the open one; entry `offset`
    /// on comes back from each readdir.
    #[test]
    fn a_source_folder_is_listed_once_per_open() {
        let (dir, fs) = filesystem();
        let names = |fh: u64, offset: u64| -> Vec<String> {
            fs.readdir(ROOT, fh, offset)
                .unwrap()
                .into_iter()
                .filter(|(_, kind, _)| *kind == Kind::Dir)
                .map(|(_, _, n)| n.to_string_lossy().into_owned())
                .collect()
        };
        let before = fs.opendir(ROOT).unwrap();
        std::fs::copy(dir.path().join("a.b2nd"), dir.path().join("b.b2nd")).unwrap();
        assert_eq!(names(before, 0), [".", "..", "a.b2nd"]);
        assert_eq!(names(before, 2), ["a.b2nd"]);
        let after = fs.opendir(ROOT).unwrap();
        assert_ne!(after, before);
        let mut now = names(after, 0);
        now[2..].sort();
        assert_eq!(now, [".", "..", "a.b2nd", "b.b2nd"]);
        fs.releasedir(before);
        fs.releasedir(after);
    }
}
