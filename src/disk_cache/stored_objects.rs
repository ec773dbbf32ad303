//! The remote tier: remote objects' stored bytes, as the store holds them
//! and sent them (still encoded: a frame's compressed bytes, by object and
//! range), kept on local disk, so a remount, or a second pass over the same
//! objects, reads them from a plain file instead of the network while the
//! object's version is unchanged.
//!
//! [`CachedObject`] wraps any [`ByteSource`] whose reads are round trips. A
//! range whose 128 KiB granules are all whole in the entry is read from the
//! entry's file; otherwise the range, rounded out to granule boundaries
//! (clamped to the object's end), is fetched from the source under it and
//! offered to the cache, so every fetched byte lands in whole granules that
//! a later read can use. Hints ([`ByteSource::will_need`]) are forwarded
//! for the ranges not already whole, rounded the same way, so the reads
//! that follow find the hinted bytes instead of fetching them twice.
//!
//! The entry is keyed by the object's description (its redacted URL) and
//! the identity text the caller gives (its ETag or version and size): a
//! rewritten object lands in a new entry and is never served the old
//! one's bytes. The key text starts with [`NAMESPACE`], so it can never be
//! the key of a decoded `data` entry. Validating the identity (a listing,
//! one HEAD per attribute TTL) is the caller's business: this module
//! depends on nothing but the format layer's [`ByteSource`].

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use super::map::GRANULE;
use super::{DiskCache, DiskStats, Entry};
use crate::format::byte_source::{range_len, ByteSource, Need, Pin, Version};
use crate::format::PResult;

/// Spans fetched lately that are kept in memory (until the writer has
/// written them, a read touching the same granules, like the next chunk
/// sharing a granule with this one, would otherwise fetch them again).
const RECENT_SPANS: usize = 4;

/// Bytes those spans hold at most per object (a longer span is not kept).
const RECENT_BYTES: usize = 8 << 20;

/// Bytes the recent spans of every object of a mount hold at most: past
/// it, an object keeps no new span (an idle object's spans are let go once
/// the cache file has them).
pub const RECENT_TOTAL: usize = 64 << 20;

/// A span fetched from the source under a [`CachedObject`], in memory.
type Span = (Range<u64>, Arc<Vec<u8>>);

/// First line of every remote entry's identity text.
pub const NAMESPACE: &str = "remote object";

/// The identity text of the object `described` (its redacted URL) in the
/// state `version` names (an ETag, a version id or a modification time,
/// with the size).
pub fn identity(described: &str, version: &str) -> String {
    format!("{NAMESPACE}\n{described}\n{version}")
}

/// `range` rounded out to granule boundaries, the end clamped to `len`.
pub fn granules(range: &Range<u64>, len: u64) -> Range<u64> {
    let start = range.start / GRANULE * GRANULE;
    let end = range
        .end
        .div_ceil(GRANULE)
        .saturating_mul(GRANULE)
        .min(len)
        .max(range.end);
    start..end
}

