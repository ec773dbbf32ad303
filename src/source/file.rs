//! A local file read with positioned reads, through a descriptor it may
//! have to open again.
//!
//! A source keeps its descriptor only weakly: the process-wide pool
//! ([`super::fds`]) keeps the recently used ones open, so a tree of a
//! million arrays costs a few hundred descriptors. When the pool closed a
//! source's descriptor, the next read opens the path again and checks that
//! it is the same file in the same state (device, inode, size and mtime, as
//! last seen through it); otherwise the read fails with
//! [`Problem::SourceChanged`], the path the tree already has for a changed
//! source. A caller that needs the descriptor to stay holds a [`Pin`].

use parking_lot::Mutex;
use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use crate::format::byte_source::{range_len, ByteSource, Pin, Version, VersionTag};
use crate::format::{PResult, Problem};

use super::fds::{open_file, pool};

/// Neighbouring ranges closer than this are read with one `pread`.
const COALESCE_GAP: u64 = 4096;

/// An open local file and the state it had when opened (or, for
/// [`ByteSource::current`], when last looked at).
#[derive(Debug, Clone)]
pub struct FileSource {
    handle: Arc<Handle>,
    version: Version,
}

/// The descriptor of one opened file, shared by the states of that file
/// ([`ByteSource::current`] makes a new state over the same descriptor).
#[derive(Debug)]
struct Handle {
    path: PathBuf,
    hold: Hold,
    /// The state last seen through the descriptor: what a reopened path must match.
    seen: Mutex<Version>,
}

/// Who keeps a file's descriptor open.
#[derive(Debug)]
enum Hold {
    /// The pool, under this number (or a pin): held here weakly.
    Pooled { id: u64, file: Mutex<Weak<File>> },
    /// This source, for its life, outside the pool (a file read once).
    Owned(Arc<File>),
}

impl Drop for Handle {
    fn drop(&mut self) {
        if let Hold::Pooled { id, .. } = self.hold {
            pool().forget(id);
        }
    }
}

/// The version of a file from its metadata: size, device, inode, mtime.
pub fn version_of(meta: &std::fs::Metadata) -> Version {
    Version {
        len: meta.len(),
        tag: VersionTag::File {
            dev: meta.dev(),
            ino: meta.ino(),
            mtime_ns: meta
                .mtime()
                .saturating_mul(1_000_000_000)
                .saturating_add(meta.mtime_nsec()),
        },
    }
}

fn open_regular(path: &Path) -> PResult<(File, Version)> {
    let file = open_file(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(Problem::NotBlosc2("not a regular file".into()));
    }
    Ok((file, version_of(&meta)))
}

impl FileSource {
    /// Open a regular file read-only; its descriptor goes to the pool.
    pub fn open(path: &Path) -> PResult<FileSource> {
        let (file, version) = open_regular(path)?;
        let file = Arc::new(file);
        let id = pool().new_id();
        pool().count_open(false);
        pool().keep(id, file.clone());
        let hold = Hold::Pooled {
            id,
            file: Mutex::new(Arc::downgrade(&file)),
        };
        let handle = Handle {
            path: path.to_path_buf(),
            hold,
            seen: Mutex::new(version.clone()),
        };
        Ok(FileSource {
            handle: Arc::new(handle),
            version,
        })
    }

    /// Open a regular file read-only and hold its descriptor for the
    /// source's life, outside the pool: for a file read once and dropped
    /// (a sniff, a sparse frame's chunk file).
    pub fn open_once(path: &Path) -> PResult<FileSource> {
        let (file, version) = open_regular(path)?;
        let handle = Handle {
            path: path.to_path_buf(),
            hold: Hold::Owned(Arc::new(file)),
            seen: Mutex::new(version.clone()),
        };
        Ok(FileSource {
            handle: Arc::new(handle),
            version,
        })
    }

    /// The path the file was opened by.
    pub fn path(&self) -> &Path {
        &self.handle.path
    }

    /// The open descriptor: the one kept by the pool or a pin, or the path
    /// opened again when it is still the same file in the state last seen.
    fn file(&self) -> PResult<Arc<File>> {
        let handle = &*self.handle;
        let (id, slot) = match &handle.hold {
            Hold::Owned(file) => return Ok(file.clone()),
            Hold::Pooled { id, file } => (*id, file),
        };
        let mut slot = slot.lock();
        if let Some(file) = slot.upgrade() {
            pool().touch(id);
            return Ok(file);
        }
        let (file, now) = open_regular(&handle.path)?;
        let seen = handle.seen.lock().clone();
        if now != seen {
            return Err(Problem::SourceChanged(format!("{} is not the file opened before (replaced or changed while its descriptor was closed)", handle.path.display())));
        }
        let file = Arc::new(file);
        *slot = Arc::downgrade(&file);
        pool().count_open(true);
        pool().keep(id, file.clone());
        Ok(file)
    }

