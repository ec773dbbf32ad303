//! The cache directory as a whole: its lock, what it holds, and making
//! room by evicting the least recently used entries.
//!
//! Nothing is counted in memory or in a file: the bytes an entry takes are
//! what the file system says its files take (allocated blocks, so a sparse
//! entry costs only what was filled), read under the lock. Two mounts
//! sharing the directory therefore cannot double-count or drift. Every
//! change to the directory (create an entry, write fill bytes, replace a
//! map, evict) happens with the lock held: an exclusive `flock(2)` on
//! `DIR/lock` between processes and a mutex between this process's
//! threads (flock is per open file description, so threads sharing one
//! would not exclude each other).
//!
//! So that a batch of fills does not stat every file of the directory,
//! each process keeps a [`DirView`] of it, read whole once and kept current by
//! its own changes (each change under the lock names its entry:
//! [`Locked::note`]); `DIR/lock` holds a change count that every holder of
//! the lock adds one to, so a count this process did not write means
//! another mount changed the directory, and the view is read again.
//!
//! Layout: `DIR/lock`, `DIR/entries/<name>.data` (the sparse file of
//! decoded bytes), `DIR/entries/<name>.map` (which granules are whole;
//! replaced by rename), `DIR/entries/<name>.map.tmp.<pid>.<n>` (a map being
//! written: only ever present while its writer holds the lock, so one found
//! by a lock holder is a crashed writer's and is removed).

use parking_lot::{Mutex, MutexGuard};
use std::cell::RefCell;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use super::data_file::OPEN_DATA_FILES;
use super::dir_view::DirView;
pub use super::dir_view::EntryOnDisk;
use super::error::DiskError;
use crate::descriptors::DescriptorPool;

/// The cache directory and its lock.
#[derive(Debug)]
pub struct Index {
    dir: PathBuf,
    entries: PathBuf,
    lock: Mutex<Held>,
    /// The entries' data files held open.
    files: Arc<DescriptorPool>,
}

/// What the lock guards in this process: the lock file, and the view of
/// the directory read under it.
#[derive(Debug)]
struct Held {
    file: File,
    view: RefCell<Option<DirView>>,
    /// The change count this process wrote when it last took the lock.
    count: u64,
}

/// The lock held: the directory may be looked at and changed.
pub struct Locked<'a> {
    index: &'a Index,
    held: MutexGuard<'a, Held>,
}

impl Index {
    /// The cache in `dir`, created if missing.
    pub fn open(dir: &Path) -> Result<Index, DiskError> {
        let entries = dir.join("entries");
        std::fs::create_dir_all(&entries).map_err(|e| DiskError::io(&entries, e))?;
        let lock_path = dir.join("lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&lock_path)
            .map_err(|e| DiskError::io(&lock_path, e))?;
        Ok(Index {
            dir: dir.to_path_buf(),
            entries,
            lock: Mutex::new(Held {
                file,
                view: RefCell::new(None),
                count: 0,
            }),
            files: Arc::new(DescriptorPool::new(OPEN_DATA_FILES)),
        })
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The entries' data files held open (a few, see [`super::data_file`]).
    pub fn files(&self) -> &Arc<DescriptorPool> {
        &self.files
    }

    /// Path of file `name.ext` of an entry.
    pub fn path(&self, name: &str, ext: &str) -> PathBuf {
        self.entries.join(format!("{name}.{ext}"))
    }

    /// Take the lock (waits for other threads and other mounts).
    pub fn lock(&self) -> Result<Locked<'_>, DiskError> {
        let held = self.lock.lock();
        held.file
            .lock()
            .map_err(|e| DiskError::io(self.dir.join("lock"), e))?;
        self.locked(held)
    }

    /// Take the lock, or give up after `patience` (another mount holding
    /// it that long is stuck: stopped, or on a hung disk). What a FUSE
    /// request waits on: it then goes on without the cache.
    pub fn lock_within(&self, patience: std::time::Duration) -> Result<Locked<'_>, DiskError> {
        let deadline = std::time::Instant::now() + patience;
        let held = self
            .lock
            .try_lock_for(patience)
            .ok_or_else(|| DiskError::Busy(self.dir.join("lock")))?;
        loop {
            match held.file.try_lock() {
                Ok(()) => return self.locked(held),
                Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(DiskError::Busy(self.dir.join("lock")))
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(DiskError::io(self.dir.join("lock"), e))
                }
            }
        }
    }
}

impl Index {
    /// The lock just taken (`held`, its file locked): the change count in
    /// the lock file goes up by one, and the view is kept only if the count
    /// was the one this process wrote last (nobody else held the lock since).
    fn locked<'a>(&'a self, held: MutexGuard<'a, Held>) -> Result<Locked<'a>, DiskError> {
        let mut locked = Locked { index: self, held };
        let held = &mut *locked.held;
        let path = || self.dir.join("lock");
        let mut count = [0u8; 8];
        let n = held
            .file
            .read_at(&mut count, 0)
            .map_err(|e| DiskError::io(path(), e))?;
        let before = if n == count.len() {
            u64::from_le_bytes(count)
        } else {
            0
        };
        let now = before.wrapping_add(1);
        held.file
            .write_all_at(&now.to_le_bytes(), 0)
            .map_err(|e| DiskError::io(path(), e))?;
        held.count = now;
        let view = held.view.get_mut();
        match view {
            Some(v) if v.current(before) => v.advance(now),
            _ => *view = None,
        }
        Ok(locked)
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.held.file.unlock() {
            log::warn!("disk cache: unlocking {}: {e}", self.index.dir.display());
        }
    }
}