/// Sorted ranges with the overlapping and touching ones merged.
pub fn merged(mut ranges: Vec<Range<u64>>) -> Vec<Range<u64>> {
    ranges.sort_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// A remote object read through the disk cache.
#[derive(Debug)]
pub struct CachedObject {
    cache: Arc<DiskCache>,
    /// The entry read and filled; replaced by a fresh one once, when bytes
    /// read through this source did not decode ([`ByteSource::distrust`]);
    /// `None` when the cache could not make that one.
    entry: parking_lot::RwLock<Option<Arc<Entry>>>,
    /// The identity text the entry is keyed by (for the fresh one).
    identity: String,
    /// Whether the entry was dropped once already.
    healed: std::sync::atomic::AtomicBool,
    inner: Arc<dyn ByteSource>,
    /// Granules offered to the writer by this source (one bit each), so
    /// bytes read again before the writer got to them are not queued twice.
    offered: Mutex<Vec<u64>>,
    /// The last spans fetched ([`RECENT_SPANS`], [`RECENT_BYTES`]).
    recent: Mutex<VecDeque<Span>>,
    /// Granules being fetched now, so two readers missing the same granule
    /// (a read and the prefetcher) fetch it once: the second waits.
    fetching: Mutex<std::collections::BTreeSet<u64>>,
    fetched: Condvar,
}

/// Longest a reader waits for another's fetch of a granule it needs before
/// fetching it itself.
const FETCH_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

impl CachedObject {
    /// `inner` read through `cache`, in the entry of the object state
    /// `version` names (see [`identity`]); `None` when it cannot be cached
    /// (empty, larger than the budget, the cache failed).
    pub fn new(
        cache: Arc<DiskCache>,
        inner: Arc<dyn ByteSource>,
        version: &str,
    ) -> Option<CachedObject> {
        let identity = identity(&inner.describe(), version);
        let entry = cache.entry(&identity, inner.len())?;
        Some(CachedObject {
            cache,
            entry: parking_lot::RwLock::new(Some(entry)),
            identity,
            healed: Default::default(),
            offered: Mutex::new(vec![0; inner.len().div_ceil(GRANULE).div_ceil(64) as usize]),
            recent: Mutex::new(VecDeque::new()),
            fetching: Mutex::new(Default::default()),
            fetched: Condvar::new(),
            inner,
        })
    }

    /// Whether every byte of `range` is whole in the cache.
    pub fn covers(&self, range: &Range<u64>) -> bool {
        match &*self.entry.read() {
            Some(entry) => range.end <= entry.len() && entry.covers(range.start, range.end),
            None => false,
        }
    }

    /// `bytes` read at `offset` from the source under this one: the whole
    /// granules among them neither whole in the cache nor offered before
    /// are queued for writing (waiting for room rather than dropping them).
    pub fn keep(&self, offset: u64, bytes: &[u8]) {
        let Some(entry) = self.entry.read().clone() else {
            return;
        };
        for run in self.unoffered(offset, bytes.len() as u64) {
            let from = (run.start - offset) as usize;
            let to = (run.end - offset) as usize;
            self.count_fill(1, run.end - run.start);
            self.cache.offer(&entry, run.start, &bytes[from..to], true);
        }
    }

    /// The runs of whole granules among `n` bytes at `offset` that are not
    /// whole in the cache and were not offered yet, now marked offered.
    fn unoffered(&self, offset: u64, n: u64) -> Vec<Range<u64>> {
        let len = self.inner.len();
        let end = offset.saturating_add(n).min(len);
        let first = offset.div_ceil(GRANULE);
        let last = if end == len {
            end.div_ceil(GRANULE)
        } else {
            end / GRANULE
        };
        let mut offered = self.offered.lock();
        let mut runs: Vec<Range<u64>> = Vec::new();
        for g in first..last {
            let (word, bit) = ((g / 64) as usize, 1u64 << (g % 64));
            let granule = g * GRANULE..((g + 1) * GRANULE).min(len);
            let Some(w) = offered.get_mut(word) else {
                break;
            };
            if *w & bit != 0 || self.covers(&granule) {
                continue;
            }
            *w |= bit;
            match runs.last_mut() {
                Some(run) if run.end == granule.start => run.end = granule.end,
                _ => runs.push(granule),
            }
        }
        runs
    }

    /// Fill `buf` from the cache file when all of its bytes are whole there.
    fn read_cached(&self, offset: u64, buf: &mut [u8]) -> bool {
        let end = offset.saturating_add(buf.len() as u64);
        if buf.is_empty() || !self.covers(&(offset..end)) {
            return false;
        }
        let stats = self.cache.stats();
        let Some(entry) = self.entry.read().clone() else {
            return false;
        };
        match entry.read_at(offset, buf) {
            Ok(()) => {
                DiskStats::add(&stats.remote_hits, 1);
                DiskStats::add(&stats.remote_hit_bytes, buf.len() as u64);
                true
            }
            Err(e) => {
                DiskStats::add(&stats.errors, 1);
                log::warn!(
                    "disk cache: reading {} for {}: {e}",
                    entry.key().name(),
                    self.inner.describe()
                );
                false
            }
        }
    }

    /// Whether `range` lies inside the object (else the source under this
    /// one answers, with its error).
    fn inside(&self, range: &Range<u64>) -> bool {
        range.start < range.end && range.end <= self.inner.len()
    }

    /// Count `n` bytes offered to the cache in `fills` runs.
    fn count_fill(&self, fills: u64, n: u64) {
        let stats = self.cache.stats();
        DiskStats::add(&stats.remote_fills, fills);
        DiskStats::add(&stats.remote_fill_bytes, n);
    }

    /// The granules of `range` (already granule-aligned, or ending at the
    /// object's end) neither whole in the cache nor inside a `recent`
    /// span, neighbours merged.
    fn holes(&self, range: &Range<u64>, recent: &[Span]) -> Vec<Range<u64>> {
        let len = self.inner.len();
        let mut out: Vec<Range<u64>> = Vec::new();
        for g in range.start / GRANULE..range.end.div_ceil(GRANULE) {
            let granule =
                (g * GRANULE).max(range.start)..((g + 1) * GRANULE).min(range.end).min(len);
            let in_memory = recent
                .iter()
                .any(|(s, _)| s.start <= granule.start && granule.end <= s.end);
            if in_memory || self.covers(&granule) {
                continue;
            }
            match out.last_mut() {
                Some(last) if last.end == granule.start => last.end = granule.end,
                _ => out.push(granule),
            }
        }
        out
    }

    /// Fill `buf` (the bytes at `offset`) from `fetched` (spans just or
    /// lately read from the source under this one) and, between them, from the cache
    /// file (else from the source, if the file cannot be read).
    fn assemble(&self, offset: u64, buf: &mut [u8], fetched: &[Span]) -> PResult<()> {
        let end = offset + buf.len() as u64;
        let mut pos = offset;
        while pos < end {
            let at = (pos - offset) as usize;
            if let Some((span, bytes)) = fetched.iter().find(|(s, _)| s.start <= pos && pos < s.end)
            {
                let upto = span.end.min(end);
                let from = (pos - span.start) as usize;
                let n = (upto - pos) as usize;
                buf[at..at + n].copy_from_slice(&bytes[from..from + n]);
                pos = upto;
                continue;
            }
            let upto = fetched
                .iter()
                .map(|(s, _)| s.start)
                .filter(|&s| s > pos)
                .min()
                .unwrap_or(end)
                .min(end);
            let part = &mut buf[at..at + (upto - pos) as usize];
            if !self.read_cached(pos, part) {
                self.inner.read_needed(pos, part)?;
            }
            pos = upto;
        }
        Ok(())
    }

    /// A read of `buf.len()` bytes at `offset` that the cache cannot answer
    /// whole: the granules around it not in the cache are fetched (one run
    /// through `fetch`, several in one [`ByteSource::read_ranges`]), kept,
    /// and the read is put together from them and the cache file.
    fn fill(
        &self,
        offset: u64,
        buf: &mut [u8],
        fetch: impl FnOnce(u64, &mut [u8]) -> PResult<()>,
    ) -> PResult<()> {
        let range = granules(&(offset..offset + buf.len() as u64), self.inner.len());
        let spans = self.fetch_holes(
            |recent| self.holes(&range, recent),
            |holes| match holes {
                [one] => {
                    let mut whole = vec![0u8; range_len(one)?];
                    fetch(one.start, &mut whole)?;
                    Ok(vec![whole])
                }
                _ => self.inner.read_ranges(holes),
            },
        )?;
        self.assemble(offset, buf, &spans)
    }

    /// Fetch the holes `holes_of` finds (given the recent spans) with
    /// `fetch`, once: granules another reader is fetching now are waited
    /// for (then found among the recent spans or in the cache), never
    /// fetched twice at once. Answers what was fetched and the recent spans.
    fn fetch_holes(
        &self,
        holes_of: impl Fn(&[Span]) -> Vec<Range<u64>>,
        fetch: impl FnOnce(&[Range<u64>]) -> PResult<Vec<Vec<u8>>>,
    ) -> PResult<Vec<Span>> {
        let deadline = std::time::Instant::now() + FETCH_WAIT;
        let (recent, holes) = loop {
            let recent = self.recent();
            let holes = holes_of(&recent);
            let mut fetching = self.fetching.lock();
            let busy = holes
                .iter()
                .flat_map(|h| h.start / GRANULE..h.end.div_ceil(GRANULE))
                .any(|g| fetching.contains(&g));
            if busy && std::time::Instant::now() < deadline {
                self.fetched.wait_until(&mut fetching, deadline);
                continue;
            }
            for h in &holes {
                fetching.extend(h.start / GRANULE..h.end.div_ceil(GRANULE));
            }
            break (recent, holes);
        };
        if holes.is_empty() {
            return Ok(recent);
        }
        let answers = fetch(&holes);
        let fetched = answers.map(|answers| self.kept(&holes, answers));
        let mut fetching = self.fetching.lock();
        for h in &holes {
            for g in h.start / GRANULE..h.end.div_ceil(GRANULE) {
                fetching.remove(&g);
            }
        }
        self.fetched.notify_all();
        drop(fetching);
        Ok([fetched?, recent].concat())
    }

    /// `buf.len()` bytes at `offset`: from the cache file when whole there,
    /// else filled ([`Self::fill`]) with `read` of the source under this
    /// one; a range outside the object goes to that source (its error).
    fn read_through(
        &self,
        offset: u64,
        buf: &mut [u8],
        read: impl Fn(&dyn ByteSource, u64, &mut [u8]) -> PResult<()>,
    ) -> PResult<()> {
        let end = offset.saturating_add(buf.len() as u64);
        if !self.inside(&(offset..end)) {
            return read(&*self.inner, offset, buf);
        }
        if self.read_cached(offset, buf) {
            return Ok(());
        }
        self.fill(offset, buf, |at, out| read(&*self.inner, at, out))
    }

    /// The spans fetched lately, oldest first; those the cache file holds
    /// by now are let go.
    fn recent(&self) -> Vec<Span> {
        let mut recent = self.recent.lock();
        let before = recent.len();
        let mut freed = 0;
        recent.retain(|(span, bytes)| {
            let written = self.covers(span);
            if written {
                freed += bytes.len();
            }
            !written
        });
        if recent.len() != before {
            self.cache.remote_recent_bytes.fetch_sub(freed, Relaxed);
        }
        recent.iter().cloned().collect()
    }

    /// `answers` (one per range of `spans`) were fetched: kept in the cache
    /// and among the recent spans (within [`RECENT_SPANS`],
    /// [`RECENT_BYTES`] and the mount's [`RECENT_TOTAL`]); answered as
    /// spans.
    fn kept(&self, spans: &[Range<u64>], answers: Vec<Vec<u8>>) -> Vec<Span> {
        let fetched: Vec<Span> = spans
            .iter()
            .cloned()
            .zip(answers.into_iter().map(Arc::new))
            .collect();
        for (span, bytes) in &fetched {
            self.keep(span.start, bytes);
        }
        let total = &self.cache.remote_recent_bytes;
        let mut recent = self.recent.lock();
        for span in fetched.iter().filter(|(_, b)| b.len() <= RECENT_BYTES) {
            recent.push_back(span.clone());
            total.fetch_add(span.1.len(), Relaxed);
        }
        let mut held: usize = recent.iter().map(|(_, b)| b.len()).sum();
        while recent.len() > RECENT_SPANS
            || held > RECENT_BYTES
            || (!recent.is_empty() && total.load(Relaxed) > RECENT_TOTAL)
        {
            if let Some((_, bytes)) = recent.pop_front() {
                held -= bytes.len();
                total.fetch_sub(bytes.len(), Relaxed);
            }
        }
        fetched
    }
}

impl Drop for CachedObject {
    fn drop(&mut self) {
        let held: usize = self.recent.lock().iter().map(|(_, b)| b.len()).sum();
        self.cache.remote_recent_bytes.fetch_sub(held, Relaxed);
    }
}

impl ByteSource for CachedObject {
    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn opened_version(&self) -> Version {
        self.inner.opened_version()
    }

    fn version(&self) -> PResult<Version> {
        self.inner.version()
    }

    /// From the cache file, else the granules around the range through
    /// the source's own [`ByteSource::read_at`] (which may fetch a span).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> PResult<()> {
        self.read_through(offset, buf, |source, at, out| source.read_at(at, out))
    }

    /// From the cache file, else exactly the granules around the range.
    fn read_needed(&self, offset: u64, buf: &mut [u8]) -> PResult<()> {
        self.read_through(offset, buf, |source, at, out| source.read_needed(at, out))
    }

    /// The ranges whole in the cache are read from it; for the others, the
    /// granules around them not in the cache are asked of the source under
    /// this one in one call (neighbours merged).
    fn read_ranges(&self, ranges: &[Range<u64>]) -> PResult<Vec<Vec<u8>>> {
        if ranges.iter().any(|r| r.start > r.end || r.end > self.len()) {
            return self.inner.read_ranges(ranges);
        }
        let mut out: Vec<(Vec<u8>, bool)> = Vec::with_capacity(ranges.len());
        let mut missing = Vec::new();
        for r in ranges {
            let mut buf = vec![0u8; range_len(r)?];
            let done = r.is_empty() || self.read_cached(r.start, &mut buf);
            if !done {
                missing.push(granules(r, self.len()));
            }
            out.push((buf, done));
        }
        let fetched = self.fetch_holes(
            |recent| merged(missing.iter().flat_map(|r| self.holes(r, recent)).collect()),
            |spans| self.inner.read_ranges(spans),
        )?;
        ranges
            .iter()
            .zip(out)
            .map(|(r, (mut buf, done))| {
                if !done {
                    self.assemble(r.start, &mut buf, &fetched)?;
                }
                Ok(buf)
            })
            .collect()
    }

    /// Forwarded for the ranges not whole in the cache, rounded out to
    /// granules (the reads that follow ask for the same rounded ranges).
    fn will_need(&self, ranges: &[Range<u64>], need: Need) {
        let recent = self.recent();
        let wanted: Vec<Range<u64>> = ranges
            .iter()
            .filter(|r| self.inside(r) && !self.covers(r))
            .flat_map(|r| self.holes(&granules(r, self.len()), &recent))
            .collect();
        if !wanted.is_empty() {
            self.inner.will_need(&merged(wanted), need);
        }
    }

    fn takes_hints(&self) -> bool {
        self.inner.takes_hints()
    }

    fn prefetch_hint(&self) -> usize {
        self.inner.prefetch_hint()
    }

    fn may_wait(&self) -> bool {
        self.inner.may_wait()
    }

    fn current(&self) -> PResult<Option<Arc<dyn ByteSource>>> {
        self.inner.current()
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn pin(&self) -> PResult<Option<Pin>> {
        self.inner.pin()
    }

    /// Once: the entry is dropped (removed from the cache folder, counted
    /// in `healed`) and a fresh one takes its place, the spans kept in
    /// memory are let go, so the reads that follow fetch from the store.
    fn distrust(&self) -> bool {
        if self.healed.swap(true, Relaxed) {
            return false;
        }
        let mut entry = self.entry.write();
        if let Some(old) = entry.take() {
            log::warn!(
                "disk cache: bytes of {} did not decode; dropped its entry {}, fetching again",
                self.inner.describe(),
                old.key().name()
            );
            self.cache.discard(&old);
        }
        // None when the cache cannot make one (logged): reads then go to
        // the store.
        *entry = self.cache.entry(&self.identity, self.inner.len());
        drop(entry);
        self.offered.lock().fill(0);
        let freed: usize = self.recent.lock().drain(..).map(|(_, b)| b.len()).sum();
        self.cache.remote_recent_bytes.fetch_sub(freed, Relaxed);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::byte_source::VersionTag;
    use std::sync::atomic::Ordering;

    /// Bytes in memory that log every read asked of them.
    #[derive(Debug)]
    struct Counted {
        bytes: Vec<u8>,
        reads: Mutex<Vec<Range<u64>>>,
        hints: Mutex<Vec<Range<u64>>>,
    }

    impl Counted {
        fn new(bytes: Vec<u8>) -> Arc<Counted> {
            Arc::new(Counted {
                bytes,
                reads: Mutex::new(Vec::new()),
                hints: Mutex::new(Vec::new()),
            })
        }

        fn take(&self) -> Vec<Range<u64>> {
            std::mem::take(&mut *self.reads.lock())
        }
    }

    impl ByteSource for Counted {
        fn len(&self) -> u64 {
            self.bytes.len() as u64
        }
        fn opened_version(&self) -> Version {
            Version {
                len: self.len(),
                tag: VersionTag::Token("etag x".into()),
            }
        }
        fn version(&self) -> PResult<Version> {
            Ok(self.opened_version())
        }
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> PResult<()> {
            let at = offset as usize;
            self.reads.lock().push(offset..offset + buf.len() as u64);
            buf.copy_from_slice(&self.bytes[at..at + buf.len()]);
            Ok(())
        }
        fn read_ranges(&self, ranges: &[Range<u64>]) -> PResult<Vec<Vec<u8>>> {
            self.reads.lock().extend(ranges.iter().cloned());
            Ok(ranges
                .iter()
                .map(|r| self.bytes[r.start as usize..r.end as usize].to_vec())
                .collect())
        }
        fn will_need(&self, ranges: &[Range<u64>], _: Need) {
            self.hints.lock().extend(ranges.iter().cloned());
        }
        fn describe(&self) -> String {
            "mem://object".into()
        }
    }

    const G: u64 = GRANULE;

    fn pattern(len: u64, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| ((i * 7 + u64::from(seed)) % 251) as u8)
            .collect()
    }

    fn cache(dir: &std::path::Path) -> Arc<DiskCache> {
        Arc::new(DiskCache::start(dir, 1 << 30).unwrap())
    }

    fn read(source: &dyn ByteSource, range: Range<u64>) -> Vec<u8> {
        let mut buf = vec![0; (range.end - range.start) as usize];
        source.read_needed(range.start, &mut buf).unwrap();
        buf
    }

    #[test]
    fn ranges_round_out_to_granules_within_the_object() {
        assert_eq!(granules(&(10..20), 5 * G), 0..G);
        assert_eq!(granules(&(G..2 * G), 5 * G), G..2 * G);
        assert_eq!(granules(&(G - 1..G + 1), 5 * G), 0..2 * G);
        assert_eq!(
            granules(&(4 * G + 1..4 * G + 9), 4 * G + 10),
            4 * G..4 * G + 10
        );
        assert_eq!(
            merged(vec![3 * G..4 * G, 0..G, G..2 * G, 5..7]),
            vec![0..2 * G, 3 * G..4 * G]
        );
    }

    #[test]
    fn a_miss_fetches_whole_granules_and_a_reread_fetches_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path());
        let len = 3 * G + 100;
        let bytes = pattern(len, 1);
        let inner = Counted::new(bytes.clone());
        let cached = CachedObject::new(cache.clone(), inner.clone(), "etag x").unwrap();
        // A read inside granule 1: granule 1 fetched whole.
        assert_eq!(
            read(&cached, G + 5..G + 50),
            bytes[G as usize + 5..G as usize + 50]
        );
        assert_eq!(inner.take(), vec![G..2 * G]);
        // The tail: the last, short granule.
        assert_eq!(read(&cached, len - 10..len), bytes[len as usize - 10..]);
        assert_eq!(inner.take(), vec![3 * G..len]);
        cache.flush();
        assert_eq!(
            read(&cached, G + 5..G + 50),
            bytes[G as usize + 5..G as usize + 50]
        );
        assert_eq!(read(&cached, 3 * G..len), bytes[3 * G as usize..]);
        assert_eq!(inner.take(), vec![], "served from the cache file");
        let stats = cache.stats();
        assert_eq!(stats.remote_hits.load(Ordering::Relaxed), 2);
        assert_eq!(stats.remote_hit_bytes.load(Ordering::Relaxed), 45 + 100);
        assert_eq!(stats.remote_fills.load(Ordering::Relaxed), 2);
        assert_eq!(stats.remote_fill_bytes.load(Ordering::Relaxed), G + 100);
        assert_eq!(
            stats.hits.load(Ordering::Relaxed),
            0,
            "decoded tier untouched"
        );
        // Spanning a whole granule (1) and holes (0, 2): only the holes.
        assert_eq!(
            read(&cached, 10..2 * G + 10),
            bytes[10..2 * G as usize + 10]
        );
        assert_eq!(inner.take(), vec![0..G, 2 * G..3 * G]);
    }

    #[test]
    fn a_granule_two_reads_share_is_fetched_once_before_the_writer_wrote_it() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path());
        let len = 12 * G;
        let bytes = pattern(len, 3);
        let inner = Counted::new(bytes.clone());
        let cached = CachedObject::new(cache.clone(), inner.clone(), "etag x").unwrap();
        // Two neighbouring chunks meeting inside granule 1, no flush between.
        assert_eq!(read(&cached, 0..G + 10), bytes[..G as usize + 10]);
        assert_eq!(inner.take(), vec![0..2 * G]);
        assert_eq!(
            read(&cached, G + 10..3 * G),
            bytes[G as usize + 10..3 * G as usize]
        );
        assert_eq!(inner.take(), vec![2 * G..3 * G], "granule 1 not again");
        // Past RECENT_SPANS fetches, the first span is forgotten in memory
        // (it is in the cache file once written).
        for k in 3..3 + RECENT_SPANS as u64 {
            read(&cached, k * G..k * G + 1);
        }
        inner.take();
        let ranges = vec![5..7, 4 * G..4 * G + 3];
        let got = cached.read_ranges(&ranges).unwrap();
        assert_eq!(got[0], bytes[5..7]);
        assert_eq!(got[1], bytes[4 * G as usize..4 * G as usize + 3]);
        let fetched = inner.take();
        assert!(
            fetched.iter().all(|r| r.start != 4 * G),
            "granule 4 is a recent span: {fetched:?}"
        );
        // What the spans hold is counted for the mount, and given back
        // once the cache file has them or the object goes.
        let held = |c: &DiskCache| c.remote_recent_bytes.load(Ordering::Relaxed);
        assert!(held(&cache) <= RECENT_SPANS * G as usize);
        cache.flush();
        cached.recent();
        assert_eq!(held(&cache), 0, "all written: let go");
        read(&cached, 10 * G..10 * G + 1);
        assert_eq!(held(&cache), G as usize);
        drop(cached);
        assert_eq!(held(&cache), 0);
    }

    #[test]
    fn bytes_read_again_before_the_writer_wrote_them_are_offered_once() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path());
        let bytes = pattern(2 * G, 5);
        let inner = Counted::new(bytes.clone());
        let cached = CachedObject::new(cache.clone(), inner.clone(), "etag x").unwrap();
        for _ in 0..3 {
            assert_eq!(read(&cached, 5..9), bytes[5..9]);
        }
        // A span reaching into granule 1 but not covering it offers nothing more.
        cached.keep(0, &bytes[..G as usize + 10]);
        cache.flush();
        let stats = cache.stats();
        assert_eq!(stats.remote_fills.load(Ordering::Relaxed), 1);
        assert_eq!(stats.remote_fill_bytes.load(Ordering::Relaxed), G);
        assert!(cached.covers(&(0..G)) && !cached.covers(&(0..G + 1)));
    }

    #[test]
    fn several_ranges_merge_into_one_call_of_the_holes_only() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path());
        let len = 8 * G;
        let bytes = pattern(len, 2);
        let inner = Counted::new(bytes.clone());
        let cached = CachedObject::new(cache.clone(), inner.clone(), "etag x").unwrap();
        read(&cached, 2 * G..2 * G + 1);
        cache.flush();
        inner.take();
        let ranges = vec![
            10..20,
            G - 5..G + 5,
            2 * G + 7..2 * G + 9,
            6 * G + 3..6 * G + 4,
            0..0,
        ];
        let answers = cached.read_ranges(&ranges).unwrap();
        for (r, a) in ranges.iter().zip(&answers) {
            assert_eq!(a[..], bytes[r.start as usize..r.end as usize], "{r:?}");
        }
        // Granules 0 and 1 merged, 2 from the cache, 6 alone.
        assert_eq!(inner.take(), vec![0..2 * G, 6 * G..7 * G]);
        cache.flush();
        let again = cached.read_ranges(&ranges).unwrap();
        assert_eq!(again, answers);
        assert_eq!(inner.take(), vec![]);
        // Hints: only what is not whole, rounded out.
        cached.will_need(&[G + 1..G + 2, 4 * G + 1..4 * G + 2], Need::Now);
        assert_eq!(*inner.hints.lock(), vec![4 * G..5 * G]);
    }

    #[test]
    fn a_new_version_is_a_new_entry_never_the_old_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path());
        let len = 2 * G;
        let old = pattern(len, 3);
        let new = pattern(len, 4);
        assert_ne!(old, new);
        let first = Counted::new(old.clone());
        let cached = CachedObject::new(cache.clone(), first.clone(), "etag \"1\"").unwrap();
        assert_eq!(read(&cached, 0..len), old);
        cache.flush();
        let second = Counted::new(new.clone());
        let changed = CachedObject::new(cache.clone(), second.clone(), "etag \"2\"").unwrap();
        assert!(!changed.covers(&(0..len)));
        assert_eq!(read(&changed, 0..len), new);
        assert_eq!(second.take(), vec![0..len]);
        // The old version is still whole under its own key.
        let reopened =
            CachedObject::new(cache.clone(), Counted::new(old.clone()), "etag \"1\"").unwrap();
        assert!(reopened.covers(&(0..len)));
        assert_eq!(read(&reopened, 0..len), old);
        // A remote key is never a decoded one.
        assert!(identity("mem://object", "etag \"1\"").starts_with("remote object\n"));
    }

    /// Bytes a store swapped under the right ETag were kept; the object
    /// distrusted drops them once, reads the store again, and a remount
    /// (a new object over the same cache) gets the good bytes.
    #[test]
    fn a_distrusted_object_drops_its_entry_once_and_reads_the_store_again() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path());
        let len = 2 * G + 7;
        let good = pattern(len, 5);
        let swapped = pattern(len, 6);
        assert_ne!(good, swapped);
        let liar =
            CachedObject::new(cache.clone(), Counted::new(swapped.clone()), "etag x").unwrap();
        assert_eq!(read(&liar, 0..len), swapped);
        cache.flush();
        drop(liar);
        // The store answers right now; the cache still holds the swapped bytes.
        let store = Counted::new(good.clone());
        let cached = CachedObject::new(cache.clone(), store.clone(), "etag x").unwrap();
        assert!(cached.covers(&(0..len)));
        assert_eq!(read(&cached, 0..len), swapped);
        assert_eq!(store.take(), vec![]);
        assert!(cached.distrust(), "the first distrust drops the entry");
        assert!(!cached.covers(&(0..len)));
        assert_eq!(read(&cached, G..G + 9), good[G as usize..G as usize + 9]);
        assert_eq!(store.take(), vec![G..2 * G], "fetched from the store");
        assert_eq!(read(&cached, 0..len), good);
        assert!(!cached.distrust(), "an object heals once");
        assert_eq!(cache.stats().healed.load(Ordering::Relaxed), 1);
        cache.flush();
        drop(cached);
        let remounted =
            CachedObject::new(cache.clone(), Counted::new(good.clone()), "etag x").unwrap();
        assert!(remounted.covers(&(0..len)), "the fresh entry was filled");
        assert_eq!(read(&remounted, 0..len), good);
    }
}
