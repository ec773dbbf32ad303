//! The descriptors of entries' data files: a few held open, however many
//! entries are in use. A remote object read through the cache keeps its
//! entry for as long as its array stays in the metadata cache, so holding
//! each entry's file open made the descriptors a mount holds grow with the
//! objects it had seen (10,000 objects walked: 10,000 descriptors).
//!
//! An entry's [`DataFile`] is its path and the file's identity (inode and
//! creation time: an inode number alone is reused at once by the next file
//! made); [`DataFile::get`] hands out a descriptor kept in this process's
//! [`DescriptorPool`] (at most [`OPEN_DATA_FILES`], least recently used
//! closed first; the same kind of pool as the source files') or opens the
//! path again, checking it is still the same file: a data file evicted
//! meanwhile (removed, or another made under its name) is not opened
//! again, and the caller reads without the cache (as it does on a file
//! system that gives no creation time). Whoever holds a descriptor handed
//! out keeps it open until done; the pool closes only its own reference.

use std::fs::{File, Metadata};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use crate::descriptors::DescriptorPool;

/// Data files held open at most by one cache.
pub const OPEN_DATA_FILES: usize = 64;

/// One entry's data file: opened on demand through its cache's pool.
#[derive(Debug)]
pub struct DataFile {
    path: PathBuf,
    ino: u64,
    /// Its creation time (`None`: the file system gives none, and the file
    /// is not opened again once its descriptor is closed).
    born: Option<SystemTime>,
    id: u64,
    files: Arc<DescriptorPool>,
}

impl DataFile {
    /// `file`, just opened at `path` (`meta` its metadata), handed to `files`.
    pub fn new(
        files: &Arc<DescriptorPool>,
        path: PathBuf,
        file: File,
        meta: &Metadata,
    ) -> DataFile {
        let id = files.new_id();
        files.count_open(false);
        files.keep(id, Arc::new(file));
        DataFile {
            path,
            ino: meta.ino(),
            born: meta.created().ok(),
            id,
            files: files.clone(),
        }
    }

    /// The file's inode.
    pub fn ino(&self) -> u64 {
        self.ino
    }

    /// A descriptor of the file: the pool's, or the path opened again when
    /// it is still this file (`NotFound` when it was evicted).
    pub fn get(&self) -> std::io::Result<Arc<File>> {
        if let Some(file) = self.files.get(self.id) {
            return Ok(file);
        }
        let file = File::options().read(true).write(true).open(&self.path)?;
        let meta = file.metadata()?;
        if self.born.is_none() || meta.ino() != self.ino || meta.created().ok() != self.born {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{}: evicted (another file now)", self.path.display()),
            ));
        }
        self.files.count_open(true);
        let file = Arc::new(file);
        self.files.keep(self.id, file.clone());
        Ok(file)
    }
}

impl Drop for DataFile {
    fn drop(&mut self) {
        self.files.forget(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    fn open(path: &std::path::Path) -> (File, Metadata) {
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .unwrap();
        let meta = file.metadata().unwrap();
        (file, meta)
    }

    #[test]
    fn a_few_descriptors_for_many_files_and_an_evicted_one_is_not_reopened() {
        let dir = tempfile::tempdir().unwrap();
        let files = Arc::new(DescriptorPool::new(2));
        let data: Vec<DataFile> = (0..5)
            .map(|i| {
                let path = dir.path().join(format!("{i}.data"));
                let (file, meta) = open(&path);
                file.write_all_at(&[i as u8; 4], 0).unwrap();
                DataFile::new(&files, path, file, &meta)
            })
            .collect();
        assert_eq!(files.held(), 2);
        for (i, d) in data.iter().enumerate() {
            let mut buf = [0u8; 4];
            d.get().unwrap().read_exact_at(&mut buf, 0).unwrap();
            assert_eq!(buf, [i as u8; 4]);
            assert!(files.held() <= 2);
        }
        assert_eq!(files.stats().reopens, 5, "every one was closed since");
        // A descriptor handed out stays open while held.
        let held = data[0].get().unwrap();
        for d in &data[1..] {
            d.get().unwrap();
        }
        let mut buf = [0u8; 4];
        held.read_exact_at(&mut buf, 0).unwrap();
        assert_eq!(buf, [0; 4]);
        if data[0].born.is_none() {
            eprintln!("SKIP the rest: no creation times on this file system");
            return;
        }
        // Evicted and made again under its name (maybe with the same inode
        // number): not this file.
        let path = dir.path().join("0.data");
        std::fs::remove_file(&path).unwrap();
        drop(held);
        assert_eq!(
            data[0].get().unwrap_err().kind(),
            std::io::ErrorKind::NotFound
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
        let _other = open(&path);
        assert_eq!(
            data[0].get().unwrap_err().kind(),
            std::io::ErrorKind::NotFound
        );
        drop(data);
        assert_eq!(files.held(), 0);
    }
}
