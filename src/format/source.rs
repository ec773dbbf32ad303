//! Reading bytes of the source files: positioned reads, always bounds-checked.
//!
//! Files are read with `pread` rather than memory-mapped: a mapped file that
//! is truncated while mounted turns the next access into SIGBUS, and a
//! filesystem must survive its sources changing underneath it.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::chunk::ChunkBytes;
use super::error::{PResult, Problem};

/// An open source file and the length it had when opened.
#[derive(Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    file: File,
    len: u64,
}

impl SourceFile {
    pub fn open(path: &Path) -> PResult<SourceFile> {
        let file = File::open(path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(Problem::NotBlosc2("not a regular file".into()));
        }
        Ok(SourceFile { path: path.to_path_buf(), file, len: meta.len() })
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The metadata of the open file now (to notice changes since opening).
    pub fn metadata(&self) -> std::io::Result<std::fs::Metadata> {
        self.file.metadata()
    }

    /// Exactly `len` bytes at `offset`; an error if they lie past the end.
    pub fn read_at(&self, offset: u64, len: usize, what: &str) -> PResult<Vec<u8>> {
        let end = offset.checked_add(len as u64).ok_or_else(|| Problem::corrupt(what, "offset overflows"))?;
        if end > self.len {
            return Err(Problem::truncated(what, offset, end, self.len));
        }
        let mut buf = vec![0u8; len];
        let mut done = 0usize;
        while done < len {
            match self.file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => return Err(Problem::truncated(what, offset, end, offset + done as u64)),
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(buf)
    }
}

/// A chunk stored in a region `[start, start + available)` of a file.
pub struct FileRegion<'a> {
    pub file: &'a SourceFile,
    pub start: u64,
    pub available: u64,
}

impl ChunkBytes for FileRegion<'_> {
    fn available(&self) -> u64 {
        self.available
    }

    fn read(&self, offset: u64, len: usize) -> PResult<Vec<u8>> {
        let end = offset.checked_add(len as u64).ok_or_else(|| Problem::corrupt("chunk", "offset overflows"))?;
        if end > self.available {
            return Err(Problem::truncated("chunk", offset, end, self.available));
        }
        self.file.read_at(self.start + offset, len, "chunk")
    }
}
