//! The writer thread: cache files are written here, off the read path.
//!
//! It writes bytes handed over whole, from a queue bounded in bytes
//! ([`QUEUE_BYTES`]): a remote object's bytes just fetched
//! ([`Writer::offer`]), the bytes a re-read produced ([`Writer::hand`]:
//! see [`super::pending`]), and the granules the producer thread made
//! again ([`super::producer`]). It decodes nothing itself. A re-read never
//! waits for it: when [`READ_HAND_QUEUE`] bytes are queued already, the
//! read keeps its bytes and its granules stay wanted, for a later read (the
//! next epoch of a loop) or the producer. So an epoch costs a reader no
//! more than the cold read, and a loop faster than the writer fills its
//! entry over a few epochs.
//!
//! The thread takes the directory lock once per batch (up to
//! [`BATCH_BYTES`]): it looks at what the directory holds, evicts least
//! recently used entries until the batch fits the budget, and writes it.
//! As every write is accounted under the lock, the directory stays within
//! its budget, plus at most the few KiB of a map file being replaced.
//! Maps are persisted every [`PERSIST_BYTES`] of an entry's fills, when an
//! entry completes, every [`PERSIST_EVERY`], and on flush (unmount), by
//! the persister thread ([`super::persister`]), so writes never wait on a
//! sync.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::entry::Entry;
use super::error::DiskError;
use super::persister::Persister;
use super::shared::Shared;
use super::stats::DiskStats;

/// Offered bytes waiting for the writer at most; more wait, or are dropped.
pub const QUEUE_BYTES: u64 = 32 << 20;

/// Handed bytes queued at most when the producer hands a run over: it
/// waits for the writer rather than run far ahead of it. Counted apart
/// from remote offers, so a remote scan's queue never holds a hand back.
const HAND_LAG: u64 = 2 << 20;

/// Handed bytes queued at most when a re-read hands its own bytes over:
/// past it the read does not wait (its granules stay wanted). Small enough
/// that the writer lands the last of them soon after the read ends (the
/// next open waits for that, see [`super::DiskCache::settle`]).
pub(super) const READ_HAND_QUEUE: u64 = 32 << 20;

/// How long an offer that must not be dropped waits for room in the queue.
const ROOM_WAIT: Duration = Duration::from_secs(1);

/// Bytes written under one hold of the directory lock at most.
pub(super) const BATCH_BYTES: u64 = 8 << 20;

/// An entry's map is persisted after this many bytes of fills.
const PERSIST_BYTES: u64 = 64 << 20;

/// Maps with fills not yet persisted are persisted this often.
const PERSIST_EVERY: Duration = Duration::from_secs(1);

/// Bytes of one entry to write.
struct Job {
    entry: Arc<Entry>,
    offset: u64,
    bytes: Vec<u8>,
    /// Counted in [`Shared::handed_queued`] (else an offer).
    handed: bool,
}

enum Msg {
    Fill(Job),
    Flush(mpsc::Sender<()>),
}

/// The handle of the writer thread.
pub(super) struct Writer {
    tx: Mutex<Option<mpsc::Sender<Msg>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    shared: Arc<Shared>,
}

impl Writer {
    /// Start the thread.
    pub(super) fn start(shared: Arc<Shared>) -> Writer {
        let (tx, rx) = mpsc::channel();
        let inner = shared.clone();
        let thread = std::thread::Builder::new()
            .name("disk-cache-writer".into())
            .spawn(move || {
                let persister = Persister::start(inner.clone());
                run(&inner, &persister, &rx)
            })
            .ok();
        if thread.is_none() {
            log::warn!("disk cache: no writer thread; nothing will be filled");
        }
        Writer {
            tx: Mutex::new(Some(tx)),
            thread: Mutex::new(thread),
            shared,
        }
    }

    /// Queue a copy of `bytes` at `offset` of `entry`. When the queue is
    /// full they are dropped (counted), unless `wait`: then the caller
    /// waits for room, up to [`ROOM_WAIT`].
    pub(super) fn offer(&self, entry: &Arc<Entry>, offset: u64, bytes: &[u8], wait: bool) {
        let n = bytes.len() as u64;
        if self.room(&self.shared.queued, n, QUEUE_BYTES, wait) {
            self.send_fill(entry, offset, bytes.to_vec(), false);
        } else {
            DiskStats::add(&self.shared.stats.fills_dropped, 1);
        }
    }

