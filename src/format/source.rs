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

/// An open source file and the length it had when opened (or bytes held in
/// memory, for tests and fuzzing).
#[derive(Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    backing: Backing,
    len: u64,
    mtime: Option<std::time::SystemTime>,
}

#[derive(Debug)]
enum Backing {
    File(File),
    Memory(Vec<u8>),
}

impl SourceFile {
    pub fn open(path: &Path) -> PResult<SourceFile> {
        let file = File::open(path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(Problem::NotBlosc2("not a regular file".into()));
        }
        Ok(SourceFile { path: path.to_path_buf(), backing: Backing::File(file), len: meta.len(), mtime: meta.modified().ok() })
    }

    /// Bytes in memory presented as a file called `name`.
    pub fn from_bytes(name: &Path, bytes: Vec<u8>) -> SourceFile {
        let len = bytes.len() as u64;
        SourceFile { path: name.to_path_buf(), backing: Backing::Memory(bytes), len, mtime: None }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the open file still has the length and mtime it had when opened.
    pub fn unchanged(&self) -> bool {
        match &self.backing {
            Backing::File(file) => file.metadata().map(|m| m.len() == self.len && m.modified().ok() == self.mtime).unwrap_or(false),
            Backing::Memory(_) => true,
        }
    }

    /// Exactly `len` bytes at `offset`; an error if they lie past the end.
    pub fn read_at(&self, offset: u64, len: usize, what: &str) -> PResult<Vec<u8>> {
        let end = offset.checked_add(len as u64).ok_or_else(|| Problem::corrupt(what, "offset overflows"))?;
        if end > self.len {
            return Err(Problem::truncated(what, offset, end, self.len));
        }
        let file = match &self.backing {
            Backing::Memory(bytes) => return Ok(bytes[offset as usize..end as usize].to_vec()),
            Backing::File(file) => file,
        };
        let mut buf = vec![0u8; len];
        let mut done = 0usize;
        while done < len {
            match file.read_at(&mut buf[done..], offset + done as u64) {
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
