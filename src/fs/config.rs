//! What the filesystem core is told at start: direct I/O, the metadata
//! budget, the mountpoint to fence off, the views to offer and whether
//! other users may read, the disk cache, what folders show of their sources. Ownership and timeouts are the FUSE adapter's
//! business (`crate::mount::config`).

use std::sync::Arc;

use crate::catalog::folder_listing::ListingRules;
use crate::catalog::meta_cache::DEFAULT_META_CACHE;
use crate::disk_cache::DiskCache;
use crate::views::ViewSet;

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
    /// Users other than the mounting one may read (`-o allow_other`):
    /// computed arrays then show only what all their files allow.
    pub allow_other: bool,
    /// The decoded tier on disk (`--disk-cache`): `data` (and `data.npy`)
    /// read from a cache file where whole, and filled as decoded.
    pub disk_cache: Option<Arc<DiskCache>>,
    /// What folders show of their sources: plain files unless
    /// `--blosc2-only`, Blosc2 files as themselves with `--originals`.
    pub listing: ListingRules,
}

impl Default for FsConfig {
    fn default() -> FsConfig {
        FsConfig {
            direct_io: false,
            meta_cache: DEFAULT_META_CACHE,
            mountpoint: None,
            views: ViewSet::ALL,
            allow_other: false,
            disk_cache: None,
            listing: ListingRules::default(),
        }
    }
}
