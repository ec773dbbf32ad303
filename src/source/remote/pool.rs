//! The bytes a connection holds for reads to come: spans fetched by small
//! reads, and ranges fetched ahead on [`will_need`](crate::format::ByteSource::will_need)
//! hints, whether still in flight or arrived.
//!
//! One pool per connection, so every source opened through it shares one
//! byte budget: bytes held plus bytes in flight never exceed it. A hint
//! that does not fit (after evicting the least recently used arrived
//! bytes) is dropped, never waited for; prefetch hints never evict hinted
//! bytes not read yet (only a read under way may). A read that finds its
//! bytes in flight waits for that GET instead of sending a second one.
//!
//! [`Ledger`] is the bookkeeping alone (which GETs a hint starts, what a
//! read finds, what is evicted), free of threads and network so it can be
//! tested directly; [`Pool`] puts it behind a lock with a condition
//! variable for the readers that wait.

use parking_lot::{Condvar, Mutex};
use std::collections::BTreeMap;
use std::ops::Range;
use std::time::Instant;

use bytes::Bytes;

use super::error::RemoteError;

/// Where one range of one source stands.
#[derive(Debug)]
enum State {
    /// A GET is on its way.
    InFlight,
    /// The bytes arrived.
    Ready(Bytes),
    /// The GET failed: the next read that finds it gets the error.
    Failed(RemoteError),
}

#[derive(Debug)]
struct Entry {
    end: u64,
    state: State,
    /// Last use, as a [`Ledger`] tick (the key of its place in `lru`).
    used: u64,
    /// Fetched on a hint (a read of it counts as a hint hit).
    hinted: bool,
    /// Read at least once since it arrived.
    read: bool,
}

/// What a read found in the pool.
#[derive(Debug)]
pub(crate) enum PoolLookup {
    /// All its bytes; `hinted` when some came from a hint.
    Hit { bytes: Bytes, hinted: bool },
    /// Some of its bytes are still in flight.
    Wait,
    /// A GET it would have used failed.
    Failed(RemoteError),
    /// Not all there: the read fetches for itself.
    Miss,
}

/// The pool's bookkeeping: entries keyed by (source id, start), never
/// overlapping within one source.
#[derive(Debug)]
pub(crate) struct Ledger {
    budget: u64,
    /// Largest GET one hint starts (larger ranges are split).
    part: u64,
    /// Hint GETs in flight at most (hints beyond are dropped).
    max_gets: usize,
    entries: BTreeMap<(u64, u64), Entry>,
    /// Entries that are not in flight, by last use: eviction order.
    lru: BTreeMap<u64, (u64, u64)>,
    tick: u64,
    /// Bytes of arrived (or failed, 0) entries.
    pub(crate) held: u64,
    /// Bytes of hint GETs in flight, entries of forgotten sources included.
    pub(crate) inflight: u64,
    /// Hint GETs in flight.
    pub(crate) gets: usize,
}

impl Ledger {
    /// An empty ledger of `budget` bytes, hint GETs of at most `part`
    /// bytes, at most `max_gets` of them in flight.
    pub(crate) fn new(budget: u64, part: u64, max_gets: usize) -> Ledger {
        Ledger {
            budget,
            part: part.max(1),
            max_gets,
            entries: BTreeMap::new(),
            lru: BTreeMap::new(),
            tick: 0,
            held: 0,
            inflight: 0,
            gets: 0,
        }
    }

    /// The budget in bytes.
    #[cfg(test)]
    pub(crate) fn budget(&self) -> u64 {
        self.budget
    }

    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    /// Mark entry `key` as just used.
    fn touch(&mut self, key: (u64, u64)) {
        let tick = self.next_tick();
        if let Some(e) = self.entries.get_mut(&key) {
            if !matches!(e.state, State::InFlight) {
                self.lru.remove(&e.used);
                self.lru.insert(tick, key);
            }
            e.used = tick;
        }
    }

    fn remove(&mut self, key: (u64, u64)) -> Option<Entry> {
        let e = self.entries.remove(&key)?;
        match &e.state {
            State::InFlight => {}
            State::Ready(b) => {
                self.held -= b.len() as u64;
                self.lru.remove(&e.used);
            }
            State::Failed(_) => {
                self.lru.remove(&e.used);
            }
        }
        Some(e)
    }

