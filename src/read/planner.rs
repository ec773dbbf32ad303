//! The read planner: a read of a presented file becomes block fetches.
//!
//! It maps (file view, offset, length) to pieces through the format layer,
//! fills the reply from the cache, and tells the prefetcher what a
//! sequential reader will want next.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::format::array::Array;
use crate::format::error::PResult;
use crate::format::geometry::{Piece, PieceSource};

use super::cache::BlockCache;
use super::prefetch::Prefetcher;
use super::stats::Stats;

/// Which byte view of an array a file presents.
#[derive(Debug, Clone)]
pub enum View {
    /// The C-order bytes (`data`).
    Data,
    /// A `.npy` header followed by the C-order bytes (`data.npy`).
    Npy(Arc<Vec<u8>>),
    /// One chunk over its chunkshape (`chunks/<coords>`).
    Chunk(u64),
}

impl View {
    /// Size of the presented file.
    pub fn len(&self, array: &Array) -> PResult<u64> {
        Ok(match self {
            View::Data => array.data_len(),
            View::Npy(header) => header.len() as u64 + array.data_len(),
            View::Chunk(c) => array.chunk_file_len(*c)?,
        })
    }

    /// Pieces serving `[offset, offset + len)` of the view's array bytes
    /// (for `Npy`, `offset` is already past the header).
    fn pieces(&self, array: &Array, offset: u64, len: u64) -> PResult<Vec<Piece>> {
        match self {
            View::Data | View::Npy(_) => array.data_pieces(offset, len),
            View::Chunk(c) => array.chunk_file_pieces(*c, offset, len),
        }
    }
}

/// Reads presented files through the shared cache.
pub struct Planner {
    pub cache: Arc<BlockCache>,
    pub prefetcher: Option<Prefetcher>,
}

impl Planner {
    pub fn new(cache: Arc<BlockCache>, prefetcher: Option<Prefetcher>) -> Planner {
        Planner { cache, prefetcher }
    }

    pub fn stats(&self) -> &Stats {
        &self.cache.stats
    }

    /// Bytes `[offset, offset + size)` of `view` (shorter at the end of the file).
    pub fn read(&self, array: &Arc<Array>, view: &View, offset: u64, size: u64) -> PResult<Vec<u8>> {
        let total = view.len(array)?;
        let start = offset.min(total);
        let end = offset.saturating_add(size).min(total);
        let mut out = vec![0u8; (end - start) as usize];
        let (array_start, out_skip) = match view {
            View::Npy(header) => {
                let hlen = header.len() as u64;
                if start < hlen {
                    let n = (hlen.min(end) - start) as usize;
                    out[..n].copy_from_slice(&header[start as usize..start as usize + n]);
                }
                (start.saturating_sub(hlen), hlen.saturating_sub(start).min(end - start))
            }
            _ => (start, 0),
        };
        let body_len = (end - start) - out_skip;
        if body_len > 0 {
            let pieces = view.pieces(array, array_start, body_len)?;
            array.fill(&pieces, &mut out[out_skip as usize..], &*self.cache)?;
        }
        Stats::add(&self.stats().bytes_served, out.len() as u64);
        Ok(out)
    }

    /// A sequential reader just read up to `next`: fetch the blocks of the
    /// following `window` bytes in the background. Returns whether the
    /// request was taken (false when the prefetch queue was full).
    pub fn prefetch(&self, array: &Arc<Array>, view: &View, next: u64, window: u64) -> bool {
        let Some(prefetcher) = &self.prefetcher else { return true };
        let (array_next, len) = match view {
            View::Npy(header) => (next.saturating_sub(header.len() as u64), window),
            _ => (next, window),
        };
        let Ok(pieces) = view.pieces(array, array_next, len) else { return true };
        let mut wanted = BTreeSet::new();
        let mut ordered = Vec::new();
        for p in pieces {
            if let PieceSource::Block { chunk, block, .. } = p.source {
                if wanted.insert((chunk, block)) {
                    ordered.push((chunk, block));
                }
            }
        }
        ordered.retain(|&(chunk, block)| {
            !self.cache.contains(&super::cache::BlockKey { array: array.id, chunk, block })
        });
        ordered.is_empty() || prefetcher.request(array.clone(), ordered)
    }
}
