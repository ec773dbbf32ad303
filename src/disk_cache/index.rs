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
//! Layout: `DIR/lock`, `DIR/entries/<name>.data` (the sparse file of
//! decoded bytes), `DIR/entries/<name>.map` (which granules are whole;
//! replaced by rename), `DIR/entries/<name>.map.tmp.<pid>.<n>` (a map being
//! written: only ever present while its writer holds the lock, so one found
//! by a lock holder is a crashed writer's and is removed).

use parking_lot::{Mutex, MutexGuard};
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::error::DiskError;

/// The cache directory and its lock.
#[derive(Debug)]
pub struct Index {
    dir: PathBuf,
    entries: PathBuf,
    lock: Mutex<File>,
}

/// The lock held: the directory may be looked at and changed.
pub struct Locked<'a> {
    index: &'a Index,
    file: MutexGuard<'a, File>,
}

/// One entry as found on disk.
#[derive(Debug, Clone)]
pub struct Found {
    /// File name stem (the key's name).
    pub name: String,
    /// Bytes its files take on disk (allocated blocks).
    pub bytes: u64,
    /// Inode of its data file (0 when it has none).
    pub data_ino: u64,
    /// Length of its data file.
    pub data_len: u64,
    /// When it was last filled or opened (its data file's mtime).
    pub last_used: SystemTime,
    /// Its map file exists.
    pub has_map: bool,
}

impl Index {
    /// The cache in `dir`, created if missing.
    pub fn open(dir: &Path) -> Result<Index, DiskError> {
        let entries = dir.join("entries");
        std::fs::create_dir_all(&entries).map_err(|e| DiskError::io(&entries, e))?;
        let lock_path = dir.join("lock");
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| DiskError::io(&lock_path, e))?;
        Ok(Index {
            dir: dir.to_path_buf(),
            entries,
            lock: Mutex::new(lock),
        })
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Path of file `name.ext` of an entry.
    pub fn path(&self, name: &str, ext: &str) -> PathBuf {
        self.entries.join(format!("{name}.{ext}"))
    }

    /// Take the lock (waits for other threads and other mounts).
    pub fn lock(&self) -> Result<Locked<'_>, DiskError> {
        let file = self.lock.lock();
        file.lock()
            .map_err(|e| DiskError::io(self.dir.join("lock"), e))?;
        Ok(Locked { index: self, file })
    }

    /// Take the lock, or give up after `patience` (another mount holding
    /// it that long is stuck: stopped, or on a hung disk). What a FUSE
    /// request waits on: it then goes on without the cache.
    pub fn lock_within(&self, patience: std::time::Duration) -> Result<Locked<'_>, DiskError> {
        let deadline = std::time::Instant::now() + patience;
        let file = self
            .lock
            .try_lock_for(patience)
            .ok_or_else(|| DiskError::Busy(self.dir.join("lock")))?;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Locked { index: self, file }),
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

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.file.unlock() {
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
    /// maps, which only a lock holder can know are abandoned).
    pub fn scan(&self) -> Result<Vec<Found>, DiskError> {
        let dir = &self.index.entries;
        let mut found: std::collections::BTreeMap<String, Found> = Default::default();
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
            let entry = found.entry(name.to_string()).or_insert_with(|| Found {
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
    /// `need` more bytes fit in `budget`. Returns the names evicted, or
    /// `None` when even evicting every other entry would not make room.
    pub fn make_room(
        &self,
        found: &[Found],
        need: u64,
        budget: u64,
        keep: &[&str],
    ) -> Option<Vec<String>> {
        let mut used: u64 = found.iter().map(|f| f.bytes).sum();
        if used + need <= budget {
            return Some(Vec::new());
        }
        let mut candidates: Vec<&Found> = found
            .iter()
            .filter(|f| !keep.contains(&f.name.as_str()))
            .collect();
        let freeable: u64 = candidates.iter().map(|f| f.bytes).sum();
        if used - freeable + need > budget {
            return None;
        }
        candidates.sort_by_key(|f| f.last_used);
        let mut evicted = Vec::new();
        for f in candidates {
            if used + need <= budget {
                break;
            }
            self.evict(&f.name);
            used -= f.bytes;
            evicted.push(f.name.clone());
        }
        Some(evicted)
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
        let evicted = locked.make_room(&found, 64 << 10, used, &[]).unwrap();
        assert_eq!(evicted, vec!["old".to_string()]);
        let found = locked.scan().unwrap();
        let evicted = locked
            .make_room(&found, 64 << 10, used - (64 << 10), &["mid"])
            .unwrap();
        assert_eq!(evicted, vec!["new".to_string()], "kept entries are skipped");
        let found = locked.scan().unwrap();
        assert_eq!(locked.make_room(&found, used, used, &["mid"]), None);
        assert!(!index.path("old", "map").exists() && !index.path("old", "data").exists());
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
