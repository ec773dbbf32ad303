//! Values produced above the format layer rather than decoded from the
//! frame: a saved lazy expression's blocks, computed from its operands.
//!
//! Such a frame holds the result's shape, dtype and grid and no values.
//! The layer that can compute them (compute/, through the tree) hands the
//! opened [`super::Array`] a [`BlockProducer`]; from then on every read of
//! a block asks the producer instead of decoding, so the planner, the block
//! cache and every view treat a computed block like any other. This is the
//! same arrangement as [`super::byte_source::ByteSource`]: the format layer
//! declares what it needs and never names who provides it.

use super::error::PResult;

/// Fills the blocks of an array whose values are produced, not stored.
pub trait BlockProducer: Send + Sync + std::fmt::Debug {
    /// Write block `block` of chunk `chunk` into `out`: the block's items in
    /// C order over the full blockshape (exactly `out.len()` bytes), items
    /// beyond the array's edge as zeros, as a decoded stored block holds them.
    fn produce_block(&self, chunk: u64, block: u64, out: &mut [u8]) -> PResult<()>;

    /// Bytes the producer holds (its operands' parsed state), for the
    /// metadata budget.
    fn held_bytes(&self) -> usize {
        0
    }

    /// What names the values produced for a cache that outlives the
    /// process, beside the recipe's own file version (the array's): every
    /// input's version. `None` (the default) when they cannot be named.
    fn version_identity(&self) -> Option<String> {
        None
    }
}
