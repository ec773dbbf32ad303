//! An open file: what it presents, its sequential-read state, and what it
//! keeps alive while open (the array version it opened and the source's
//! descriptor), so a source replaced under it keeps serving the bytes it
//! opened or answers ESTALE, never a mix.

use std::sync::Arc;

use crate::catalog::entry::Loaded;
use crate::format::byte_source::Pin;
use crate::format::Problem;
use crate::read::StreamState;
use crate::tree::error::FsError;
use crate::views::Content;

/// What an open answers besides the handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opened {
    /// The handle to pass to `read` and `release`.
    pub fh: u64,
    /// The kernel may keep the file's cached pages (same version as last time).
    pub keep_cache: bool,
    /// Bypass the page cache for this handle.
    pub direct_io: bool,
    /// `data` is complete in the disk cache: the adapter may hand its file
    /// to the kernel for passthrough ([`crate::fs::Filesystem::backing`]).
    pub cache_file: bool,
    /// A local file shown as itself: the adapter may hand its descriptor
    /// to the kernel for passthrough ([`crate::fs::Filesystem::plain_backing`]).
    pub plain_file: bool,
}

pub(super) struct OpenFile {
    pub(super) content: Content,
    pub(super) stream: StreamState,
    /// Opened without direct_io: the kernel reads ahead for this file.
    pub(super) kernel_reads_ahead: bool,
    /// Keeps the version opened alive (and its inodes answering) while open.
    pub(super) _version: Option<Arc<Loaded>>,
    /// Keeps the source's descriptor open while open, so a file replaced
    /// under it keeps reading the bytes it opened.
    pub(super) _pin: Option<Pin>,
    /// The disk cache entry of the array's `data`, for `data` and
    /// `data.npy` (served from it where whole, filled from decodes).
    pub(super) disk: Option<super::disk_read::DiskUse>,
    /// `.stats`: the document this open shows, rendered at its first read
    /// (so it counts its own open) and kept: a reader taking it in several
    /// reads never gets pieces of different moments joined.
    pub(super) stats_doc: std::sync::OnceLock<Vec<u8>>,
}

/// Hold the descriptor of the array `content` reads, for as long as the
/// file is open. A source replaced since it was loaded is ESTALE: the
/// kernel looks the name up again and finds the new node.
pub(super) fn pin(content: &Content) -> Result<Option<Pin>, FsError> {
    if let Content::Plain(source) = content {
        return source.pin().map_err(|p| {
            FsError::Format(crate::format::Error::new(
                std::path::Path::new(&source.describe()),
                p,
            ))
        });
    }
    let (Content::Array { array, .. }
    | Content::Text { array, .. }
    | Content::Preview { array, .. }) = content
    else {
        return Ok(None);
    };
    array.pin().map_err(|p| match p {
        Problem::SourceChanged(why) => {
            log::info!("{}: {why}", array.name().display());
            FsError::Stale
        }
        p => FsError::Format(crate::format::Error::new(array.name(), p)),
    })
}
