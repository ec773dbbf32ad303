//! What a mount needs to know, as a plain struct (the command line builds one
//! in `cli`; library users can fill one directly).

use std::path::PathBuf;
use std::time::Duration;

#[cfg(feature = "remote")]
use crate::source::remote::RemoteOptions;

use crate::catalog::folder_listing::ListingRules;
use crate::views::ViewSet;

use super::sched::Sched;

/// The disk cache's default budget (`--disk-cache-size`).
pub const DEFAULT_DISK_CACHE_SIZE: u64 = 10 << 30;

/// Settings of one mount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountConfig {
    /// A Blosc2 file or a directory tree of them, or a URL (`s3://bucket/prefix/`,
    /// `gs://`, `az://`, `http(s)://host/file.b2nd`).
    pub source: PathBuf,
    /// An empty directory to mount on.
    pub mountpoint: PathBuf,
    /// Serve in the calling process instead of daemonizing.
    pub foreground: bool,
    /// Byte budget of the decoded-block cache.
    pub cache_size: u64,
    /// Byte budget of what array and store entries load (parsed headers,
    /// chunk indexes, meta.json, store listings).
    pub meta_cache: u64,
    /// The presented files array folders offer (`data` and `meta.json`
    /// always).
    pub views: ViewSet,
    /// What folders show of their sources (`--blosc2-only`, `--originals`).
    pub listing: ListingRules,
    /// FUSE worker threads (at least 1).
    pub threads: usize,
    /// Prefetch worker threads (0 disables prefetch).
    pub prefetch_threads: usize,
    /// Threads that decode half of a random read's zstd/zlib block (`None`:
    /// one fewer than the cores, at most 3; 0: none).
    pub decode_helpers: Option<usize>,
    /// Scheduling policy of the FUSE threads (see [`super::sched`]).
    pub sched: Sched,
    /// Owner of every presented file (`None`: each file's source's owner).
    pub uid: Option<u32>,
    /// Group of every presented file (`None`: each file's source's group).
    pub gid: Option<u32>,
    /// Let users other than the mounting one access the mount.
    pub allow_other: bool,
    /// Serve reads with direct_io (no kernel page cache; breaks shared mmap).
    pub direct_io: bool,
    /// Readahead of the mount in KiB (written to its bdi after mounting).
    pub readahead_kb: u32,
    /// Largest read request the kernel sends, in KiB (0: the kernel's
    /// maximum, 1 MiB). Rounded up to whole pages.
    pub max_request_kb: u32,
    /// After SIGINT/SIGTERM the mount is detached at once; files still open
    /// are served this long more before the daemon exits.
    pub exit_grace: Duration,
    /// How long the kernel may cache attributes and names (source changes
    /// show up after this long at most).
    pub attr_timeout: Duration,
    /// A directory keeping decoded `data` bytes across reads and mounts
    /// (`--disk-cache`); `None`: no disk cache.
    pub disk_cache: Option<PathBuf>,
    /// Byte budget of the disk cache directory.
    pub disk_cache_size: u64,
    /// Hand complete cache files to the kernel (FUSE passthrough) where it
    /// allows it (root); `false` serves them from the daemon.
    pub passthrough: bool,
    /// How to reach a remote source (used when `source` is a URL).
    #[cfg(feature = "remote")]
    pub remote: RemoteOptions,
}

impl Default for MountConfig {
    /// Empty paths; everything else as the command line's defaults.
    fn default() -> Self {
        MountConfig {
            source: PathBuf::new(),
            mountpoint: PathBuf::new(),
            foreground: false,
            cache_size: 512 << 20,
            meta_cache: crate::catalog::meta_cache::DEFAULT_META_CACHE as u64,
            views: ViewSet::ALL,
            listing: ListingRules::default(),
            threads: 2,
            prefetch_threads: 2,
            decode_helpers: None,
            sched: Sched::Batch,
            uid: None,
            gid: None,
            allow_other: false,
            direct_io: false,
            readahead_kb: 4096,
            max_request_kb: 0,
            exit_grace: Duration::from_secs(5),
            attr_timeout: Duration::from_secs(1),
            disk_cache: None,
            disk_cache_size: DEFAULT_DISK_CACHE_SIZE,
            passthrough: true,
            #[cfg(feature = "remote")]
            remote: RemoteOptions::default(),
        }
    }
}
