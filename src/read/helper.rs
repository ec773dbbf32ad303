//! Spare threads that decode some of a waiting reader's streams.
//!
//! A random reader waits on exactly one block, and a split block's streams
//! (one per byte of the item) are independent: on a machine whose other
//! cores are idle, a helper decoding the back half while the reader's own
//! thread decodes the front halves the wait (`format::chunk::split` shares
//! the work so a helper that starts late costs nothing). Sequential readers
//! do not use this: the kernel's readahead keeps every FUSE thread busy with
//! whole blocks already.

use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::format::Fork;

type Job = Box<dyn FnOnce() + Send>;

/// Most helper threads, whatever the machine.
const MAX_HELPERS: usize = 3;

/// A few threads waiting for decode jobs; they end when this is dropped.
pub struct DecodeHelpers {
    jobs: Sender<Job>,
}

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
        let mut started = 0;
        for i in 0..threads {
            let receiver = receiver.clone();
            match std::thread::Builder::new().name(format!("blosc2fs-decode-{i}")).spawn(move || serve(&receiver)) {
                Ok(_) => started += 1,
                Err(e) => log::warn!("decode helper thread {i} not started: {e}"),
            }
        }
        (started > 0).then_some(DecodeHelpers { jobs: sender })
    }

    /// Helpers sized for this machine.
    pub fn for_this_machine() -> Option<DecodeHelpers> {
        DecodeHelpers::for_cores(std::thread::available_parallelism().map(usize::from).unwrap_or(1))
    }
}

/// How long a helper polls for the next job before it sleeps.
const SPIN: Duration = Duration::from_micros(150);

/// A helper thread: run jobs until the sender is gone.
fn serve(jobs: &Mutex<Receiver<Job>>) {
    loop {
        let Ok(receiver) = jobs.lock() else { return };
        let deadline = Instant::now() + SPIN;
        let job = loop {
            match receiver.try_recv() {
                Ok(job) => break Ok(job),
                Err(TryRecvError::Disconnected) => return,
                Err(TryRecvError::Empty) if Instant::now() < deadline => std::thread::yield_now(),
                Err(TryRecvError::Empty) => break receiver.recv(),
            }
        };
        drop(receiver);
        match job {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}

impl Fork for DecodeHelpers {
    fn spawn(&self, job: Box<dyn FnOnce() + Send>) {
        // A send fails only when every helper has ended; the reader then
        // decodes the job's streams itself.
        let _ = self.jobs.send(job);
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

    #[test]
    fn a_spawned_job_runs_on_another_thread() {
        let helpers = DecodeHelpers::for_cores(2).expect("one helper");
        let (tx, rx) = mpsc::channel();
        for _ in 0..3 {
            let tx = tx.clone();
            helpers.spawn(Box::new(move || tx.send(std::thread::current().name().map(str::to_string)).unwrap()));
            let name = rx.recv_timeout(Duration::from_secs(10)).expect("the job ran");
            assert_eq!(name.as_deref(), Some("blosc2fs-decode-0"));
            // Past the polling window, the helper sleeps and must still wake up.
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}