impl Locked<'_> {
    /// The index locked.
    pub fn index(&self) -> &Index {
        self.index
    }

    /// Every entry on disk (and the removal of crashed writers' temporary
    /// maps, which only a lock holder can know are abandoned), read now;
    /// the view is made of it.
    pub fn scan(&self) -> Result<Vec<EntryOnDisk>, DiskError> {
        let found = self.read_all()?;
        *self.held.view.borrow_mut() = Some(DirView::of(found.clone(), self.held.count));
        Ok(found)
    }

    /// `f` run on the view of the directory, read now if there is none.
    fn with_view<T>(&self, f: impl FnOnce(&mut DirView) -> T) -> Result<T, DiskError> {
        let mut slot = self.held.view.borrow_mut();
        let view = match slot.take() {
            Some(view) => view,
            None => DirView::of(self.read_all()?, self.held.count),
        };
        Ok(f(slot.insert(view)))
    }

    /// Bytes the entries take and how many there are (from the view).
    pub fn usage(&self) -> Result<(u64, usize), DiskError> {
        self.with_view(|v| (v.used(), v.len()))
    }

    /// The inode of entry `name`'s data file on disk, if there is one
    /// (from the view).
    pub fn data_ino(&self, name: &str) -> Result<Option<u64>, DiskError> {
        self.with_view(|v| v.data_ino(name))
    }

    /// Entry `name` was just changed by this process (created, filled, its
    /// map replaced): its files are looked at again for the view.
    pub fn note(&self, name: &str) {
        if let Some(view) = self.held.view.borrow_mut().as_mut() {
            view.set(name, self.read_one(name));
        }
    }

    /// Entry `name` as its files are now, `None` when it has none.
    fn read_one(&self, name: &str) -> Option<EntryOnDisk> {
        let mut found = EntryOnDisk {
            name: name.to_string(),
            bytes: 0,
            data_ino: 0,
            data_len: 0,
            last_used: SystemTime::UNIX_EPOCH,
            has_map: false,
        };
        let mut any = false;
        if let Ok(meta) = std::fs::metadata(self.index.path(name, "data")) {
            any = true;
            found.bytes += meta.blocks() * 512;
            found.data_ino = meta.ino();
            found.data_len = meta.len();
            found.last_used = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        }
        if let Ok(meta) = std::fs::metadata(self.index.path(name, "map")) {
            any = true;
            found.bytes += meta.blocks() * 512;
            found.has_map = true;
        }
        any.then_some(found)
    }

    /// Every entry on disk, read now.
    fn read_all(&self) -> Result<Vec<EntryOnDisk>, DiskError> {
        let dir = &self.index.entries;
        let mut found: std::collections::BTreeMap<String, EntryOnDisk> = Default::default();
        let listing = std::fs::read_dir(dir).map_err(|e| DiskError::io(dir, e))?;
        for item in listing {
            let item = item.map_err(|e| DiskError::io(dir, e))?;
            let file_name = item.file_name();
            let Some(file_name) = file_name.to_str() else {
                continue;
            };
            let Some((name, ext)) = file_name.split_once('.') else {
                continue;
            };
            if ext.starts_with("map.tmp.") {
                let _ = std::fs::remove_file(item.path());
                continue;
            }
            // Gone since listed (another process evicted it): skip.
            let Ok(meta) = item.metadata() else { continue };
            let entry = found
                .entry(name.to_string())
                .or_insert_with(|| EntryOnDisk {
                    name: name.to_string(),
                    bytes: 0,
                    data_ino: 0,
                    data_len: 0,
                    last_used: SystemTime::UNIX_EPOCH,
                    has_map: false,
                });
            entry.bytes += meta.blocks() * 512;
            match ext {
                "data" => {
                    entry.data_ino = meta.ino();
                    entry.data_len = meta.len();
                    entry.last_used = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                }
                "map" => entry.has_map = true,
                _ => {}
            }
        }
        Ok(found.into_values().collect())
    }

    /// Remove entry `name` (map first: a map never outlives the data it
    /// describes). Open descriptors of its data file keep reading it.
    pub fn evict(&self, name: &str) {
        if let Some(view) = self.held.view.borrow_mut().as_mut() {
            view.set(name, None);
        }
        self.remove(name);
    }

    /// Remove entry `name`'s files.
    fn remove(&self, name: &str) {
        for ext in ["map", "data"] {
            let path = self.index.path(name, ext);
            if let Err(e) = std::fs::remove_file(&path) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    log::warn!("disk cache: removing {}: {e}", path.display());
                }
            }
        }
    }

    /// Evict least recently used entries (never those in `keep`) until
    /// `need` more bytes fit in `budget` (as the view counts them). Returns
    /// the names evicted, or `None` when even evicting every other entry
    /// would not make room.
    pub fn make_room(
        &self,
        need: u64,
        budget: u64,
        keep: &[&str],
    ) -> Result<Option<Vec<String>>, DiskError> {
        let evicted = self.with_view(|v| v.evict_for(need, budget, keep))?;
        for name in evicted.iter().flatten() {
            self.remove(name);
        }
        Ok(evicted)
    }
}

