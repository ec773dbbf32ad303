//! What reads served by decoding leave for the cache, granule by granule
//! of `data`, and where each granule is on its way to the disk.
//!
//! A read touching a granule for the first time only names it: the granule
//! is *wanted* ([`Pending::served`]) and costs the read no copy and no
//! write. The producer thread makes it again later ([`Refill`]: from the
//! memory block cache where it still is, decoded again where not) once the
//! mount is quiet. A read that produces a granule still wanted, i.e. reads
//! it a second time (the next epoch of a loop that never pauses), hands its
//! own bytes to the writer instead: nothing is decoded again, and the entry
//! is whole when that second read ends, if the writer kept up (what it had
//! no room for stays wanted, for the next read, or for the next open to
//! produce when it is a little: [`Pending::take_rest`]). Reads that cover a
//! granule in parts ([`Partial`]) hand it over once the parts add up.
//!
//! Each granule not whole is in one state at most: wanted, being produced,
//! partial (some bytes gathered) or handed (queued for the writer, or
//! being written); reads skip the last two kinds and those being produced.
//! Nothing wanted is dropped: a granule goes back to wanted when its
//! partial bytes must make room or the writer refuses it; only granules
//! past [`Pending`]'s cap are not wanted.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::entry::Entry;
use super::error::RefillError;
use super::key::Key;
use super::map::GRANULE;
use super::partial::Partial;

/// Granules gathered in parts at most, all entries together (8 MiB): past
/// it the oldest goes back to wanted.
const PARTIALS_MAX: u64 = 64;

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

/// One entry's granules on their way.
struct Wanted {
    entry: Arc<Entry>,
    refill: Arc<dyn Refill>,
    /// Named by a read, to be produced again.
    granules: BTreeSet<u64>,
    /// Taken by the producer.
    producing: BTreeSet<u64>,
    /// Gathered in parts from re-reads.
    partial: BTreeMap<u64, Partial>,
    /// Given to the writer whole, not yet written.
    handed: BTreeSet<u64>,
    /// When the entry was first wanted (oldest first).
    since: Instant,
}

impl Wanted {
    fn new(entry: &Arc<Entry>, refill: &Arc<dyn Refill>) -> Wanted {
        Wanted {
            entry: entry.clone(),
            refill: refill.clone(),
            granules: BTreeSet::new(),
            producing: BTreeSet::new(),
            partial: BTreeMap::new(),
            handed: BTreeSet::new(),
            since: Instant::now(),
        }
    }

    fn is_idle(&self) -> bool {
        self.granules.is_empty()
            && self.producing.is_empty()
            && self.partial.is_empty()
            && self.handed.is_empty()
    }

    /// Whether granule `g` will be whole without anything more from reads.
    fn in_transit(&self, g: u64) -> bool {
        self.handed.contains(&g) || self.producing.contains(&g)
    }
}

/// A run of wanted bytes taken by the producer.
pub(super) struct Run {
    pub(super) entry: Arc<Entry>,
    pub(super) refill: Arc<dyn Refill>,
    pub(super) start: u64,
    pub(super) end: u64,
}

impl Run {
    /// Whether the source still states the identity the entry is keyed by.
    pub(super) fn still_current(&self) -> bool {
        self.refill
            .identity()
            .is_some_and(|now| Key::new(&now, self.entry.len()).name() == self.entry.key().name())
    }
}

/// What a read's bytes gave the cache.
#[derive(Default)]
pub(super) struct Handover {
    /// Runs of whole granules for the writer: where they start in `data`,
    /// and their bytes.
    pub(super) runs: Vec<(u64, Vec<u8>)>,
    /// Granules not wanted: the cap was reached.
    pub(super) dropped: u64,
    /// Granules are wanted where none were: the producer should look.
    pub(super) woke: bool,
}

/// How many granules are in each state, all entries together.
#[derive(Default)]
struct Counts {
    wanted: u64,
    producing: u64,
    partial: u64,
    handed: u64,
}

impl Counts {
    fn of(&mut self, state: State) -> &mut u64 {
        match state {
            State::Wanted => &mut self.wanted,
            State::Producing => &mut self.producing,
            State::Handed => &mut self.handed,
        }
    }
}

/// A granule's state (those [`Pending::step`] moves between; granules in
/// parts are only gathered or given back by reads and quiet time).
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Wanted,
    Producing,
    Handed,
}

