//! Fills for callers without a planner: the disk cache's background
//! writer, scans (a table's batches of rows, read front to back), and
//! one-off reads with a small block cache of their own.

use std::sync::Arc;

use crate::format::{Array, PResult, Region};

use super::assemble::{fill, fill_with, Misses};
use super::blocks::Blocks;
use super::stats::Stats;

/// Block cache budget of a one-off read ([`read_uncached`]): enough for
/// DELTA's block 0 to stay while the blocks after it are decoded.
const ONE_OFF_BUDGET: usize = 32 << 20;

/// Fill `out` with bytes `[start, start + out.len())` of `data` for a
/// writer working in the background (the disk cache's deferred fills):
/// blocks still cached are copied from the cache; blocks the range uses
/// whole are decoded straight into `out` and not kept; blocks it uses in
/// part (the rows of an N-d chunk) are decoded into the cache once, for
/// the pieces that follow, rather than once per piece.
pub fn fill_in_background(
    blocks: &Blocks,
    array: &Array,
    start: u64,
    out: &mut [u8],
) -> PResult<()> {
    let misses = Misses {
        direct: true,
        keep_partial: true,
    };
    fill_with(blocks, array, Region::Data, start, out, misses)
}

/// Fill `out` with bytes `[start, start + out.len())` of `region` for a
/// scan (a table's batches of rows, read front to back through the
/// mount's caches): blocks the cache holds are copied from it; the others
/// are decoded straight into `out` when the range uses them whole, or into
/// a per-thread scratch buffer when it uses them in part, and are not
/// kept. A scan thus takes no room in the cache (it does not evict what
/// the readers of arrays keep there) and holds at most one block per
/// thread; the price is a block at the edge of two reads decoded for each
/// (measured: 5 % more blocks decoded reading a 10-million-row table's
/// `table.csv` in batches of 65,536 rows).
pub fn fill_scan(
    blocks: &Blocks,
    array: &Array,
    region: Region,
    start: u64,
    out: &mut [u8],
) -> PResult<()> {
    let misses = Misses {
        direct: true,
        keep_partial: false,
    };
    fill_with(blocks, array, region, start, out, misses)
}

/// Read bytes `[start, start + out.len())` of `region` with a small cache of
/// its own (tests, fuzzing, one-off reads): block 0 of a DELTA chunk is
/// decoded once per call, like any other block.
pub fn read_uncached(array: &Array, region: Region, start: u64, out: &mut [u8]) -> PResult<()> {
    let blocks = Blocks::new(ONE_OFF_BUDGET, 1 << 20, Arc::new(Stats::default()));
    fill(&blocks, array, region, start, out)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::format::PieceSource;
    use crate::read::testing::{fixture, sha256_hex};
    use crate::read::{Planner, View};

    #[test]
    fn delta_chunks_decode_each_block_once_block0_included() {
        let (array, entry) = fixture("codec_lz4_delta_shuffle");
        let planner = Planner::standalone(64 << 20);
        let data = planner.read(&array, &View::Data, 0, u64::MAX).unwrap();
        assert_eq!(sha256_hex(&data), entry["sha256"].as_str().unwrap());
        assert!(
            array.read_layout(0).unwrap().needs_block0(),
            "the fixture uses DELTA"
        );
        // The blocks the data needs, as the geometry says (padding blocks
        // beyond the array's edge are never needed), plus block 0 of every
        // chunk, which DELTA needs for the others; chunks stored raw
        // (memcpyed: C-Blosc2 found them incompressible) are read, not decoded.
        let mut needed = HashSet::new();
        let mut raw_chunks = HashSet::new();
        for p in array.pieces(Region::Data, 0, data.len() as u64).unwrap() {
            if let PieceSource::Block { chunk, block, .. } = p.source {
                if array.read_layout(chunk).unwrap().stored_raw() {
                    raw_chunks.insert(chunk);
                    continue;
                }
                needed.insert((chunk, block));
                needed.insert((chunk, 0));
            }
        }
        assert!(!needed.is_empty());
        assert_eq!(
            Stats::get(&planner.stats().blocks_decoded),
            needed.len() as u64,
            "every needed block decoded exactly once (raw chunks {raw_chunks:?})"
        );

        // A one-off read keeps block 0 while it decodes the blocks after it.
        let mut out = vec![0u8; data.len()];
        read_uncached(&array, Region::Data, 0, &mut out).unwrap();
        assert!(out == data);
    }
}
