//! The writer thread: cache files are written here, off the read path.
//!
//! Two kinds of work reach it. Bytes handed over whole ([`Writer::offer`]:
//! a remote object's bytes just fetched) wait in a queue bounded in bytes
//! ([`QUEUE_BYTES`]). Granules of `data` a read served by decoding
//! ([`super::pending`]) are produced again and written only when the
//! mount has been quiet for [`QUIET`] (no read served by decoding), so a
//! cold scan keeps both cores for decoding; after [`MAX_DEFER`] of
//! unbroken reading they are produced anyway, a batch at a time and at
//! most a tenth of one core.
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
use std::time::{Duration, Instant};

use super::entry::Entry;
use super::error::DiskError;
use super::index::Index;
use super::pending::{Pending, Run};
use super::stats::DiskStats;

/// Fill bytes waiting for the writer at most; more are dropped.
pub const QUEUE_BYTES: u64 = 32 << 20;

/// How long an offer that must not be dropped waits for room in the queue.
const REFILL_WAIT: Duration = Duration::from_secs(1);

/// Bytes written under one hold of the directory lock at most.
const BATCH_BYTES: u64 = 8 << 20;

/// An entry's map is persisted after this many bytes of fills.
const PERSIST_BYTES: u64 = 64 << 20;

/// Maps with fills not yet persisted are persisted this often.
const PERSIST_EVERY: Duration = Duration::from_secs(1);

/// Wanted granules are produced once no read was served by decoding for
/// this long.
pub const QUIET: Duration = Duration::from_millis(100);

/// Wanted granules older than this are produced even while reads go on.
pub const MAX_DEFER: Duration = Duration::from_secs(10);

/// How often the thread looks again while granules are wanted.
const POLL: Duration = Duration::from_millis(50);

/// Bytes produced between two looks at the queue and the clock.
const PRODUCE_ROUND: u64 = 64 << 20;

/// How long the unmount's flush goes on producing wanted granules.
const FLUSH_PRODUCE: Duration = Duration::from_secs(10);

/// Bytes of one entry to write.
struct Job {
    entry: Arc<Entry>,
    offset: u64,
    bytes: Vec<u8>,
}

enum Msg {
    Fill(Job),
    /// Granules were wanted with none wanted before: look now.
    Wake,
    Flush(mpsc::Sender<()>),
}

/// What the writer thread shares with the cache.
pub(super) struct Shared {
    pub(super) index: Index,
    pub(super) budget: u64,
    pub(super) stats: DiskStats,
    /// Fill bytes queued now.
    pub(super) queued: AtomicU64,
    /// Granules of `data` to produce again and write.
    pub(super) pending: Pending,
    /// When the mount last served a read by decoding (ms since `epoch`).
    pub(super) busy_at: AtomicU64,
    pub(super) epoch: Instant,
}

