//! [`DiskCache`], the one handle a mount holds on its `--disk-cache DIR`:
//! it opens entries (one shared per key in this process), answers reads
//! from whole granules, takes what reads served by decoding leave for the
//! producer and writer threads, and describes the directory for `.stats`
//! and `blosc2fs cache`.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use super::entry::Entry;
use super::error::DiskError;
use super::key::Key;
use super::pending::{self, Refill};
use super::producer::{produce_and_hand, Producer};
use super::shared::Shared;
use super::stats::DiskStats;
use super::writer::{Writer, BATCH_BYTES};
use super::{index, map};

/// How long an open or a `.stats` read waits for the directory lock
/// before going on without the cache (the writer thread waits as long as
/// it takes).
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// Bytes of `data` wanted (waiting to be produced) at most, whatever the
/// budget: past it, what reads touch is not filled.
const PENDING_MAX: u64 = 32 << 30;

/// How long an open waits for the writer to land the granules a re-read
/// just handed over, when they are all its entry lacks.
const SETTLE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// Wanted bytes an open of an entry lacking only those (and granules on
/// their way) produces and writes before it answers, at most.
const FINISH_AT_OPEN: u64 = 128 << 20;

/// A mount's disk cache.
pub struct DiskCache {
    shared: Arc<Shared>,
    /// Dropped (and joined) before the writer it gives its bytes to.
    producer: Producer,
    writer: Arc<Writer>,
    /// Entries open in this process, so opens of one key share one.
    open: Mutex<HashMap<String, Weak<Entry>>>,
    /// Bytes the remote tier's objects hold in memory (their recent spans),
    /// all objects together: bounded by [`super::stored_objects::RECENT_TOTAL`].
    pub(crate) remote_recent_bytes: std::sync::atomic::AtomicUsize,
}

impl std::fmt::Debug for DiskCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiskCache")
            .field("dir", &self.shared.index.dir())
            .field("budget", &self.shared.budget)
            .finish()
    }
}

impl DiskCache {
    /// The cache in `dir` (created if missing) holding at most `budget` bytes.
    pub fn start(dir: &Path, budget: u64) -> Result<DiskCache, DiskError> {
        let shared = Arc::new(Shared {
            index: index::Index::open(dir)?,
            budget,
            stats: DiskStats::default(),
            queued: Default::default(),
            handed_queued: Default::default(),
            room: Default::default(),
            room_lock: Default::default(),
            pending: pending::Pending::new(budget.min(PENDING_MAX)),
            busy_at: Default::default(),
            epoch: std::time::Instant::now(),
        });
        let writer = Arc::new(Writer::start(shared.clone()));
        Ok(DiskCache {
            producer: Producer::start(shared.clone(), writer.clone()),
            writer,
            shared,
            open: Mutex::new(HashMap::new()),
            remote_recent_bytes: Default::default(),
        })
    }

    /// The byte budget.
    pub fn budget(&self) -> u64 {
        self.shared.budget
    }

    /// The counters.
    pub fn stats(&self) -> &DiskStats {
        &self.shared.stats
    }

    /// The entry for `len` bytes of `data` of the source state `identity`
    /// names, opened or created; `None` when it cannot be cached (empty,
    /// larger than the budget) or the cache failed (logged).
    pub fn entry(&self, identity: &str, len: u64) -> Option<Arc<Entry>> {
        if len == 0 || len > self.shared.budget {
            return None;
        }
        let key = Key::new(identity, len);
        if let Some(entry) = self.open.lock().get(key.name()).and_then(Weak::upgrade) {
            if !entry.is_retired() {
                return Some(entry);
            }
        }
        let opened = self
            .shared
            .index
            .lock_within(LOCK_PATIENCE)
            .and_then(|locked| Entry::open(&locked, key.clone(), len));
        let entry = match opened {
            Ok(entry) => Arc::new(entry),
            Err(e) => {
                DiskStats::add(&self.shared.stats.errors, 1);
                log::warn!("disk cache: {e}");
                return None;
            }
        };
        let mut open = self.open.lock();
        if open.len() == open.capacity() {
            // Entries let go are forgotten when the map is full, and the map
            // then has room for as many again as it holds: a walk of many
            // objects does not go over every one at each open.
            open.retain(|_, weak| weak.strong_count() > 0);
            let live = open.len();
            open.reserve(live);
        }
        match open.get(key.name()).and_then(Weak::upgrade) {
            Some(theirs) if !theirs.is_retired() => Some(theirs),
            _ => {
                open.insert(key.name().to_string(), Arc::downgrade(&entry));
                Some(entry)
            }
        }
    }

