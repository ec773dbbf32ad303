//! The writer thread: fill bytes are written to cache files here, off the
//! read path. Readers hand over copies of whole granules they just served
//! ([`Writer::offer`]); the queue is bounded in bytes ([`QUEUE_BYTES`]) and
//! a fill that does not fit is dropped (those bytes are decoded again on a
//! later read, nothing else is lost), so a reader never waits on the disk.
//!
//! The thread takes the directory lock once per batch (up to
//! [`BATCH_BYTES`]): it looks at what the directory holds, evicts least
//! recently used entries until the batch fits the budget, and writes it.
//! As every write is accounted under the lock, the directory stays within
//! its budget, plus at most the few KiB of a map file being replaced.
//! Maps are persisted every [`PERSIST_BYTES`] of an entry's fills, when an
//! entry completes, every [`PERSIST_EVERY`], and on flush (unmount).

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::entry::Entry;
use super::error::DiskError;
use super::index::Index;
use super::stats::DiskStats;

/// Fill bytes waiting for the writer at most; more are dropped.
pub const QUEUE_BYTES: u64 = 32 << 20;

/// How long a re-read waits for room in the queue before dropping a fill.
const REFILL_WAIT: Duration = Duration::from_secs(1);

/// Bytes written under one hold of the directory lock at most.
const BATCH_BYTES: u64 = 8 << 20;

/// An entry's map is persisted after this many bytes of fills.
const PERSIST_BYTES: u64 = 64 << 20;

/// Maps with fills not yet persisted are persisted this often.
const PERSIST_EVERY: Duration = Duration::from_secs(1);

/// Bytes of one entry to write.
struct Job {
    entry: Arc<Entry>,
    offset: u64,
    bytes: Vec<u8>,
}

enum Msg {
    Fill(Job),
    Flush(mpsc::Sender<()>),
}

/// What the writer thread shares with the cache.
pub(super) struct Shared {
    pub(super) index: Index,
    pub(super) budget: u64,
    pub(super) stats: DiskStats,
    /// Fill bytes queued now.
    pub(super) queued: AtomicU64,
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
                idle_priority();
                run(&inner, &rx)
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

    /// Queue `bytes` at `offset` of `entry`. When the queue is full they
    /// are dropped, unless `wait` (a re-read filling the holes a first
    /// read left): then the reader waits for room, up to [`REFILL_WAIT`].
    pub(super) fn offer(&self, entry: &Arc<Entry>, offset: u64, bytes: &[u8], wait: bool) {
        let n = bytes.len() as u64;
        let queued = &self.shared.queued;
        let deadline = std::time::Instant::now() + REFILL_WAIT;
        while queued.fetch_add(n, Ordering::Relaxed) + n > QUEUE_BYTES {
            queued.fetch_sub(n, Ordering::Relaxed);
            if !wait || std::time::Instant::now() > deadline {
                DiskStats::add(&self.shared.stats.fills_dropped, 1);
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let job = Job {
            entry: entry.clone(),
            offset,
            bytes: bytes.to_vec(),
        };
        let sent = self
            .tx
            .lock()
            .as_ref()
            .is_some_and(|tx| tx.send(Msg::Fill(job)).is_ok());
        if !sent {
            queued.fetch_sub(n, Ordering::Relaxed);
        }
    }

    /// Wait until everything queued is written and every map persisted.
    pub(super) fn flush(&self) {
        let (ack, done) = mpsc::channel();
        let sent = self
            .tx
            .lock()
            .as_ref()
            .is_some_and(|tx| tx.send(Msg::Flush(ack)).is_ok());
        if sent && done.recv_timeout(Duration::from_secs(60)).is_err() {
            log::warn!("disk cache: the writer did not finish flushing in time");
        }
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

/// Run the calling thread (the writer) at the lowest priority (nice 19):
/// a cold scan keeps the cores for decoding, and fills the writer cannot
/// take are dropped (and filled on a later read) rather than slowing it.
/// Measured on the 2-core bench host: a writer at normal priority made a
/// cold zstd scan 0.59x as fast (docs/performance.md). Not `SCHED_IDLE`:
/// on a machine kept busy by other processes it would never run.
fn idle_priority() {
    // SAFETY: gettid and setpriority take and return plain integers; the
    // tid is the calling thread's own.
    let rc = unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 19)
    };
    if rc != 0 {
        log::debug!(
            "disk cache writer: nice 19 refused ({})",
            std::io::Error::last_os_error()
        );
    }
}

/// The thread's loop.
fn run(shared: &Shared, rx: &mpsc::Receiver<Msg>) {
    let mut dirty: HashMap<String, Arc<Entry>> = HashMap::new();
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
                shared.queued.fetch_sub(bytes, Ordering::Relaxed);
                if let Err(e) = write_batch(shared, &batch, &mut dirty) {
                    DiskStats::add(&shared.stats.errors, 1);
                    log::warn!("disk cache: {e}");
                }
                // Persist the entries that filled enough or completed.
                let due: Vec<String> = dirty
                    .iter()
                    .filter(|(_, e)| e.unpersisted() >= PERSIST_BYTES || e.is_complete())
                    .map(|(name, _)| name.clone())
                    .collect();
                persist(shared, &mut dirty, Some(&due));
            }
            Ok(Msg::Flush(ack)) => acks.push(ack),
            Err(mpsc::RecvTimeoutError::Timeout) => persist(shared, &mut dirty, None),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                persist(shared, &mut dirty, None);
                return;
            }
        }
        if !acks.is_empty() {
            // Everything sent before the flush is in the channel ahead of it.
            while let Ok(msg) = rx.try_recv() {
                match msg {
                    Msg::Fill(job) => {
                        shared
                            .queued
                            .fetch_sub(job.bytes.len() as u64, Ordering::Relaxed);
                        if let Err(e) = write_batch(shared, &[job], &mut dirty) {
                            log::warn!("disk cache: {e}");
                        }
                    }
                    Msg::Flush(ack) => acks.push(ack),
                }
            }
            persist(shared, &mut dirty, None);
            for ack in acks {
                let _ = ack.send(());
            }
        }
    }
}