/// Remove every entry of the cache in `dir` (entries open elsewhere stay
/// readable to their holders until closed). Returns how many were removed.
pub fn clear(dir: &Path) -> Result<usize, DiskError> {
    let index = Index::open(dir)?;
    let locked = index.lock()?;
    let found = locked.scan()?;
    for f in &found {
        locked.evict(&f.name);
    }
    Ok(found.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn entry(index: &Index, name: &str, bytes: usize, age_s: u64) {
        let path = index.path(name, "data");
        std::fs::write(&path, vec![1u8; bytes]).unwrap();
        let when = SystemTime::now() - Duration::from_secs(age_s);
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(when)
            .unwrap();
        std::fs::write(index.path(name, "map"), b"m").unwrap();
    }

    #[test]
    fn room_is_made_by_evicting_the_least_recently_used_first() {
        let dir = tempfile::tempdir().unwrap();
        let index = Index::open(dir.path()).unwrap();
        entry(&index, "old", 64 << 10, 300);
        entry(&index, "mid", 64 << 10, 200);
        entry(&index, "new", 64 << 10, 100);
        std::fs::write(index.path("dead", "map.tmp.1.2"), b"x").unwrap();
        let locked = index.lock().unwrap();
        let found = locked.scan().unwrap();
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(
            !index.path("dead", "map.tmp.1.2").exists(),
            "a crashed writer's map is removed"
        );
        let used: u64 = found.iter().map(|f| f.bytes).sum();
        // Room for one more entry's bytes: the oldest goes, then the next.
        let evicted = locked.make_room(64 << 10, used, &[]).unwrap();
        assert_eq!(evicted, Some(vec!["old".to_string()]));
        let evicted = locked
            .make_room(64 << 10, used - (64 << 10), &["mid"])
            .unwrap();
        assert_eq!(
            evicted,
            Some(vec!["new".to_string()]),
            "kept entries are skipped"
        );
        assert_eq!(locked.make_room(used, used, &["mid"]).unwrap(), None);
        assert!(!index.path("old", "map").exists() && !index.path("old", "data").exists());
        assert_eq!(locked.usage().unwrap(), (used / 3, 1));
    }

    #[test]
    fn the_view_follows_this_process_and_is_read_again_after_another_mount() {
        let dir = tempfile::tempdir().unwrap();
        let index = Index::open(dir.path()).unwrap();
        entry(&index, "a", 8 << 10, 10);
        let a = index.lock().unwrap().usage().unwrap();
        assert_eq!(a.1, 1);
        // A change of this process, noted: in the view with no reading of
        // the directory (an entry made behind its back is not seen).
        {
            let locked = index.lock().unwrap();
            entry(&index, "b", 8 << 10, 5);
            entry(&index, "unseen", 8 << 10, 5);
            locked.note("b");
            let (bytes, n) = locked.usage().unwrap();
            assert_eq!(n, 2);
            assert_eq!(bytes, 2 * a.0);
            assert!(locked.data_ino("b").unwrap().is_some());
            assert_eq!(locked.data_ino("unseen").unwrap(), None);
        }
        // Another mount (another Index on the same directory) takes the
        // lock: this one reads the directory again.
        Index::open(dir.path()).unwrap().lock().unwrap();
        let locked = index.lock().unwrap();
        assert_eq!(locked.usage().unwrap().1, 3);
        assert!(locked.data_ino("unseen").unwrap().is_some());
        locked.evict("unseen");
        assert_eq!(locked.usage().unwrap().1, 2);
        assert_eq!(locked.scan().unwrap().len(), 2);
    }

    #[test]
    fn a_lock_held_by_another_open_file_is_waited_for_a_while_only() {
        let dir = tempfile::tempdir().unwrap();
        let index = Index::open(dir.path()).unwrap();
        // Another mount: another open file description of the same lock file.
        let other = File::options()
            .write(true)
            .open(dir.path().join("lock"))
            .unwrap();
        other.lock().unwrap();
        let waited = std::time::Instant::now();
        assert!(matches!(
            index.lock_within(Duration::from_millis(50)),
            Err(DiskError::Busy(_))
        ));
        assert!(waited.elapsed() >= Duration::from_millis(50));
        other.unlock().unwrap();
        assert!(index.lock_within(Duration::from_millis(50)).is_ok());
    }

    #[test]
    fn clear_removes_everything() {
        let dir = tempfile::tempdir().unwrap();
        let index = Index::open(dir.path()).unwrap();
        entry(&index, "a", 10, 1);
        entry(&index, "b", 10, 1);
        assert_eq!(clear(dir.path()).unwrap(), 2);
        assert!(index.lock().unwrap().scan().unwrap().is_empty());
    }
}
