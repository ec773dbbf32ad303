//! Whether the reads being answered leave a core idle. Prefetch decodes
//! ahead of a reader on a spare core; where every core already decodes for
//! a reader of its own (two Dask threads each reading a chunk file with
//! direct_io), decoding ahead into the cache only adds the copy out of it
//! and the page faults of fresh cache blocks. So the stream reads being
//! answered are counted, and a moment when they filled every core is
//! remembered for a while: readers that take turns with compute between
//! their reads keep the cores as busy as readers reading at once.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long the cores count as full after reads last filled them: longer
/// than a reader's compute between two chunk files (a Dask task summing a
/// 64 MiB chunk takes tens of milliseconds), short next to a scan.
const HOLD: Duration = Duration::from_millis(200);

/// The stream reads being answered, against the cores of the machine.
#[derive(Debug)]
pub struct CoreUse {
    cores: usize,
    reading: AtomicUsize,
    /// Until when (µs since `born`) the cores count as full.
    full_until: AtomicU64,
    born: Instant,
}

/// One stream read being answered; counted out when dropped.
#[derive(Debug)]
pub struct Reading<'a> {
    of: &'a CoreUse,
    /// A core was left idle when this read started, and reads have not
    /// filled every core within [`HOLD`].
    pub spare_core: bool,
}

impl CoreUse {
    /// Reads on a machine of `cores` cores (at least one).
    pub fn new(cores: usize) -> CoreUse {
        CoreUse {
            cores: cores.max(1),
            reading: AtomicUsize::new(0),
            full_until: AtomicU64::new(0),
            born: Instant::now(),
        }
    }

    /// Reads on this machine ([`std::thread::available_parallelism`]).
    pub fn of_this_machine() -> CoreUse {
        CoreUse::new(std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    /// The cores counted.
    pub fn cores(&self) -> usize {
        self.cores
    }

    /// Reads being answered now.
    pub fn reading(&self) -> usize {
        self.reading.load(Ordering::Acquire)
    }

    /// Count a read in until the answer is dropped.
    pub fn start(&self) -> Reading<'_> {
        let now = self.now_us();
        let with_this = self.reading.fetch_add(1, Ordering::AcqRel) + 1;
        let spare_core = if with_this >= self.cores {
            let until = now.saturating_add(HOLD.as_micros() as u64);
            self.full_until.fetch_max(until, Ordering::AcqRel);
            false
        } else {
            now >= self.full_until.load(Ordering::Acquire)
        };
        Reading {
            of: self,
            spare_core,
        }
    }

    fn now_us(&self) -> u64 {
        u64::try_from(self.born.elapsed().as_micros()).unwrap_or(u64::MAX)
    }
}

impl Drop for Reading<'_> {
    fn drop(&mut self) {
        self.of.reading.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_core_is_spare_until_reads_fill_them_all_and_for_a_while_after() {
        let cores = CoreUse::new(2);
        {
            let first = cores.start();
            assert!(first.spare_core, "one read on two cores");
            assert_eq!(cores.reading(), 1);
            let second = cores.start();
            assert!(!second.spare_core, "two reads fill two cores");
            assert_eq!(cores.reading(), 2);
        }
        assert_eq!(cores.reading(), 0, "both counted out");
        let soon = cores.start();
        assert!(
            !soon.spare_core,
            "the cores were full a moment ago: readers taking turns"
        );
        drop(soon);
        std::thread::sleep(HOLD + Duration::from_millis(50));
        assert!(cores.start().spare_core, "long after, a lone reader");
        // One core is never spare.
        let one = CoreUse::new(1);
        assert!(!one.start().spare_core);
        assert_eq!(CoreUse::new(0).cores(), 1);
    }
}