/// Every entry's granules, and how many are in each state.
#[derive(Default)]
struct Inner {
    wants: HashMap<String, Wanted>,
    counts: Counts,
}

/// The record of `entry` in `wants`, made if missing; one left by another
/// entry of the same key (evicted and opened again) is forgotten.
fn record<'a>(
    wants: &'a mut HashMap<String, Wanted>,
    counts: &mut Counts,
    entry: &Arc<Entry>,
    refill: &Arc<dyn Refill>,
) -> &'a mut Wanted {
    let name = entry.key().name();
    if let Some(old) = wants.remove(name) {
        if Arc::ptr_eq(&old.entry, entry) {
            wants.insert(name.to_string(), old);
        } else {
            counts.wanted -= old.granules.len() as u64;
            counts.producing -= old.producing.len() as u64;
            counts.partial -= old.partial.len() as u64;
            counts.handed -= old.handed.len() as u64;
        }
    }
    wants
        .entry(name.to_string())
        .or_insert_with(|| Wanted::new(entry, refill))
}

/// The record of `entry` in `wants`, when it has one.
fn find<'a>(wants: &'a mut HashMap<String, Wanted>, entry: &Entry) -> Option<&'a mut Wanted> {
    wants
        .get_mut(entry.key().name())
        .filter(|w| std::ptr::eq(Arc::as_ptr(&w.entry), entry))
}

impl Inner {
    /// Forget `entry`'s record once nothing of it is on its way.
    fn tidy(&mut self, entry: &Entry) {
        if find(&mut self.wants, entry).is_some_and(|w| w.is_idle()) {
            self.wants.remove(entry.key().name());
        }
    }

    /// Past [`PARTIALS_MAX`] granules in parts, the oldest go back to wanted.
    fn make_room_for_partials(&mut self) {
        while self.counts.partial > PARTIALS_MAX {
            let oldest = self
                .wants
                .iter()
                .flat_map(|(name, w)| w.partial.iter().map(move |(g, p)| (p.since, name, *g)))
                .min_by_key(|(since, _, _)| *since)
                .map(|(_, name, g)| (name.clone(), g));
            let Some((name, g)) = oldest else { return };
            if let Some(wanted) = self.wants.get_mut(&name) {
                wanted.partial.remove(&g);
                wanted.granules.insert(g);
            }
            self.counts.partial -= 1;
            self.counts.wanted += 1;
        }
    }
}

/// The granules of every entry on their way to the disk, capped in number.
pub(super) struct Pending {
    inner: Mutex<Inner>,
    /// Signalled when handed or produced granules were written.
    landed: Condvar,
    /// Granules wanted at most; wants past it are dropped.
    cap: u64,
}

impl Pending {
    /// Room for `cap_bytes` of wanted bytes.
    pub(super) fn new(cap_bytes: u64) -> Pending {
        Pending {
            inner: Mutex::new(Inner::default()),
            landed: Condvar::new(),
            cap: cap_bytes.div_ceil(GRANULE),
        }
    }

    /// `bytes` at `start` of `entry`'s `data` were just served by decoding.
    /// Granules wanted before (a re-read) are handed over from these bytes
    /// (whole ones in [`Handover::runs`], parts gathered); the others not
    /// whole become wanted.
    pub(super) fn served(
        &self,
        entry: &Arc<Entry>,
        refill: &Arc<dyn Refill>,
        start: u64,
        bytes: &[u8],
    ) -> Handover {
        let end = start + bytes.len() as u64;
        let mut out = Handover::default();
        let missing = entry.missing(start, end);
        if missing.is_empty() || entry.is_retired() {
            return out;
        }
        let mut whole_runs: Vec<(u64, u64)> = Vec::new();
        {
            let mut guard = self.inner.lock();
            let was_wanted = guard.counts.wanted;
            let Inner { wants, counts } = &mut *guard;
            let wanted = record(wants, counts, entry, refill);
            for g in missing {
                let g_start = g * GRANULE;
                let g_end = (g_start + GRANULE).min(entry.len());
                if wanted.in_transit(g) {
                    continue;
                }
                if let Some(part) = wanted.partial.get_mut(&g) {
                    part.add(g_start, start, bytes);
                    if part.is_complete() {
                        let done = wanted.partial.remove(&g).map(Partial::into_bytes);
                        counts.partial -= 1;
                        wanted.handed.insert(g);
                        counts.handed += 1;
                        out.runs.extend(done.map(|b| (g_start, b)));
                    }
                } else if wanted.granules.remove(&g) {
                    // Read again while still wanted: hand these bytes over.
                    counts.wanted -= 1;
                    if start <= g_start && g_end <= end {
                        wanted.handed.insert(g);
                        counts.handed += 1;
                        match whole_runs.last_mut() {
                            Some(run) if run.1 == g_start => run.1 = g_end,
                            _ => whole_runs.push((g_start, g_end)),
                        }
                    } else {
                        let mut part = Partial::new((g_end - g_start) as usize);
                        part.add(g_start, start, bytes);
                        wanted.partial.insert(g, part);
                        counts.partial += 1;
                    }
                } else if counts.wanted >= self.cap {
                    out.dropped += 1;
                } else {
                    wanted.granules.insert(g);
                    counts.wanted += 1;
                }
            }
            guard.tidy(entry);
            guard.make_room_for_partials();
            out.woke = was_wanted == 0 && guard.counts.wanted > 0;
        }
        // The copies are made outside the lock.
        for (a, b) in whole_runs {
            let from = (a - start) as usize;
            let to = (b - start) as usize;
            out.runs.push((a, bytes[from..to].to_vec()));
        }
        out
    }

