//! The state array and store entries build when they load (a parsed
//! header and chunk index, meta.json bytes, an npy header, xattrs, a
//! store's listings), kept under one byte budget (`--meta-cache`).
//!
//! Entries hold what they loaded only weakly; this cache holds the
//! recently used versions strongly, so a walk over a million arrays keeps
//! a budget's worth of them, not a million. A version that an open file
//! holds stays alive after the cache let go of it; one that nothing holds is
//! dropped, and the entry loads it again on its next use.

use parking_lot::Mutex;
use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::read::ByteLru;

/// The budget when none is given: room for about ten thousand small arrays.
pub const DEFAULT_META_CACHE: usize = 32 << 20;

/// A loaded version as the cache keeps it.
type Held = Arc<dyn Any + Send + Sync>;

/// What the cache holds and has done, for `.stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MetaCacheStats {
    /// The byte budget.
    pub budget: u64,
    /// Bytes (estimated) held now.
    pub bytes: u64,
    /// Versions held now.
    pub entries: u64,
    /// Versions loaded (first loads and loads again after eviction).
    pub loads: u64,
    /// Versions the cache let go of to stay within the budget.
    pub evictions: u64,
}

/// Loaded versions of entries, by entry number, within a byte budget.
pub struct MetaCache {
    lru: Mutex<ByteLru<u64, Held>>,
    next_id: AtomicU64,
    loads: AtomicU64,
    evictions: AtomicU64,
}

impl MetaCache {
    /// A cache holding about `budget` bytes of loaded state.
    pub fn new(budget: usize) -> MetaCache {
        MetaCache {
            lru: Mutex::new(ByteLru::new(budget)),
            next_id: AtomicU64::new(1),
            loads: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
        }
    }

    /// A number for a new entry.
    pub fn new_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Keep entry `id`'s new version `value`, weighing `weight` bytes (one
    /// heavier than the budget is kept alone: a store's listings, which
    /// every lookup inside it uses, would otherwise be rebuilt at each).
    pub fn keep(&self, id: u64, value: Held, weight: usize) {
        self.loads.fetch_add(1, Ordering::Relaxed);
        let popped = {
            let mut lru = self.lru.lock();
            let replaced = lru.contains(&id) as u64;
            let popped = lru.put_even_alone(id, value, weight);
            self.evictions.fetch_add(
                (popped.len() as u64).saturating_sub(replaced),
                Ordering::Relaxed,
            );
            popped
        };
        // Dropped outside the lock: dropping a version may take a while.
        drop(popped);
    }

    /// Entry `id` was just used.
    pub fn touch(&self, id: u64) {
        self.lru.lock().get(&id);
    }

    /// Entry `id` no longer presents its version: let go of it.
    pub fn forget(&self, id: u64) {
        let gone = self.lru.lock().remove(&id);
        drop(gone);
    }

    /// What the cache holds and has done.
    pub fn stats(&self) -> MetaCacheStats {
        let lru = self.lru.lock();
        let (bytes, entries) = lru.usage();
        MetaCacheStats {
            budget: lru.budget() as u64,
            bytes: bytes as u64,
            entries: entries as u64,
            loads: self.loads.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_within_budget_and_versions_live_on_where_held() {
        let cache = MetaCache::new(1000);
        let a: Arc<Vec<u8>> = Arc::new(vec![1; 10]);
        cache.keep(1, a.clone(), 600);
        cache.keep(2, Arc::new(vec![2u8; 10]), 600);
        let stats = cache.stats();
        assert_eq!(
            (stats.bytes, stats.entries, stats.loads, stats.evictions),
            (600, 1, 2, 1)
        );
        assert_eq!(
            *a,
            vec![1; 10],
            "a version held elsewhere outlives its eviction"
        );
        assert_eq!(Arc::strong_count(&a), 1, "the cache let go of it");
        cache.forget(2);
        assert_eq!(cache.stats().entries, 0);
    }
}
