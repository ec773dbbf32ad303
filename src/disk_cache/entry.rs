//! One cache entry: the sparse file holding an array's `data` bytes at
//! their own offsets, and the map of which granules of it are whole.
//!
//! The order that makes a crash harmless (kill -9, or power lost):
//!
//! 1. fill bytes are written into the data file (`pwrite`), and only then
//!    marked whole in the in-memory map this process serves from;
//! 2. persisting: the data file is `fdatasync`ed first, then the map is
//!    written to a temporary file, `fsync`ed, and renamed over the entry's
//!    map (all under the directory lock).
//!
//! So a map on disk only ever names granules whose bytes reached the disk
//! before it was written; a crash at any point leaves the previous map (a
//! subset) or the new one, never a bit without its bytes. The map also
//! names the inode of the data file it describes: if the entry was evicted
//! and re-created meanwhile, the stale map is refused. Bits not yet
//! persisted are lost by a crash, and the bytes are decoded again.

use parking_lot::Mutex;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::SystemTime;

use super::error::DiskError;
use super::index::Locked;
use super::key::Key;
use super::map::{Bitmap, MapMismatch};

/// An entry opened by this process.
#[derive(Debug)]
pub struct Entry {
    key: Key,
    data: File,
    data_ino: u64,
    len: u64,
    /// Granules whole in the data file (a superset of the map on disk).
    map: Mutex<Bitmap>,
    /// Bytes marked whole since the map was last persisted.
    unpersisted: AtomicU64,
    /// No more fills: evicted, replaced, or larger than the budget.
    retired: AtomicBool,
}

/// Counter for unique temporary map names within this process.
static TMP_SEQ: AtomicU64 = AtomicU64::new(0);

impl Entry {
    /// Open (or create, empty and sparse) the entry `key` of `len` bytes.
    /// The map on disk is trusted only if it names this key, length and
    /// data file; otherwise the entry starts empty.
    pub fn open(locked: &Locked<'_>, key: Key, len: u64) -> Result<Entry, DiskError> {
        let index = locked.index();
        let data_path = index.path(key.name(), "data");
        let map_path = index.path(key.name(), "map");
        let open = || {
            File::options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&data_path)
                .map_err(|e| DiskError::io(&data_path, e))
        };
        let mut data = open()?;
        let mut meta = data.metadata().map_err(|e| DiskError::io(&data_path, e))?;
        if meta.len() != len {
            if meta.len() != 0 {
                // Another length under this name: not ours to trust.
                log::warn!(
                    "disk cache: {} has an unexpected length; replaced",
                    data_path.display()
                );
                locked.evict(key.name());
                data = open()?;
            }
            data.set_len(len)
                .map_err(|e| DiskError::io(&data_path, e))?;
            meta = data.metadata().map_err(|e| DiskError::io(&data_path, e))?;
        }
        let data_ino = meta.ino();
        let map = match std::fs::read(&map_path) {
            Ok(bytes) => match Bitmap::decode(&bytes, key.text(), len, data_ino) {
                Ok(map) => map,
                Err(why) => {
                    log::info!(
                        "disk cache: ignoring {} ({})",
                        map_path.display(),
                        match why {
                            MapMismatch::Damaged => "damaged",
                            MapMismatch::Other => "describes another data file or key",
                        }
                    );
                    Bitmap::new(len)
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Bitmap::new(len),
            Err(e) => return Err(DiskError::io(&map_path, e)),
        };
        // Opening counts as a use for the LRU order.
        let _ = data.set_modified(SystemTime::now());
        Ok(Entry {
            key,
            data,
            data_ino,
            len,
            map: Mutex::new(map),
            unpersisted: AtomicU64::new(0),
            retired: AtomicBool::new(false),
        })
    }

    /// The key.
    pub fn key(&self) -> &Key {
        &self.key
    }

    /// Length of `data`.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether `data` is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Inode of the data file this entry writes.
    pub fn data_ino(&self) -> u64 {
        self.data_ino
    }

    /// The data file (for a FUSE passthrough backing, once complete).
    pub fn file(&self) -> &File {
        &self.data
    }

    /// Every byte of `data` is in the file.
    pub fn is_complete(&self) -> bool {
        self.map.lock().is_complete()
    }

    /// Granules whole and in all.
    pub fn progress(&self) -> (u64, u64) {
        let map = self.map.lock();
        (map.whole(), map.granules())
    }

    /// Whether `[start, end)` can be read from the file.
    pub fn covers(&self, start: u64, end: u64) -> bool {
        self.map.lock().covers(start, end)
    }

    /// The granules holding bytes of `[start, end)` that are not whole.
    pub fn missing(&self, start: u64, end: u64) -> Vec<u64> {
        self.map.lock().missing(start, end)
    }

    /// The part of `n` bytes at `offset` worth writing (whole granules not
    /// yet whole), as a byte range of `data`.
    pub fn fillable(&self, offset: u64, n: u64) -> Option<(u64, u64)> {
        if self.is_retired() {
            return None;
        }
        self.map.lock().fillable(offset, n)
    }

    /// Read `buf.len()` bytes at `offset` from the file (the caller checked
    /// [`Self::covers`]).
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.data.read_exact_at(buf, offset)
    }

