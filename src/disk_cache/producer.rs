//! The producer thread: makes again the granules reads only named
//! ([`super::pending`]: wanted once, not read again), and gives them to the
//! writer. Making them may mean decoding, so it waits for quiet time: it
//! runs at the lowest priority (nice 19), and only once the mount has been
//! quiet for [`QUIET`] (no read served by decoding), so a cold scan keeps
//! every core for decoding; after [`MAX_DEFER`] of unbroken reading it
//! produces anyway, a batch at a time and at most a tenth of one core.

use parking_lot::Mutex;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::pending::Run;
use super::shared::Shared;
use super::stats::DiskStats;
use super::writer::{Writer, BATCH_BYTES};

/// Wanted granules are produced once no read was served by decoding for
/// this long.
pub const QUIET: Duration = Duration::from_millis(100);

/// Wanted granules older than this are produced even while reads go on.
pub const MAX_DEFER: Duration = Duration::from_secs(10);

/// How often the thread looks again while granules are wanted.
const POLL: Duration = Duration::from_millis(50);

/// Bytes produced between two looks at the messages and the clock.
const PRODUCE_ROUND: u64 = 64 << 20;

/// How long the unmount's flush goes on producing wanted granules.
const FLUSH_PRODUCE: Duration = Duration::from_secs(10);

enum Msg {
    /// Granules were wanted with none wanted before: look now.
    Wake,
    /// Produce everything wanted (for a while), then answer.
    Flush(mpsc::Sender<()>),
}

/// The handle of the producer thread.
pub(super) struct Producer {
    tx: Mutex<Option<mpsc::Sender<Msg>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Producer {
    /// Start the thread, giving what it makes to `writer`.
    pub(super) fn start(shared: Arc<Shared>, writer: Arc<Writer>) -> Producer {
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("disk-cache-producer".into())
            .spawn(move || {
                idle_priority();
                run(&shared, &writer, &rx)
            })
            .ok();
        if thread.is_none() {
            log::warn!("disk cache: no producer thread; only re-reads will be filled");
        }
        Producer {
            tx: Mutex::new(Some(tx)),
            thread: Mutex::new(thread),
        }
    }

    /// Granules were just wanted where none were: have the thread look.
    pub(super) fn wake(&self) {
        self.send(Msg::Wake);
    }

    /// Produce what is wanted (for up to [`FLUSH_PRODUCE`]) and give it to
    /// the writer; returns when done.
    pub(super) fn flush(&self) {
        let (ack, done) = mpsc::channel();
        let patience = FLUSH_PRODUCE + Duration::from_secs(60);
        if self.send(Msg::Flush(ack)) && done.recv_timeout(patience).is_err() {
            log::warn!("disk cache: the producer did not finish flushing in time");
        }
    }

    fn send(&self, msg: Msg) -> bool {
        self.tx
            .lock()
            .as_ref()
            .is_some_and(|tx| tx.send(msg).is_ok())
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        self.tx.lock().take();
        if let Some(thread) = self.thread.lock().take() {
            let _ = thread.join();
        }
    }
}

/// Run the calling thread at the lowest priority (nice 19): what it does
/// waits for quiet time anyway, and a read arriving while it produces a
/// batch takes the core back. Not `SCHED_IDLE`: on a machine kept busy by
/// other processes it would never run.
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
            "disk cache producer: nice 19 refused ({})",
            std::io::Error::last_os_error()
        );
    }
}

/// Whether no read was served by decoding for [`QUIET`].
fn quiet(shared: &Shared) -> bool {
    shared
        .now_ms()
        .saturating_sub(shared.busy_at.load(Ordering::Relaxed))
        >= QUIET.as_millis() as u64
}

/// The thread's loop.
fn run(shared: &Shared, writer: &Writer, rx: &mpsc::Receiver<Msg>) {
    loop {
        let wait = if shared.pending.count() > 0 {
            POLL
        } else {
            Duration::from_secs(1)
        };
        match rx.recv_timeout(wait) {
            Ok(Msg::Wake) | Err(mpsc::RecvTimeoutError::Timeout) => {
                produce_when_quiet(shared, writer)
            }
            Ok(Msg::Flush(ack)) => {
                shared.pending.unpart_all();
                let deadline = Instant::now() + FLUSH_PRODUCE;
                while Instant::now() < deadline && produce_one(shared, writer) {}
                if shared.pending.count() > 0 {
                    log::info!(
                        "disk cache: {} wanted granules left unfilled at unmount",
                        shared.pending.count()
                    );
                }
                let _ = ack.send(());
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// Produce wanted granules: freely while the mount is quiet (granules
/// gathered in parts go back to wanted first: the reads that would have
/// completed them are over), up to [`PRODUCE_ROUND`] bytes before looking
/// at the messages again; while reads go on, only once the oldest want is
/// older than [`MAX_DEFER`], one batch, then resting nine times as long as
/// it took.
fn produce_when_quiet(shared: &Shared, writer: &Writer) {
    let mut produced = 0;
    while produced < PRODUCE_ROUND {
        if quiet(shared) {
            shared.pending.unpart_all();
            if !produce_one(shared, writer) {
                return;
            }
            produced += BATCH_BYTES;
        } else {
            if shared.pending.oldest().is_none_or(|age| age < MAX_DEFER) {
                return;
            }
            let started = Instant::now();
            produce_one(shared, writer);
            std::thread::sleep(started.elapsed() * 9);
            return;
        }
    }
}

/// Produce one run of wanted granules and give it to the writer; false
/// when none is left.
fn produce_one(shared: &Shared, writer: &Writer) -> bool {
    let Some(run) = shared.pending.take(BATCH_BYTES) else {
        return false;
    };
    produce_and_hand(shared, writer, &run);
    true
}

/// Produce `run` (taken from the wanted granules) and give it to the
/// writer, waiting for room; given up when its source changed or failed.
pub(super) fn produce_and_hand(shared: &Shared, writer: &Writer, run: &Run) {
    match produce(shared, run) {
        Some(bytes) => {
            shared.pending.produced(run);
            if !writer.hand(&run.entry, run.start, bytes, true) {
                shared.pending.unhand(&run.entry, run.start, run.end);
            }
        }
        None => shared.pending.abandon(run),
    }
}

/// The bytes of `run`, produced again, when its source is still the
/// version the entry is keyed by (before and after).
fn produce(shared: &Shared, run: &Run) -> Option<Vec<u8>> {
    if run.entry.is_retired() || !run.still_current() {
        log::debug!(
            "disk cache: {} is no longer the version wanted",
            run.entry.key().name()
        );
        return None;
    }
    let mut buffer = vec![0; (run.end - run.start) as usize];
    match run.refill.produce(run.start, &mut buffer) {
        Ok(()) if run.still_current() => {
            DiskStats::add(&shared.stats.produced_bytes, buffer.len() as u64);
            Some(buffer)
        }
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