    fn pread(&self, offset: u64, buf: &mut [u8]) -> PResult<()> {
        let end = offset
            .checked_add(buf.len() as u64)
            .ok_or_else(|| Problem::corrupt("read", "offset overflows"))?;
        if end > self.version.len {
            return Err(Problem::truncated("read", offset, end, self.version.len));
        }
        let file = self.file()?;
        let mut done = 0usize;
        while done < buf.len() {
            match file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => {
                    return Err(Problem::SourceChanged(format!(
                        "{} ends at {} bytes, {} were expected",
                        self.handle.path.display(),
                        offset + done as u64,
                        end
                    )))
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }
}

impl ByteSource for FileSource {
    fn len(&self) -> u64 {
        self.version.len
    }

    fn opened_version(&self) -> Version {
        self.version.clone()
    }

    fn version(&self) -> PResult<Version> {
        let now = version_of(&self.file()?.metadata()?);
        *self.handle.seen.lock() = now.clone();
        Ok(now)
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> PResult<()> {
        self.pread(offset, buf)
    }

    /// Ranges whose gaps are under 4 KiB share one `pread`.
    fn read_ranges(&self, ranges: &[Range<u64>]) -> PResult<Vec<Vec<u8>>> {
        let mut order: Vec<usize> = (0..ranges.len()).collect();
        order.sort_by_key(|&i| ranges[i].start);
        let mut out: Vec<Vec<u8>> = vec![Vec::new(); ranges.len()];
        let mut i = 0;
        while i < order.len() {
            let first = &ranges[order[i]];
            let mut span = first.start..first.end;
            let mut j = i + 1;
            while j < order.len() && ranges[order[j]].start <= span.end.saturating_add(COALESCE_GAP)
            {
                span.end = span.end.max(ranges[order[j]].end);
                j += 1;
            }
            let mut buf = vec![0u8; range_len(&span)?];
            self.pread(span.start, &mut buf)?;
            for &k in &order[i..j] {
                let r = &ranges[k];
                let at = (r.start - span.start) as usize;
                out[k] = buf[at..at + range_len(r)?].to_vec();
            }
            i = j;
        }
        Ok(out)
    }

    fn current(&self) -> PResult<Option<Arc<dyn ByteSource>>> {
        let version = self.version()?;
        Ok(Some(Arc::new(FileSource {
            handle: self.handle.clone(),
            version,
        })))
    }

    fn describe(&self) -> String {
        self.handle.path.display().to_string()
    }

    /// The descriptor, held open for as long as the pin lives.
    fn pin(&self) -> PResult<Option<Pin>> {
        Ok(Some(self.file()? as Pin))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn ranges_are_exact_and_coalesced_reads_split_back() {
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        let bytes: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
        tmp.write_all(&bytes).unwrap();
        let src = FileSource::open(tmp.path()).unwrap();
        assert_eq!(src.len(), 20_000);
        let ranges = [9000..9010, 10..20, 15..40, 19_990..20_000, 0..0];
        let got = src.read_ranges(&ranges).unwrap();
        for (r, g) in ranges.iter().zip(&got) {
            assert_eq!(g.as_slice(), &bytes[r.start as usize..r.end as usize]);
        }
        let mut past = [0u8; 8];
        let err = src.read_at(19_995, &mut past).unwrap_err();
        assert!(
            matches!(
                err,
                Problem::Truncated {
                    start: 19_995,
                    end: 20_003,
                    available: 20_000,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn version_follows_changes_and_current_sees_growth() {
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        tmp.write_all(b"0123456789").unwrap();
        tmp.flush().unwrap();
        let src = FileSource::open(tmp.path()).unwrap();
        assert_eq!(src.version().unwrap(), src.opened_version());
        tmp.write_all(b"abcdef").unwrap();
        tmp.flush().unwrap();
        let now = src.version().unwrap();
        assert_eq!(now.len, 16);
        assert_ne!(now, src.opened_version());
        let mut tail = [0u8; 6];
        assert!(
            src.read_at(10, &mut tail).is_err(),
            "the opened state ends at 10 bytes"
        );
        let current = src.current().unwrap().unwrap();
        current.read_at(10, &mut tail).unwrap();
        assert_eq!(&tail, b"abcdef");
    }
}
