//! Filters: undo the reversible transforms applied to a block before its codec.
//!
//! One file per filter. Each entry point works on whole decoded blocks and
//! never allocates more than the block it is given.

pub mod bitshuffle;
pub mod bytedelta;
pub mod delta;
pub mod ndcell;
pub mod ndmean;
pub mod shuffle;
#[cfg(target_arch = "x86_64")]
mod x86_mem;

/// Filter ids as stored in a chunk header's six filter slots: the one table
/// of ids and names.
pub mod filter_id {
    pub const NONE: u8 = 0;
    pub const SHUFFLE: u8 = 1;
    pub const BITSHUFFLE: u8 = 2;
    pub const DELTA: u8 = 3;
    pub const TRUNC_PREC: u8 = 4;
    pub const NDCELL: u8 = 32;
    pub const NDMEAN: u8 = 33;
    pub const BYTEDELTA_BUGGY: u8 = 34;
    pub const BYTEDELTA: u8 = 35;
    pub const INT_TRUNC: u8 = 36;
}

/// The name C-Blosc2 gives filter `id`.
pub fn filter_name(id: u8) -> String {
    let known = match id {
        filter_id::NONE => "nofilter",
        filter_id::SHUFFLE => "shuffle",
        filter_id::BITSHUFFLE => "bitshuffle",
        filter_id::DELTA => "delta",
        filter_id::TRUNC_PREC => "trunc_prec",
        filter_id::NDCELL => "ndcell",
        filter_id::NDMEAN => "ndmean",
        filter_id::BYTEDELTA_BUGGY => "bytedelta_buggy",
        filter_id::BYTEDELTA => "bytedelta",
        filter_id::INT_TRUNC => "int_trunc",
        _ => "user-defined",
    };
    known.to_string()
}

/// Whether blosc2fs undoes filter `id` (every filter C-Blosc2 ships; no
/// filter needs a separate plugin package today).
pub fn filter_support(id: u8) -> crate::format::codec::Support {
    use crate::format::codec::Support;
    match id {
        filter_id::NONE
        | filter_id::SHUFFLE
        | filter_id::BITSHUFFLE
        | filter_id::DELTA
        | filter_id::TRUNC_PREC
        | filter_id::NDCELL
        | filter_id::NDMEAN
        | filter_id::BYTEDELTA_BUGGY
        | filter_id::BYTEDELTA
        | filter_id::INT_TRUNC => Support::Decoded,
        _ => Support::Unknown,
    }
}

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
