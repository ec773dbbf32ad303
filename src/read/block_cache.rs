//! The LRU of decoded blocks, bounded by a byte budget, with single-flight
//! decoding: when several threads want the same missing block, one decodes
//! it and the others wait for its result.
//!
//! The cache knows nothing of the format: callers hand it a key and a
//! function that produces the block. Keys carry the array id, which changes
//! whenever a source is reopened, so blocks of two versions never mix.

use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::sync::Arc;

use crate::format::{PResult, Problem};

use super::budget::ByteLru;
use super::buffers::BufferPool;
use super::stats::Stats;

/// Identity of one decoded block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockKey {
    /// Id of the opened array ([`Array::id`](crate::format::Array::id)): distinct
    /// for every opening, so blocks of two versions of a source never mix.
    pub array: u64,
    /// Chunk number within the array.
    pub chunk: u64,
    /// Block number within the chunk.
    pub block: u64,
}

/// A decoded block, shared by the cache and the readers using it.
pub type Block = Arc<Vec<u8>>;

/// Bookkeeping bytes charged per cached block on top of its data, so a
/// budget also bounds memory when blocks are tiny.
const ENTRY_OVERHEAD: usize = 128;

/// The result a decoding thread leaves for the threads waiting on it.
type Slot = Arc<(Mutex<Option<PResult<Block>>>, Condvar)>;

/// Decoded blocks shared by every reader of a mount.
pub struct BlockCache {
    lru: Mutex<ByteLru<BlockKey, Block>>,
    budget: usize,
    inflight: Mutex<HashMap<BlockKey, Slot>>,
    stats: Arc<Stats>,
    /// Buffers of evicted blocks nobody else held, for the next decodes.
    pool: BufferPool,
}

impl BlockCache {
    /// A cache holding at most `budget` bytes (data plus per-entry overhead).
    pub fn new(budget: usize, stats: Arc<Stats>) -> BlockCache {
        BlockCache {
            lru: Mutex::new(ByteLru::new(budget)),
            budget,
            inflight: Mutex::new(HashMap::new()),
            stats,
            pool: BufferPool::default(),
        }
    }

    /// The byte budget.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Bytes and entries held now.
    pub fn usage(&self) -> (usize, usize) {
        self.lru.lock().usage()
    }

    /// Whether a block is cached (does not count as a hit).
    pub fn contains(&self, key: &BlockKey) -> bool {
        self.lru.lock().contains(key)
    }

    /// Whether a block is being decoded now (by the leader of its single flight).
    pub fn in_flight(&self, key: &BlockKey) -> bool {
        self.inflight.lock().contains_key(key)
    }

    /// Up to `n` cached blocks of array `id` (blocks 0 first: they decode
    /// without another block), without touching their recency.
    pub fn sample(&self, id: u64, n: usize) -> Vec<(BlockKey, Block)> {
        let lru = self.lru.lock();
        let mut found: Vec<(BlockKey, Block)> = lru
            .iter()
            .filter(|(k, _)| k.array == id)
            .map(|(k, b)| (*k, b.clone()))
            .collect();
        found.sort_by_key(|(k, _)| (k.block != 0, k.chunk, k.block));
        found.truncate(n);
        found
    }

    /// A buffer of `len` bytes for a block about to be decoded: one an
    /// evicted block left (holding its stale bytes) or a new one.
    pub fn buffer(&self, len: usize) -> Vec<u8> {
        self.pool.take(len)
    }

    /// Give back a buffer taken with [`Self::buffer`] that was not used.
    pub fn recycle(&self, buffer: Vec<u8>) {
        self.pool.give(buffer);
    }

    fn lookup(&self, key: &BlockKey) -> Option<Block> {
        self.lru.lock().get(key).cloned()
    }

    fn insert(&self, key: BlockKey, data: Block) {
        let size = data.len() + ENTRY_OVERHEAD;
        if size > self.budget {
            return;
        }
        let (evicted, replaced) = {
            let mut lru = self.lru.lock();
            let replaced = lru.contains(&key);
            (lru.put(key, data, size), replaced as usize)
        };
        // A block put again under its own key is not an eviction.
        Stats::add(&self.stats.evictions, (evicted.len() - replaced) as u64);
        // Outside the lock: a block no reader holds any more gives its buffer back.
        for block in evicted {
            if let Ok(buffer) = Arc::try_unwrap(block) {
                self.pool.give(buffer);
            }
        }
    }

    /// The block under `key`: from the cache, or produced by `decode` now —
    /// once, even when several threads ask at the same time (the others wait
    /// and share its result, error included).
    pub fn get_or_decode(
        &self,
        key: BlockKey,
        decode: impl FnOnce() -> PResult<Block>,
    ) -> PResult<Block> {
        if let Some(hit) = self.lookup(&key) {
            Stats::add(&self.stats.hits, 1);
            return Ok(hit);
        }
        let (slot, leader) = {
            let mut inflight = self.inflight.lock();
            match inflight.get(&key) {
                Some(slot) => (slot.clone(), false),
                None => {
                    // A leader inserts its block before it leaves the
                    // flights: one that finished since the lookup above
                    // left it here, and it is not decoded again.
                    if let Some(hit) = self.lookup(&key) {
                        Stats::add(&self.stats.hits, 1);
                        return Ok(hit);
                    }
                    let slot: Slot = Arc::new((Mutex::new(None), Condvar::new()));
                    inflight.insert(key, slot.clone());
                    (slot, true)
                }
            }
        };
        Stats::add(&self.stats.misses, 1);
        if !leader {
            let (lock, cvar) = &*slot;
            let mut result = lock.lock();
            while result.is_none() {
                cvar.wait(&mut result);
            }
            return result
                .clone()
                .unwrap_or_else(|| Err(Problem::Io("decode abandoned".into())));
        }
        // Whatever happens in `decode` (even a panic), waiters get an answer.
        let mut finish = Finish {
            cache: self,
            key,
            slot: &slot,
            result: None,
        };
        let result = decode();
        if let Ok(data) = &result {
            Stats::add(&self.stats.blocks_decoded, 1);
            Stats::add(&self.stats.bytes_decoded, data.len() as u64);
            self.insert(key, data.clone());
        }
        finish.result = Some(result.clone());
        drop(finish);
        result
    }
}

