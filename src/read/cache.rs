//! The LRU of decoded blocks, bounded by a byte budget.
//!
//! Keys are (array id, chunk, block); an array id changes whenever a source
//! file is reopened, so blocks of two versions of a file never mix. Only one
//! thread decodes a given block at a time: others wait for its result.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};

use crate::format::array::{Array, BlockSource};
use crate::format::error::{PResult, Problem};

use super::stats::Stats;

/// Identity of one decoded block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockKey {
    pub array: u64,
    pub chunk: u64,
    pub block: u64,
}

/// Bookkeeping bytes charged per cached block on top of its data, so a
/// budget also bounds memory when blocks are tiny.
const ENTRY_OVERHEAD: usize = 128;

struct Lru {
    map: lru::LruCache<BlockKey, Arc<Vec<u8>>>,
    bytes: usize,
}

type Slot = Arc<(Mutex<Option<PResult<Arc<Vec<u8>>>>>, Condvar)>;

/// Decoded blocks shared by every reader of a mount.
pub struct BlockCache {
    lru: Mutex<Lru>,
    budget: usize,
    inflight: Mutex<HashMap<BlockKey, Slot>>,
    pub stats: Arc<Stats>,
}

impl BlockCache {
    pub fn new(budget: usize, stats: Arc<Stats>) -> BlockCache {
        BlockCache {
            lru: Mutex::new(Lru { map: lru::LruCache::unbounded(), bytes: 0 }),
            budget,
            inflight: Mutex::new(HashMap::new()),
            stats,
        }
    }

    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Bytes and entries held now.
    pub fn usage(&self) -> (usize, usize) {
        let lru = self.lru.lock().unwrap_or_else(|e| e.into_inner());
        (lru.bytes, lru.map.len())
    }

    /// Whether a block is cached (does not count as a hit).
    pub fn contains(&self, key: &BlockKey) -> bool {
        let lru = self.lru.lock().unwrap_or_else(|e| e.into_inner());
        lru.map.contains(key)
    }

    fn lookup(&self, key: &BlockKey) -> Option<Arc<Vec<u8>>> {
        let mut lru = self.lru.lock().unwrap_or_else(|e| e.into_inner());
        lru.map.get(key).cloned()
    }

    fn insert(&self, key: BlockKey, data: Arc<Vec<u8>>) {
        let size = data.len() + ENTRY_OVERHEAD;
        if size > self.budget {
            return;
        }
        let mut lru = self.lru.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = lru.map.put(key, data) {
            lru.bytes -= old.len() + ENTRY_OVERHEAD;
        }
        lru.bytes += size;
        while lru.bytes > self.budget {
            match lru.map.pop_lru() {
                Some((_, evicted)) => {
                    lru.bytes -= evicted.len() + ENTRY_OVERHEAD;
                    Stats::add(&self.stats.evictions, 1);
                }
                None => break,
            }
        }
    }

    /// The decoded block, from the cache or decoded now (once, even when
    /// several threads ask at the same time).
    pub fn get(&self, array: &Array, chunk: u64, block: u64) -> PResult<Arc<Vec<u8>>> {
        let id = array.id;
        let key = BlockKey { array: id, chunk, block };
        if let Some(hit) = self.lookup(&key) {
            Stats::add(&self.stats.hits, 1);
            return Ok(hit);
        }
        Stats::add(&self.stats.misses, 1);
        let (slot, leader) = {
            let mut inflight = self.inflight.lock().unwrap_or_else(|e| e.into_inner());
            match inflight.get(&key) {
                Some(slot) => (slot.clone(), false),
                None => {
                    let slot: Slot = Arc::new((Mutex::new(None), Condvar::new()));
                    inflight.insert(key, slot.clone());
                    (slot, true)
                }
            }
        };
        if !leader {
            let (lock, cvar) = &*slot;
            let mut result = lock.lock().unwrap_or_else(|e| e.into_inner());
            while result.is_none() {
                result = cvar.wait(result).unwrap_or_else(|e| e.into_inner());
            }
            return result.clone().unwrap_or_else(|| Err(Problem::Io("decode abandoned".into())));
        }
        let result = self.decode(array, chunk, block);
        if let Ok(data) = &result {
            self.insert(key, data.clone());
        }
        {
            let (lock, cvar) = &*slot;
            *lock.lock().unwrap_or_else(|e| e.into_inner()) = Some(result.clone());
            cvar.notify_all();
        }
        self.inflight.lock().unwrap_or_else(|e| e.into_inner()).remove(&key);
        result
    }

    fn decode(&self, array: &Array, chunk: u64, block: u64) -> PResult<Arc<Vec<u8>>> {
        let data = array.decode_block_via(self, chunk, block)?;
        Stats::add(&self.stats.blocks_decoded, 1);
        Stats::add(&self.stats.bytes_decoded, data.len() as u64);
        Ok(Arc::new(data))
    }
}

impl BlockSource for BlockCache {
    fn block(&self, array: &Array, chunk: u64, block: u64) -> PResult<Arc<Vec<u8>>> {
        self.get(array, chunk, block)
    }
}
