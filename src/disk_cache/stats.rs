//! Counters of the disk cache, shown in `.stats`.

use std::sync::atomic::{AtomicU64, Ordering};

/// What the disk cache did since the mount started.
#[derive(Debug, Default)]
pub struct DiskStats {
    /// Reads answered from a cache file instead of decoding.
    pub hits: AtomicU64,
    /// Bytes those reads returned.
    pub hit_bytes: AtomicU64,
    /// Fill writes done (each one or more whole granules).
    pub fills: AtomicU64,
    /// Bytes written by them.
    pub fill_bytes: AtomicU64,
    /// Fills dropped: the writer's queue was full, or no room could be made.
    pub fills_dropped: AtomicU64,
    /// Entries this mount evicted to keep the budget.
    pub evictions: AtomicU64,
    /// Entries that became complete in this mount.
    pub completed: AtomicU64,
    /// Bytes re-reads handed to the writer from what they had just decoded
    /// (a granule still wanted, read again), with nothing decoded for the
    /// cache.
    pub handed_bytes: AtomicU64,
    /// Bytes re-reads did not hand over because the writer was behind
    /// (its queue full): the read did not wait, and the granules stay
    /// wanted, for a later read or the producer.
    pub deferred_bytes: AtomicU64,
    /// Bytes the producer made again (from the memory block cache, or
    /// decoded) for granules wanted and not read again.
    pub produced_bytes: AtomicU64,
    /// Opens that waited for the writer to land the last granules of their
    /// entry (handed by the read just before), and found it complete.
    pub settled_opens: AtomicU64,
    /// Opens that produced (decoded) and wrote the few granules their entry
    /// still lacked (left wanted by a re-read the writer did not keep up
    /// with) before answering.
    pub finished_opens: AtomicU64,
    /// Opens served by FUSE passthrough from a complete entry.
    pub passthrough_opens: AtomicU64,
    /// Opens of a complete entry served by the daemon from the cache file
    /// (passthrough not available or not allowed).
    pub cache_file_opens: AtomicU64,
    /// Errors (logged; the read decoded instead).
    pub errors: AtomicU64,
    /// Reads of remote objects' bytes answered from a cache file (the
    /// remote tier) instead of the network.
    pub remote_hits: AtomicU64,
    /// Bytes those reads returned.
    pub remote_hit_bytes: AtomicU64,
    /// Runs of granules fetched from a remote object and offered to the cache.
    pub remote_fills: AtomicU64,
    /// Bytes of those runs.
    pub remote_fill_bytes: AtomicU64,
    /// Entries dropped because bytes read from them did not decode (read
    /// again from the origin once).
    pub healed: AtomicU64,
}

impl DiskStats {
    /// Add `n` to `counter`.
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// The counters as JSON fields.
    pub fn to_json(&self) -> serde_json::Map<String, serde_json::Value> {
        let get = |c: &AtomicU64| serde_json::Value::from(c.load(Ordering::Relaxed));
        [
            ("hits", &self.hits),
            ("hit_bytes", &self.hit_bytes),
            ("fills", &self.fills),
            ("fill_bytes", &self.fill_bytes),
            ("fills_dropped", &self.fills_dropped),
            ("evictions", &self.evictions),
            ("completed", &self.completed),
            ("handed_bytes", &self.handed_bytes),
            ("deferred_bytes", &self.deferred_bytes),
            ("produced_bytes", &self.produced_bytes),
            ("settled_opens", &self.settled_opens),
            ("finished_opens", &self.finished_opens),
            ("passthrough_opens", &self.passthrough_opens),
            ("cache_file_opens", &self.cache_file_opens),
            ("errors", &self.errors),
            ("remote_hits", &self.remote_hits),
            ("remote_hit_bytes", &self.remote_hit_bytes),
            ("remote_fills", &self.remote_fills),
            ("remote_fill_bytes", &self.remote_fill_bytes),
            ("healed", &self.healed),
        ]
        .into_iter()
        .map(|(name, c)| (name.to_string(), get(c)))
        .collect()
    }
}
