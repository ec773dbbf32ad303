//! Sequential-reader state: one per open file, it notices a reader going
//! front to back and decides how far ahead prefetch should run.

use std::sync::atomic::{AtomicU64, Ordering};

/// Where an open file's reads have been going.
#[derive(Debug)]
pub struct StreamState {
    /// Where the last read ended.
    next_offset: AtomicU64,
    /// How far prefetch has been accepted (each read asks only for the part
    /// of its window beyond this; a request the full queue dropped is asked
    /// again by the next read).
    prefetched_to: AtomicU64,
}

impl Default for StreamState {
    fn default() -> Self {
        StreamState {
            next_offset: AtomicU64::new(u64::MAX),
            prefetched_to: AtomicU64::new(0),
        }
    }
}

impl StreamState {
    /// Note a read of `size` bytes at `offset`. For a sequential reader (or
    /// one starting at 0) the answer is the byte range to prefetch so that
    /// `window` bytes (at least one read's worth) past this read are on
    /// their way; `None` otherwise or when that range was already asked for.
    pub fn on_read(&self, offset: u64, size: u64, window: u64) -> Option<std::ops::Range<u64>> {
        if !self.follows(offset, size) {
            return None;
        }
        self.ahead(offset, size, window)
    }

    /// Note a read of `size` bytes at `offset`: whether it starts where the
    /// last one ended, or at 0.
    pub fn follows(&self, offset: u64, size: u64) -> bool {
        let end = offset.saturating_add(size);
        self.next_offset.swap(end, Ordering::Relaxed) == offset || offset == 0
    }

    /// For a sequential read of `size` bytes at `offset`, the byte range to
    /// prefetch so that `window` bytes (at least one read's worth) past it
    /// are on their way; `None` when that range was already asked for.
    pub fn ahead(&self, offset: u64, size: u64, window: u64) -> Option<std::ops::Range<u64>> {
        let end = offset.saturating_add(size);
        let target = end.saturating_add(window.max(size));
        let from = self.prefetched_to.load(Ordering::Relaxed).max(end);
        (from < target).then_some(from..target)
    }

    /// The prefetch asked for by [`Self::on_read`] was taken up to `target`.
    pub fn accepted(&self, target: u64) {
        self.prefetched_to.fetch_max(target, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_reads_ask_only_for_the_new_part_of_the_window() {
        let s = StreamState::default();
        assert_eq!(s.on_read(0, 100, 1000), Some(100..1100));
        s.accepted(1100);
        assert_eq!(s.on_read(100, 100, 1000), Some(1100..1200));
        // A dropped request is asked again by the next read.
        assert_eq!(s.on_read(200, 100, 1000), Some(1100..1300));
        s.accepted(1300);
        // A jump elsewhere is not sequential.
        assert_eq!(s.on_read(50_000, 100, 1000), None);
        // Reads larger than the window still prefetch one read ahead.
        assert_eq!(s.on_read(50_100, 5000, 1000), Some(55_100..60_100));
    }
}