    /// Queue `bytes` at `offset` of `entry` (handed granules). With `wait`
    /// (the producer), waiting up to [`ROOM_WAIT`] for the queue to hold
    /// less than [`HAND_LAG`]; without (a read), at once if the queue then
    /// holds at most [`READ_HAND_QUEUE`] (or was empty). False when they
    /// were not queued, or the thread is gone (the caller wants them again).
    pub(super) fn hand(&self, entry: &Arc<Entry>, offset: u64, bytes: Vec<u8>, wait: bool) -> bool {
        let n = bytes.len() as u64;
        let limit = if wait { HAND_LAG } else { READ_HAND_QUEUE };
        self.room(&self.shared.handed_queued, n, limit.max(n), wait)
            && self.send_fill(entry, offset, bytes, true)
    }

    /// Count `n` bytes into `queued` if it then holds at most `limit`
    /// (waiting for room when `wait`).
    fn room(&self, queued: &AtomicU64, n: u64, limit: u64, wait: bool) -> bool {
        let deadline = Instant::now() + ROOM_WAIT;
        while queued.fetch_add(n, Ordering::Relaxed) + n > limit {
            queued.fetch_sub(n, Ordering::Relaxed);
            if !wait || Instant::now() > deadline {
                return false;
            }
            // Woken as bytes leave the queue; the timeout covers a wake-up
            // sent between the check above and this wait.
            let mut guard = self.shared.room_lock.lock();
            self.shared
                .room
                .wait_for(&mut guard, Duration::from_millis(1));
        }
        true
    }

    /// Send bytes counted in by [`Self::room`].
    fn send_fill(&self, entry: &Arc<Entry>, offset: u64, bytes: Vec<u8>, handed: bool) -> bool {
        let job = Job {
            entry: entry.clone(),
            offset,
            bytes,
            handed,
        };
        let refused = match self.tx.lock().as_ref() {
            Some(tx) => tx.send(Msg::Fill(job)).err().map(|e| e.0),
            None => Some(Msg::Fill(job)),
        };
        match refused {
            None => true,
            Some(msg) => {
                if let Msg::Fill(job) = msg {
                    dequeued(&self.shared, &job);
                }
                false
            }
        }
    }

    /// Wait until everything queued is written and every map persisted.
    pub(super) fn flush(&self) {
        let (ack, done) = mpsc::channel();
        if self.send(Msg::Flush(ack)) && done.recv_timeout(Duration::from_secs(60)).is_err() {
            log::warn!("disk cache: the writer did not finish flushing in time");
        }
    }

    fn send(&self, msg: Msg) -> bool {
        self.tx
            .lock()
            .as_ref()
            .is_some_and(|tx| tx.send(msg).is_ok())
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Closing the channel makes the thread persist and end.
        self.tx.lock().take();
        if let Some(thread) = self.thread.lock().take() {
            let _ = thread.join();
        }
    }
}

/// The thread's loop. `touched` holds the entries written since their
/// maps were last persisted.
fn run(shared: &Shared, persister: &Persister, rx: &mpsc::Receiver<Msg>) {
    let mut touched: HashMap<String, Arc<Entry>> = HashMap::new();
    let mut persisted = Instant::now();
    loop {
        let mut acks = Vec::new();
        match rx.recv_timeout(PERSIST_EVERY) {
            Ok(Msg::Fill(job)) => {
                let mut batch = vec![job];
                let mut bytes = batch[0].bytes.len() as u64;
                while bytes < BATCH_BYTES {
                    match rx.try_recv() {
                        Ok(Msg::Fill(job)) => {
                            bytes += job.bytes.len() as u64;
                            batch.push(job);
                        }
                        Ok(Msg::Flush(ack)) => acks.push(ack),
                        Err(_) => break,
                    }
                }
                write_logged(shared, &batch, &mut touched);
                persister.persist(due(&touched));
            }
            Ok(Msg::Flush(ack)) => acks.push(ack),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                persister.persist(touched.into_values().collect());
                return;
            }
        }
        if !acks.is_empty() {
            // Everything sent before the flush is in the channel ahead of it.
            while let Ok(msg) = rx.try_recv() {
                match msg {
                    Msg::Fill(job) => write_logged(shared, &[job], &mut touched),
                    Msg::Flush(ack) => acks.push(ack),
                }
            }
            persister.persist(touched.drain().map(|(_, e)| e).collect());
            persister.flush();
            for ack in acks {
                let _ = ack.send(());
            }
        }
        if persisted.elapsed() >= PERSIST_EVERY {
            touched.retain(|_, e| e.unpersisted() > 0);
            persister.persist(touched.values().cloned().collect());
            persisted = Instant::now();
        }
    }
}

