//! How a table reads its stored parts (a column's values, offsets, bytes,
//! codes and `.notnull` mask, the valid-rows mask, a BatchArray's batches):
//! through a block cache shared by every read of the table, so a mount's
//! tables are read inside the mount's `--cache-size`, beside its arrays'
//! `data`. A table is read in scans front to back (a batch of rows at a
//! time): a block the cache holds is copied from it, the others are
//! decoded for the read and not kept ([`crate::read::fill_scan`]), so a
//! scan of a table larger than the cache neither fills the cache with
//! blocks it will not read again nor evicts those of the arrays read
//! beside it.
//!
//! A mount hands its tables the planner's caches ([`PartReader::shared`]);
//! a one-shot command (`blosc2fs info`) and the unit tests give each loaded
//! store one small cache of its own ([`PartReader::one_off`]), never one
//! per batch.

use std::sync::Arc;

use crate::format::{Array, PResult, Region};
use crate::read::planner::layout_budget;
use crate::read::{fill_scan, Blocks, Stats};

/// Block cache budget of a reader of its own: enough for DELTA's block 0
/// to stay while the blocks after it are decoded.
const ONE_OFF_BUDGET: usize = 16 << 20;

/// Reads a table's parts through one block cache.
#[derive(Clone)]
pub struct PartReader {
    blocks: Arc<Blocks>,
}

impl std::fmt::Debug for PartReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartReader")
            .field("budget", &self.blocks.cache().budget())
            .finish()
    }
}

impl PartReader {
    /// Reading through `blocks` (a mount's: the planner's caches).
    pub fn shared(blocks: Arc<Blocks>) -> PartReader {
        PartReader { blocks }
    }

    /// Reading through a small cache of its own (one-shot commands, tests).
    pub fn one_off() -> PartReader {
        PartReader::shared(Arc::new(Blocks::new(
            ONE_OFF_BUDGET,
            layout_budget(ONE_OFF_BUDGET),
            Arc::new(Stats::default()),
        )))
    }

    /// Fill `out` with bytes `[start, start + out.len())` of `array`'s data.
    pub fn read(&self, array: &Array, start: u64, out: &mut [u8]) -> PResult<()> {
        fill_scan(&self.blocks, array, Region::Data, start, out)
    }

    /// The decoded bytes of chunk `c` of `array` (a BatchArray's batch, an
    /// ObjectArray's item), its blocks through the cache.
    pub fn chunk(&self, array: &Array, c: u64) -> PResult<Vec<u8>> {
        let len = array.region_len(Region::Chunk(c))?;
        let mut out = vec![0u8; len as usize];
        fill_scan(&self.blocks, array, Region::Chunk(c), 0, &mut out)?;
        Ok(out)
    }
}

impl Default for PartReader {
    fn default() -> PartReader {
        PartReader::one_off()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::testing::{fixture, sha256_hex};

    fn shared(budget: usize) -> (Arc<Blocks>, PartReader) {
        let blocks = Arc::new(Blocks::new(budget, 1 << 20, Arc::new(Stats::default())));
        (blocks.clone(), PartReader::shared(blocks))
    }

    #[test]
    fn a_scan_copies_what_the_cache_holds_and_keeps_nothing() {
        // No DELTA: a block 0 a DELTA chunk's other blocks need is kept.
        let (array, entry) = fixture("codec_lz4_shuffle");
        let (blocks, reader) = shared(1 << 20);
        let mut data = vec![0u8; array.data_len() as usize];
        // In two reads, as a table reads two batches of rows.
        let half = data.len() / 2;
        let (a, b) = data.split_at_mut(half);
        reader.read(&array, 0, a).unwrap();
        reader.read(&array, half as u64, b).unwrap();
        assert_eq!(sha256_hex(&data), entry["sha256"].as_str().unwrap());
        let decoded = Stats::get(&blocks.stats().blocks_decoded);
        assert!(decoded > 0, "decoded by the shared caches' decoder");
        assert_eq!(blocks.cache().usage(), (0, 0), "a scan keeps no block");

        // What another reader left in the cache is copied, not decoded.
        let mut all = vec![0u8; data.len()];
        crate::read::assemble::fill(&blocks, &array, Region::Data, 0, &mut all).unwrap();
        let held = blocks.cache().usage();
        assert!(held.1 > 0);
        let (hits, decoded) = (
            Stats::get(&blocks.stats().hits),
            Stats::get(&blocks.stats().blocks_decoded),
        );
        let mut again = vec![0u8; data.len()];
        reader.clone().read(&array, 0, &mut again).unwrap();
        assert!(again == data);
        assert!(Stats::get(&blocks.stats().hits) > hits);
        assert_eq!(Stats::get(&blocks.stats().blocks_decoded), decoded);
        assert_eq!(blocks.cache().usage(), held);
    }

    #[test]
    fn a_chunk_read_through_the_cache_is_the_decoded_chunk() {
        let (array, entry) = fixture("frame_variable_chunks");
        let (_, reader) = shared(1 << 20);
        let mut whole = Vec::new();
        for c in 0..array.nchunks() {
            let chunk = reader.chunk(&array, c).unwrap();
            assert_eq!(chunk, array.decode_chunk(c).unwrap(), "chunk {c}");
            whole.extend_from_slice(&chunk);
        }
        assert_eq!(sha256_hex(&whole), entry["sha256"].as_str().unwrap());
        assert!(reader.chunk(&array, array.nchunks()).is_err());
    }
}
