//! Open `data`, `data.npy` and chunk files over the disk cache: at open,
//! find the array's entry (keyed by its source's version), waiting a
//! little for the writer when the read just before handed it all the
//! entry lacked; at read, answer from the cache file when every byte asked
//! for is whole there, else decode, and give the decoded bytes' part of
//! `data` to the cache: a first read only names its granules (the cache
//! produces them again, [`ArrayRefill`], when the mount is quiet), a
//! second read hands its own bytes over.
//!
//! Each such file is laid out over `data` the same way: a prefix held in
//! memory (a `.npy` header, or nothing), then one contiguous run of `data`
//! bytes, then zeros (a chunk file's padding past the array's edge) up to
//! the file's length. Chunk files that show anything else (an N-d chunk not
//! spanning every dimension but the first) are decoded as before.

use std::ops::Range;
use std::sync::Arc;

use crate::disk_cache::{DiskCache, Entry, Refill, RefillError};
use crate::format::{Array, Region};
use crate::read::{Blocks, View};

/// An open file's use of the disk cache.
pub(crate) struct DiskUse {
    pub(crate) entry: Arc<Entry>,
    /// Bytes before the data run in the presented file (a `.npy` header).
    header: Arc<Vec<u8>>,
    /// The run of `data` the file shows after the header.
    run: Range<u64>,
    /// The presented file's length (zeros after the run).
    file_len: u64,
    /// How the cache produces the granules this file's reads touched.
    refill: Arc<dyn Refill>,
}

/// The bytes of an array's `data`, produced again for the disk cache from
/// the memory block cache or by decoding (never kept in the memory cache).
struct ArrayRefill {
    array: Arc<Array>,
    blocks: Arc<Blocks>,
}

impl Refill for ArrayRefill {
    fn produce(&self, offset: u64, out: &mut [u8]) -> Result<(), RefillError> {
        crate::read::fill_in_background(&self.blocks, &self.array, offset, out)
            .map_err(RefillError::from)
    }

    fn identity(&self) -> Option<String> {
        self.array.version_identity()
    }
}

impl DiskUse {
    /// The entry of `array`'s `data` for a file presenting `view`, when
    /// that view is `data`, `data.npy` or a chunk file laid out as above,
    /// and the array's bytes have a version a cache can be keyed by.
    pub(crate) fn open(
        cache: &DiskCache,
        blocks: &Arc<Blocks>,
        array: &Arc<Array>,
        view: &View,
    ) -> Option<DiskUse> {
        let data_len = array.data_len();
        let (header, run, file_len) = match view {
            View::Data => (Arc::new(Vec::new()), 0..data_len, data_len),
            View::Npy(header) => {
                let file_len = header.len() as u64 + data_len;
                (header.clone(), 0..data_len, file_len)
            }
            View::Chunk(c) => {
                let run = array.chunk_data_range(*c)?;
                let file_len = array.region_len(Region::Chunk(*c)).ok()?;
                (Arc::new(Vec::new()), run, file_len)
            }
            View::Rows(_) | View::Interleaved(_) => return None,
        };
        let identity = array.version_identity()?;
        let entry = cache.entry(&identity, data_len)?;
        cache.settle(&entry);
        let refill = Arc::new(ArrayRefill {
            array: array.clone(),
            blocks: blocks.clone(),
        });
        Some(DiskUse {
            entry,
            header,
            run,
            file_len,
            refill,
        })
    }

    /// Whether this open is `data` re-read while its entry is not complete,
    /// every granule it lacks read before: its reads will complete it, and
    /// the next open will be handed the cache file (passthrough). The
    /// kernel had better not keep this open's pages: that next open would
    /// drop them first, in the opener's time (about 35 ms per 256 MiB of
    /// 4 KiB pages here).
    pub(crate) fn rereading(&self, cache: &DiskCache) -> bool {
        self.is_data() && cache.rereading(&self.entry)
    }

    /// Whether the file is `data` itself and every byte of it is in the
    /// cache file (so the cache file can stand in for it).
    pub(crate) fn complete_data(&self) -> bool {
        self.is_data() && self.entry.is_complete()
    }

    /// Whether the file is `data` itself (no header, no padding).
    fn is_data(&self) -> bool {
        self.header.is_empty()
            && self.run == (0..self.entry.len())
            && self.file_len == self.entry.len()
    }

    /// Bytes `[offset, offset + size)` of the presented file (cut at its
    /// end) into `out`, when all of them can come from the header, the
    /// cache file and the padding.
    pub(crate) fn read(
        &self,
        cache: &DiskCache,
        offset: u64,
        size: u64,
        out: &mut Vec<u8>,
    ) -> bool {
        let end = offset.saturating_add(size).min(self.file_len);
        let part = self.data_part(offset, end);
        let whole = part.is_none_or(|(_, at, len)| self.entry.covers(at, at + len));
        if offset >= end || !whole {
            return false;
        }
        out.clear();
        out.resize((end - offset) as usize, 0);
        let header_len = self.header.len() as u64;
        if offset < header_len {
            let n = (end.min(header_len) - offset) as usize;
            out[..n].copy_from_slice(&self.header[offset as usize..offset as usize + n]);
        }
        // The data part, read from the cache file straight into its place;
        // the rest past the run stays zero (a chunk file's padding).
        match part {
            Some((at, data_offset, len)) => {
                let at = (at - offset) as usize;
                cache.read(&self.entry, data_offset, &mut out[at..at + len as usize])
            }
            None => true,
        }
    }

    /// `bytes` at `offset` of the presented file were served by decoding:
    /// their data part goes to the cache (see [`DiskCache::served`]).
    pub(crate) fn served(&self, cache: &DiskCache, offset: u64, bytes: &[u8]) {
        let end = offset + bytes.len() as u64;
        if let Some((at, data_offset, len)) = self.data_part(offset, end) {
            let from = (at - offset) as usize;
            let part = &bytes[from..from + len as usize];
            cache.served(&self.entry, &self.refill, data_offset, part);
        }
    }

    /// The part of the file's bytes `[offset, end)` that is `data`: where it
    /// starts in the file, where in `data`, and its length; `None` when the
    /// range holds only header or padding.
    fn data_part(&self, offset: u64, end: u64) -> Option<(u64, u64, u64)> {
        let header_len = self.header.len() as u64;
        let run_end = header_len + (self.run.end - self.run.start);
        let (a, b) = (offset.max(header_len), end.min(run_end));
        (a < b).then(|| (a, self.run.start + (a - header_len), b - a))
    }
}
