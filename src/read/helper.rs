//! Spare threads that decode some of a waiting reader's streams.
//!
//! A random reader waits on exactly one block, and a split block's streams
//! (one per byte of the item) are independent: on a machine whose other
//! cores are idle, a helper decoding the back half while the reader's own
//! thread decodes the front halves the wait (`format::chunk::split` shares
//! the work so a helper that starts late costs nothing). Sequential readers
//! do not use this: the kernel's readahead keeps every FUSE thread busy with
//! whole blocks already.
//!
//! Handing a job to a sleeping thread is slow here (the woken helper can
//! land on the reader's own core and preempt it), so a helper polls for
//! [`SPIN`] after each job, which costs CPU. A reader whose reads come far
//! apart would pay that poll on every read and gain nothing, so a job is
//! only handed over while a helper is polling or while reads come in a
//! burst ([`BURST_GAP`]); otherwise the reader decodes the whole block
//! itself and the helpers stay asleep.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::format::Fork;

type Job = Box<dyn FnOnce() + Send>;

/// Most helper threads, whatever the machine.
const MAX_HELPERS: usize = 3;

/// A few threads waiting for decode jobs; they end when this is dropped.
pub struct DecodeHelpers {
    jobs: Sender<Job>,
    /// Helpers polling for a job right now, and helpers asleep.
    state: Arc<HelperState>,
    /// When the last job was offered (µs since `born`; 0: never).
    last_offer: AtomicU64,
    born: Instant,
}

/// Offers closer together than this are a burst: a job is handed over
/// (waking a helper) even when none is polling. A zstd block takes a few
/// hundred µs to decode, so back-to-back random reads offer well within it.
const BURST_GAP: Duration = Duration::from_millis(1);

impl DecodeHelpers {
    /// Helpers for a machine with `cores` cores: one fewer than the cores
    /// (at most [`MAX_HELPERS`]); none on one core.
    pub fn for_cores(cores: usize) -> Option<DecodeHelpers> {
        DecodeHelpers::start(cores.saturating_sub(1).min(MAX_HELPERS))
    }

    /// `threads` helper threads; none for 0 (or if none could be started).
    pub fn start(threads: usize) -> Option<DecodeHelpers> {
        if threads == 0 {
            return None;
        }
        let (sender, receiver) = channel::<Job>();
        let receiver = Arc::new(Mutex::new(receiver));
        let state = Arc::new(HelperState::default());
        let mut started = 0;
        for i in 0..threads {
            let (receiver, state) = (receiver.clone(), state.clone());
            match std::thread::Builder::new()
                .name(format!("blosc2fs-decode-{i}"))
                .spawn(move || serve(&receiver, &state))
            {
                Ok(_) => started += 1,
                Err(e) => log::warn!("decode helper thread {i} not started: {e}"),
            }
        }
        (started > 0).then_some(DecodeHelpers {
            jobs: sender,
            state,
            last_offer: AtomicU64::new(0),
            born: Instant::now(),
        })
    }

    /// Hand `job` to a helper if one is polling or the offers come in a
    /// burst; otherwise drop it (the reader does its share itself) and
    /// answer false.
    pub fn offer(&self, job: Job) -> bool {
        let now = (self.born.elapsed().as_micros() as u64).max(1);
        let last = self.last_offer.swap(now, Ordering::Relaxed);
        let burst = last != 0 && now.saturating_sub(last) < BURST_GAP.as_micros() as u64;
        if self.state.polling.load(Ordering::Relaxed) == 0 && !burst {
            return false;
        }
        // A send fails only when every helper has ended; the reader then
        // decodes the job's streams itself.
        self.jobs.send(job).is_ok()
    }

    /// Helpers sized for this machine.
    pub fn for_this_machine() -> Option<DecodeHelpers> {
        DecodeHelpers::for_cores(
            std::thread::available_parallelism()
                .map(usize::from)
                .unwrap_or(1),
        )
    }
}

/// How long a helper polls for the next job before it sleeps.
const SPIN: Duration = Duration::from_micros(150);

/// What the helpers are doing, counted.
#[derive(Default)]
struct HelperState {
    /// Helpers polling for a job (not asleep, not working).
    polling: AtomicUsize,
    /// Helpers blocked until a job comes.
    asleep: AtomicUsize,
}