impl Shared {
    /// Milliseconds since the cache started.
    pub(super) fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Whether no read was served by decoding for [`QUIET`].
    fn quiet(&self) -> bool {
        self.now_ms()
            .saturating_sub(self.busy_at.load(Ordering::Relaxed))
            >= QUIET.as_millis() as u64
    }
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
    /// are dropped, unless `wait`: then the caller waits for room, up to
    /// [`REFILL_WAIT`].
    pub(super) fn offer(&self, entry: &Arc<Entry>, offset: u64, bytes: &[u8], wait: bool) {
        let n = bytes.len() as u64;
        let queued = &self.shared.queued;
        let deadline = Instant::now() + REFILL_WAIT;
        while queued.fetch_add(n, Ordering::Relaxed) + n > QUEUE_BYTES {
            queued.fetch_sub(n, Ordering::Relaxed);
            if !wait || Instant::now() > deadline {
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
        if !self.send(Msg::Fill(job)) {
            queued.fetch_sub(n, Ordering::Relaxed);
        }
    }

    /// Granules were just wanted where none were: have the thread look.
    pub(super) fn wake(&self) {
        self.send(Msg::Wake);
    }

    /// Wait until everything queued is written, wanted granules are
    /// produced (for up to [`FLUSH_PRODUCE`]), and every map persisted.
    pub(super) fn flush(&self) {
        let (ack, done) = mpsc::channel();
        let patience = FLUSH_PRODUCE + Duration::from_secs(60);
        if self.send(Msg::Flush(ack)) && done.recv_timeout(patience).is_err() {
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

/// Run the calling thread (the writer) at the lowest priority (nice 19):
/// what it does waits for quiet time anyway, and a read arriving while it
/// produces a batch takes the core back. Not `SCHED_IDLE`: on a machine
/// kept busy by other processes it would never run.
fn idle_priority() {
    // SAFETY: the gettid system call and setpriority take and return plain
    // integers; the tid is the calling thread's own. (The system call, not
    // glibc's gettid(): that wrapper is from glibc 2.30, and the wheel's
    // binary needs at most 2.17.)
    let rc = unsafe {
        let tid = libc::syscall(libc::SYS_gettid);
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
    let mut scratch = Vec::new();
    let mut persisted = Instant::now();
    loop {
        let mut acks = Vec::new();
        let wait = if shared.pending.count() > 0 {
            POLL
        } else {
            PERSIST_EVERY
        };
        match rx.recv_timeout(wait) {
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
                        Ok(Msg::Wake) => {}
                        Err(_) => break,
                    }
                }
                shared.queued.fetch_sub(bytes, Ordering::Relaxed);
                write_logged(shared, &batch, &mut dirty);
                persist_due(shared, &mut dirty);
            }
            Ok(Msg::Wake) => {}
            Ok(Msg::Flush(ack)) => acks.push(ack),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                persist(shared, &mut dirty, None);
                return;
            }
        }
        if acks.is_empty() {
            produce_when_quiet(shared, &mut dirty, &mut scratch);
        } else {
            // Everything sent before the flush is in the channel ahead of it.
            while let Ok(msg) = rx.try_recv() {
                match msg {
                    Msg::Fill(job) => {
                        shared
                            .queued
                            .fetch_sub(job.bytes.len() as u64, Ordering::Relaxed);
                        write_logged(shared, &[job], &mut dirty);
                    }
                    Msg::Flush(ack) => acks.push(ack),
                    Msg::Wake => {}
                }
            }
            let deadline = Instant::now() + FLUSH_PRODUCE;
            while Instant::now() < deadline && produce_one(shared, &mut dirty, &mut scratch) {}
            if shared.pending.count() > 0 {
                log::info!(
                    "disk cache: {} wanted granules left unfilled at unmount",
                    shared.pending.count()
                );
            }
            persist(shared, &mut dirty, None);
            for ack in acks {
                let _ = ack.send(());
            }
        }
        if persisted.elapsed() >= PERSIST_EVERY {
            persist(shared, &mut dirty, None);
            persisted = Instant::now();
        }
    }
}

/// Produce wanted granules: freely while the mount is quiet, up to
/// [`PRODUCE_ROUND`] bytes before looking at the queue again; while reads
/// go on, only once the oldest want is older than [`MAX_DEFER`], one batch,
/// then resting nine times as long as it took.
fn produce_when_quiet(
    shared: &Shared,
    dirty: &mut HashMap<String, Arc<Entry>>,
    scratch: &mut Vec<u8>,
) {
    let mut produced = 0;
    while produced < PRODUCE_ROUND && shared.pending.count() > 0 {
        if shared.quiet() {
            if !produce_one(shared, dirty, scratch) {
                return;
            }
            produced += BATCH_BYTES;
        } else {
            if shared.pending.oldest().is_none_or(|age| age < MAX_DEFER) {
                return;
            }
            let started = Instant::now();
            produce_one(shared, dirty, scratch);
            std::thread::sleep(started.elapsed() * 9);
            return;
        }
    }
}

/// Produce and write one run of wanted granules; false when none is left.
fn produce_one(
    shared: &Shared,
    dirty: &mut HashMap<String, Arc<Entry>>,
    scratch: &mut Vec<u8>,
) -> bool {
    let Some(run) = shared.pending.take(BATCH_BYTES) else {
        return false;
    };
    if let Some(job) = produce(shared, &run, std::mem::take(scratch)) {
        write_logged(shared, std::slice::from_ref(&job), dirty);
        persist_due(shared, dirty);
        *scratch = job.bytes;
    }
    shared.pending.finish(&run);
    true
}

/// The bytes of `run`, produced again into `buffer`, when its source is
/// still the version the entry is keyed by (before and after).
fn produce(shared: &Shared, run: &Run, mut buffer: Vec<u8>) -> Option<Job> {
    if run.entry.is_retired() || !run.still_current() {
        log::debug!(
            "disk cache: {} is no longer the version wanted",
            run.entry.key().name()
        );
        return None;
    }
    buffer.clear();
    buffer.resize((run.end - run.start) as usize, 0);
    match run.refill.produce(run.start, &mut buffer) {
        Ok(()) if run.still_current() => Some(Job {
            entry: run.entry.clone(),
            offset: run.start,
            bytes: buffer,
        }),
        Ok(()) => {
            log::debug!(
                "disk cache: {} changed while produced",
                run.entry.key().name()
            );
            None
        }
        Err(e) => {
            DiskStats::add(&shared.stats.errors, 1);
            log::warn!("disk cache: producing {}: {e}", run.entry.key().name());
            None
        }
    }
}

/// [`write_batch`], its error counted and logged.
fn write_logged(shared: &Shared, batch: &[Job], dirty: &mut HashMap<String, Arc<Entry>>) {
    if let Err(e) = write_batch(shared, batch, dirty) {
        DiskStats::add(&shared.stats.errors, 1);
        log::warn!("disk cache: {e}");
    }
}

/// Persist the dirty entries that filled enough or completed.
fn persist_due(shared: &Shared, dirty: &mut HashMap<String, Arc<Entry>>) {
    let due: Vec<String> = dirty
        .iter()
        .filter(|(_, e)| e.unpersisted() >= PERSIST_BYTES || e.is_complete())
        .map(|(name, _)| name.clone())
        .collect();
    persist(shared, dirty, Some(&due));
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