/// Publishes the leader's result to waiters and clears the in-flight entry
/// when dropped (on success, error or unwinding).
struct Finish<'a> {
    cache: &'a BlockCache,
    key: BlockKey,
    slot: &'a Slot,
    result: Option<PResult<Block>>,
}

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        let result = self
            .result
            .take()
            .unwrap_or_else(|| Err(Problem::Io("decode abandoned".into())));
        let (lock, cvar) = &**self.slot;
        *lock.lock() = Some(result);
        cvar.notify_all();
        self.cache.inflight.lock().remove(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Barrier;
    use std::time::Duration;

    fn key(block: u64) -> BlockKey {
        BlockKey {
            array: 1,
            chunk: 0,
            block,
        }
    }

    #[test]
    fn concurrent_misses_decode_once_and_share_the_result() {
        let cache = Arc::new(BlockCache::new(1 << 20, Arc::new(Stats::default())));
        let calls = Arc::new(AtomicUsize::new(0));
        let barrier = Arc::new(Barrier::new(8));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (cache, calls, barrier) = (cache.clone(), calls.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    cache
                        .get_or_decode(key(7), || {
                            calls.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(Duration::from_millis(50));
                            Ok(Arc::new(vec![7u8; 1000]))
                        })
                        .unwrap()
                })
            })
            .collect();
        for t in threads {
            assert_eq!(*t.join().unwrap(), vec![7u8; 1000]);
        }
        assert_eq!(
            calls.load(Ordering::SeqCst),
            1,
            "the block was decoded more than once"
        );
        assert_eq!(cache.usage(), (1000 + ENTRY_OVERHEAD, 1));
    }

    #[test]
    fn errors_are_shared_but_not_cached() {
        let cache = BlockCache::new(1 << 20, Arc::new(Stats::default()));
        let err = cache
            .get_or_decode(key(1), || Err(Problem::corrupt("chunk", "bad")))
            .unwrap_err();
        assert_eq!(err, Problem::corrupt("chunk", "bad"));
        assert!(!cache.contains(&key(1)));
        let ok = cache
            .get_or_decode(key(1), || Ok(Arc::new(vec![1, 2, 3])))
            .unwrap();
        assert_eq!(*ok, vec![1, 2, 3]);
    }

    #[test]
    fn a_panicking_decode_releases_its_waiters() {
        let cache = Arc::new(BlockCache::new(1 << 20, Arc::new(Stats::default())));
        let c2 = cache.clone();
        let leader = std::thread::spawn(move || {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                c2.get_or_decode(key(3), || {
                    std::thread::sleep(Duration::from_millis(50));
                    panic!("decoder bug")
                })
            }));
        });
        std::thread::sleep(Duration::from_millis(10));
        let waiter = cache.get_or_decode(key(3), || Ok(Arc::new(vec![3])));
        leader.join().unwrap();
        // Either it waited on the panicked leader (an error) or came after it (decoded itself).
        match waiter {
            Err(p) => assert_eq!(p, Problem::Io("decode abandoned".into())),
            Ok(block) => assert_eq!(*block, vec![3]),
        }
        // Nothing is left in flight: the next ask returns at once.
        let again = cache
            .get_or_decode(key(3), || Ok(Arc::new(vec![4])))
            .unwrap();
        assert!(*again == vec![3] || *again == vec![4], "{again:?}");
    }

    #[test]
    fn budget_evicts_least_recently_used_and_skips_oversized_blocks() {
        let cache = BlockCache::new(3 * (100 + ENTRY_OVERHEAD), Arc::new(Stats::default()));
        for b in 0..3 {
            cache
                .get_or_decode(key(b), || Ok(Arc::new(vec![b as u8; 100])))
                .unwrap();
        }
        cache
            .get_or_decode(key(0), || unreachable!("block 0 is cached"))
            .unwrap();
        cache
            .get_or_decode(key(3), || Ok(Arc::new(vec![3; 100])))
            .unwrap();
        assert!(
            cache.contains(&key(0))
                && !cache.contains(&key(1))
                && cache.contains(&key(2))
                && cache.contains(&key(3))
        );
        let big = cache
            .get_or_decode(key(9), || Ok(Arc::new(vec![9; 10_000])))
            .unwrap();
        assert_eq!(big.len(), 10_000, "an oversized block is still returned");
        assert!(!cache.contains(&key(9)), "but not kept");
        assert_eq!(cache.usage(), (3 * (100 + ENTRY_OVERHEAD), 3));
    }
}