    /// Granules wanted now.
    pub(super) fn count(&self) -> u64 {
        self.inner.lock().counts.wanted
    }

    /// Granules not yet written that reads touched (wanted, being produced,
    /// gathered in parts, or handed to the writer): zero once everything is
    /// written (or given up).
    pub(super) fn outstanding(&self) -> u64 {
        let inner = self.inner.lock();
        let c = &inner.counts;
        c.wanted + c.producing + c.partial + c.handed
    }

    /// How long the oldest entry with wanted granules has waited.
    pub(super) fn oldest(&self) -> Option<Duration> {
        self.inner
            .lock()
            .wants
            .values()
            .filter(|w| !w.granules.is_empty())
            .map(|w| w.since.elapsed())
            .max()
    }

    /// Take the first run of wanted granules of the entry waiting longest,
    /// at most `max_bytes` long (one granule at least), to produce.
    pub(super) fn take(&self, max_bytes: u64) -> Option<Run> {
        let mut guard = self.inner.lock();
        let inner = &mut *guard;
        let (_, wanted) = inner
            .wants
            .iter_mut()
            .filter(|(_, w)| !w.granules.is_empty())
            .min_by_key(|(_, w)| w.since)?;
        let first = *wanted.granules.iter().next()?;
        let most = (max_bytes / GRANULE).max(1);
        let mut last = first;
        while last + 1 - first < most && wanted.granules.contains(&(last + 1)) {
            last += 1;
        }
        for g in first..=last {
            wanted.granules.remove(&g);
            wanted.producing.insert(g);
        }
        let granules = last + 1 - first;
        inner.counts.wanted -= granules;
        inner.counts.producing += granules;
        Some(Run {
            entry: wanted.entry.clone(),
            refill: wanted.refill.clone(),
            start: first * GRANULE,
            end: ((last + 1) * GRANULE).min(wanted.entry.len()),
        })
    }

    /// Take every wanted granule of `entry` to produce now, in runs of at
    /// most `run_bytes`, when they are all it lacks besides granules on
    /// their way (none gathered in parts) and add up to at most `limit`
    /// bytes; none otherwise.
    pub(super) fn take_rest(&self, entry: &Entry, run_bytes: u64, limit: u64) -> Vec<Run> {
        let mut guard = self.inner.lock();
        let Inner { wants, counts } = &mut *guard;
        let Some(wanted) = find(wants, entry) else {
            return Vec::new();
        };
        let missing = entry.missing(0, entry.len());
        let only_wanted = missing
            .iter()
            .all(|g| wanted.granules.contains(g) || wanted.in_transit(*g));
        let rest: Vec<u64> = missing
            .into_iter()
            .filter(|g| wanted.granules.contains(g))
            .collect();
        let n = rest.len() as u64;
        if n == 0 || n * GRANULE > limit || !wanted.partial.is_empty() || !only_wanted {
            return Vec::new();
        }
        let most = (run_bytes / GRANULE).max(1);
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for g in rest {
            wanted.granules.remove(&g);
            wanted.producing.insert(g);
            match runs.last_mut() {
                Some(run) if run.1 == g && run.1 - run.0 < most => run.1 += 1,
                _ => runs.push((g, g + 1)),
            }
        }
        counts.wanted -= n;
        counts.producing += n;
        runs.into_iter()
            .map(|(first, end)| Run {
                entry: wanted.entry.clone(),
                refill: wanted.refill.clone(),
                start: first * GRANULE,
                end: (end * GRANULE).min(wanted.entry.len()),
            })
            .collect()
    }

