//! The one error type of the filesystem: what the tree, the read layer and
//! the format layer report, each kept as a typed value (never a string), and
//! the one function that turns it into an errno for the kernel.

use crate::format;

/// Why a filesystem operation failed.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    /// Nothing answers to that inode or name (ENOENT): an unknown inode or
    /// name, a presented file this array does not have (no `data` when it
    /// could not be opened, no `.zarray`), or a chunk number past the last.
    #[error("no such file or directory")]
    NotFound,
    /// A directory operation (lookup, readdir) on a file (ENOTDIR).
    #[error("not a directory")]
    NotDir,
    /// Opening a directory as a file (EISDIR).
    #[error("is a directory")]
    IsDir,
    /// Access refused (EACCES).
    #[error("permission denied")]
    PermissionDenied,
    /// The extended attribute asked for is not set on that inode (ENODATA).
    #[error("no such attribute")]
    NoAttr,
    /// The caller's buffer cannot hold the answer, e.g. an extended attribute
    /// value longer than the size given (ERANGE).
    #[error("buffer too small")]
    Range,
    /// A file handle that is not (or no longer) open (EBADF).
    #[error("no such open file")]
    BadHandle,
    /// Every attempt to change anything: the filesystem is read-only.
    #[error("read-only file system")]
    ReadOnly,
    /// The inode presents a version of its source that is gone (the source
    /// changed since it was looked up); the kernel looks the name up again
    /// and finds the new node (ESTALE).
    #[error("stale file handle")]
    Stale,
    /// A file's bytes could not be read or decoded (names the file and, for
    /// data, the chunk).
    #[error(transparent)]
    Format(#[from] format::Error),
    /// The source tree could not be read.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

impl FsError {
    /// The errno reported to the kernel: the one place errors become numbers.
    pub fn errno(&self) -> i32 {
        match self {
            FsError::NotFound => libc::ENOENT,
            FsError::NotDir => libc::ENOTDIR,
            FsError::IsDir => libc::EISDIR,
            FsError::PermissionDenied => libc::EACCES,
            FsError::NoAttr => libc::ENODATA,
            FsError::Range => libc::ERANGE,
            FsError::BadHandle => libc::EBADF,
            FsError::ReadOnly => libc::EROFS,
            FsError::Stale => libc::ESTALE,
            FsError::Format(_) => libc::EIO,
            FsError::Io(e) => match e.kind() {
                std::io::ErrorKind::NotFound => libc::ENOENT,
                std::io::ErrorKind::PermissionDenied => libc::EACCES,
                _ => e.raw_os_error().unwrap_or(libc::EIO),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_of_each_kind() {
        let io = |kind| FsError::Io(std::io::Error::from(kind));
        assert_eq!(io(std::io::ErrorKind::NotFound).errno(), libc::ENOENT);
        assert_eq!(
            io(std::io::ErrorKind::PermissionDenied).errno(),
            libc::EACCES
        );
        assert_eq!(
            FsError::Io(std::io::Error::from_raw_os_error(libc::ENAMETOOLONG)).errno(),
            libc::ENAMETOOLONG
        );
        assert_eq!(FsError::ReadOnly.errno(), libc::EROFS);
        assert_eq!(FsError::Stale.errno(), libc::ESTALE);
        let corrupt = format::Error::new(
            std::path::Path::new("a.b2nd"),
            format::Problem::corrupt("chunk", "bad").in_chunk(3),
        );
        let err = FsError::from(corrupt);
        assert_eq!(err.errno(), libc::EIO);
        assert_eq!(err.to_string(), "a.b2nd: chunk 3: corrupt chunk: bad");
    }
}
