//! Arrays opened from where they are kept: a local path (a frame file or a
//! sparse-frame directory), a URL (cargo feature `remote`) or bytes in
//! memory; and a local source's version, which every change of the file
//! (or of a sparse frame's index) renews.

use std::path::Path;
use std::sync::Arc;

use crate::format::{looks_like_frame, Array, ByteSource, Error, Problem, SPARSE_INDEX};

use super::dir::DirChunks;
use super::file::{self, FileSource};
use super::memory::MemorySource;
#[cfg(feature = "remote")]
use super::remote;

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
            return Array::from_source(&shown, location.open().map_err(fail)?);
        }
        return remote::served::open_dataset(&location, &location.info().map_err(fail)?);
    }
    let sparse = |index: Arc<dyn crate::format::ByteSource>| {
        Array::from_sparse(&shown, index, Arc::new(location.sparse_chunks()))
    };
    if location.is_prefix() {
        return sparse(location.child(SPARSE_INDEX).open().map_err(fail)?);
    }
    match location.open() {
        Ok(object) => Array::from_source(&shown, object),
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
