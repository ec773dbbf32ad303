//! Filters: undo the reversible transforms applied to a block before its codec.
//!
//! One file per filter. Each entry point works on whole decoded blocks and
//! never allocates more than the block it is given.

pub mod bitshuffle;
pub mod bytedelta;
pub mod delta;
pub mod shuffle;
#[cfg(target_arch = "x86_64")]
mod x86_mem;

/// Why a filter could not be undone.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    /// The source and destination buffers must have the same length.
    #[error("filter buffers differ in length: source {src} bytes, destination {dst} bytes")]
    LengthMismatch { src: usize, dst: usize },
    /// A typesize the filter cannot work with (0).
    #[error("invalid typesize {0} for this filter")]
    InvalidTypesize(usize),
    /// The DELTA reference (the decoded block 0) is shorter than the block.
    #[error("delta reference holds {reference} bytes, the block {block}")]
    ShortDeltaReference { reference: usize, block: usize },
}
