//! What the cache's threads (the writer, the producer, the persister) share
//! with the [`super::DiskCache`] the reads go through: the directory, the
//! budget, the counters, the queues' fill levels and the granules on their
//! way.

use parking_lot::{Condvar, Mutex};
use std::sync::atomic::AtomicU64;
use std::time::Instant;

use super::index::Index;
use super::pending::Pending;
use super::stats::DiskStats;

/// What the writer, producer and persister threads share with the cache.
pub(super) struct Shared {
    pub(super) index: Index,
    pub(super) budget: u64,
    pub(super) stats: DiskStats,
    /// Offered bytes queued now.
    pub(super) queued: AtomicU64,
    /// Handed bytes queued now.
    pub(super) handed_queued: AtomicU64,
    /// Signalled when bytes leave the queue (room for those who wait).
    pub(super) room: Condvar,
    /// What [`Self::room`] is waited on with.
    pub(super) room_lock: Mutex<()>,
    /// Granules of `data` on their way to the disk.
    pub(super) pending: Pending,
    /// When the mount last served a read by decoding (ms since `epoch`).
    pub(super) busy_at: AtomicU64,
    pub(super) epoch: Instant,
}

impl Shared {
    /// Milliseconds since the cache started.
    pub(super) fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }
}