/// The entries written that filled enough since their last persist, or
/// completed.
fn due(touched: &HashMap<String, Arc<Entry>>) -> Vec<Arc<Entry>> {
    touched
        .values()
        .filter(|e| {
            let unpersisted = e.unpersisted();
            unpersisted >= PERSIST_BYTES || (unpersisted > 0 && e.is_complete())
        })
        .cloned()
        .collect()
}

/// [`write_batch`], its error counted and logged; then the granules of the
/// batch are no longer on their way (written, or given up).
fn write_logged(shared: &Shared, batch: &[Job], touched: &mut HashMap<String, Arc<Entry>>) {
    if let Err(e) = write_batch(shared, batch, touched) {
        DiskStats::add(&shared.stats.errors, 1);
        log::warn!("disk cache: {e}");
    }
    for job in batch {
        let end = job.offset + job.bytes.len() as u64;
        shared.pending.landed(&job.entry, job.offset, end);
        dequeued(shared, job);
    }
}

/// `job` is out of the queue (written, given up, or never sent).
fn dequeued(shared: &Shared, job: &Job) {
    let queued = if job.handed {
        &shared.handed_queued
    } else {
        &shared.queued
    };
    queued.fetch_sub(job.bytes.len() as u64, Ordering::Relaxed);
    shared.room.notify_all();
}

