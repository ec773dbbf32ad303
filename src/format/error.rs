//! Errors of the format layer: what is wrong with a Blosc2 file, and where.
//!
//! Parsers deep inside the format layer report a [`Problem`] (what is wrong);
//! the array layer wraps it in an [`Error`] that also names the file, so every
//! message a user sees says which file and which problem.

use std::path::{Path, PathBuf};

use super::codec::CodecError;

/// What is wrong with (a part of) a Blosc2 file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error("not a Blosc2 file: {0}")]
    NotBlosc2(String),
    #[error("truncated: {what} needs bytes {start}..{end} but only {available} are present")]
    Truncated { what: String, start: u64, end: u64, available: u64 },
    #[error("corrupt {what}: {detail}")]
    Corrupt { what: String, detail: String },
    #[error("unsupported {what}: {detail}")]
    Unsupported { what: String, detail: String },
    #[error("codec {name} (id {id}) is not supported by blosc2fs")]
    UnsupportedCodec { name: String, id: u8 },
    #[error("filter {name} (id {id}) is not supported by blosc2fs")]
    UnsupportedFilter { name: String, id: u8 },
    #[error("limit exceeded: {0}")]
    Limit(String),
    #[error("chunk {chunk}: {source}")]
    InChunk { chunk: u64, source: Box<Problem> },
    #[error("block {block}: {source}")]
    Codec { block: u64, source: CodecError },
    #[error("i/o error: {0}")]
    Io(String),
    #[error("out of range: {0}")]
    OutOfRange(String),
    /// The source's bytes are no longer those the array was opened from
    /// (rewritten in place, truncated, or its identity changed).
    #[error("the source changed since it was opened ({0})")]
    SourceChanged(String),
}

impl Problem {
    pub fn corrupt(what: impl Into<String>, detail: impl Into<String>) -> Self {
        Problem::Corrupt { what: what.into(), detail: detail.into() }
    }

    pub fn unsupported(what: impl Into<String>, detail: impl Into<String>) -> Self {
        Problem::Unsupported { what: what.into(), detail: detail.into() }
    }

    pub fn truncated(what: impl Into<String>, start: u64, end: u64, available: u64) -> Self {
        Problem::Truncated { what: what.into(), start, end, available }
    }

    /// The chunk this problem was found in, when known.
    pub fn chunk(&self) -> Option<u64> {
        match self {
            Problem::InChunk { chunk, .. } => Some(*chunk),
            _ => None,
        }
    }

    /// Whether the problem is the source changing under an open array.
    pub fn is_source_changed(&self) -> bool {
        match self {
            Problem::SourceChanged(_) => true,
            Problem::InChunk { source, .. } => source.is_source_changed(),
            _ => false,
        }
    }

    /// Attach the chunk number this problem was found in.
    pub fn in_chunk(self, chunk: u64) -> Self {
        match self {
            already @ Problem::InChunk { .. } => already,
            other => Problem::InChunk { chunk, source: Box::new(other) },
        }
    }
}

impl From<std::io::Error> for Problem {
    fn from(err: std::io::Error) -> Self {
        Problem::Io(err.to_string())
    }
}

/// A [`Problem`] together with the file it was found in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {problem}", file.display())]
pub struct Error {
    pub file: PathBuf,
    pub problem: Problem,
}

impl Error {
    pub fn new(file: &Path, problem: Problem) -> Self {
        Error { file: file.to_path_buf(), problem }
    }
}

/// Format-layer result with a bare problem (no file name yet).
pub type PResult<T> = std::result::Result<T, Problem>;