    /// Evict arrived entries, least recently used first, until `need` more
    /// bytes fit (sparing hinted bytes not read yet when `spare_unread`);
    /// false when they cannot.
    fn make_room(&mut self, need: u64, spare_unread: bool) -> bool {
        if self.held + self.inflight + need <= self.budget {
            return true;
        }
        let evictable = self.held
            - if spare_unread {
                self.unread_hinted()
            } else {
                0
            };
        if self.held + self.inflight + need > self.budget + evictable {
            return false;
        }
        let victims: Vec<(u64, (u64, u64))> = self
            .lru
            .iter()
            .filter(|(_, key)| {
                !spare_unread || self.entries.get(key).is_none_or(|e| e.read || !e.hinted)
            })
            .map(|(t, k)| (*t, *k))
            .collect();
        for (tick, key) in victims {
            if self.held + self.inflight + need <= self.budget {
                break;
            }
            self.lru.remove(&tick);
            if let Some(e) = self.entries.remove(&key) {
                if let State::Ready(b) = &e.state {
                    self.held -= b.len() as u64;
                }
            }
        }
        self.held + self.inflight + need <= self.budget
    }

    /// Bytes of arrived hinted entries not read yet.
    fn unread_hinted(&self) -> u64 {
        self.entries
            .values()
            .filter(|e| e.hinted && !e.read)
            .map(|e| {
                if let State::Ready(b) = &e.state {
                    b.len() as u64
                } else {
                    0
                }
            })
            .sum()
    }

    /// The entries of `src` overlapping `range`, in order.
    fn overlapping(&self, src: u64, range: &Range<u64>) -> Vec<((u64, u64), u64)> {
        let mut out = Vec::new();
        if let Some((&key, e)) = self
            .entries
            .range((src, 0)..=(src, range.start))
            .next_back()
        {
            if e.end > range.start {
                out.push((key, e.end));
            }
        }
        if range.start < u64::MAX {
            for (&key, e) in self.entries.range((src, range.start + 1)..(src, range.end)) {
                out.push((key, e.end));
            }
        }
        out
    }

    /// A hint: the parts of `ranges` (of source `src`) not already held or
    /// in flight, neighbours closer than `gap` merged, cut in GETs of at
    /// most `part` bytes, admitted in order while they fit the budget and
    /// the GET limit (the rest is dropped; an `urgent` plan, for a read under
    /// way, ignores the GET limit). Each admitted range is now in flight:
    /// the caller starts its GET and reports with [`Self::complete`].
    pub(crate) fn plan(
        &mut self,
        src: u64,
        ranges: &[Range<u64>],
        gap: u64,
        urgent: bool,
    ) -> (Vec<Range<u64>>, usize) {
        let mut sorted: Vec<Range<u64>> =
            ranges.iter().filter(|r| r.start < r.end).cloned().collect();
        sorted.sort_by_key(|r| r.start);
        let mut merged: Vec<Range<u64>> = Vec::new();
        for r in sorted {
            match merged.last_mut() {
                Some(m) if r.start <= m.end.saturating_add(gap) => m.end = m.end.max(r.end),
                _ => merged.push(r),
            }
        }
        // Subtract what is held or in flight (and keep it from eviction).
        let mut missing = Vec::new();
        for m in merged {
            let mut at = m.start;
            for (key, end) in self.overlapping(src, &m) {
                if key.1 > at {
                    missing.push(at..key.1.min(m.end));
                }
                at = at.max(end);
                self.touch(key);
            }
            if at < m.end {
                missing.push(at..m.end);
            }
        }
        let mut admitted = Vec::new();
        let mut dropped = 0;
        let parts = missing.into_iter().flat_map(|r| {
            let part = self.part;
            (0..(r.end - r.start).div_ceil(part))
                .map(move |i| r.start + i * part..(r.start + (i + 1) * part).min(r.end))
        });
        let parts: Vec<Range<u64>> = parts.collect();
        for p in parts {
            let len = p.end - p.start;
            if dropped > 0
                || (self.gets >= self.max_gets && !urgent)
                || !self.make_room(len, !urgent)
            {
                dropped += 1;
                continue;
            }
            let tick = self.next_tick();
            self.entries.insert(
                (src, p.start),
                Entry {
                    end: p.end,
                    state: State::InFlight,
                    used: tick,
                    hinted: true,
                    read: false,
                },
            );
            self.inflight += len;
            self.gets += 1;
            admitted.push(p);
        }
        (admitted, dropped)
    }