    /// Write `bytes` at `offset` (a range [`Self::fillable`] gave), then
    /// mark it whole: the caller holds the directory lock and checked the
    /// entry is still the one on disk.
    pub fn write(&self, offset: u64, bytes: &[u8]) -> std::io::Result<()> {
        self.data.write_all_at(bytes, offset)?;
        self.map.lock().mark(offset, offset + bytes.len() as u64);
        self.unpersisted
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Bytes marked whole since the map was last persisted.
    pub fn unpersisted(&self) -> u64 {
        self.unpersisted.load(Ordering::Relaxed)
    }

    /// Stop filling (evicted, replaced, or too large for the budget).
    pub fn retire(&self) {
        self.retired.store(true, Ordering::Relaxed);
    }

    /// Whether fills stopped.
    pub fn is_retired(&self) -> bool {
        self.retired.load(Ordering::Relaxed)
    }

    /// Make the map on disk name what is whole: data durable first, then
    /// the map (merged with what another mount persisted meanwhile)
    /// written aside and renamed into place. Skipped, and the entry
    /// retired, when the entry on disk is no longer this data file.
    pub fn persist(&self, locked: &Locked<'_>) -> Result<(), DiskError> {
        let index = locked.index();
        let data_path = index.path(self.key.name(), "data");
        let map_path = index.path(self.key.name(), "map");
        let taken = self.unpersisted.swap(0, Ordering::Relaxed);
        if taken == 0 {
            return Ok(());
        }
        match std::fs::metadata(&data_path) {
            Ok(meta) if meta.ino() == self.data_ino => {}
            _ => {
                self.retire();
                return Ok(());
            }
        }
        // Step 1: the bytes the map will name are on disk.
        self.data
            .sync_data()
            .map_err(|e| DiskError::io(&data_path, e))?;
        let mut map = self.map.lock().clone();
        if let Ok(bytes) = std::fs::read(&map_path) {
            if let Ok(theirs) = Bitmap::decode(&bytes, self.key.text(), self.len, self.data_ino) {
                map.merge(&theirs);
                self.map.lock().merge(&theirs);
            }
        }
        // Step 2: the map, whole, under its name in one rename.
        let tmp = index.path(
            self.key.name(),
            &format!(
                "map.tmp.{}.{}",
                std::process::id(),
                TMP_SEQ.fetch_add(1, Ordering::Relaxed)
            ),
        );
        let written = (|| {
            let mut file = File::create(&tmp)?;
            file.write_all(&map.encode(self.key.text(), self.data_ino))?;
            file.sync_all()?;
            std::fs::rename(&tmp, &map_path)
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            self.unpersisted.fetch_add(taken, Ordering::Relaxed);
            return Err(DiskError::io(&map_path, e));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::index::Index;
    use super::super::map::GRANULE;
    use super::*;

    #[test]
    fn only_persisted_bits_survive_a_reopen_and_they_read_back_exact() {
        let dir = tempfile::tempdir().unwrap();
        let index = Index::open(dir.path()).unwrap();
        let len = 3 * GRANULE + 7;
        let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let key = Key::new("src v1", len);
        {
            let locked = index.lock().unwrap();
            let entry = Entry::open(&locked, key.clone(), len).unwrap();
            let (a, b) = entry.fillable(0, 2 * GRANULE).unwrap();
            entry.write(a, &bytes[a as usize..b as usize]).unwrap();
            entry.persist(&locked).unwrap();
            // Written but not persisted: a crash now forgets it.
            let (a, b) = entry.fillable(2 * GRANULE, len).unwrap();
            entry.write(a, &bytes[a as usize..b as usize]).unwrap();
            assert!(entry.is_complete());
        }
        let locked = index.lock().unwrap();
        let entry = Entry::open(&locked, key.clone(), len).unwrap();
        assert!(entry.covers(0, 2 * GRANULE) && !entry.covers(0, len));
        let mut back = vec![0; 2 * GRANULE as usize];
        entry.read_at(0, &mut back).unwrap();
        assert_eq!(back, bytes[..back.len()]);
    }

    #[test]
    fn a_map_of_an_evicted_and_recreated_data_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let index = Index::open(dir.path()).unwrap();
        let len = GRANULE;
        let key = Key::new("src", len);
        let locked = index.lock().unwrap();
        let entry = Entry::open(&locked, key.clone(), len).unwrap();
        entry.write(0, &vec![9; len as usize]).unwrap();
        entry.persist(&locked).unwrap();
        let saved_map = std::fs::read(index.path(key.name(), "map")).unwrap();
        // Evicted while open, then re-created by someone else: the map put
        // back beside a new data file describes the old one.
        locked.evict(key.name());
        let fresh = Entry::open(&locked, key.clone(), len).unwrap();
        std::fs::write(index.path(key.name(), "map"), &saved_map).unwrap();
        drop(fresh);
        let reopened = Entry::open(&locked, key.clone(), len).unwrap();
        assert!(!reopened.covers(0, 1), "a map names its data file's inode");
        // The old entry, still open, reads its own bytes and stops persisting.
        let mut back = vec![0; len as usize];
        entry.read_at(0, &mut back).unwrap();
        assert_eq!(back, vec![9; len as usize]);
        entry.write(0, &vec![9; len as usize]).unwrap();
        entry.persist(&locked).unwrap();
        assert!(entry.is_retired());
    }
}
