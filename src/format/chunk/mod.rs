//! One compressed chunk: its header (`header.rs`), where its blocks are
//! (`layout.rs`) and how one block is decoded (`pipeline.rs`; its streams
//! on two threads for a waiting reader: `split.rs`).

pub mod header;
pub mod layout;
pub mod pipeline;
mod split;

pub use header::{ChunkHeader, Codec, Special};
pub use layout::{ChunkLayout, ChunkRegion, Storage};
pub use pipeline::{fill_special, BlockContext, Fork};

use crate::format::byte_source::SliceSource;
use crate::format::bytes::slice_at;
use crate::format::error::{PResult, Problem};

/// Layout of a chunk held in memory (all of `bytes`).
fn layout_of(bytes: &[u8]) -> PResult<ChunkLayout> {
    ChunkLayout::read(&ChunkRegion {
        source: &SliceSource(bytes),
        start: 0,
        available: bytes.len() as u64,
    })
}

/// Decode a whole chunk held in memory (e.g. a `.cdata` file or an index chunk).
pub fn decode_chunk(bytes: &[u8]) -> PResult<Vec<u8>> {
    decode_chunk_limited(bytes, usize::MAX)
}

/// [`decode_chunk`], refusing chunks that decode to more than `limit` bytes.
pub fn decode_chunk_limited(bytes: &[u8], limit: usize) -> PResult<Vec<u8>> {
    let layout = layout_of(bytes)?;
    if layout.nbytes() > limit {
        return Err(Problem::Limit(format!(
            "chunk decodes to {} bytes (at most {limit} accepted here)",
            layout.nbytes()
        )));
    }
    let mut out = vec![0u8; layout.nbytes()];
    decode_chunk_into(&layout, bytes, &[], &mut out)?;
    Ok(out)
}

/// Decode every block of an in-memory chunk into `out` (`layout.nbytes()`
/// bytes); `blockshape` is the array's (empty when not known).
pub fn decode_chunk_into(
    layout: &ChunkLayout,
    bytes: &[u8],
    blockshape: &[u64],
    out: &mut [u8],
) -> PResult<()> {
    if out.len() != layout.nbytes() {
        return Err(Problem::OutOfRange(format!(
            "chunk is {} bytes, output {}",
            layout.nbytes(),
            out.len()
        )));
    }
    let block0_len = if layout.nblocks() > 0 {
        layout.block_range(0).len()
    } else {
        0
    };
    let (first, rest) = out.split_at_mut(block0_len);
    for b in 0..layout.nblocks() {
        let src_range = layout.block_source_range(b);
        let source = slice_at(
            bytes,
            src_range.start as usize,
            (src_range.end - src_range.start) as usize,
            "block",
        )?;
        if b == 0 {
            layout.decode_block(
                0,
                source,
                &BlockContext {
                    block0: None,
                    blockshape,
                    fork: None,
                },
                first,
            )?;
        } else {
            let r = layout.block_range(b);
            let dst = &mut rest[r.start - block0_len..r.end - block0_len];
            layout.decode_block(
                b,
                source,
                &BlockContext {
                    block0: Some(first),
                    blockshape,
                    fork: None,
                },
                dst,
            )?;
        }
    }
    Ok(())
}

/// Layout of a whole chunk held in memory (for tests and fuzzing).
pub fn read_layout(bytes: &[u8]) -> PResult<ChunkLayout> {
    layout_of(bytes)
}
