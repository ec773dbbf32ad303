//! The open descriptors of local sources: a few, whatever the size of the
//! tree.
//!
//! A mount may present a million arrays; the process may hold 1024
//! descriptors. So a [`FileSource`](super::FileSource) does not own its
//! descriptor: it holds it weakly, and this pool (one per process, a
//! [`DescriptorPool`] as the disk cache's data files have) keeps the most
//! recently used ones open, at most a share of the descriptor limit.
//! A source whose descriptor was closed opens its path again on the next
//! read and checks that it found the same file (see `file.rs`). Whoever
//! needs a descriptor to stay (an open `data` handle, so a file replaced
//! under it keeps reading its old bytes) holds it strongly: the pool then
//! closes only its own reference.
//!
//! Every open of the source tree goes through [`retry_exhausted`]: `EMFILE`
//! or `ENFILE` closes half of the pool and tries again, so running out of
//! descriptors makes the mount slower, never unlistable.

use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::descriptors::{DescriptorPool, PoolStats};

/// The share of the process's descriptor limit the pool may keep open:
/// the rest is for the kernel connection, open handles, listings and
/// sparse-frame chunk files read one at a time.
const LIMIT_SHARE: u64 = 4;
/// The pool's size bounds, whatever the limit.
const MIN_CAPACITY: usize = 4;
const MAX_CAPACITY: usize = 16_384;
/// How many times an open that hit `EMFILE` / `ENFILE` is tried again.
const RETRIES: usize = 4;

/// Opens tried again after `EMFILE` / `ENFILE`, in this process.
static RETRIED: AtomicU64 = AtomicU64::new(0);

/// What the source pool holds and has done, for `.stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DescriptorStats {
    /// The pool's own counters.
    pub pool: PoolStats,
    /// Opens tried again after `EMFILE` / `ENFILE`.
    pub retries: u64,
}

/// The pool of open source descriptors of this process (sized from the
/// current soft limit until [`raise_limit`]).
pub fn pool() -> &'static DescriptorPool {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| DescriptorPool::new(capacity_for(soft_limit())))
}

/// What the source pool holds and has done.
pub fn stats() -> DescriptorStats {
    DescriptorStats {
        pool: pool().stats(),
        retries: RETRIED.load(Ordering::Relaxed),
    }
}

/// The pool's capacity for a process allowed `limit` descriptors.
pub fn capacity_for(limit: u64) -> usize {
    ((limit / LIMIT_SHARE) as usize).clamp(MIN_CAPACITY, MAX_CAPACITY)
}

fn soft_limit() -> u64 {
    nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map_or(1024, |(soft, _)| soft)
}

/// Raise this process's soft descriptor limit to its hard limit, as servers
/// do, and size the pool from it. Returns the soft limit now.
pub fn raise_limit() -> u64 {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let limit = match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, hard)) if soft < hard => match setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
            Ok(()) => hard,
            Err(e) => {
                log::warn!("cannot raise the open-file limit from {soft} to {hard}: {e}");
                soft
            }
        },
        Ok((soft, _)) => soft,
        Err(_) => 1024,
    };
    pool().set_capacity(capacity_for(limit));
    log::info!(
        "open-file limit {limit}: up to {} source descriptors kept open",
        pool().capacity()
    );
    limit
}

/// Whether `e` says the process or the system ran out of descriptors.
pub fn is_exhausted(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE))
}

/// Run `open` (anything that takes a descriptor: an open, a directory
/// listing); on `EMFILE` / `ENFILE` close half of the pool and try again,
/// a few times, before giving up with the error.
pub fn retry_exhausted<T>(mut open: impl FnMut() -> std::io::Result<T>) -> std::io::Result<T> {
    let mut tries = 0;
    loop {
        match open() {
            Err(e) if is_exhausted(&e) && tries < RETRIES => {
                tries += 1;
                RETRIED.fetch_add(1, Ordering::Relaxed);
                if pool().close_some() == 0 {
                    // Nothing of ours to close: others hold them; wait a little.
                    std::thread::sleep(std::time::Duration::from_millis(5 << tries));
                }
            }
            other => return other,
        }
    }
}

/// Open `path` read-only, closing pooled descriptors if the process ran out.
pub fn open_file(path: &Path) -> std::io::Result<File> {
    retry_exhausted(|| File::open(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_is_a_share_of_the_limit_within_bounds() {
        assert_eq!(capacity_for(1024), 256);
        assert_eq!(capacity_for(256), 64);
        assert_eq!(capacity_for(8), MIN_CAPACITY);
        assert_eq!(capacity_for(1 << 30), MAX_CAPACITY);
    }

    #[test]
    fn exhaustion_is_told_from_other_errors() {
        assert!(is_exhausted(&std::io::Error::from_raw_os_error(
            libc::EMFILE
        )));
        assert!(is_exhausted(&std::io::Error::from_raw_os_error(
            libc::ENFILE
        )));
        assert!(!is_exhausted(&std::io::Error::from_raw_os_error(
            libc::ENOENT
        )));
        let mut calls = 0;
        let got = retry_exhausted(|| {
            calls += 1;
            if calls < 3 {
                Err(std::io::Error::from_raw_os_error(libc::EMFILE))
            } else {
                Ok(calls)
            }
        });
        assert_eq!(got.unwrap(), 3, "tried again until it worked");
        let mut calls = 0;
        let err = retry_exhausted(|| -> std::io::Result<()> {
            calls += 1;
            Err(std::io::Error::from_raw_os_error(libc::ENFILE))
        });
        assert_eq!(err.unwrap_err().raw_os_error(), Some(libc::ENFILE));
        assert_eq!(calls, RETRIES + 1, "gives up after a few tries");
    }
}