    /// The producer made `run`'s bytes and gives them to the writer: they
    /// are handed now.
    pub(super) fn produced(&self, run: &Run) {
        self.step(
            &run.entry,
            run.start,
            run.end,
            State::Producing,
            Some(State::Handed),
        );
    }

    /// The producer gave `run` up (the source changed, or failed): its
    /// granules are no longer on their way.
    pub(super) fn abandon(&self, run: &Run) {
        self.step(&run.entry, run.start, run.end, State::Producing, None);
    }

    /// The writer refused the handed bytes `[start, end)` of `entry` (its
    /// queue stayed full): they are wanted again.
    pub(super) fn unhand(&self, entry: &Entry, start: u64, end: u64) {
        self.step(entry, start, end, State::Handed, Some(State::Wanted));
    }

    /// The writer is done with bytes `[start, end)` of `entry` (written, or
    /// given up): they are no longer on their way.
    pub(super) fn landed(&self, entry: &Entry, start: u64, end: u64) {
        self.step(entry, start, end, State::Handed, None);
    }

    /// Granules gathered in parts go back to wanted (the mount is quiet:
    /// the reads that would have brought their other parts are over).
    pub(super) fn unpart_all(&self) {
        let mut guard = self.inner.lock();
        let inner = &mut *guard;
        for wanted in inner.wants.values_mut() {
            for (g, _) in std::mem::take(&mut wanted.partial) {
                wanted.granules.insert(g);
                inner.counts.wanted += 1;
                inner.counts.partial -= 1;
            }
        }
    }

    /// Wait (at most `patience`) while `entry` lacks only granules on their
    /// way to the writer (handed or being produced), so that an open right
    /// after the read that handed them finds the entry complete. Returns
    /// whether it is complete.
    pub(super) fn settle(&self, entry: &Entry, patience: Duration) -> bool {
        let deadline = Instant::now() + patience;
        let mut guard = self.inner.lock();
        loop {
            if entry.is_complete() {
                return true;
            }
            if entry.is_retired() {
                return false;
            }
            let Some(wanted) = find(&mut guard.wants, entry) else {
                return false;
            };
            let (whole, granules) = entry.progress();
            let in_transit = (wanted.handed.len() + wanted.producing.len()) as u64;
            if granules - whole > in_transit
                || !entry
                    .missing(0, entry.len())
                    .iter()
                    .all(|&g| wanted.in_transit(g))
            {
                return false;
            }
            if self.landed.wait_until(&mut guard, deadline).timed_out() {
                return entry.is_complete();
            }
        }
    }

    /// Whether every granule `entry` lacks was touched by a read since
    /// (wanted, or on its way): an open now is a re-read, whose reads will
    /// hand everything still wanted over.
    pub(super) fn rereading(&self, entry: &Entry) -> bool {
        let mut guard = self.inner.lock();
        let Some(wanted) = find(&mut guard.wants, entry) else {
            return false;
        };
        let (whole, granules) = entry.progress();
        let known = wanted.granules.len()
            + wanted.producing.len()
            + wanted.partial.len()
            + wanted.handed.len();
        whole < granules
            && granules - whole <= known as u64
            && entry.missing(0, entry.len()).iter().all(|g| {
                wanted.granules.contains(g)
                    || wanted.partial.contains_key(g)
                    || wanted.in_transit(*g)
            })
    }

