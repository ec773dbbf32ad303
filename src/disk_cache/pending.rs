//! Fills deferred to quiet time. A read served by decoding does not copy
//! its bytes for the cache: it only names the granules of `data` it
//! touched ([`Pending::want`]). The writer produces them again later
//! ([`Refill`]: from the memory block cache where they still are, decoded
//! again where not) when the mount has had no reads for a while, so a cold
//! scan pays nothing for the cache but this bookkeeping, and a read that
//! raced ahead of the writer leaves no holes behind: nothing wanted is
//! dropped, only granules past [`Pending`]'s cap.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;

use super::entry::Entry;
use super::error::RefillError;
use super::key::Key;
use super::map::GRANULE;

/// How an entry's wanted bytes are produced again (the layer above knows
/// the array; the cache knows only bytes).
pub trait Refill: Send + Sync {
    /// Bytes `[offset, offset + out.len())` of `data` into `out`.
    fn produce(&self, offset: u64, out: &mut [u8]) -> Result<(), RefillError>;

    /// The identity the source states now (what [`super::DiskCache::entry`]
    /// was given), or `None` when it can no longer be keyed: produced bytes
    /// are written only while it still names the entry.
    fn identity(&self) -> Option<String>;
}

/// One entry's wanted granules.
struct Wanted {
    entry: Arc<Entry>,
    refill: Arc<dyn Refill>,
    granules: BTreeSet<u64>,
    /// When the entry was first wanted (oldest first).
    since: Instant,
}

/// A run of wanted bytes handed to the writer.
pub(super) struct Run {
    pub(super) entry: Arc<Entry>,
    pub(super) refill: Arc<dyn Refill>,
    pub(super) start: u64,
    pub(super) end: u64,
    granules: u64,
}

impl Run {
    /// Whether the source still states the identity the entry is keyed by.
    pub(super) fn still_current(&self) -> bool {
        self.refill
            .identity()
            .is_some_and(|now| Key::new(&now, self.entry.len()).name() == self.entry.key().name())
    }
}

/// The wanted granules of every entry, capped in number.
pub(super) struct Pending {
    wants: Mutex<HashMap<String, Wanted>>,
    /// Granules wanted in all (each [`GRANULE`] bytes at most).
    count: AtomicU64,
    /// Granules taken and not yet [`Pending::finish`]ed (being produced).
    active: AtomicU64,
    /// Granules wanted at most; wants past it are dropped.
    cap: u64,
}

impl Pending {
    /// Room for `cap_bytes` of wanted bytes.
    pub(super) fn new(cap_bytes: u64) -> Pending {
        Pending {
            wants: Mutex::new(HashMap::new()),
            count: Default::default(),
            active: Default::default(),
            cap: cap_bytes.div_ceil(GRANULE),
        }
    }

    /// The granules of `[start, end)` of `entry`'s `data` not whole yet are
    /// wanted. Answers how many granules were dropped (the cap).
    pub(super) fn want(
        &self,
        entry: &Arc<Entry>,
        refill: &Arc<dyn Refill>,
        start: u64,
        end: u64,
    ) -> u64 {
        let missing = entry.missing(start, end);
        if missing.is_empty() || entry.is_retired() {
            return 0;
        }
        let mut wants = self.wants.lock();
        let wanted = wants
            .entry(entry.key().name().to_string())
            .or_insert_with(|| Wanted {
                entry: entry.clone(),
                refill: refill.clone(),
                granules: BTreeSet::new(),
                since: Instant::now(),
            });
        let mut dropped = 0;
        for g in missing {
            if self.count() >= self.cap {
                dropped += 1;
            } else if wanted.granules.insert(g) {
                self.count.fetch_add(1, Ordering::Relaxed);
            }
        }
        if wanted.granules.is_empty() {
            wants.remove(entry.key().name());
        }
        dropped
    }

    /// Granules wanted now.
    pub(super) fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// Granules wanted or being produced: zero once everything wanted so
    /// far is written (or given up).
    pub(super) fn outstanding(&self) -> u64 {
        // `take` adds to `active` before it subtracts from `count`.
        let active = self.active.load(Ordering::SeqCst);
        self.count() + active
    }

    /// The writer is done with `run` (written, or given up).
    pub(super) fn finish(&self, run: &Run) {
        self.active.fetch_sub(run.granules, Ordering::SeqCst);
    }

    /// How long the oldest entry with wants has waited.
    pub(super) fn oldest(&self) -> Option<std::time::Duration> {
        self.wants.lock().values().map(|w| w.since.elapsed()).max()
    }

