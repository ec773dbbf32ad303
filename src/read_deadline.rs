//! One read's time budget, for reads that wait on a network.
//!
//! A FUSE read of a remote array may need several round trips in a row (a
//! chunk's header, then its blocks; a range over several chunks), each cut
//! at the remote timeout on its own: a read could take a few times
//! `--remote-timeout`. The adapter opens a [`Scope`] around each read it
//! serves; the first request that waits inside it starts the clock at the
//! timeout its connection uses, and every later wait of that read gets only
//! what is left ([`limit`]). The budget is per thread: the read's own
//! thread waits for every request it needs, whoever sends them.
//! Outside a scope (opens, listings, the one-shot commands) each wait gets
//! its whole timeout.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// The state of this thread's read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Budget {
    /// No read under way.
    Unbounded,
    /// A read under way that has not waited yet.
    Open,
    /// A read under way, to be answered by then.
    Until(Instant),
}

thread_local! {
    static BUDGET: Cell<Budget> = const { Cell::new(Budget::Unbounded) };
}

/// One read under way on this thread, until dropped (scopes nest: an inner
/// one keeps the outer budget).
#[must_use = "the budget ends when the scope is dropped"]
pub struct Scope {
    before: Budget,
}

impl Scope {
    /// Begin a read.
    pub fn begin() -> Scope {
        let before = BUDGET.get();
        if before == Budget::Unbounded {
            BUDGET.set(Budget::Open);
        }
        Scope { before }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        BUDGET.set(self.before);
    }
}

/// How long a wait of at most `timeout` may last now: all of it outside a
/// read, or the first wait of one (which starts its clock at `timeout`);
/// what is left of the read's budget after that (zero once spent).
pub fn limit(timeout: Duration) -> Duration {
    match BUDGET.get() {
        Budget::Unbounded => timeout,
        Budget::Open => {
            BUDGET.set(Budget::Until(Instant::now() + timeout));
            timeout
        }
        Budget::Until(end) => end.saturating_duration_since(Instant::now()).min(timeout),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_a_read_every_wait_gets_its_timeout() {
        let t = Duration::from_secs(5);
        assert_eq!(limit(t), t);
        assert_eq!(limit(t), t);
    }

    #[test]
    fn the_first_wait_of_a_read_starts_its_clock_and_later_ones_get_the_rest() {
        let t = Duration::from_millis(300);
        let scope = Scope::begin();
        assert_eq!(limit(t), t);
        std::thread::sleep(Duration::from_millis(120));
        let left = limit(t);
        assert!(left <= Duration::from_millis(180), "{left:?}");
        // A longer timeout asked later does not stretch the read.
        assert!(limit(Duration::from_secs(60)) <= Duration::from_millis(180));
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(limit(t), Duration::ZERO, "spent");
        drop(scope);
        assert_eq!(limit(t), t, "the next read starts afresh");
    }

    #[test]
    fn nested_scopes_share_the_outer_budget() {
        let t = Duration::from_millis(200);
        let outer = Scope::begin();
        assert_eq!(limit(t), t);
        std::thread::sleep(Duration::from_millis(50));
        {
            let _inner = Scope::begin();
            assert!(limit(t) <= Duration::from_millis(150));
        }
        assert!(
            limit(t) <= Duration::from_millis(150),
            "still the outer read's"
        );
        drop(outer);
        assert_eq!(limit(t), t);
    }

    #[test]
    fn other_threads_have_their_own_budget() {
        let t = Duration::from_millis(100);
        let _scope = Scope::begin();
        assert_eq!(limit(t), t);
        std::thread::sleep(Duration::from_millis(120));
        assert_eq!(limit(t), Duration::ZERO);
        let theirs = std::thread::spawn(move || limit(t)).join().unwrap();
        assert_eq!(theirs, t);
    }
}
