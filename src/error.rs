//! Errors of the filesystem, each with the errno the kernel gets.

use crate::format::Problem;

#[derive(Debug, thiserror::Error)]
pub enum FsError {
    #[error("no such file or directory")]
    NotFound,
    #[error("not a directory")]
    NotDir,
    #[error("is a directory")]
    IsDir,
    #[error("permission denied")]
    PermissionDenied,
    #[error("no such attribute")]
    NoAttr,
    #[error("buffer too small")]
    Range,
    #[error("{0}")]
    Format(Problem),
    #[error("i/o error: {0}")]
    Io(std::io::Error),
}

impl FsError {
    pub fn from_io(err: std::io::Error) -> FsError {
        match err.kind() {
            std::io::ErrorKind::NotFound => FsError::NotFound,
            std::io::ErrorKind::PermissionDenied => FsError::PermissionDenied,
            _ => FsError::Io(err),
        }
    }

    /// The errno reported to the kernel.
    pub fn errno(&self) -> i32 {
        match self {
            FsError::NotFound => libc::ENOENT,
            FsError::NotDir => libc::ENOTDIR,
            FsError::IsDir => libc::EISDIR,
            FsError::PermissionDenied => libc::EACCES,
            FsError::NoAttr => libc::ENODATA,
            FsError::Range => libc::ERANGE,
            FsError::Format(_) => libc::EIO,
            FsError::Io(e) => e.raw_os_error().unwrap_or(libc::EIO),
        }
    }
}