    /// Take the first run of wanted granules of the entry waiting longest,
    /// at most `max_bytes` long (one granule at least).
    pub(super) fn take(&self, max_bytes: u64) -> Option<Run> {
        let mut wants = self.wants.lock();
        let name = wants
            .iter()
            .min_by_key(|(_, w)| w.since)
            .map(|(name, _)| name.clone())?;
        let wanted = wants.get_mut(&name)?;
        let first = *wanted.granules.iter().next()?;
        let most = (max_bytes / GRANULE).max(1);
        let mut last = first;
        while last + 1 - first < most && wanted.granules.contains(&(last + 1)) {
            last += 1;
        }
        for g in first..=last {
            wanted.granules.remove(&g);
        }
        let granules = last + 1 - first;
        self.active.fetch_add(granules, Ordering::SeqCst);
        self.count.fetch_sub(granules, Ordering::SeqCst);
        let run = Run {
            entry: wanted.entry.clone(),
            refill: wanted.refill.clone(),
            start: first * GRANULE,
            end: ((last + 1) * GRANULE).min(wanted.entry.len()),
            granules,
        };
        if wanted.granules.is_empty() {
            wants.remove(&name);
        }
        Some(run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk_cache::index::Index;

    struct Fixed;

    impl Refill for Fixed {
        fn produce(&self, _offset: u64, out: &mut [u8]) -> Result<(), RefillError> {
            out.fill(7);
            Ok(())
        }
        fn identity(&self) -> Option<String> {
            Some("fixed".into())
        }
    }

    fn entry(dir: &std::path::Path, len: u64) -> Arc<Entry> {
        let index = Index::open(dir).unwrap();
        let locked = index.lock().unwrap();
        Arc::new(Entry::open(&locked, Key::new("fixed", len), len).unwrap())
    }

    #[test]
    fn wants_come_back_as_runs_oldest_entry_first_and_capped() {
        let dir = tempfile::tempdir().unwrap();
        let len = 10 * GRANULE + 5;
        let a = entry(dir.path(), len);
        let refill: Arc<dyn Refill> = Arc::new(Fixed);
        let pending = Pending::new(6 * GRANULE);
        // A read of a few bytes wants its whole granule; one across a
        // boundary wants both.
        assert_eq!(pending.want(&a, &refill, 3, 4), 0);
        assert_eq!(pending.want(&a, &refill, GRANULE - 1, GRANULE + 1), 0);
        assert_eq!(pending.want(&a, &refill, 9 * GRANULE, len), 0);
        assert_eq!(pending.count(), 4, "granules 0, 1, 9, 10");
        // Past the cap of 6 granules, wants are dropped and counted.
        assert_eq!(pending.want(&a, &refill, 3 * GRANULE, 7 * GRANULE), 2);
        assert_eq!(pending.count(), 6);
        let run = pending.take(GRANULE).unwrap();
        assert_eq!((run.start, run.end), (0, GRANULE), "capped at max_bytes");
        assert!(run.still_current());
        let run = pending.take(64 * GRANULE).unwrap();
        assert_eq!((run.start, run.end), (GRANULE, 2 * GRANULE));
        let run = pending.take(64 * GRANULE).unwrap();
        assert_eq!((run.start, run.end), (3 * GRANULE, 5 * GRANULE));
        let run = pending.take(64 * GRANULE).unwrap();
        assert_eq!(
            (run.start, run.end),
            (9 * GRANULE, len),
            "the last ends at len"
        );
        assert!(pending.take(64 * GRANULE).is_none());
        assert_eq!(pending.count(), 0);
        assert_eq!(pending.outstanding(), 6, "taken, not finished");
        for (start, end, granules) in [(0, 1, 1), (1, 2, 1), (3, 5, 2), (9, 11, 2)] {
            let done = Run {
                entry: a.clone(),
                refill: refill.clone(),
                start,
                end,
                granules,
            };
            pending.finish(&done);
        }
        assert_eq!(pending.outstanding(), 0);
    }

    #[test]
    fn whole_granules_are_not_wanted_and_a_changed_source_is_not_current() {
        struct Changed;
        impl Refill for Changed {
            fn produce(&self, _: u64, _: &mut [u8]) -> Result<(), RefillError> {
                Err(crate::format::Problem::corrupt("refill", "unused").into())
            }
            fn identity(&self) -> Option<String> {
                Some("fixed, but rewritten".into())
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let a = entry(dir.path(), 2 * GRANULE);
        a.write(0, &vec![1; GRANULE as usize]).unwrap();
        let refill: Arc<dyn Refill> = Arc::new(Changed);
        let pending = Pending::new(1 << 30);
        assert_eq!(pending.want(&a, &refill, 0, 2 * GRANULE), 0);
        assert_eq!(pending.count(), 1, "granule 0 is whole already");
        let run = pending.take(1 << 30).unwrap();
        assert_eq!((run.start, run.end), (GRANULE, 2 * GRANULE));
        assert!(!run.still_current());
    }
}