/// A helper thread: run jobs until the sender is gone.
fn serve(jobs: &Mutex<Receiver<Job>>, state: &HelperState) {
    let polling = &state.polling;
    loop {
        let receiver = jobs.lock();
        let deadline = Instant::now() + SPIN;
        polling.fetch_add(1, Ordering::Relaxed);
        let job = loop {
            match receiver.try_recv() {
                Ok(job) => break Ok(job),
                Err(TryRecvError::Disconnected) => break Err(()),
                Err(TryRecvError::Empty) if Instant::now() < deadline => std::thread::yield_now(),
                Err(TryRecvError::Empty) => {
                    state.asleep.fetch_add(1, Ordering::Relaxed);
                    polling.fetch_sub(1, Ordering::Relaxed);
                    let job = receiver.recv().map_err(|_| ());
                    polling.fetch_add(1, Ordering::Relaxed);
                    state.asleep.fetch_sub(1, Ordering::Relaxed);
                    break job;
                }
            }
        };
        polling.fetch_sub(1, Ordering::Relaxed);
        drop(receiver);
        match job {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}

impl Fork for DecodeHelpers {
    fn spawn(&self, job: Box<dyn FnOnce() + Send>) {
        self.offer(job);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn no_helpers_for_one_core_or_zero_threads() {
        assert!(DecodeHelpers::for_cores(1).is_none());
        assert!(DecodeHelpers::for_cores(0).is_none());
        assert!(DecodeHelpers::start(0).is_none());
    }

    /// Wait until the one helper is blocked waiting for a job (it sleeps
    /// once its poll runs out). Not polling is not enough: a helper that has
    /// not started yet, or is on its way back from a job, does not poll
    /// either, and would poll just after.
    fn until_asleep(helpers: &DecodeHelpers) {
        let start = Instant::now();
        while helpers.state.asleep.load(Ordering::Relaxed) != 1
            || helpers.state.polling.load(Ordering::Relaxed) != 0
        {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the helper never went to sleep"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        // Past any burst too.
        std::thread::sleep(BURST_GAP * 2);
    }

    /// A job that sends the name of the thread running it.
    fn naming_job(tx: &mpsc::Sender<Option<String>>) -> Job {
        let tx = tx.clone();
        Box::new(move || {
            tx.send(std::thread::current().name().map(str::to_string))
                .unwrap()
        })
    }

    #[test]
    fn a_lone_job_is_dropped_and_a_burst_wakes_the_helper() {
        let helpers = DecodeHelpers::for_cores(2).expect("one helper");
        let (tx, rx) = mpsc::channel();
        for _ in 0..3 {
            until_asleep(&helpers);
            // Reads far apart: the sleeping helper is left alone.
            assert!(!helpers.offer(naming_job(&tx)));
            // The next read within the burst gap wakes it.
            assert!(helpers.offer(naming_job(&tx)));
            let name = rx
                .recv_timeout(Duration::from_secs(10))
                .expect("the job ran");
            assert_eq!(name.as_deref(), Some("blosc2fs-decode-0"));
            // Only the job handed over ran.
            assert!(rx.try_recv().is_err(), "a dropped job ran");
        }
    }

    #[test]
    fn a_polling_helper_takes_a_job_outside_any_burst() {
        // A new helper polls first; a first offer (no burst: nothing came
        // before it) is taken while it does. The poll lasts 150 µs, so a
        // loaded machine may miss it a few times, never every time.
        let (tx, rx) = mpsc::channel();
        let taken = (0..50).any(|_| {
            let helpers = DecodeHelpers::for_cores(2).expect("one helper");
            let start = Instant::now();
            while helpers.state.polling.load(Ordering::Relaxed) == 0
                && start.elapsed() < Duration::from_millis(100)
            {
                std::hint::spin_loop();
            }
            helpers.offer(naming_job(&tx))
        });
        assert!(taken, "no offer was taken by a polling helper in 50 tries");
        let name = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the job ran");
        assert_eq!(name.as_deref(), Some("blosc2fs-decode-0"));
    }
}