    /// The GET of `range` (admitted by [`Self::plan`] for `src`) ended.
    pub(crate) fn complete(
        &mut self,
        src: u64,
        range: Range<u64>,
        answer: Result<Bytes, RemoteError>,
    ) {
        self.inflight = self.inflight.saturating_sub(range.end - range.start);
        self.gets = self.gets.saturating_sub(1);
        let key = (src, range.start);
        let tick = self.next_tick();
        let Some(e) = self.entries.get_mut(&key) else {
            return;
        };
        if !matches!(e.state, State::InFlight) || e.end != range.end {
            return;
        }
        e.state = match answer {
            Ok(bytes) if bytes.len() as u64 == range.end - range.start => {
                self.held += bytes.len() as u64;
                State::Ready(bytes)
            }
            Ok(bytes) => State::Failed(RemoteError::WrongLength {
                url: String::new(),
                start: range.start,
                end: range.end,
                got: bytes.len() as u64,
            }),
            Err(err) => State::Failed(err),
        };
        e.used = tick;
        self.lru.insert(tick, key);
    }

    /// What a read of `range` of `src` finds. A failure found is taken out
    /// (the next read fetches for itself).
    pub(crate) fn lookup(&mut self, src: u64, range: &Range<u64>) -> PoolLookup {
        if range.start >= range.end {
            return PoolLookup::Miss;
        }
        let chain = self.overlapping(src, range);
        let mut at = range.start;
        for &(key, end) in &chain {
            if key.1 > at {
                return PoolLookup::Miss;
            }
            at = end;
        }
        if at < range.end || chain.is_empty() {
            return PoolLookup::Miss;
        }
        let mut wait = false;
        for &(key, _) in &chain {
            match self.entries.get(&key).map(|e| &e.state) {
                Some(State::Failed(_)) => {
                    if let Some(Entry {
                        state: State::Failed(err),
                        ..
                    }) = self.remove(key)
                    {
                        return PoolLookup::Failed(err);
                    }
                }
                Some(State::InFlight) => wait = true,
                Some(State::Ready(_)) => {}
                None => return PoolLookup::Miss,
            }
        }
        if wait {
            return PoolLookup::Wait;
        }
        let mut hinted = false;
        let mut pieces = Vec::with_capacity(chain.len());
        for &(key, _) in &chain {
            self.touch(key);
            let Some(e) = self.entries.get_mut(&key) else {
                return PoolLookup::Miss;
            };
            e.read = true;
            hinted |= e.hinted;
            if let State::Ready(b) = &e.state {
                let from = range.start.max(key.1) - key.1;
                let to = range.end.min(e.end) - key.1;
                pieces.push(b.slice(from as usize..to as usize));
            }
        }
        let bytes = if pieces.len() == 1 {
            pieces.pop().unwrap_or_default()
        } else {
            Bytes::from(pieces.concat())
        };
        PoolLookup::Hit { bytes, hinted }
    }

    /// Keep `bytes` (fetched at `start` of `src` by a read) for later reads
    /// if they fit, evicting older ones; skipped when they overlap bytes
    /// already there.
    pub(crate) fn keep(&mut self, src: u64, start: u64, bytes: Bytes) {
        let len = bytes.len() as u64;
        let range = start..start.saturating_add(len);
        if len == 0
            || len > self.budget / 2
            || !self.overlapping(src, &range).is_empty()
            || !self.make_room(len, true)
        {
            return;
        }
        let tick = self.next_tick();
        self.held += len;
        self.entries.insert(
            (src, start),
            Entry {
                end: range.end,
                state: State::Ready(bytes),
                used: tick,
                hinted: false,
                read: false,
            },
        );
        self.lru.insert(tick, (src, start));
    }

    /// Drop everything of `src` (its source is gone); GETs in flight stay
    /// counted until they end.
    pub(crate) fn forget(&mut self, src: u64) {
        let keys: Vec<(u64, u64)> = self
            .entries
            .range((src, 0)..=(src, u64::MAX))
            .map(|(k, _)| *k)
            .collect();
        for key in keys {
            self.remove(key);
        }
    }
}

