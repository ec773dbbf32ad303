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
    /// The bytes are not a Blosc2 frame at all: no `b2frame` magic at the start,
    /// too short to hold a frame header, not a regular file, or a directory
    /// without a `chunks.b2frame` index. The string says which.
    #[error("not a Blosc2 file: {0}")]
    NotBlosc2(String),
    /// A read of `what` (a frame header, the chunk offsets index, a plain read,
    /// ...) needs bytes `start..end` (end exclusive) but the source, as opened,
    /// holds only `available` bytes: typically a file cut short.
    #[error("truncated: {what} needs bytes {start}..{end} but only {available} are present")]
    Truncated {
        /// What was being read.
        what: String,
        /// First byte needed.
        start: u64,
        /// One past the last byte needed.
        end: u64,
        /// Bytes actually present.
        available: u64,
    },
    /// The structure named by `what` (a frame header, a chunk header, the chunk
    /// offsets index, a metalayer, the geometry, ...) is present but inconsistent
    /// (a wrong msgpack marker, an impossible size, an offset outside its
    /// section, ...); `detail` says what is wrong with it.
    #[error("corrupt {what}: {detail}")]
    Corrupt {
        /// The structure that is wrong.
        what: String,
        /// What is wrong with it.
        detail: String,
    },
    /// A valid Blosc2 feature blosc2fs does not implement (such as a lazy chunk
    /// or unknown chunk header flags): `what` names where it was met, `detail`
    /// which feature it is.
    #[error("unsupported {what}: {detail}")]
    Unsupported {
        /// The feature asked for.
        what: String,
        /// Which variant of it is not supported.
        detail: String,
    },
    /// A chunk is compressed with a codec blosc2fs cannot decode: `id` is the
    /// codec id from the chunk header and `name` its usual name.
    #[error("codec {name} (id {id}) {support}")]
    UnsupportedCodec {
        /// The codec's name.
        name: String,
        /// The codec's id.
        id: u8,
        /// Why blosc2fs cannot decode it.
        support: crate::format::codec::Support,
    },
    /// A chunk's filter pipeline holds a filter blosc2fs cannot undo: `id` is the
    /// filter id from the chunk header and `name` its usual name.
    #[error("filter {name} (id {id}) {}", crate::format::filter::filter_support(*id))]
    UnsupportedFilter {
        /// The filter's name.
        name: String,
        /// The filter's id.
        id: u8,
    },
    /// A size or count above what blosc2fs accepts, to bound memory (a chunk
    /// offsets index of more than 16 Mi chunks, a block or chunk that decodes
    /// to more bytes than accepted); the file itself may be valid.
    #[error("limit exceeded: {0}")]
    Limit(String),
    /// Problem `source` was found while reading chunk number `chunk` of the array.
    /// Built by [`Problem::in_chunk`], which does not nest it: a problem
    /// already in a chunk keeps its first chunk number.
    #[error("chunk {chunk}: {source}")]
    InChunk {
        /// The chunk number.
        chunk: u64,
        /// What is wrong in it.
        source: Box<Problem>,
    },
    /// The codec failed on block number `block` (counted within its chunk):
    /// `source` says how. Usually wrapped in [`Problem::InChunk`].
    #[error("block {block}: {source}")]
    Codec {
        /// The block whose stream failed.
        block: u64,
        /// The codec's error.
        source: CodecError,
    },
    /// Reading the source failed with an I/O error (its message; see the
    /// `From<std::io::Error>` impl), or the thread decoding a shared block
    /// gave up without a result ("decode abandoned").
    #[error("i/o error: {0}")]
    Io(String),
    /// A request for something that does not exist: a chunk or block number past
    /// the end, or an output buffer whose size does not match what is decoded
    /// into it. Points at the caller, not at the file.
    #[error("out of range: {0}")]
    OutOfRange(String),
    /// The source's bytes are no longer those the array was opened from
    /// (rewritten in place, truncated, or its identity changed).
    #[error("the source changed since it was opened ({0})")]
    SourceChanged(String),
    /// The file holds no values of its own (a lazy expression, a proxy's
    /// cache, a placeholder): reading it would give made-up zeros.
    #[error("values are not stored in this file: it is {0} ({marker}); blosc2fs serves no data for it", marker = .0.marker())]
    ValuesElsewhere(super::elsewhere::Elsewhere),
    /// A computed array's values could not be computed (an operand failed
    /// to read, or the evaluation failed): `0` says which and why.
    #[error("computing the values failed: {0}")]
    Computed(String),
}

impl Problem {
    /// A [`Problem::Corrupt`] for structure `what`, with `detail` saying what is wrong.
    pub fn corrupt(what: impl Into<String>, detail: impl Into<String>) -> Self {
        Problem::Corrupt {
            what: what.into(),
            detail: detail.into(),
        }
    }

    /// A [`Problem::Unsupported`] met in `what`, with `detail` naming the feature.
    pub fn unsupported(what: impl Into<String>, detail: impl Into<String>) -> Self {
        Problem::Unsupported {
            what: what.into(),
            detail: detail.into(),
        }
    }

    /// A [`Problem::Truncated`]: `what` needs bytes `start..end` of a source of
    /// `available` bytes.
    pub fn truncated(what: impl Into<String>, start: u64, end: u64, available: u64) -> Self {
        Problem::Truncated {
            what: what.into(),
            start,
            end,
            available,
        }
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

    /// Whether this problem says the bytes read were damaged (a structure
    /// that does not parse, a stream a codec rejects, a read cut short):
    /// what a cache holding a bad copy would cause, so worth one read from
    /// the origin before giving up.
    pub fn is_damage(&self) -> bool {
        match self {
            Problem::NotBlosc2(_)
            | Problem::Corrupt { .. }
            | Problem::Truncated { .. }
            | Problem::Codec { .. } => true,
            Problem::InChunk { source, .. } => source.is_damage(),
            _ => false,
        }
    }

    /// Attach the chunk number this problem was found in.
    pub fn in_chunk(self, chunk: u64) -> Self {
        match self {
            already @ Problem::InChunk { .. } => already,
            other => Problem::InChunk {
                chunk,
                source: Box::new(other),
            },
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
    /// The file the problem was found in (the array's path: a frame file, or
    /// the directory of a sparse frame).
    pub file: PathBuf,
    /// What is wrong with it.
    pub problem: Problem,
}

impl Error {
    /// `problem`, found in `file`.
    pub fn new(file: &Path, problem: Problem) -> Self {
        Error {
            file: file.to_path_buf(),
            problem,
        }
    }
}

/// Format-layer result with a bare problem (no file name yet).
pub type PResult<T> = std::result::Result<T, Problem>;
