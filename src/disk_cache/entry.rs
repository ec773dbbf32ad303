//! One cache entry: the sparse file holding an array's `data` bytes at
//! their own offsets, and the map of which granules of it are whole.
//!
//! The order that makes a crash harmless (kill -9, or power lost):
//!
//! 1. fill bytes are written into the data file (`pwrite`), and only then
//!    marked whole in the in-memory map this process serves from;
//! 2. persisting: the granules whole are noted and the data file is
//!    `fdatasync`ed (no lock needed: nothing in the directory changes), then
//!    the map of those granules is written to a temporary file, `fsync`ed,
//!    and renamed over the entry's map (under the directory lock).
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
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use super::data_file::DataFile;
use super::error::DiskError;
use super::index::{Index, Locked};
use super::key::Key;
use super::map::{Bitmap, MapMismatch};
use crate::descriptors::DescriptorPool;

/// An entry opened by this process.
#[derive(Debug)]
pub struct Entry {
    key: Key,
    /// The data file, found on disk at open or made by the first fill (an
    /// entry nothing was written to has no files), opened on demand (see
    /// [`DataFile`]).
    data: OnceLock<DataFile>,
    /// Where the data file is, or will be made.
    data_path: PathBuf,
    /// The pool its descriptor is kept in.
    files: Arc<DescriptorPool>,
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
    /// Open the entry `key` of `len` bytes. The map on disk is trusted
    /// only if it names this key, length and data file; otherwise the
    /// entry starts empty. An entry with no data file on disk (or one of
    /// another length, evicted) has no files until its first fill makes
    /// them ([`Self::write`]): opening one creates nothing.
    pub fn open(locked: &Locked<'_>, key: Key, len: u64) -> Result<Entry, DiskError> {
        let index = locked.index();
        let data_path = index.path(key.name(), "data");
        let map_path = index.path(key.name(), "map");
        let found = match File::options().read(true).write(true).open(&data_path) {
            Ok(file) => Some(file),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(DiskError::io(&data_path, e)),
        };
        let mut entry = Entry {
            key,
            data: OnceLock::new(),
            data_path,
            files: index.files().clone(),
            len,
            map: Mutex::new(Bitmap::new(len)),
            unpersisted: AtomicU64::new(0),
            retired: AtomicBool::new(false),
        };
        let Some(data) = found else {
            return Ok(entry);
        };
        let meta = data
            .metadata()
            .map_err(|e| DiskError::io(&entry.data_path, e))?;
        if meta.len() != len {
            // Another length under this name: not ours to trust.
            log::warn!(
                "disk cache: {} has an unexpected length; removed",
                entry.data_path.display()
            );
            locked.evict(entry.key.name());
            return Ok(entry);
        }
        let map = match std::fs::read(&map_path) {
            Ok(bytes) => match Bitmap::decode(&bytes, entry.key.text(), len, meta.ino()) {
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
        locked.note(entry.key.name());
        *entry.map.get_mut() = map;
        let _ = entry.data.set(DataFile::new(
            &entry.files,
            entry.data_path.clone(),
            data,
            &meta,
        ));
        Ok(entry)
    }

    /// The data file, made now (empty and sparse, `len` bytes) if this
    /// entry has none yet; the caller holds the directory lock. A file
    /// another mount made under the name meanwhile is joined (the same key:
    /// the same bytes at the same offsets).
    fn made(&self) -> std::io::Result<&DataFile> {
        if let Some(data) = self.data.get() {
            return Ok(data);
        }
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&self.data_path)?;
        let mut meta = file.metadata()?;
        if meta.len() != self.len {
            if meta.len() != 0 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "another length under this entry's name",
                ));
            }
            file.set_len(self.len)?;
            meta = file.metadata()?;
        }
        let made = DataFile::new(&self.files, self.data_path.clone(), file, &meta);
        Ok(self.data.get_or_init(|| made))
    }

    /// The data file, if it was found or made.
    fn data(&self) -> std::io::Result<&DataFile> {
        self.data.get().ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{}: not made yet", self.data_path.display()),
            )
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

    /// Inode of the data file this entry writes (0 before it is made).
    pub fn data_ino(&self) -> u64 {
        self.data.get().map_or(0, DataFile::ino)
    }

    /// Whether the data file on disk (`found`: its inode, if there is one)
    /// is this entry's: the one it found or made; for an entry whose file is
    /// not made yet, whatever is there (its first fill makes or joins it).
    pub fn is_on_disk(&self, found: Option<u64>) -> bool {
        self.data.get().is_none_or(|data| found == Some(data.ino()))
    }

    /// The data file (for a FUSE passthrough backing, once complete); an
    /// error when it was evicted since its descriptor was last closed.
    pub fn file(&self) -> std::io::Result<Arc<File>> {
        self.data()?.get()
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
        self.data()?.get()?.read_exact_at(buf, offset)
    }

    /// Write `bytes` at `offset` (a range [`Self::fillable`] gave), then
    /// mark it whole: the caller holds the directory lock and checked the
    /// entry is still the one on disk ([`Self::is_on_disk`]). The first
    /// write makes the data file.
    pub fn write(&self, offset: u64, bytes: &[u8]) -> std::io::Result<()> {
        self.made()?.get()?.write_all_at(bytes, offset)?;
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

    /// Make the map on disk name what is whole: [`Self::sync`], then
    /// [`Self::commit`] (both under the lock the caller holds).
    pub fn persist(&self, locked: &Locked<'_>) -> Result<(), DiskError> {
        match self.sync(locked.index())? {
            Some(synced) => self.commit(locked, synced),
            None => Ok(()),
        }
    }

    /// Step 1 of persisting: what is whole now, its bytes made durable
    /// (`fdatasync`). Needs no lock: it changes nothing in the directory,
    /// so a writer syncs without holding up opens. `None` when nothing was
    /// filled since the last persist.
    pub fn sync(&self, index: &Index) -> Result<Option<Synced>, DiskError> {
        let taken = self.unpersisted.swap(0, Ordering::Relaxed);
        if taken == 0 {
            return Ok(None);
        }
        // A bit is set only once its bytes are written (see `write`), so the
        // bits taken here name bytes written before the sync below, even
        // while the writer thread goes on writing.
        let map = self.map.lock().clone();
        match self.data().and_then(|data| data.get()?.sync_data()) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // Evicted: nothing left to persist.
                self.retire();
                return Ok(None);
            }
            Err(e) => {
                self.unpersisted.fetch_add(taken, Ordering::Relaxed);
                return Err(DiskError::io(index.path(self.key.name(), "data"), e));
            }
        }
        Ok(Some(Synced { map, taken }))
    }

    /// A sync whose commit will not happen (no lock): its fills are to be
    /// persisted next time.
    pub fn unsync(&self, synced: Synced) {
        self.unpersisted.fetch_add(synced.taken, Ordering::Relaxed);
    }

    /// Step 2 of persisting, under the lock: the map of `synced` (merged
    /// with what another mount persisted meanwhile) written aside and
    /// renamed into place. Skipped, and the entry retired, when the entry
    /// on disk is no longer this data file.
    pub fn commit(&self, locked: &Locked<'_>, synced: Synced) -> Result<(), DiskError> {
        let index = locked.index();
        let data_path = index.path(self.key.name(), "data");
        let map_path = index.path(self.key.name(), "map");
        let Synced { mut map, taken } = synced;
        match std::fs::metadata(&data_path) {
            Ok(meta) if meta.ino() == self.data_ino() => {}
            _ => {
                self.retire();
                return Ok(());
            }
        }
        if let Ok(bytes) = std::fs::read(&map_path) {
            if let Ok(theirs) = Bitmap::decode(&bytes, self.key.text(), self.len, self.data_ino()) {
                map.merge(&theirs);
                self.map.lock().merge(&theirs);
            }
        }
        // The map, whole, under its name in one rename.
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
            file.write_all(&map.encode(self.key.text(), self.data_ino()))?;
            file.sync_all()?;
            std::fs::rename(&tmp, &map_path)
        })();
        locked.note(self.key.name());
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            self.unpersisted.fetch_add(taken, Ordering::Relaxed);
            return Err(DiskError::io(&map_path, e));
        }
        Ok(())
    }
}

/// What [`Entry::sync`] made durable, for [`Entry::commit`] to name.
#[derive(Debug)]
pub struct Synced {
    /// The granules whole when the sync began.
    map: Bitmap,
    /// Bytes of fills it covers (counted again if the commit fails).
    taken: u64,
}

#[cfg(test)]
mod tests {
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
        assert!(
            !index.path(key.name(), "data").exists(),
            "opening makes no file"
        );
        fresh.write(0, &vec![1; len as usize]).unwrap();
        assert!(
            index.path(key.name(), "data").exists(),
            "the first fill does"
        );
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