/// A [`Ledger`] behind a lock, with readers waiting for GETs in flight.
#[derive(Debug)]
pub(crate) struct Pool {
    ledger: Mutex<Ledger>,
    arrived: Condvar,
}

impl Pool {
    /// A pool of `budget` bytes (see [`Ledger::new`]).
    pub(crate) fn new(budget: u64, part: u64, max_gets: usize) -> Pool {
        Pool {
            ledger: Mutex::new(Ledger::new(budget, part, max_gets)),
            arrived: Condvar::new(),
        }
    }

    /// Run `f` on the ledger.
    pub(crate) fn with<T>(&self, f: impl FnOnce(&mut Ledger) -> T) -> T {
        f(&mut self.ledger.lock())
    }

    /// [`Ledger::complete`], waking the readers that wait.
    pub(crate) fn complete(&self, src: u64, range: Range<u64>, answer: Result<Bytes, RemoteError>) {
        self.with(|l| l.complete(src, range, answer));
        self.arrived.notify_all();
    }

    /// What a read of `range` finds, waiting (until `deadline`) for bytes
    /// in flight; `None` when the deadline passed first.
    pub(crate) fn find(
        &self,
        src: u64,
        range: &Range<u64>,
        deadline: Instant,
    ) -> Option<PoolLookup> {
        let mut ledger = self.ledger.lock();
        loop {
            match ledger.lookup(src, range) {
                PoolLookup::Wait => {
                    let left = deadline.checked_duration_since(Instant::now())?;
                    self.arrived.wait_for(&mut ledger, left);
                }
                other => return Some(other),
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::single_range_in_vec_init)] // a list of one range is the ledger's input here
mod tests {
    use super::*;

    fn bytes(range: Range<u64>) -> Bytes {
        Bytes::from(
            (range.start..range.end)
                .map(|i| i as u8)
                .collect::<Vec<u8>>(),
        )
    }

    fn hit(l: &mut Ledger, src: u64, range: Range<u64>) -> (Bytes, bool) {
        match l.lookup(src, &range) {
            PoolLookup::Hit { bytes, hinted } => (bytes, hinted),
            other => panic!("{range:?}: {other:?}"),
        }
    }

    #[test]
    fn hints_fetch_only_what_is_missing_merged_and_cut_in_parts() {
        let mut l = Ledger::new(1 << 20, 1000, 8);
        l.keep(1, 0, bytes(0..500));
        // Neighbours 10 bytes apart merge; what is held is not fetched again.
        let (got, dropped) = l.plan(1, &[300..1200, 1210..1500, 5000..5100], 64, false);
        assert_eq!(got, vec![500..1500, 5000..5100]);
        assert_eq!(dropped, 0);
        assert_eq!((l.inflight, l.gets), (1100, 2));
        // Asked again while in flight: nothing new.
        assert_eq!(
            l.plan(1, &[600..700], 64, false).0,
            Vec::<Range<u64>>::new()
        );
        // Another source's ranges are its own.
        assert_eq!(
            l.plan(2, &[600..2700], 0, false).0,
            vec![600..1600, 1600..2600, 2600..2700]
        );
        assert_eq!((l.inflight, l.gets), (3200, 5));
    }

    #[test]
    fn reads_wait_for_bytes_in_flight_and_span_neighbouring_entries() {
        let mut l = Ledger::new(1 << 20, 100, 8);
        let (parts, _) = l.plan(1, &[1000..1250], 0, false);
        assert_eq!(parts, vec![1000..1100, 1100..1200, 1200..1250]);
        assert!(matches!(l.lookup(1, &(1050..1150)), PoolLookup::Wait));
        assert!(
            matches!(l.lookup(1, &(900..1050)), PoolLookup::Miss),
            "not all covered"
        );
        assert!(
            matches!(l.lookup(2, &(1050..1060)), PoolLookup::Miss),
            "another source"
        );
        l.complete(1, 1000..1100, Ok(bytes(1000..1100)));
        l.complete(1, 1100..1200, Ok(bytes(1100..1200)));
        assert!(
            matches!(l.lookup(1, &(1150..1210)), PoolLookup::Wait),
            "1200.. still in flight"
        );
        let (b, hinted) = hit(&mut l, 1, 1050..1150);
        assert_eq!(b, bytes(1050..1150));
        assert!(hinted);
        l.complete(
            1,
            1200..1250,
            Err(RemoteError::Timeout {
                url: "u".into(),
                after: std::time::Duration::from_secs(1),
            }),
        );
        assert!(matches!(
            l.lookup(1, &(1190..1210)),
            PoolLookup::Failed(RemoteError::Timeout { .. })
        ));
        assert!(
            matches!(l.lookup(1, &(1190..1210)), PoolLookup::Miss),
            "a failure is reported once"
        );
        assert_eq!((l.held, l.inflight, l.gets), (200, 0, 0));
        // A short answer is a failure, never bytes.
        l.plan(1, &[5000..5010], 0, false);
        l.complete(1, 5000..5010, Ok(bytes(5000..5005)));
        assert!(matches!(
            l.lookup(1, &(5000..5001)),
            PoolLookup::Failed(RemoteError::WrongLength { .. })
        ));
    }

    #[test]
    fn the_budget_holds_bytes_held_and_in_flight_and_full_budgets_drop_hints() {
        let mut l = Ledger::new(1000, 300, 8);
        let (parts, dropped) = l.plan(1, &[0..1200], 0, false);
        assert_eq!(parts, vec![0..300, 300..600, 600..900]);
        assert_eq!(dropped, 1, "the fourth part does not fit");
        assert_eq!(l.inflight, 900);
        // Nothing arrived yet: nothing can be evicted, the hint is dropped.
        assert_eq!(l.plan(1, &[5000..5200], 0, false), (vec![], 1));
        l.complete(1, 0..300, Ok(bytes(0..300)));
        l.complete(1, 300..600, Ok(bytes(300..600)));
        hit(&mut l, 1, 0..10);
        // Room is made by evicting arrived bytes already read (0..300); the
        // prefetched 300..600, not read yet, stays.
        assert_eq!(l.plan(1, &[5000..5200], 0, false).0, vec![5000..5200]);
        assert!(l.held + l.inflight <= l.budget());
        assert!(matches!(l.lookup(1, &(0..10)), PoolLookup::Miss));
        hit(&mut l, 1, 300..310);
        // Spans kept by reads obey the same budget; too large ones are not kept.
        l.keep(2, 0, bytes(0..600));
        assert!(matches!(l.lookup(2, &(0..1)), PoolLookup::Miss));
        l.keep(2, 0, bytes(0..100));
        assert!(!hit(&mut l, 2, 0..100).1);
        assert!(l.held + l.inflight <= l.budget());
    }

    #[test]
    fn prefetch_never_evicts_bytes_not_read_yet_a_read_under_way_may() {
        let mut l = Ledger::new(1000, 500, 8);
        assert_eq!(l.plan(1, &[0..1000], 0, false).0, vec![0..500, 500..1000]);
        l.complete(1, 0..500, Ok(bytes(0..500)));
        l.complete(1, 500..1000, Ok(bytes(500..1000)));
        assert_eq!(l.plan(1, &[2000..2100], 0, false), (vec![], 1));
        assert_eq!(l.plan(1, &[2000..2100], 0, true), (vec![2000..2100], 0));
        assert!(
            matches!(l.lookup(1, &(0..10)), PoolLookup::Miss),
            "the least recently used part went"
        );
        hit(&mut l, 1, 500..510);
        assert!(l.held + l.inflight <= l.budget());
    }

    #[test]
    fn the_get_limit_drops_hints_and_forgotten_sources_free_their_bytes() {
        let mut l = Ledger::new(1 << 20, 10, 2);
        let (parts, dropped) = l.plan(1, &[0..50], 0, false);
        assert_eq!((parts.len(), dropped), (2, 3));
        // A read under way is not held back by the GET limit.
        assert_eq!(l.plan(1, &[100..110], 0, true), (vec![100..110], 0));
        l.complete(1, 100..110, Ok(bytes(100..110)));
        l.complete(1, 0..10, Ok(bytes(0..10)));
        l.forget(1);
        assert_eq!((l.held, l.inflight, l.gets), (0, 10, 1));
        // The GET of a forgotten source ends: counted out, nothing kept.
        l.complete(1, 10..20, Ok(bytes(10..20)));
        assert_eq!((l.held, l.inflight, l.gets), (0, 0, 0));
        assert!(matches!(l.lookup(1, &(10..20)), PoolLookup::Miss));
    }
}
