//! Open `data` and `data.npy` files over the disk cache: at open, find the
//! array's entry (keyed by its source's version); at read, answer from the
//! cache file when every byte asked for is whole there, else decode and
//! offer what was served to the cache. `data.npy` is its header (kept in
//! memory by the view) followed by the same bytes as `data`.

use std::sync::Arc;

use crate::format::Array;
use crate::read::disk::{DiskCache, Entry};
use crate::read::View;

/// An open file's use of the disk cache.
pub(crate) struct DiskUse {
    pub(crate) entry: Arc<Entry>,
    /// Bytes before `data` in the presented file (a `.npy` header), or 0.
    header: Arc<Vec<u8>>,
    /// The entry had whole parts at open: this file's reads fill holes.
    refill: bool,
}

impl DiskUse {
    /// The entry of `array`'s `data` for a file presenting `view`, when
    /// that view is `data` or `data.npy` and the array's bytes have a
    /// version a cache can be keyed by.
    pub(crate) fn open(cache: &DiskCache, array: &Array, view: &View) -> Option<DiskUse> {
        let header = match view {
            View::Data => Arc::new(Vec::new()),
            View::Npy(header) => header.clone(),
            _ => return None,
        };
        let identity = array.version_identity()?;
        let entry = cache.entry(&identity, array.data_len())?;
        let refill = entry.progress().0 > 0;
        Some(DiskUse {
            entry,
            header,
            refill,
        })
    }

    /// Whether the file is `data` and every byte of it is in the cache file.
    pub(crate) fn complete_data(&self) -> bool {
        self.header.is_empty() && self.entry.is_complete()
    }

    /// Bytes `[offset, offset + size)` of the presented file into `out`
    /// when all of them can come from the header and the cache file.
    pub(crate) fn read(
        &self,
        cache: &DiskCache,
        offset: u64,
        size: u64,
        out: &mut Vec<u8>,
    ) -> bool {
        let header_len = self.header.len() as u64;
        if offset >= header_len {
            return cache.read(&self.entry, offset - header_len, size, out);
        }
        let head = &self.header[offset as usize..];
        let rest = size.saturating_sub(head.len() as u64);
        let mut data = Vec::new();
        if rest > 0 && !cache.read(&self.entry, 0, rest, &mut data) {
            return false;
        }
        out.clear();
        out.extend_from_slice(&head[..head.len().min(size as usize)]);
        out.extend_from_slice(&data);
        true
    }

    /// `bytes` of the presented file at `offset` were served by decoding:
    /// offer their `data` part to the cache.
    pub(crate) fn offer(&self, cache: &DiskCache, offset: u64, bytes: &[u8]) {
        let header_len = self.header.len() as u64;
        let skip = header_len.saturating_sub(offset).min(bytes.len() as u64) as usize;
        let start = offset.max(header_len) - header_len;
        if skip < bytes.len() {
            cache.offer(&self.entry, start, &bytes[skip..], self.refill);
        }
    }
}
