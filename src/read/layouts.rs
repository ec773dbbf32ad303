//! Chunk layouts read so far (header, block positions, dictionary), kept
//! so that a block read costs one read of the source instead of two.
//!
//! Bounded by an approximate byte budget shared by every array of a mount;
//! keyed like the block cache by array id, so versions never mix.

use parking_lot::Mutex;
use std::sync::Arc;

use crate::format::{Array, ChunkLayout, PResult};

use super::budget::ByteLru;

/// Bytes charged per layout besides its variable parts.
const LAYOUT_OVERHEAD: usize = 256;

/// Layouts of chunks of every open array.
pub struct LayoutCache {
    lru: Mutex<ByteLru<(u64, u64), Arc<ChunkLayout>>>,
}

fn weight(layout: &ChunkLayout) -> usize {
    LAYOUT_OVERHEAD + layout.dict.len() + 16 * layout.nblocks()
}

impl LayoutCache {
    /// A cache of at most about `budget` bytes of layouts.
    pub fn new(budget: usize) -> LayoutCache {
        LayoutCache {
            lru: Mutex::new(ByteLru::new(budget)),
        }
    }

    /// The layout of chunk `c` of `array`, read now if not kept.
    pub fn get(&self, array: &Array, c: u64) -> PResult<Arc<ChunkLayout>> {
        let key = (array.id(), c);
        if let Some(layout) = self.lru.lock().get(&key) {
            return Ok(layout.clone());
        }
        let layout = Arc::new(array.read_layout(c)?);
        let evicted = self.lru.lock().put(key, layout.clone(), weight(&layout));
        drop(evicted);
        Ok(layout)
    }

    /// Whether the layout of chunk `c` of array `id` is kept.
    pub fn contains(&self, id: u64, c: u64) -> bool {
        self.lru.lock().contains(&(id, c))
    }

    /// Drop every layout kept for array `id` (read from bytes since found
    /// damaged).
    pub fn forget(&self, id: u64) {
        let mut lru = self.lru.lock();
        let keys: Vec<(u64, u64)> = lru
            .iter()
            .map(|(k, _)| *k)
            .filter(|(a, _)| *a == id)
            .collect();
        for key in keys {
            lru.remove(&key);
        }
    }

    /// Every layout kept for array `id` (what a growth check compares).
    pub fn known(&self, id: u64) -> Vec<(u64, Arc<ChunkLayout>)> {
        let lru = self.lru.lock();
        lru.iter()
            .filter(|((a, _), _)| *a == id)
            .map(|((_, c), l)| (*c, l.clone()))
            .collect()
    }
}
