//! How the threads that answer the kernel's requests are scheduled.
//!
//! A reader scanning a file through the page cache (`dd`, `cat`,
//! `numpy.fromfile`) makes the kernel send a window of read requests at
//! once and then copies the pages out as they fill. Traced on the 2-core
//! machine (the `fuse` and `sched` tracepoints over a cold `dd` of an LZ4
//! array): every request woke a FUSE thread that preempted the reader on
//! its own CPU, so the two FUSE threads decoded a window on both CPUs while
//! the reader sat runnable, and then the reader copied the window out alone
//! while the other CPU idled (a fifth of the scan). Under `SCHED_BATCH` a
//! thread keeps its share of the CPU (nice 0, same weight) but does not
//! preempt the running thread when a request wakes it: the reader goes on
//! copying out one window while the next one decodes. A thread waiting for
//! a CPU still gets one as soon as a CPU is free, so a reader that blocks
//! on a small read is answered as before.

use std::str::FromStr;

/// Scheduling policy of the FUSE threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sched {
    /// `SCHED_BATCH`: woken by a request, a FUSE thread does not preempt the
    /// thread running on its CPU (the client copying out pages).
    #[default]
    Batch,
    /// Whatever the daemon was started with (normally `SCHED_OTHER`).
    Normal,
}

impl FromStr for Sched {
    type Err = String;

    fn from_str(text: &str) -> Result<Sched, String> {
        match text {
            "batch" => Ok(Sched::Batch),
            "normal" => Ok(Sched::Normal),
            other => Err(format!("sched: `{other}` is neither `batch` nor `normal`")),
        }
    }
}

/// Give the calling thread `sched`, which the threads it starts afterwards
/// inherit. [`Sched::Normal`] leaves the thread as it is.
pub fn apply_to_this_thread(sched: Sched) -> std::io::Result<()> {
    match sched {
        Sched::Normal => Ok(()),
        Sched::Batch => set_policy(libc::SCHED_BATCH),
    }
}

fn set_policy(policy: libc::c_int) -> std::io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid sched_param that the call only reads; pid 0
    // is the calling thread.
    let rc = unsafe { libc::sched_setscheduler(0, policy, &param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The policy of the calling thread, as the kernel reports it.
    fn policy_of_this_thread() -> libc::c_int {
        // SAFETY: sched_getscheduler only reads the calling thread's policy.
        unsafe { libc::sched_getscheduler(0) }
    }

    #[test]
    fn names_parse_and_others_are_refused() {
        assert_eq!("batch".parse(), Ok(Sched::Batch));
        assert_eq!("normal".parse(), Ok(Sched::Normal));
        assert_eq!(
            "fifo".parse::<Sched>(),
            Err("sched: `fifo` is neither `batch` nor `normal`".to_string())
        );
        assert_eq!(Sched::default(), Sched::Batch);
    }

    #[test]
    fn batch_reaches_this_thread_and_the_threads_it_starts() {
        std::thread::spawn(|| {
            let before = policy_of_this_thread();
            apply_to_this_thread(Sched::Normal).unwrap();
            assert_eq!(
                policy_of_this_thread(),
                before,
                "normal leaves the policy alone"
            );
            apply_to_this_thread(Sched::Batch).unwrap();
            assert_eq!(policy_of_this_thread(), libc::SCHED_BATCH);
            let child = std::thread::spawn(policy_of_this_thread).join().unwrap();
            assert_eq!(
                child,
                libc::SCHED_BATCH,
                "a thread started afterwards inherits it"
            );
        })
        .join()
        .unwrap();
        // The test thread that spawned it is untouched.
        assert_ne!(policy_of_this_thread(), libc::SCHED_BATCH);
    }
}