/// Write `batch` under the lock, evicting to make room.
fn write_batch(
    shared: &Shared,
    batch: &[Job],
    dirty: &mut HashMap<String, Arc<Entry>>,
) -> Result<(), DiskError> {
    let locked = shared.index.lock()?;
    let found = locked.scan()?;
    let on_disk: HashMap<&str, u64> = found
        .iter()
        .map(|f| (f.name.as_str(), f.data_ino))
        .collect();
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
            if on_disk.get(name) != Some(&job.entry.data_ino()) {
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
    let Some(evicted) = locked.make_room(&found, need, shared.budget, &keep) else {
        DiskStats::add(&shared.stats.fills_dropped, live.len() as u64);
        return Ok(());
    };
    DiskStats::add(&shared.stats.evictions, evicted.len() as u64);
    for job in live {
        let entry = &job.entry;
        let was_complete = entry.is_complete();
        if let Err(e) = entry.write(job.offset, &job.bytes) {
            let path = shared.index.path(entry.key().name(), "data");
            return Err(DiskError::io(path, e));
        }
        DiskStats::add(&shared.stats.fills, 1);
        DiskStats::add(&shared.stats.fill_bytes, job.bytes.len() as u64);
        if !was_complete && entry.is_complete() {
            DiskStats::add(&shared.stats.completed, 1);
        }
        dirty
            .entry(entry.key().name().to_string())
            .or_insert_with(|| entry.clone());
    }
    Ok(())
}

/// Persist the maps of the dirty entries named in `only` (all when `None`).
fn persist(shared: &Shared, dirty: &mut HashMap<String, Arc<Entry>>, only: Option<&[String]>) {
    let names: Vec<String> = match only {
        Some(names) => names.to_vec(),
        None => dirty.keys().cloned().collect(),
    };
    if names.is_empty() {
        return;
    }
    let locked = match shared.index.lock() {
        Ok(locked) => locked,
        Err(e) => {
            log::warn!("disk cache: {e}");
            return;
        }
    };
    for name in names {
        if let Some(entry) = dirty.remove(&name) {
            if let Err(e) = entry.persist(&locked) {
                DiskStats::add(&shared.stats.errors, 1);
                log::warn!("disk cache: {e}");
            }
        }
    }
}
