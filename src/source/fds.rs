//! The open descriptors of local sources: a few, whatever the size of the
//! tree.
//!
//! A mount may present a million arrays; the process may hold 1024
//! descriptors. So a [`FileSource`](super::FileSource) does not own its
//! descriptor: it holds it weakly, and this pool (one per process) keeps the
//! most recently used ones open, at most [`Descriptors::capacity`] of them.
//! A source whose descriptor was closed opens its path again on the next
//! read and checks that it found the same file (see `file.rs`). Whoever
//! needs a descriptor to stay (an open `data` handle, so a file replaced
//! under it keeps reading its old bytes) holds it strongly: the pool then
//! closes only its own reference.
//!
//! Every open of the source tree goes through [`retry_exhausted`]: `EMFILE`
//! or `ENFILE` closes half of the pool and tries again, so running out of
//! descriptors makes the mount slower, never unlistable.

use parking_lot::Mutex;
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The share of the process's descriptor limit the pool may keep open:
/// the rest is for the kernel connection, open handles, listings and
/// sparse-frame chunk files read one at a time.
const LIMIT_SHARE: u64 = 4;
/// The pool's size bounds, whatever the limit.
const MIN_CAPACITY: usize = 4;
const MAX_CAPACITY: usize = 16_384;
/// How many times an open that hit `EMFILE` / `ENFILE` is tried again.
const RETRIES: usize = 4;

/// The pool of open source descriptors of this process.
pub struct Descriptors {
    open: Mutex<lru::LruCache<u64, Arc<File>>>,
    capacity: AtomicUsize,
    next_id: AtomicU64,
    opens: AtomicU64,
    reopens: AtomicU64,
    evictions: AtomicU64,
    retries: AtomicU64,
}

/// What the pool holds and has done, for `.stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DescriptorStats {
    /// Most descriptors the pool keeps open.
    pub capacity: usize,
    /// Descriptors it keeps open now.
    pub cached: usize,
    /// Files opened for the first time by a source.
    pub opens: u64,
    /// Files opened again after their descriptor was closed.
    pub reopens: u64,
    /// Descriptors the pool closed to stay within its capacity.
    pub evictions: u64,
    /// Opens tried again after `EMFILE` / `ENFILE`.
    pub retries: u64,
}

/// The pool (sized from the current soft limit until [`Descriptors::set_capacity`]).
pub fn pool() -> &'static Descriptors {
    static POOL: OnceLock<Descriptors> = OnceLock::new();
    POOL.get_or_init(|| Descriptors {
        open: Mutex::new(lru::LruCache::unbounded()),
        capacity: AtomicUsize::new(capacity_for(soft_limit())),
        next_id: AtomicU64::new(1),
        opens: AtomicU64::new(0),
        reopens: AtomicU64::new(0),
        evictions: AtomicU64::new(0),
        retries: AtomicU64::new(0),
    })
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

impl Descriptors {
    /// Most descriptors kept open.
    pub fn capacity(&self) -> usize {
        self.capacity.load(Ordering::Relaxed)
    }

    /// Keep at most `capacity` descriptors open (at least one), closing the
    /// least recently used now if needed.
    pub fn set_capacity(&self, capacity: usize) {
        self.capacity.store(capacity.max(1), Ordering::Relaxed);
        self.shrink_to(capacity.max(1));
    }

    /// What the pool holds and has done.
    pub fn stats(&self) -> DescriptorStats {
        DescriptorStats {
            capacity: self.capacity(),
            cached: self.lock().len(),
            opens: self.opens.load(Ordering::Relaxed),
            reopens: self.reopens.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
            retries: self.retries.load(Ordering::Relaxed),
        }
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, lru::LruCache<u64, Arc<File>>> {
        self.open.lock()
    }

    /// A number for a new source's descriptor.
    pub(super) fn new_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Count an open (`again`: a source opening its path again).
    pub(super) fn count_open(&self, again: bool) {
        let counter = if again { &self.reopens } else { &self.opens };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Keep `file` open under `id` (the most recently used now).
    pub(super) fn keep(&self, id: u64, file: Arc<File>) {
        let closed = {
            let mut open = self.lock();
            open.put(id, file);
            pop_beyond(&mut open, self.capacity())
        };
        self.evictions
            .fetch_add(closed.len() as u64, Ordering::Relaxed);
    }

    /// Mark `id` as just used.
    pub(super) fn touch(&self, id: u64) {
        self.lock().get(&id);
    }

    /// The source `id` is gone: close its descriptor (unless someone holds it).
    pub(super) fn forget(&self, id: u64) {
        let closed = self.lock().pop(&id);
        drop(closed);
    }

    fn shrink_to(&self, keep: usize) -> usize {
        let closed = pop_beyond(&mut self.lock(), keep);
        self.evictions
            .fetch_add(closed.len() as u64, Ordering::Relaxed);
        closed.len()
    }

    /// Close the least recently used half of the pool (at least one); how
    /// many were closed.
    pub fn close_some(&self) -> usize {
        let held = self.lock().len();
        self.shrink_to(held / 2)
    }
}

/// Pop the least recently used descriptors until `open` holds at most
/// `keep`; they are closed when the caller drops them (outside its lock),
/// unless someone else holds them.
fn pop_beyond(open: &mut lru::LruCache<u64, Arc<File>>, keep: usize) -> Vec<Arc<File>> {
    let mut closed = Vec::new();
    while open.len() > keep {
        closed.extend(open.pop_lru().map(|(_, f)| f));
    }
    closed
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
                pool().retries.fetch_add(1, Ordering::Relaxed);
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