    /// Drop `entry` (its bytes did not decode): no more fills, its files
    /// removed, counted in `healed`. Readers that hold its file open keep
    /// reading it; a later [`Self::entry`] of its key starts a fresh one.
    pub fn discard(&self, entry: &Entry) {
        entry.retire();
        DiskStats::add(&self.shared.stats.healed, 1);
        match self.shared.index.lock_within(LOCK_PATIENCE) {
            Ok(locked) => locked.evict(entry.key().name()),
            Err(e) => {
                DiskStats::add(&self.shared.stats.errors, 1);
                log::warn!("disk cache: dropping {}: {e}", entry.key().name());
            }
        }
    }

    /// `out.len()` bytes of `data` at `offset` from `entry`'s file into
    /// `out`, when all of them are whole there (and inside `data`).
    pub fn read(&self, entry: &Entry, offset: u64, out: &mut [u8]) -> bool {
        let end = offset.saturating_add(out.len() as u64);
        if out.is_empty() || end > entry.len() || !entry.covers(offset, end) {
            return false;
        }
        match entry.read_at(offset, out) {
            Ok(()) => {
                DiskStats::add(&self.shared.stats.hits, 1);
                DiskStats::add(&self.shared.stats.hit_bytes, end - offset);
                true
            }
            Err(e) => {
                DiskStats::add(&self.shared.stats.errors, 1);
                log::warn!("disk cache: reading {}: {e}", entry.key().name());
                false
            }
        }
    }

    /// `bytes` at `offset` of `entry` (a remote object's bytes just
    /// fetched): the whole granules among them not yet in the entry are
    /// queued for the writer. With `wait`, the caller waits for room in the
    /// queue rather than have them dropped.
    pub fn offer(&self, entry: &Arc<Entry>, offset: u64, bytes: &[u8], wait: bool) {
        if let Some((start, end)) = entry.fillable(offset, bytes.len() as u64) {
            let from = (start - offset) as usize;
            let to = (end - offset) as usize;
            self.writer.offer(entry, start, &bytes[from..to], wait);
        }
    }

    /// `bytes` at `start` of `entry`'s `data` were just served by
    /// decoding. Granules read for the first time are only named: the
    /// producer makes them again once the mount is quiet (no copy, no
    /// write on the read's path). Granules read again while still wanted
    /// are handed to the writer from these bytes (a copy), without waiting
    /// for it: what its queue has no room for stays wanted, so a loop that
    /// never pauses has the entry whole after its second read if the
    /// writer keeps up, after a few more if not.
    pub fn served(&self, entry: &Arc<Entry>, refill: &Arc<dyn Refill>, start: u64, bytes: &[u8]) {
        let handover = self.shared.pending.served(entry, refill, start, bytes);
        if handover.dropped > 0 {
            DiskStats::add(&self.shared.stats.fills_dropped, handover.dropped);
        }
        // Bytes of another version than the entry's are never written.
        let current = handover.runs.is_empty()
            || refill
                .identity()
                .is_some_and(|now| Key::new(&now, entry.len()).name() == entry.key().name());
        for (at, run) in handover.runs {
            let (n, end) = (run.len() as u64, at + run.len() as u64);
            if !current {
                self.shared.pending.landed(entry, at, end);
            } else if self.writer.hand(entry, at, run, false) {
                DiskStats::add(&self.shared.stats.handed_bytes, n);
            } else {
                // The writer is behind: the read goes on, and these
                // granules wait for a later read (or the producer).
                DiskStats::add(&self.shared.stats.deferred_bytes, n);
                self.shared.pending.unhand(entry, at, end);
                self.producer.wake();
            }
        }
        if handover.woke {
            self.producer.wake();
        }
    }

