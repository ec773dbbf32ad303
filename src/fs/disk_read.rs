//! Open `data`, `data.npy` and chunk files over the disk cache: at open,
//! find the array's entry (keyed by its source's version); at read, answer
//! from the cache file when every byte asked for is whole there, else
//! decode and offer what was served to the cache.
//!
//! Each such file is laid out over `data` the same way: a prefix held in
//! memory (a `.npy` header, or nothing), then one contiguous run of `data`
//! bytes, then zeros (a chunk file's padding past the array's edge) up to
//! the file's length. Chunk files that show anything else (an N-d chunk not
//! spanning every dimension but the first) are decoded as before.

use std::ops::Range;
use std::sync::Arc;

use crate::format::{Array, Region};
use crate::read::disk::{DiskCache, Entry};
use crate::read::View;

/// An open file's use of the disk cache.
pub(crate) struct DiskUse {
    pub(crate) entry: Arc<Entry>,
    /// Bytes before the data run in the presented file (a `.npy` header).
    header: Arc<Vec<u8>>,
    /// The run of `data` the file shows after the header.
    run: Range<u64>,
    /// The presented file's length (zeros after the run).
    file_len: u64,
    /// The entry had whole parts at open: this file's reads fill holes.
    refill: bool,
}

impl DiskUse {
    /// The entry of `array`'s `data` for a file presenting `view`, when
    /// that view is `data`, `data.npy` or a chunk file laid out as above,
    /// and the array's bytes have a version a cache can be keyed by.
    pub(crate) fn open(cache: &DiskCache, array: &Array, view: &View) -> Option<DiskUse> {
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
            View::Rows(_) => return None,
        };
        let identity = array.version_identity()?;
        let entry = cache.entry(&identity, data_len)?;
        let refill = entry.progress().0 > 0;
        Some(DiskUse {
            entry,
            header,
            run,
            file_len,
            refill,
        })
    }

    /// Whether the file is `data` itself and every byte of it is in the
    /// cache file (so the cache file can stand in for it).
    pub(crate) fn complete_data(&self) -> bool {
        self.header.is_empty()
            && self.run == (0..self.entry.len())
            && self.file_len == self.entry.len()
            && self.entry.is_complete()
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
        if offset >= end {
            return false;
        }
        let header_len = self.header.len() as u64;
        let run_end = header_len + (self.run.end - self.run.start);
        // The data part asked for, in the file's offsets.
        let (a, b) = (offset.max(header_len), end.min(run_end));
        let mut data = Vec::new();
        if a < b
            && !cache.read(
                &self.entry,
                self.run.start + (a - header_len),
                b - a,
                &mut data,
            )
        {
            return false;
        }
        out.clear();
        if offset < header_len {
            out.extend_from_slice(&self.header[offset as usize..end.min(header_len) as usize]);
        }
        out.extend_from_slice(&data);
        out.resize((end - offset) as usize, 0);
        true
    }

    /// `bytes` of the presented file at `offset` were served by decoding:
    /// offer their data part to the cache.
    pub(crate) fn offer(&self, cache: &DiskCache, offset: u64, bytes: &[u8]) {
        let header_len = self.header.len() as u64;
        let run_end = header_len + (self.run.end - self.run.start);
        let end = offset + bytes.len() as u64;
        let (a, b) = (offset.max(header_len), end.min(run_end));
        if a < b {
            let served = &bytes[(a - offset) as usize..(b - offset) as usize];
            cache.offer(
                &self.entry,
                self.run.start + (a - header_len),
                served,
                self.refill,
            );
        }
    }
}