    /// Move the granules of `[start, end)` of `entry` that are in state
    /// `from` to state `to` (`None`: no longer on their way), and wake who
    /// waits for granules to land.
    fn step(&self, entry: &Entry, start: u64, end: u64, from: State, to: Option<State>) {
        let mut guard = self.inner.lock();
        let Inner { wants, counts } = &mut *guard;
        if let Some(wanted) = find(wants, entry) {
            for g in start / GRANULE..end.div_ceil(GRANULE) {
                let left = match from {
                    State::Producing => wanted.producing.remove(&g),
                    State::Handed => wanted.handed.remove(&g),
                    State::Wanted => wanted.granules.remove(&g),
                };
                if !left {
                    continue;
                }
                *counts.of(from) -= 1;
                let entered = match to {
                    Some(State::Handed) => wanted.handed.insert(g),
                    Some(State::Wanted) => wanted.granules.insert(g),
                    Some(State::Producing) => wanted.producing.insert(g),
                    None => false,
                };
                if let (true, Some(state)) = (entered, to) {
                    *counts.of(state) += 1;
                }
            }
        }
        guard.tidy(entry);
        drop(guard);
        self.landed.notify_all();
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

    fn data(len: u64) -> Vec<u8> {
        (0..len).map(|i| (i % 253) as u8).collect()
    }

    /// A read of `[start, end)` of `bytes` served by decoding.
    fn read(
        p: &Pending,
        e: &Arc<Entry>,
        r: &Arc<dyn Refill>,
        bytes: &[u8],
        start: u64,
        end: u64,
    ) -> Handover {
        p.served(e, r, start, &bytes[start as usize..end as usize])
    }

    #[test]
    fn wants_come_back_as_runs_oldest_entry_first_and_capped() {
        let dir = tempfile::tempdir().unwrap();
        let len = 10 * GRANULE + 5;
        let bytes = data(len);
        let a = entry(dir.path(), len);
        let refill: Arc<dyn Refill> = Arc::new(Fixed);
        let pending = Pending::new(6 * GRANULE);
        // A read of a few bytes wants its whole granule; one across a
        // boundary wants both.
        assert!(read(&pending, &a, &refill, &bytes, 3, 4).woke);
        let across = read(
            &pending,
            &a,
            &refill,
            &bytes,
            2 * GRANULE - 1,
            2 * GRANULE + 1,
        );
        assert!(!across.woke && across.runs.is_empty());
        assert_eq!(
            read(&pending, &a, &refill, &bytes, 9 * GRANULE, len).dropped,
            0
        );
        assert_eq!(pending.count(), 5, "granules 0, 1, 2, 9, 10");
        // Past the cap of 6 granules, wants are dropped and counted.
        assert_eq!(
            read(&pending, &a, &refill, &bytes, 4 * GRANULE, 8 * GRANULE).dropped,
            3
        );
        assert_eq!(pending.count(), 6);
        let run = pending.take(GRANULE).unwrap();
        assert_eq!((run.start, run.end), (0, GRANULE), "capped at max_bytes");
        assert!(run.still_current());
        pending.abandon(&run);
        let run = pending.take(64 * GRANULE).unwrap();
        assert_eq!((run.start, run.end), (GRANULE, 3 * GRANULE));
        pending.produced(&run);
        assert_eq!(pending.outstanding(), 5, "taken, handed, not written");
        pending.landed(&a, run.start, run.end);
        let run = pending.take(64 * GRANULE).unwrap();
        assert_eq!((run.start, run.end), (4 * GRANULE, 5 * GRANULE));
        pending.abandon(&run);
        let run = pending.take(64 * GRANULE).unwrap();
        assert_eq!(
            (run.start, run.end),
            (9 * GRANULE, len),
            "the last ends at len"
        );
        assert!(pending.take(64 * GRANULE).is_none());
        assert_eq!(pending.count(), 0);
        assert_eq!(pending.outstanding(), 2, "being produced");
        pending.abandon(&run);
        assert_eq!(pending.outstanding(), 0);
    }

    #[test]
    fn a_second_read_hands_its_own_bytes_over_whole_or_in_parts() {
        let dir = tempfile::tempdir().unwrap();
        let len = 6 * GRANULE + 100;
        let bytes = data(len);
        let a = entry(dir.path(), len);
        let refill: Arc<dyn Refill> = Arc::new(Fixed);
        let pending = Pending::new(1 << 30);
        // Epoch 1: everything is wanted, nothing handed.
        for g in 0..7 {
            let h = read(
                &pending,
                &a,
                &refill,
                &bytes,
                g * GRANULE,
                ((g + 1) * GRANULE).min(len),
            );
            assert!(h.runs.is_empty());
        }
        assert_eq!(pending.count(), 7);
        // Epoch 2, in reads that do not line up with granules: whole
        // granules go at once, cut ones once their parts add up.
        let cuts = [0, GRANULE + 10, 3 * GRANULE + 10, 3 * GRANULE + 20, len];
        let mut handed = BTreeMap::new();
        for w in cuts.windows(2) {
            for (at, run) in read(&pending, &a, &refill, &bytes, w[0], w[1]).runs {
                handed.insert(at, run);
            }
        }
        assert_eq!(pending.count(), 0);
        assert_eq!(pending.outstanding(), 7, "all handed, none written");
        let mut joined = Vec::new();
        for (at, run) in &handed {
            assert_eq!(*at, joined.len() as u64, "runs tile data");
            joined.extend_from_slice(run);
        }
        assert!(joined == bytes, "the handed bytes are the read's bytes");
        // Reads of granules on their way want nothing more.
        assert!(read(&pending, &a, &refill, &bytes, 0, len).runs.is_empty());
        assert_eq!(pending.outstanding(), 7);
        // Once the writer has written them, nothing is on its way.
        for (at, run) in &handed {
            a.write(*at, run).unwrap();
            pending.landed(&a, *at, at + run.len() as u64);
        }
        assert!(a.is_complete());
        assert!(pending.settle(&a, Duration::from_secs(1)));
        assert_eq!(pending.outstanding(), 0);
    }

    #[test]
    fn settle_waits_only_for_granules_on_their_way() {
        let dir = tempfile::tempdir().unwrap();
        let len = 3 * GRANULE;
        let bytes = data(len);
        let a = entry(dir.path(), len);
        let refill: Arc<dyn Refill> = Arc::new(Fixed);
        let pending = Arc::new(Pending::new(1 << 30));
        read(&pending, &a, &refill, &bytes, 0, len);
        // Granule 2 stays wanted: an open does not wait.
        let h = read(&pending, &a, &refill, &bytes, 0, 2 * GRANULE);
        let t = Instant::now();
        assert!(!pending.settle(&a, Duration::from_secs(5)));
        assert!(t.elapsed() < Duration::from_secs(1));
        // Once it is handed too, the open waits until the writer lands it.
        let last = read(&pending, &a, &refill, &bytes, 2 * GRANULE, len);
        let runs: Vec<_> = h.runs.into_iter().chain(last.runs).collect();
        let writer = std::thread::spawn({
            let (a, pending) = (a.clone(), pending.clone());
            move || {
                std::thread::sleep(Duration::from_millis(100));
                for (at, run) in runs {
                    a.write(at, &run).unwrap();
                    pending.landed(&a, at, at + run.len() as u64);
                }
            }
        });
        let t = Instant::now();
        assert!(pending.settle(&a, Duration::from_secs(5)));
        assert!(t.elapsed() >= Duration::from_millis(90));
        writer.join().unwrap();
        let mut back = vec![0; len as usize];
        a.read_at(0, &mut back).unwrap();
        assert!(back == bytes);
    }

    #[test]
    fn partials_past_the_bound_go_back_to_wanted() {
        let dir = tempfile::tempdir().unwrap();
        let granules = PARTIALS_MAX + 4;
        let len = granules * GRANULE;
        let bytes = data(len);
        let a = entry(dir.path(), len);
        let refill: Arc<dyn Refill> = Arc::new(Fixed);
        let pending = Pending::new(1 << 30);
        read(&pending, &a, &refill, &bytes, 0, len);
        // A re-read of the first half of every granule.
        for g in 0..granules {
            let h = read(
                &pending,
                &a,
                &refill,
                &bytes,
                g * GRANULE,
                g * GRANULE + GRANULE / 2,
            );
            assert!(h.runs.is_empty());
        }
        assert_eq!(pending.count(), 4, "the 4 oldest parts went back");
        assert_eq!(pending.outstanding(), granules);
        pending.unpart_all();
        assert_eq!(pending.count(), granules);
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
        let len = 2 * GRANULE;
        let a = entry(dir.path(), len);
        a.write(0, &vec![1; GRANULE as usize]).unwrap();
        let refill: Arc<dyn Refill> = Arc::new(Changed);
        let pending = Pending::new(1 << 30);
        read(&pending, &a, &refill, &data(len), 0, len);
        assert_eq!(pending.count(), 1, "granule 0 is whole already");
        let run = pending.take(1 << 30).unwrap();
        assert_eq!((run.start, run.end), (GRANULE, 2 * GRANULE));
        assert!(!run.still_current());
    }
}
