//! The byte-source seam: every byte the format layer reads comes through
//! [`ByteSource`].
//!
//! The trait is small on purpose so that very different backings fit it: a
//! local file read with `pread`, a window of a larger file (a frame stored in
//! a zip archive), bytes already in memory (a frame embedded in another
//! frame's data), and later a remote object where every call is a round
//! trip. For that last one the trait lets a caller ask for several ranges in
//! one call ([`ByteSource::read_ranges`]), tells how much a speculative read
//! should fetch ([`ByteSource::prefetch_hint`]) so a chunk's header and block
//! starts arrive in one request, and reports change through one value
//! ([`ByteSource::version`]) that every backing can produce.
//!
//! Implementations live in `crate::source`; the format layer only declares
//! what it needs.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use super::error::{PResult, Problem};

/// What identifies one state of a source's bytes: equal versions mean the
/// bytes read before are still the bytes there. Files use (device, inode,
/// size, mtime); memory is constant; a remote object would use its ETag.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Version {
    /// Length of the source in this state.
    pub len: u64,
    /// Backing-specific identity (opaque to the format layer).
    pub tag: VersionTag,
}

/// The backing-specific part of a [`Version`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum VersionTag {
    /// A local file: device, inode and modification time in nanoseconds.
    ///
    /// `dev` and `ino` are the file's `st_dev` and `st_ino`; `mtime_ns` is its
    /// modification time in nanoseconds since the Unix epoch, in 64 bits
    /// (every node keeps one; they span the years 1678 to 2262, and a time
    /// outside saturates).
    File {
        /// Device number.
        dev: u64,
        /// Inode number.
        ino: u64,
        /// Modification time in nanoseconds since the epoch.
        mtime_ns: i64,
    },
    /// Bytes that cannot change (memory, a window of a fixed state).
    Fixed(u64),
    /// An opaque token from a remote store (an ETag, a generation number).
    Token(String),
}

/// Random access to the bytes of one source (a file, a window, memory, ...).
///
/// Reads are exact: a read that cannot deliver every byte asked for is an
/// error, never a short buffer. All methods take `&self` and may be called
/// from several threads at once.
pub trait ByteSource: Send + Sync + fmt::Debug {
    /// Length of the source as opened (the state [`Self::opened_version`] names).
    fn len(&self) -> u64;

    /// Whether the source is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The version the source had when it was opened.
    fn opened_version(&self) -> Version;

    /// The version the source has now (a `fstat`, a HEAD request, ...).
    fn version(&self) -> PResult<Version>;

    /// Fill `buf` with the bytes at `offset`.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> PResult<()>;

    /// Read several ranges in one call; the answer holds one buffer per range,
    /// in order. Implementations may coalesce neighbouring ranges or issue
    /// them in parallel; the default reads them one by one.
    fn read_ranges(&self, ranges: &[Range<u64>]) -> PResult<Vec<Vec<u8>>> {
        ranges
            .iter()
            .map(|r| {
                let mut buf = vec![0u8; range_len(r)?];
                self.read_at(r.start, &mut buf)?;
                Ok(buf)
            })
            .collect()
    }

    /// Fill `buf` with the bytes at `offset`, which the caller knows are
    /// all it needs there (a chunk's header and block starts sized from the
    /// header, one block's stored bytes): a source that reads ahead on
    /// [`Self::read_at`] fetches exactly these bytes instead. The default
    /// is [`Self::read_at`].
    fn read_needed(&self, offset: u64, buf: &mut [u8]) -> PResult<()> {
        self.read_at(offset, buf)
    }

    /// A hint, never blocking and never failing: the bytes of `ranges` will
    /// be read soon — right away by the caller ([`Need::Now`]: the blocks of
    /// the read under way) or a little later ([`Need::Ahead`]: chunks a
    /// sequential reader is about to reach). A source where every read is a
    /// round trip starts fetching them and keeps them for the reads that
    /// follow, within its budget (hints that do not fit are dropped); local
    /// sources ignore it (the default).
    fn will_need(&self, ranges: &[Range<u64>], need: Need) {
        let _ = (ranges, need);
    }

    /// Whether [`Self::will_need`] does anything: callers skip working out
    /// hints for sources that ignore them.
    fn takes_hints(&self) -> bool {
        false
    }

