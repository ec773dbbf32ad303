//! Worker threads for reads that may wait on a network.
//!
//! FUSE has few request threads (`--threads`). A read of a remote array can
//! wait a round trip, or a stalled server's whole timeout; answered on a
//! FUSE thread, it would hold that thread and every lookup and local read
//! behind it. Such reads are handed to this pool instead, and answered from
//! there (fuser's replies may be sent from any thread).

use parking_lot::Mutex;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread;

/// A read to serve, reply included.
pub type Job = Box<dyn FnOnce() + Send + 'static>;

/// Reads waiting for a worker before new ones are served on the caller's
/// thread (backpressure rather than an unbounded queue).
const QUEUE: usize = 256;

/// A fixed set of threads serving queued jobs.
pub struct WaitPool {
    queue: Option<SyncSender<Job>>,
}

impl WaitPool {
    /// Start `workers` threads (none: every job runs on its caller).
    pub fn start(workers: usize) -> WaitPool {
        if workers == 0 {
            return WaitPool { queue: None };
        }
        let (tx, rx) = sync_channel::<Job>(QUEUE);
        let rx = Arc::new(Mutex::new(rx));
        let mut started = 0;
        for i in 0..workers {
            let rx = rx.clone();
            match thread::Builder::new()
                .name(format!("remote-read-{i}"))
                .spawn(move || serve(&rx))
            {
                Ok(_) => started += 1,
                Err(e) => log::warn!("cannot start a remote read worker: {e}"),
            }
        }
        WaitPool {
            queue: (started > 0).then_some(tx),
        }
    }

    /// Run `job` on a worker, or here when the queue is full or no worker runs.
    pub fn run(&self, job: Job) {
        let Some(queue) = &self.queue else {
            return job();
        };
        match queue.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(job)) | Err(TrySendError::Disconnected(job)) => job(),
        }
    }
}

fn serve(rx: &Mutex<Receiver<Job>>) {
    loop {
        let job = match rx.lock().recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        job();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;
    use std::time::{Duration, Instant};

    #[test]
    fn a_stalled_job_does_not_hold_up_the_caller_or_the_next_jobs() {
        let pool = WaitPool::start(2);
        let (tx, rx) = channel();
        let t0 = Instant::now();
        let slow = tx.clone();
        pool.run(Box::new(move || {
            thread::sleep(Duration::from_millis(500));
            slow.send("slow").unwrap();
        }));
        pool.run(Box::new(move || tx.send("fast").unwrap()));
        assert!(
            t0.elapsed() < Duration::from_millis(400),
            "run() waited for the job"
        );
        assert_eq!(
            rx.recv().unwrap(),
            "fast",
            "the second job finished first, on the other worker"
        );
        assert_eq!(rx.recv().unwrap(), "slow");
    }

    #[test]
    fn without_workers_jobs_run_on_the_caller() {
        let pool = WaitPool::start(0);
        let here = thread::current().id();
        let (tx, rx) = channel();
        pool.run(Box::new(move || tx.send(thread::current().id()).unwrap()));
        assert_eq!(rx.recv().unwrap(), here);
    }
}
