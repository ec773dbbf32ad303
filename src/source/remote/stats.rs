//! Counters of what remote reading cost: requests by kind and bytes
//! received, for the read layer's statistics and the request-shaping tests.

use std::sync::atomic::{AtomicU64, Ordering};

/// Live counters, shared by every source opened through one connection.
#[derive(Debug, Default)]
pub struct RemoteStats {
    gets: AtomicU64,
    heads: AtomicU64,
    lists: AtomicU64,
    bytes: AtomicU64,
    errors: AtomicU64,
    span_hits: AtomicU64,
}

/// A copy of [`RemoteStats`] at one moment.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct StatsSnapshot {
    /// Ranged GET requests issued (retries inside the client not counted).
    pub gets: u64,
    /// HEAD requests issued.
    pub heads: u64,
    /// LIST requests issued (one per page).
    pub lists: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// Requests that ended in an error.
    pub errors: u64,
    /// Small reads answered from bytes already fetched (no request).
    pub span_hits: u64,
}

impl RemoteStats {
    pub(crate) fn get(&self, bytes: u64) {
        self.gets.fetch_add(1, Ordering::Relaxed);
        self.get_bytes(bytes);
    }

    pub(crate) fn get_bytes(&self, bytes: u64) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    pub(crate) fn head(&self) {
        self.heads.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn list(&self) {
        self.lists.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn error(&self) {
        self.errors.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn span_hit(&self) {
        self.span_hits.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters now.
    pub fn snapshot(&self) -> StatsSnapshot {
        StatsSnapshot {
            gets: self.gets.load(Ordering::Relaxed),
            heads: self.heads.load(Ordering::Relaxed),
            lists: self.lists.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            span_hits: self.span_hits.load(Ordering::Relaxed),
        }
    }
}

impl StatsSnapshot {
    /// What happened between `earlier` and this snapshot.
    pub fn since(&self, earlier: &StatsSnapshot) -> StatsSnapshot {
        StatsSnapshot {
            gets: self.gets - earlier.gets,
            heads: self.heads - earlier.heads,
            lists: self.lists - earlier.lists,
            bytes: self.bytes - earlier.bytes,
            errors: self.errors - earlier.errors,
            span_hits: self.span_hits - earlier.span_hits,
        }
    }

    /// All requests of any kind.
    pub fn requests(&self) -> u64 {
        self.gets + self.heads + self.lists
    }
}
