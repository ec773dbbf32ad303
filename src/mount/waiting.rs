//! Worker threads for requests that may wait on a network.
//!
//! FUSE has few request threads (`--threads`). A read of a remote array, or
//! the lookup, getattr or open that first loads its header, can wait a
//! round trip, or a stalled server's whole timeout; answered on a FUSE
//! thread, it would hold that thread and every request behind it (two
//! stalled lookups held every `ls` of a mount with two FUSE threads). Such
//! requests are handed to this pool instead, and answered from there
//! (fuser's replies may be sent from any thread); the pool grows while
//! its workers are all waiting, up to a bound.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread;

/// A read to serve, reply included.
pub type Job = Box<dyn FnOnce() + Send + 'static>;

/// Reads waiting for a worker before new ones are served on the caller's
/// thread (backpressure rather than an unbounded queue).
const QUEUE: usize = 256;

/// Threads serving queued jobs: `workers` from the start, and one more
/// (up to `most`) whenever a job comes while the jobs not yet taken
/// outnumber the idle workers, so jobs stalled on one server never keep the
/// next job waiting while room is left. (Counting idle workers alone was
/// not enough: a worker counts as idle until it has taken its job, so jobs
/// sent in a row all saw it idle and queued behind one another.)
pub struct WaitPool {
    queue: Option<SyncSender<Job>>,
    rx: Arc<Mutex<Receiver<Job>>>,
    /// Workers waiting for a job now.
    idle: Arc<AtomicUsize>,
    /// Jobs sent and not yet taken by a worker.
    queued: Arc<AtomicUsize>,
    /// Workers started.
    started: AtomicUsize,
    most: usize,
}

impl WaitPool {
    /// Start `workers` threads, growing to at most `most` (no workers:
    /// every job runs on its caller).
    pub fn start(workers: usize, most: usize) -> WaitPool {
        let (tx, rx) = sync_channel::<Job>(QUEUE);
        let pool = WaitPool {
            queue: None,
            rx: Arc::new(Mutex::new(rx)),
            idle: Arc::new(AtomicUsize::new(0)),
            queued: Arc::new(AtomicUsize::new(0)),
            started: AtomicUsize::new(0),
            most: most.max(workers),
        };
        if workers == 0 {
            return pool;
        }
        let started = (0..workers).filter(|_| pool.spawn()).count();
        WaitPool {
            queue: (started > 0).then_some(tx),
            ..pool
        }
    }

    /// Start one more worker; false when the thread could not be started.
    fn spawn(&self) -> bool {
        let n = self.started.fetch_add(1, Ordering::SeqCst);
        let (rx, idle, queued) = (self.rx.clone(), self.idle.clone(), self.queued.clone());
        // Counted idle before it runs, so two jobs in a row start one thread.
        idle.fetch_add(1, Ordering::SeqCst);
        match thread::Builder::new()
            .name(format!("remote-wait-{n}"))
            .spawn(move || serve(&rx, &idle, &queued))
        {
            Ok(_) => true,
            Err(e) => {
                self.idle.fetch_sub(1, Ordering::SeqCst);
                self.started.fetch_sub(1, Ordering::SeqCst);
                log::warn!("cannot start a remote wait worker: {e}");
                false
            }
        }
    }

    /// Run `job` on a worker, or here when the queue is full or no worker runs.
    pub fn run(&self, job: Job) {
        let Some(queue) = &self.queue else {
            return job();
        };
        let queued = self.queued.fetch_add(1, Ordering::SeqCst) + 1;
        if queued > self.idle.load(Ordering::SeqCst)
            && self.started.load(Ordering::SeqCst) < self.most
        {
            self.spawn();
        }
        match queue.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(job)) | Err(TrySendError::Disconnected(job)) => {
                self.queued.fetch_sub(1, Ordering::SeqCst);
                job()
            }
        }
    }
}

fn serve(rx: &Mutex<Receiver<Job>>, idle: &AtomicUsize, queued: &AtomicUsize) {
    loop {
        let job = match rx.lock().recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        queued.fetch_sub(1, Ordering::SeqCst);
        idle.fetch_sub(1, Ordering::SeqCst);
        job();
        idle.fetch_add(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;
    use std::time::{Duration, Instant};

    #[test]
    fn a_stalled_job_does_not_hold_up_the_caller_or_the_next_jobs() {
        let pool = WaitPool::start(2, 2);
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

    /// Jobs that stall every worker make the pool grow: the next job
    /// still runs at once.
    #[test]
    fn stalled_jobs_grow_the_pool_up_to_its_bound() {
        let pool = WaitPool::start(1, 4);
        let (stall_tx, stall_rx) = channel::<()>();
        let stall_rx = Arc::new(Mutex::new(stall_rx));
        for _ in 0..3 {
            let stall_rx = stall_rx.clone();
            pool.run(Box::new(move || {
                let _ = stall_rx.lock().recv_timeout(Duration::from_secs(5));
            }));
        }
        let (tx, rx) = channel();
        pool.run(Box::new(move || tx.send("fast").unwrap()));
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(2)),
            Ok("fast"),
            "a fourth worker took the job"
        );
        assert!(pool.started.load(Ordering::SeqCst) <= 4);
        drop(stall_tx);
    }

    #[test]
    fn without_workers_jobs_run_on_the_caller() {
        let pool = WaitPool::start(0, 0);
        let here = thread::current().id();
        let (tx, rx) = channel();
        pool.run(Box::new(move || tx.send(thread::current().id()).unwrap()));
        assert_eq!(rx.recv().unwrap(), here);
    }
}
