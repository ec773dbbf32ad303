//! Counters the mount exposes in `.stats`: what the cache does.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Value as Json};

/// Monotonic counters, shared by every reader of one mount.
#[derive(Debug, Default)]
pub struct Stats {
    pub hits: AtomicU64,
    pub misses: AtomicU64,
    pub blocks_decoded: AtomicU64,
    pub bytes_decoded: AtomicU64,
    pub bytes_served: AtomicU64,
    pub reads: AtomicU64,
    pub read_errors: AtomicU64,
    pub prefetched_blocks: AtomicU64,
    pub evictions: AtomicU64,
    pub open_files: AtomicU64,
}

impl Stats {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

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
            "reads": g(&self.reads),
            "read_errors": g(&self.read_errors),
            "open_files": g(&self.open_files),
        })
    }
}