/// Write `batch` under the lock, evicting to make room.
fn write_batch(
    shared: &Shared,
    batch: &[Job],
    touched: &mut HashMap<String, Arc<Entry>>,
) -> Result<(), DiskError> {
    let locked = shared.index.lock()?;
    let mut on_disk: HashMap<&str, Option<u64>> = HashMap::new();
    for job in batch {
        let name = job.entry.key().name();
        on_disk.insert(name, locked.data_ino(name)?);
    }
    // An entry evicted (here or by another mount) since it was opened is
    // filled no more: its bytes would be neither found nor accounted. Fills
    // of granules already whole (a re-read offered them again before the
    // first fill was written), or twice in this batch, are skipped: counted
    // in the room to make, they would evict entries for nothing.
    let mut seen = std::collections::HashSet::new();
    let live: Vec<&Job> = batch
        .iter()
        .filter(|job| {
            let name = job.entry.key().name();
            if !job.entry.is_on_disk(on_disk.get(name).copied().flatten()) {
                job.entry.retire();
            }
            let end = job.offset + job.bytes.len() as u64;
            !job.entry.is_retired()
                && !job.entry.covers(job.offset, end)
                && seen.insert((name, job.offset))
        })
        .collect();
    let need: u64 = live.iter().map(|j| j.bytes.len() as u64).sum();
    let keep: Vec<&str> = live.iter().map(|j| j.entry.key().name()).collect();
    let Some(evicted) = locked.make_room(need, shared.budget, &keep)? else {
        DiskStats::add(&shared.stats.fills_dropped, live.len() as u64);
        return Ok(());
    };
    DiskStats::add(&shared.stats.evictions, evicted.len() as u64);
    for job in live {
        let entry = &job.entry;
        let was_complete = entry.is_complete();
        let written = entry.write(job.offset, &job.bytes);
        locked.note(entry.key().name());
        if let Err(e) = written {
            let path = shared.index.path(entry.key().name(), "data");
            return Err(DiskError::io(path, e));
        }
        DiskStats::add(&shared.stats.fills, 1);
        DiskStats::add(&shared.stats.fill_bytes, job.bytes.len() as u64);
        if !was_complete && entry.is_complete() {
            DiskStats::add(&shared.stats.completed, 1);
        }
        touched
            .entry(entry.key().name().to_string())
            .or_insert_with(|| entry.clone());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk_cache::index::Index;
    use crate::disk_cache::key::Key;
    use crate::disk_cache::map::GRANULE;
    use crate::disk_cache::pending::Pending;

    /// What the writer shares, over a fresh directory of `budget` bytes.
    fn shared(dir: &std::path::Path, budget: u64) -> Arc<Shared> {
        Arc::new(Shared {
            index: Index::open(dir).unwrap(),
            budget,
            stats: DiskStats::default(),
            queued: Default::default(),
            handed_queued: Default::default(),
            room: Default::default(),
            room_lock: Default::default(),
            pending: Pending::new(budget),
            busy_at: Default::default(),
            epoch: Instant::now(),
        })
    }

    fn open(shared: &Shared, identity: &str, len: u64) -> Arc<Entry> {
        let locked = shared.index.lock().unwrap();
        Arc::new(Entry::open(&locked, Key::new(identity, len), len).unwrap())
    }

    fn count(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }

    /// An offer larger than the whole queue is dropped at once (counted)
    /// when the caller does not wait, and leaves the queue empty; handed
    /// bytes larger than the hand lag still go (the lag bounds the queue,
    /// not one hand-over).
    #[test]
    fn offers_past_the_queue_are_dropped_hands_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let shared = shared(dir.path(), 64 << 20);
        let writer = Writer::start(shared.clone());
        let entry = open(&shared, "big", QUEUE_BYTES + GRANULE);
        writer.offer(&entry, 0, &vec![1u8; (QUEUE_BYTES + 1) as usize], false);
        assert_eq!(count(&shared.stats.fills_dropped), 1);
        assert_eq!(count(&shared.queued), 0);
        let handed = vec![2u8; (HAND_LAG + GRANULE) as usize];
        assert!(writer.hand(&entry, 0, handed.clone(), true));
        writer.flush();
        assert_eq!(count(&shared.handed_queued), 0);
        assert_eq!(count(&shared.stats.fills), 1);
        assert_eq!(count(&shared.stats.fill_bytes), HAND_LAG + GRANULE);
        let mut back = vec![0u8; handed.len()];
        entry.read_at(0, &mut back).unwrap();
        assert_eq!(back, handed);
    }

    /// A granule offered twice is written once; a batch that does not fit
    /// the budget even with everything else evicted is dropped; the writer
    /// persists the maps when it ends, so the next open finds the entry
    /// whole.
    #[test]
    fn duplicates_are_skipped_and_maps_persist_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let shared = shared(dir.path(), 2 * GRANULE);
        let writer = Writer::start(shared.clone());
        let entry = open(&shared, "twice", GRANULE);
        let bytes: Vec<u8> = (0..GRANULE).map(|i| (i % 251) as u8).collect();
        writer.offer(&entry, 0, &bytes, true);
        writer.offer(&entry, 0, &bytes, true);
        writer.flush();
        assert_eq!(count(&shared.stats.fills), 1);
        assert_eq!(count(&shared.stats.completed), 1);
        let too_big = open(&shared, "too big", 3 * GRANULE);
        writer.offer(&too_big, 0, &vec![3u8; (3 * GRANULE) as usize], true);
        writer.flush();
        assert_eq!(count(&shared.stats.fills), 1);
        assert_eq!(count(&shared.stats.fills_dropped), 1);
        assert_eq!(too_big.progress(), (0, 3));
        drop(writer);
        let again = open(&shared, "twice", GRANULE);
        assert!(again.is_complete());
        let mut back = vec![0u8; GRANULE as usize];
        again.read_at(0, &mut back).unwrap();
        assert_eq!(back, bytes);
    }

    /// Within the budget, room for a new fill is made by evicting the least
    /// recently used entry (its files go); a later fill of the evicted entry
    /// retires it and writes nothing.
    #[test]
    fn fills_evict_the_least_recently_used_entry() {
        let dir = tempfile::tempdir().unwrap();
        // Room for three granules (and the few KiB of maps), not four.
        let shared = shared(dir.path(), 3 * GRANULE + (32 << 10));
        let writer = Writer::start(shared.clone());
        let old = open(&shared, "old", 2 * GRANULE);
        writer.offer(&old, 0, &vec![4u8; (2 * GRANULE) as usize], true);
        writer.flush();
        assert!(shared.index.path(old.key().name(), "data").exists());
        let new = open(&shared, "new", 2 * GRANULE);
        writer.offer(&new, 0, &vec![5u8; (2 * GRANULE) as usize], true);
        writer.flush();
        assert_eq!(count(&shared.stats.evictions), 1);
        assert!(new.is_complete());
        assert!(!shared.index.path(old.key().name(), "data").exists());
        assert!(!shared.index.path(old.key().name(), "map").exists());
        writer.offer(&old, 0, &vec![4u8; GRANULE as usize], true);
        writer.flush();
        assert!(old.is_retired());
        assert_eq!(count(&shared.stats.fills), 2);
    }
}