    /// Wait a little (at most [`SETTLE_PATIENCE`]) when everything `entry`
    /// lacks is on its way to the disk (handed by the read just before), so
    /// that this open finds it complete; true when it is complete. When
    /// what it lacks besides is a little (at most [`FINISH_AT_OPEN`], and
    /// an eighth of the entry) and wanted, i.e. left by a re-read the
    /// writer could not keep up with, it is produced (decoded) and written
    /// first: the open then finds the entry complete rather than leave
    /// those granules to the next read.
    pub fn settle(&self, entry: &Entry) -> bool {
        if entry.is_complete() {
            return true;
        }
        let waited = std::time::Instant::now();
        let limit = FINISH_AT_OPEN.min(entry.len() / 8);
        let rest = self.shared.pending.take_rest(entry, BATCH_BYTES, limit);
        for run in &rest {
            produce_and_hand(&self.shared, &self.writer, run);
        }
        if !rest.is_empty() {
            DiskStats::add(&self.shared.stats.finished_opens, 1);
        }
        let settled = self.shared.pending.settle(entry, SETTLE_PATIENCE);
        if settled {
            DiskStats::add(&self.shared.stats.settled_opens, 1);
            log::debug!(
                "disk cache: an open waited {:?} for {} to complete",
                waited.elapsed(),
                entry.key().name()
            );
        }
        settled
    }

    /// Whether `entry` is incomplete and every granule it lacks was read
    /// since it was opened here (so an open now is a re-read: its reads will
    /// hand the granules over, and the entry will be whole when it ends).
    pub fn rereading(&self, entry: &Entry) -> bool {
        self.shared.pending.rereading(entry)
    }

    /// A read is being served by decoding now: wanted granules wait.
    pub fn busy(&self) {
        self.shared
            .busy_at
            .store(self.shared.now_ms(), Ordering::Relaxed);
    }

    /// Produce what is wanted (for a while), write everything queued, and
    /// persist every map (at unmount).
    pub fn flush(&self) {
        self.producer.flush();
        self.writer.flush();
    }

    /// The `.stats` section: budget, bytes and entries on disk, counters.
    pub fn to_json(&self) -> serde_json::Value {
        let (bytes, entries) = self
            .shared
            .index
            .lock_within(LOCK_PATIENCE)
            .and_then(|locked| locked.usage())
            .unwrap_or_default();
        let mut doc = serde_json::Map::new();
        doc.insert(
            "dir".into(),
            self.shared.index.dir().display().to_string().into(),
        );
        doc.insert("budget".into(), self.shared.budget.into());
        doc.insert("bytes".into(), bytes.into());
        doc.insert("entries".into(), entries.into());
        let files = self.shared.index.files();
        doc.insert("open_files".into(), files.held().into());
        doc.insert("file_reopens".into(), files.stats().reopens.into());
        doc.insert(
            "queued_bytes".into(),
            (self.shared.queued.load(Ordering::Relaxed)
                + self.shared.handed_queued.load(Ordering::Relaxed))
            .into(),
        );
        doc.insert(
            "wanted_bytes".into(),
            (self.shared.pending.outstanding() * map::GRANULE).into(),
        );
        doc.extend(self.shared.stats.to_json());
        doc.into()
    }
}

/// What `blosc2fs cache DIR` prints: one line per entry (name, bytes on
/// disk, how much of it is whole, last use, key).
pub fn describe(dir: &Path) -> Result<String, DiskError> {
    let index = index::Index::open(dir)?;
    let locked = index.lock()?;
    let found = locked.scan()?;
    let mut out = String::new();
    let total: u64 = found.iter().map(|f| f.bytes).sum();
    out.push_str(&format!(
        "{}: {} entries, {} bytes on disk\n",
        dir.display(),
        found.len(),
        total
    ));
    for f in &found {
        let map_path = index.path(&f.name, "map");
        let (whole, key) = std::fs::read(&map_path)
            .ok()
            .and_then(|bytes| map::describe_stored(&bytes, f.data_len, f.data_ino))
            .unwrap_or((0.0, String::from("(no map yet)")));
        let age = f
            .last_used
            .elapsed()
            .map(|d| format!("{}s ago", d.as_secs()))
            .unwrap_or_else(|_| "just now".into());
        out.push_str(&format!(
            "{}  {:>12} bytes  {:>5.1}% of {} whole  used {}  {}\n",
            f.name,
            f.bytes,
            whole * 100.0,
            f.data_len,
            age,
            key.replace('\n', " | ")
        ));
    }
    Ok(out)
}

