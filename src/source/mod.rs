//! Where bytes come from: the implementations of the format layer's
//! [`ByteSource`](crate::format::ByteSource) seam.
//!
//! - [`FileSource`]: a local file, read with `pread` (never mapped: a mapped
//!   file truncated under the mount would turn the next access into SIGBUS);
//!   its version is (device, inode, size, mtime) from `fstat`.
//! - [`WindowSource`]: a byte range of another source (a frame stored inside
//!   a zip archive at an offset).
//! - [`MemorySource`]: bytes held in memory (a frame embedded in another
//!   frame's decoded data, tests, fuzzing).
//! - [`fds`]: the pool of open descriptors every local file goes through
//!   (bounded by a share of the process's limit, whatever the tree).
//! - [`DirChunks`]: the chunk files of a sparse frame in a local directory.
//! - [`store`]: python-blosc2 stores (`.b2z`, `.b2d`, `.b2e`): which bytes
//!   make which key (zip directory, embed map).
//! - `remote` (cargo feature `remote`): objects in S3 / GCS / Azure stores
//!   or on a web server (`open_url` opens the array at a URL).
//! - [`urls`]: telling a URL from a path and showing it without secrets
//!   (in every build: one without `remote` refuses URLs by name).

mod dir;
pub mod fds;
mod file;
mod memory;
#[cfg(feature = "remote")]
pub mod remote;
pub mod store;
pub mod urls;
mod window;

pub use dir::DirChunks;
pub use file::FileSource;
pub use memory::MemorySource;
pub use window::WindowSource;

use std::path::Path;
use std::sync::Arc;

use crate::format::{looks_like_frame, Array, ByteSource, Error, Problem, SPARSE_INDEX};

/// Whether `path` is a sparse-frame directory (holds `chunks.b2frame`).
pub fn is_sparse_dir(path: &Path) -> bool {
    path.is_dir() && path.join(SPARSE_INDEX).is_file()
}

/// Open the array stored at a local path: a contiguous frame file or a
/// sparse-frame directory.
pub fn open_array(path: &Path) -> Result<Array, Error> {
    let fail = |p: Problem| Error::new(path, p);
    let meta = std::fs::metadata(path).map_err(|e| fail(e.into()))?;
    if meta.is_dir() {
        let index_path = path.join(SPARSE_INDEX);
        if !index_path.is_file() {
            return Err(fail(Problem::NotBlosc2(format!(
                "directory without {SPARSE_INDEX}"
            ))));
        }
        let index = FileSource::open(&index_path).map_err(fail)?;
        Array::from_sparse(
            path,
            Arc::new(index),
            Arc::new(DirChunks::new(path.to_path_buf())),
        )
    } else {
        let file = FileSource::open(path).map_err(fail)?;
        Array::from_source(path, Arc::new(file))
    }
}

/// The version of the file at a local path (for a sparse-frame directory,
/// of its `chunks.b2frame` index, which every change rewrites) and its
/// modification time.
pub fn local_version(
    path: &Path,
) -> std::io::Result<(crate::format::Version, std::time::SystemTime)> {
    let stamp_path = if path.is_dir() {
        path.join(SPARSE_INDEX)
    } else {
        path.to_path_buf()
    };
    let meta = std::fs::metadata(stamp_path)?;
    Ok((
        file::version_of(&meta),
        meta.modified().unwrap_or(std::time::SystemTime::UNIX_EPOCH),
    ))
}

/// Open the array at a remote URL (`s3://bucket/key.b2nd`, `https://...`,
/// `c2+https://host/@public/x.b2nd`):
/// a contiguous frame object, or a sparse frame whose `chunks.b2frame` is
/// under the URL taken as a prefix (a URL ending in `/`, or an object that
/// is not there). Messages name the URL without credentials.
#[cfg(feature = "remote")]
pub fn open_url(url: &str, options: &remote::RemoteOptions) -> Result<Array, Error> {
    let shown = std::path::PathBuf::from(remote::redact_url(url));
    let fail = |e: remote::RemoteError| Error::new(&shown, e.into());
    let location = remote::RemoteLocation::connect(url, options).map_err(fail)?;
    if location.scheme() == remote::Scheme::Caterva2 {
        // A dataset of a Caterva2 server: a stored frame read in byte
        // ranges, or one it serves as regions only (an HDF5 leaf).
        if remote::caterva2::is_stored_frame(location.key()) {
            return Array::from_source(&shown, Arc::new(location.open().map_err(fail)?));
        }
        return location.open_dataset(&location.info().map_err(fail)?);
    }
    let sparse = |index: remote::RemoteSource| {
        Array::from_sparse(&shown, Arc::new(index), Arc::new(location.sparse_chunks()))
    };
    if location.is_prefix() {
        return sparse(location.child(SPARSE_INDEX).open().map_err(fail)?);
    }
    match location.open() {
        Ok(object) => Array::from_source(&shown, Arc::new(object)),
        Err(missing @ remote::RemoteError::NotFound { .. })
            if location.scheme() != remote::Scheme::Http =>
        {
            match location.child(SPARSE_INDEX).open() {
                Ok(index) => sparse(index),
                Err(remote::RemoteError::NotFound { .. }) => Err(fail(missing)),
                Err(e) => Err(fail(e)),
            }
        }
        Err(e) => Err(fail(e)),
    }
}

/// Open a contiguous frame held in memory (`name` is used in messages).
pub fn open_memory(name: &Path, bytes: Vec<u8>) -> Result<Array, Error> {
    Array::from_source(
        name,
        Arc::new(MemorySource::new(name.display().to_string(), bytes)),
    )
}

/// Whether a source starts like a Blosc2 frame (reads its first 11 bytes).
pub fn sniff_frame(source: &dyn ByteSource) -> bool {
    let mut head = [0u8; 11];
    source.len() >= 11 && source.read_at(0, &mut head).is_ok() && looks_like_frame(&head)
}
