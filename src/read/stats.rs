//! Counters the mount exposes in `.stats`: what the cache does.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Value as Json};

/// Monotonic counters, shared by every reader of one mount.
#[derive(Debug, Default)]
pub struct Stats {
    /// Block lookups answered from the block cache (`cache_hits` in `.stats`).
    pub hits: AtomicU64,
    /// Block lookups not found in the block cache (`cache_misses`), including
    /// those that then waited for another thread already decoding that block.
    pub misses: AtomicU64,
    /// Blocks decoded successfully on a cache miss (once per block, however many
    /// threads were waiting for it), whether for a read or for prefetch.
    pub blocks_decoded: AtomicU64,
    /// Decoded bytes of the blocks counted in [`Stats::blocks_decoded`].
    pub bytes_decoded: AtomicU64,
    /// Bytes the read planner returned for array files (`data`, `data.npy`
    /// with its header, `chunks/` files). Reads of `meta.json`, `.zarray` and
    /// `.stats` do not count.
    pub bytes_served: AtomicU64,
    /// Read requests on open files of any kind (unknown handles excluded).
    pub reads: AtomicU64,
    /// Reads of array files that failed to read or decode (each answers EIO).
    pub read_errors: AtomicU64,
    /// Blocks the background prefetcher brought into the cache: not cached when
    /// it looked, then obtained without error.
    pub prefetched_blocks: AtomicU64,
    /// Blocks of random reads whose streams were handed to a decode helper
    /// thread (`helper_jobs`: one was polling, or reads came in a burst);
    /// the reader takes back what it does not start.
    pub helper_jobs: AtomicU64,
    /// Blocks dropped from the block cache to stay within its byte budget.
    pub evictions: AtomicU64,
    /// Files open now: incremented on open and decremented on release, so unlike
    /// the other counters it goes down too.
    pub open_files: AtomicU64,
}

impl Stats {
    /// Add `n` to `counter` (relaxed ordering: counters are statistics, not
    /// synchronisation).
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// The current value of `counter` (relaxed ordering).
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }

    /// The JSON document shown in `.stats` (`cache_bytes`, `cache_budget` come from the cache).
    pub fn to_json(&self, cache_bytes: u64, cache_budget: u64, cache_entries: u64) -> Json {
        let g = Self::get;
        let served = g(&self.bytes_served);
        let decoded = g(&self.bytes_decoded);
        json!({
            "cache_hits": g(&self.hits),
            "cache_misses": g(&self.misses),
            "cache_bytes": cache_bytes,
            "cache_budget": cache_budget,
            "cache_entries": cache_entries,
            "evictions": g(&self.evictions),
            "blocks_decoded": g(&self.blocks_decoded),
            "bytes_decoded": decoded,
            "bytes_served": served,
            "decode_amplification": if served == 0 { 0.0 } else { decoded as f64 / served as f64 },
            "prefetched_blocks": g(&self.prefetched_blocks),
            "helper_jobs": g(&self.helper_jobs),
            "reads": g(&self.reads),
            "read_errors": g(&self.read_errors),
            "open_files": g(&self.open_files),
        })
    }
}