    /// How many bytes a speculative read (a chunk's header, block starts and
    /// dictionary size, before their sizes are known) should fetch at once:
    /// small for a local file, larger where each call is a round trip.
    fn prefetch_hint(&self) -> usize {
        4096
    }

    /// Whether a read may wait on a network (a round trip, a stalled
    /// server) rather than on memory or a local disk: the mount answers such
    /// reads from worker threads so they never hold a FUSE thread.
    fn may_wait(&self) -> bool {
        false
    }

    /// The same source in its current state (same identity, current length),
    /// to look at what a change left there; `None` when this backing cannot
    /// change or cannot be re-read.
    fn current(&self) -> PResult<Option<Arc<dyn ByteSource>>> {
        Ok(None)
    }

    /// A short description for messages (a path, a URL without secrets).
    fn describe(&self) -> String;

    /// Keep what reads need open (a local file's descriptor) for as long
    /// as the returned pin lives, so the source keeps reading the file it
    /// opened even when that file is replaced under it. `None` where
    /// nothing needs holding (memory, remote objects, the default).
    fn pin(&self) -> PResult<Option<Pin>> {
        Ok(None)
    }

    /// Bytes this source served did not decode: drop any copy of them it
    /// keeps (a cache of what an origin sent), so the reads that follow ask
    /// the origin again. True when something was dropped and a retry may
    /// read other bytes; false where nothing is kept (the default) or a
    /// copy was already dropped once (a source heals once, then its errors
    /// stand).
    fn distrust(&self) -> bool {
        false
    }
}

/// What [`ByteSource::pin`] hands out: drop it to let go.
pub type Pin = Arc<dyn std::any::Any + Send + Sync>;

/// How soon hinted bytes ([`ByteSource::will_need`]) will be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// By the read under way, right after the hint: worth a GET even when
    /// many hinted GETs are in flight already.
    Now,
    /// By reads to come (prefetch): dropped first when the source is busy.
    Ahead,
}

/// The length of `range` as a buffer size.
pub fn range_len(range: &Range<u64>) -> PResult<usize> {
    range
        .end
        .checked_sub(range.start)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| {
            Problem::corrupt(
                "read range",
                format!("{}..{} is not a valid range", range.start, range.end),
            )
        })
}

/// Exactly `len` bytes at `offset` of `source`, or a [`Problem::Truncated`]
/// naming `what` when they lie past its end (as opened).
pub fn read_exact(
    source: &dyn ByteSource,
    offset: u64,
    len: usize,
    what: &str,
) -> PResult<Vec<u8>> {
    let end = offset
        .checked_add(len as u64)
        .ok_or_else(|| Problem::corrupt(what, "offset overflows"))?;
    if end > source.len() {
        return Err(Problem::truncated(what, offset, end, source.len()));
    }
    let mut buf = vec![0u8; len];
    source.read_at(offset, &mut buf)?;
    Ok(buf)
}

/// Opens the chunk files of a sparse frame (`XXXXXXXX.chunk` beside its
/// `chunks.b2frame`), wherever the frame's directory lives.
pub trait SparseChunks: Send + Sync + fmt::Debug {
    /// The source holding chunk file number `n`.
    fn open_chunk(&self, n: u64) -> PResult<Arc<dyn ByteSource>>;
}

/// The name of chunk file number `n` in a sparse frame's directory.
pub fn sparse_chunk_name(n: u64) -> String {
    format!("{n:08X}.chunk")
}

/// A borrowed byte slice as a source: for chunks and frames the format
/// layer already holds in memory (the offsets index, vlmeta chunks).
#[derive(Debug, Clone, Copy)]
pub struct SliceSource<'a>(pub &'a [u8]);

impl ByteSource for SliceSource<'_> {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }

    fn opened_version(&self) -> Version {
        Version {
            len: self.len(),
            tag: VersionTag::Fixed(0),
        }
    }

    fn version(&self) -> PResult<Version> {
        Ok(self.opened_version())
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> PResult<()> {
        let end = offset
            .checked_add(buf.len() as u64)
            .ok_or_else(|| Problem::corrupt("read", "offset overflows"))?;
        let src = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(a, b)| self.0.get(a..b))
            .ok_or_else(|| Problem::truncated("read", offset, end, self.len()))?;
        buf.copy_from_slice(src);
        Ok(())
    }

    fn describe(&self) -> String {
        format!("{} bytes in memory", self.0.len())
    }
}
