//! What can go wrong with the disk cache. None of it ever fails a read:
//! the caller logs it and decodes as if there were no cache.

use std::path::PathBuf;

/// A disk cache failure.
#[derive(Debug, thiserror::Error)]
pub enum DiskError {
    /// A file or folder of the cache could not be used.
    #[error("disk cache {path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The directory's lock was held by another mount for too long.
    #[error("disk cache {0}: held by another mount too long; going on without the cache")]
    Busy(PathBuf),
    /// An entry's map is not one this build wrote for this key (torn,
    /// another layout, another key under the same name, another data file).
    #[error("disk cache map {path}: {why}")]
    BadMap {
        /// The map file.
        path: PathBuf,
        /// What did not match.
        why: &'static str,
    },
}

impl DiskError {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> DiskError {
        DiskError::Io {
            path: path.into(),
            source,
        }
    }
}

/// Why bytes a read touched could not be produced again for the cache
/// (see [`super::Refill`]): the entry keeps its holes and later reads
/// decode them as before.
#[derive(Debug, thiserror::Error)]
pub enum RefillError {
    /// Reading or decoding the array's bytes failed.
    #[error(transparent)]
    Decode(#[from] crate::format::Problem),
}
