//! Filters: undo the reversible transforms applied to a block before its codec.
//!
//! One file per filter. Each entry point works on whole decoded blocks and
//! never allocates more than the block it is given.

pub mod bitshuffle;
pub mod bytedelta;
pub mod delta;
pub mod shuffle;