/// Remove every entry of the cache in `dir`; returns how many.
pub fn clear(dir: &Path) -> Result<usize, DiskError> {
    index::clear(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk_cache::map::GRANULE;

    /// `n` bytes whose value at `i` is `(i * 7 + seed) as u8`.
    fn pattern(n: u64, seed: u8) -> Vec<u8> {
        (0..n)
            .map(|i| (i as u8).wrapping_mul(7).wrapping_add(seed))
            .collect()
    }

    /// The bytes of `data`, made again from a copy.
    struct Copy(Vec<u8>);

    impl Refill for Copy {
        fn produce(
            &self,
            offset: u64,
            out: &mut [u8],
        ) -> Result<(), crate::disk_cache::RefillError> {
            let at = offset as usize;
            out.copy_from_slice(&self.0[at..at + out.len()]);
            Ok(())
        }
        fn identity(&self) -> Option<String> {
            Some("array v1".into())
        }
    }

    /// A re-read never waits for a writer that lags (here held back by the
    /// directory lock): what the writer's queue has no room for stays
    /// wanted. Then either the next read hands it over, or the next open
    /// produces it (a little is left), and the entry is complete with the
    /// reads' exact bytes.
    #[test]
    fn a_reread_does_not_wait_for_a_lagging_writer_and_the_next_read_or_open_completes_it() {
        use crate::disk_cache::writer::READ_HAND_QUEUE;
        for by_open in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let len = READ_HAND_QUEUE + 8 * GRANULE + 100;
            let data = pattern(len, 5);
            let cache = DiskCache::start(dir.path(), 4 * len).unwrap();
            let entry = cache.entry("array v1", len).unwrap();
            let refill: Arc<dyn Refill> = Arc::new(Copy(data.clone()));
            // The counters (not `to_json`: that waits for the directory lock).
            let stat = |name: &str| cache.stats().to_json()[name].as_u64().unwrap();
            let queued = || cache.shared.handed_queued.load(Ordering::Relaxed);
            // A read of the whole of `data` in 1 MiB requests, each decoded.
            let read_all = || {
                for (i, part) in data.chunks(1 << 20).enumerate() {
                    cache.busy();
                    cache.served(&entry, &refill, (i as u64) << 20, part);
                }
            };
            read_all();
            assert_eq!(stat("handed_bytes"), 0, "a first read only names");
            let held = cache.shared.index.lock().unwrap();
            let started = std::time::Instant::now();
            read_all();
            let took = started.elapsed();
            // Waiting for room, the read would have taken a second per
            // request past the queue's bound.
            assert!(took < std::time::Duration::from_millis(500), "{took:?}");
            assert_eq!(stat("handed_bytes"), READ_HAND_QUEUE);
            assert_eq!(stat("deferred_bytes"), len - READ_HAND_QUEUE);
            drop(held);
            // The writer catches up while the loop goes on (reads keep the
            // producer waiting).
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while queued() > 0 && std::time::Instant::now() < deadline {
                cache.busy();
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            if by_open {
                assert!(cache.settle(&entry), "the open finished the entry");
                assert_eq!(stat("finished_opens"), 1);
                assert_eq!(stat("handed_bytes"), READ_HAND_QUEUE);
                assert_eq!(stat("produced_bytes"), len - READ_HAND_QUEUE);
            } else {
                read_all();
                cache.flush();
                assert!(
                    stat("handed_bytes") > READ_HAND_QUEUE,
                    "the third read handed the rest"
                );
            }
            assert!(entry.is_complete());
            assert_eq!(stat("handed_bytes") + stat("produced_bytes"), len);
            assert_eq!(stat("fill_bytes"), len);
            let mut back = vec![0u8; len as usize];
            assert!(cache.read(&entry, 0, &mut back));
            assert!(back == data);
        }
    }

    /// An open does not produce what its entry lacks when that is more
    /// than an eighth of the entry, or not all read before.
    #[test]
    fn an_open_finishes_only_a_little_left_by_a_reread() {
        let dir = tempfile::tempdir().unwrap();
        let len = 16 * GRANULE;
        let data = pattern(len, 9);
        let cache = DiskCache::start(dir.path(), 4 * len).unwrap();
        let entry = cache.entry("array v1", len).unwrap();
        let refill: Arc<dyn Refill> = Arc::new(Copy(data.clone()));
        let stat = |name: &str| cache.stats().to_json()[name].as_u64().unwrap();
        let g = GRANULE as usize;
        // Granules 0..13 read once (wanted), 14 and 15 never.
        cache.busy();
        cache.served(&entry, &refill, 0, &data[..14 * g]);
        assert!(!cache.settle(&entry));
        // Written but for granules 12 and 13: still not all read before.
        entry.write(0, &data[..12 * g]).unwrap();
        assert!(!cache.settle(&entry));
        // Granules 14 and 15 read now: wanted, with 12 and 13, which is
        // four granules, more than an eighth of 16.
        cache.busy();
        cache.served(&entry, &refill, 14 * GRANULE, &data[14 * g..]);
        assert!(!cache.settle(&entry));
        assert_eq!(stat("finished_opens"), 0);
        // Two left (an eighth): the open produces them.
        entry.write(12 * GRANULE, &data[12 * g..14 * g]).unwrap();
        assert!(cache.settle(&entry));
        assert_eq!(stat("finished_opens"), 1);
        let mut back = vec![0u8; len as usize];
        assert!(cache.read(&entry, 0, &mut back));
        assert!(back == data);
    }

    /// Entries are opened once per key: the same identity and length give
    /// the same entry; a new length or identity, another; nothing is
    /// cached for empty data or data larger than the whole budget.
    #[test]
    fn one_entry_per_key_and_none_past_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        let cache = DiskCache::start(dir.path(), 4 * GRANULE).unwrap();
        assert_eq!(cache.budget(), 4 * GRANULE);
        assert!(cache.entry("a v1", 0).is_none());
        assert!(cache.entry("a v1", 4 * GRANULE + 1).is_none());
        let a = cache.entry("a v1", 1000).unwrap();
        assert!(Arc::ptr_eq(&a, &cache.entry("a v1", 1000).unwrap()));
        assert!(!Arc::ptr_eq(&a, &cache.entry("a v1", 1001).unwrap()));
        assert!(!Arc::ptr_eq(&a, &cache.entry("a v2", 1000).unwrap()));
        assert_eq!(a.len(), 1000);
        assert!(!a.is_complete());
    }

    /// Offered bytes are written in whole granules only; reads are answered
    /// from the file when every byte asked is whole, and not otherwise; a
    /// second `DiskCache` on the directory (another mount, or the next one)
    /// finds what the first persisted, and `describe`/`clear` see it.
    #[test]
    fn offered_granules_are_read_back_and_persist() {
        let dir = tempfile::tempdir().unwrap();
        let len = 2 * GRANULE + 100;
        let data = pattern(len, 3);
        {
            let cache = DiskCache::start(dir.path(), 8 * GRANULE).unwrap();
            let entry = cache.entry("object v1", len).unwrap();
            // Bytes 10 .. GRANULE + 10: no granule whole, nothing to write.
            cache.offer(&entry, 10, &data[10..(GRANULE + 10) as usize], true);
            // The first granule and the short last one.
            cache.offer(&entry, 0, &data[..GRANULE as usize], true);
            cache.offer(&entry, 2 * GRANULE, &data[(2 * GRANULE) as usize..], true);
            cache.flush();
            assert_eq!(entry.progress(), (2, 3));
            let mut out = vec![0u8; 50];
            assert!(cache.read(&entry, 1000, &mut out));
            assert_eq!(out, &data[1000..1050]);
            assert!(cache.read(&entry, 2 * GRANULE + 50, &mut out));
            assert_eq!(out, &data[(2 * GRANULE + 50) as usize..]);
            // Crossing into the missing granule, past the end, or empty: no.
            assert!(!cache.read(&entry, GRANULE - 10, &mut out));
            assert!(!cache.read(&entry, len - 10, &mut out));
            assert!(!cache.read(&entry, 0, &mut []));
            let stats = cache.to_json();
            assert_eq!(stats["budget"], 8 * GRANULE);
            assert_eq!(stats["entries"], 1);
            assert_eq!(stats["fills"], 2);
            assert_eq!(stats["hits"], 2);
            assert_eq!(stats["hit_bytes"], 100);
            cache.offer(
                &entry,
                GRANULE,
                &data[GRANULE as usize..(2 * GRANULE) as usize],
                true,
            );
            cache.flush();
            assert!(entry.is_complete());
        }
        let again = DiskCache::start(dir.path(), 8 * GRANULE).unwrap();
        let entry = again.entry("object v1", len).unwrap();
        assert!(entry.is_complete());
        let mut out = vec![0u8; len as usize];
        assert!(again.read(&entry, 0, &mut out));
        assert_eq!(out, data);
        // Another version of the source is another entry, empty (and with
        // no files until its first fill).
        assert_eq!(again.entry("object v2", len).unwrap().progress(), (0, 3));
        drop((entry, again));
        let text = describe(dir.path()).unwrap();
        assert!(text.contains(": 1 entries,"), "{text}");
        assert!(text.contains("100.0% of 262244 whole"), "{text}");
        assert_eq!(clear(dir.path()).unwrap(), 1);
        assert!(describe(dir.path())
            .unwrap()
            .contains(": 0 entries, 0 bytes"));
    }
}
