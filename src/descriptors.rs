//! One kind of descriptor pool, for every file the mount reads by path
//! again and again: source files (`source::fds`, one pool per process,
//! sized from the descriptor limit) and the disk cache's data files
//! (`disk_cache::data_file`, one pool per cache). A mount may present a
//! million arrays and see ten thousand cache entries; the process may hold
//! 1024 descriptors. So the files do not own their descriptors: a pool
//! keeps the most recently used ones open, at most its capacity, and a file
//! whose descriptor was closed opens its path again and checks that it is
//! still the same file (each user checks what "the same" means to it: a
//! source its version, a cache entry its inode and creation time).
//!
//! Whoever holds a descriptor handed out keeps it open until done; the pool
//! closes only its own reference.
//!
//! It lives in a module of its own, below both `source/` and `disk_cache/`
//! and importing nothing of the crate, so that both can use it and no import
//! runs back up (source/ sits above disk_cache/, and format/ keeps no
//! caches of files).

use parking_lot::Mutex;
use std::fs::File;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Open descriptors by the id of the file they belong to, least recently
/// used first out.
#[derive(Debug)]
pub struct DescriptorPool {
    open: Mutex<lru::LruCache<u64, Arc<File>>>,
    capacity: AtomicUsize,
    next_id: AtomicU64,
    opens: AtomicU64,
    reopens: AtomicU64,
    evictions: AtomicU64,
}

/// What a pool holds and has done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolStats {
    /// Most descriptors the pool keeps open.
    pub capacity: usize,
    /// Descriptors it keeps open now.
    pub cached: usize,
    /// Files opened for the first time.
    pub opens: u64,
    /// Files opened again after their descriptor was closed.
    pub reopens: u64,
    /// Descriptors the pool closed to stay within its capacity.
    pub evictions: u64,
}

impl DescriptorPool {
    /// A pool keeping at most `capacity` descriptors open (at least one).
    pub fn new(capacity: usize) -> DescriptorPool {
        DescriptorPool {
            open: Mutex::new(lru::LruCache::unbounded()),
            capacity: AtomicUsize::new(capacity.max(1)),
            next_id: AtomicU64::new(1),
            opens: AtomicU64::new(0),
            reopens: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
        }
    }

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

    /// Descriptors held open now.
    pub fn held(&self) -> usize {
        self.open.lock().len()
    }

    /// What the pool holds and has done.
    pub fn stats(&self) -> PoolStats {
        PoolStats {
            capacity: self.capacity(),
            cached: self.held(),
            opens: self.opens.load(Ordering::Relaxed),
            reopens: self.reopens.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
        }
    }

    /// A number for a new file's descriptor.
    pub fn new_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Count an open (`again`: a file's path opened again).
    pub fn count_open(&self, again: bool) {
        let counter = if again { &self.reopens } else { &self.opens };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Keep `file` open under `id` (the most recently used now), closing
    /// the least recently used beyond the capacity.
    pub fn keep(&self, id: u64, file: Arc<File>) {
        let closed = {
            let mut open = self.open.lock();
            open.put(id, file);
            pop_beyond(&mut open, self.capacity())
        };
        self.evictions
            .fetch_add(closed.len() as u64, Ordering::Relaxed);
    }

    /// The descriptor kept under `id`, if still open (marked just used).
    pub fn get(&self, id: u64) -> Option<Arc<File>> {
        self.open.lock().get(&id).cloned()
    }

    /// Mark `id` as just used.
    pub fn touch(&self, id: u64) {
        self.open.lock().get(&id);
    }

    /// The file `id` is gone: close its descriptor (unless someone holds it).
    pub fn forget(&self, id: u64) {
        let closed = self.open.lock().pop(&id);
        drop(closed);
    }

    /// Close the least recently used half of the pool (at least one when
    /// it holds any: half of one is rounded down to keeping none); how many
    /// were closed.
    pub fn close_some(&self) -> usize {
        let held = self.held();
        self.shrink_to(held / 2)
    }

    fn shrink_to(&self, keep: usize) -> usize {
        let closed = pop_beyond(&mut self.open.lock(), keep);
        self.evictions
            .fetch_add(closed.len() as u64, Ordering::Relaxed);
        closed.len()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &std::path::Path, name: &str) -> Arc<File> {
        Arc::new(File::create(dir.join(name)).unwrap())
    }

    /// At most `capacity` kept, least recently used out first (a touch
    /// counts as a use); a descriptor handed out stays open after the pool
    /// lets go of it; halving and shrinking count as evictions.
    #[test]
    fn keeps_the_most_recently_used_within_capacity() {
        let dir = tempfile::tempdir().unwrap();
        let pool = DescriptorPool::new(2);
        let ids: Vec<u64> = (0..3).map(|_| pool.new_id()).collect();
        assert_eq!(ids, [1, 2, 3]);
        pool.keep(1, file(dir.path(), "a"));
        pool.keep(2, file(dir.path(), "b"));
        pool.touch(1);
        let held = pool.get(1).unwrap();
        pool.keep(3, file(dir.path(), "c"));
        assert!(pool.get(2).is_none(), "2 was the least recently used");
        assert!(pool.get(1).is_some());
        assert_eq!(pool.stats().evictions, 1);
        pool.forget(1);
        assert!(pool.get(1).is_none());
        assert!(held.metadata().is_ok(), "still open for its holder");
        pool.count_open(false);
        pool.count_open(true);
        pool.set_capacity(0);
        assert_eq!(pool.capacity(), 1);
        pool.keep(4, file(dir.path(), "d"));
        assert_eq!(pool.held(), 1);
        assert_eq!(pool.close_some(), 1, "at least one");
        pool.set_capacity(4);
        pool.keep(5, file(dir.path(), "e"));
        pool.keep(6, file(dir.path(), "f"));
        assert_eq!(pool.close_some(), 1, "half of two");
        assert!(pool.get(6).is_some(), "the most recent stays");
        assert_eq!(
            pool.stats(),
            PoolStats {
                capacity: 4,
                cached: 1,
                opens: 1,
                reopens: 1,
                evictions: 4,
            }
        );
    }
}
