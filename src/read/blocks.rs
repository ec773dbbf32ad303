//! Decoded blocks on demand: the one place that asks the format layer to
//! decode, above the caches that keep what it answered.
//!
//! A block of a DELTA chunk needs that chunk's block 0 decoded first; this
//! module fetches it through the same cache (so it is decoded once) and
//! hands it down. When the format layer reports that the source changed, it
//! asks the array whether the change is an append-only growth (comparing
//! the layouts kept here) and, if so, reads again.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

use crate::format::{Array, ChunkLayout, Fork, PResult, Piece, PieceSource, Problem, Seen};

use super::block_cache::{Block, BlockCache, BlockKey};
use super::helper::DecodeHelpers;
use super::layouts::LayoutCache;
use super::stats::Stats;

/// Cached blocks compared with a fresh decode before a grown source is trusted.
const GROWTH_SAMPLES: usize = 4;

/// Bytes kept of each block served without being cached, for the same check.
const EVIDENCE_BYTES: usize = 4096;

/// Largest block [`Blocks::decode_part_into`] decodes into scratch.
const SCRATCH_MAX: usize = 4 << 20;

thread_local! {
    /// Per-thread buffer for the blocks of random reads.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Arrays whose uncached evidence is kept at once.
const EVIDENCE_ARRAYS: usize = 64;

/// A stretch of a block served without caching it (decoded straight into
/// a reply, or read raw): kept so that a source rewritten in place can
/// still be told from one that grew.
struct Evidence {
    chunk: u64,
    block: u64,
    offset: usize,
    bytes: Vec<u8>,
}

/// The helpers, counting the jobs they take in `.stats`.
struct Counted<'a> {
    helpers: &'a DecodeHelpers,
    stats: &'a Stats,
}

impl Fork for Counted<'_> {
    fn spawn(&self, job: Box<dyn FnOnce() + Send>) {
        if self.helpers.offer(job) {
            Stats::add(&self.stats.helper_jobs, 1);
        }
    }
}

/// The block cache and the layout cache of a mount, and how to fill them.
pub struct Blocks {
    cache: BlockCache,
    layouts: LayoutCache,
    stats: Arc<Stats>,
    /// The first few stretches of each array served without caching.
    evidence: Mutex<HashMap<u64, Vec<Evidence>>>,
    /// Threads that decode half of a random read's block.
    helpers: Option<DecodeHelpers>,
}

impl Blocks {
    /// Caches of `cache_budget` bytes of blocks and about `layout_budget` bytes of layouts.
    pub fn new(cache_budget: usize, layout_budget: usize, stats: Arc<Stats>) -> Blocks {
        Blocks {
            cache: BlockCache::new(cache_budget, stats.clone()),
            layouts: LayoutCache::new(layout_budget),
            stats,
            evidence: Mutex::default(),
            helpers: None,
        }
    }

    /// These caches, with `helpers` decoding half of each random read's block.
    pub fn with_helpers(self, helpers: Option<DecodeHelpers>) -> Blocks {
        Blocks { helpers, ..self }
    }

    /// The counters shared by the caches and the readers.
    pub fn stats(&self) -> &Arc<Stats> {
        &self.stats
    }

    /// The block cache (for its usage and budget).
    pub fn cache(&self) -> &BlockCache {
        &self.cache
    }

    /// Whether block `b` of chunk `c` of `array` is cached.
    pub fn contains(&self, array: &Array, c: u64, b: u64) -> bool {
        self.cache.contains(&BlockKey {
            array: array.id(),
            chunk: c,
            block: b,
        })
    }

    /// Whether block `b` of chunk `c` of `array` is being decoded into the
    /// cache now (by another reader or the prefetcher).
    pub fn decoding(&self, array: &Array, c: u64, b: u64) -> bool {
        self.cache.in_flight(&BlockKey {
            array: array.id(),
            chunk: c,
            block: b,
        })
    }

    /// Whether the layout of chunk `c` of `array` is kept.
    pub fn has_layout(&self, array: &Array, c: u64) -> bool {
        self.layouts.contains(array.id(), c)
    }

    /// The layout of chunk `c`.
    pub fn layout(&self, array: &Array, c: u64) -> PResult<Arc<ChunkLayout>> {
        self.trusting(array, || self.layouts.get(array, c))
    }

    /// Decoded block `b` of chunk `c`, from the cache or decoded now.
    pub fn block(&self, array: &Array, c: u64, b: u64) -> PResult<Block> {
        let key = BlockKey {
            array: array.id(),
            chunk: c,
            block: b,
        };
        self.cache.get_or_decode(key, || self.decode(array, c, b))
    }

    fn decode(&self, array: &Array, c: u64, b: u64) -> PResult<Block> {
        let layout = self.block_layout(array, c, b)?;
        let mut out = self.cache.buffer(layout.block_range(b as usize).len());
        match self.decode_with(array, &layout, c, b, &mut out) {
            Ok(()) => Ok(Arc::new(out)),
            Err(e) => {
                self.cache.recycle(out);
                Err(e)
            }
        }
    }

    /// Decode block `b` of chunk `c` straight into `out`, without keeping
    /// it: for a reader that will not come back to this block (`blosc2fs
    /// cat`), which saves the copy out of the cache. Does nothing and
    /// answers false when `out` is not the whole block, or when the block is
    /// block 0 of a DELTA chunk (the chunk's other blocks need it cached).
    pub fn decode_whole_into(
        &self,
        array: &Array,
        c: u64,
        b: u64,
        out: &mut [u8],
    ) -> PResult<bool> {
        let layout = self.block_layout(array, c, b)?;
        if out.len() != layout.block_range(b as usize).len() || (b == 0 && layout.needs_block0()) {
            return Ok(false);
        }
        self.decode_with(array, &layout, c, b, out)?;
        Stats::add(&self.stats.blocks_decoded, 1);
        Stats::add(&self.stats.bytes_decoded, out.len() as u64);
        self.keep_evidence(array, c, b, 0, out);
        Ok(true)
    }

    /// Decode block `b` of chunk `c` whole into the per-thread scratch
    /// buffer, without keeping it, and hand it to `scatter`: for a read that
    /// uses every byte of the block in several pieces (a C-order read of
    /// chunks narrower than a row), which copies them out while the block is
    /// still in the CPU's caches, and spares the cache memory its page
    /// faults. Does nothing and answers false where [`Self::decode_whole_into`]
    /// would, and for a block larger than the scratch buffer may grow.
    pub fn decode_whole_with(
        &self,
        array: &Array,
        c: u64,
        b: u64,
        scatter: impl FnOnce(&[u8]) -> PResult<()>,
    ) -> PResult<bool> {
        let layout = self.block_layout(array, c, b)?;
        let len = layout.block_range(b as usize).len();
        if len > SCRATCH_MAX || (b == 0 && layout.needs_block0()) {
            return Ok(false);
        }
        self.in_scratch(array, &layout, c, b, None, |block| {
            self.keep_evidence(array, c, b, 0, block);
            scatter(block)
        })?;
        Ok(true)
    }

    /// Decoded bytes `[offset, offset + out.len())` of block `b` of chunk
    /// `c`, decoded into a per-thread scratch buffer and not kept (a random
    /// reader's block: fresh cache memory would cost more in page faults
    /// than the decode); of a byte-shuffled block only the items read are
    /// unshuffled. False, with nothing done, for a block larger than the
    /// scratch buffer may grow.
    pub fn decode_part_into(
        &self,
        array: &Array,
        c: u64,
        b: u64,
        offset: u64,
        out: &mut [u8],
    ) -> PResult<bool> {
        let layout = self.block_layout(array, c, b)?;
        let len = layout.block_range(b as usize).len();
        let end = offset
            .checked_add(out.len() as u64)
            .filter(|&e| e <= len as u64);
        let Some(end) = end else {
            return Err(Problem::OutOfRange(format!(
                "bytes {offset}+{} of block {b} ({len} bytes)",
                out.len()
            ))
            .in_chunk(c));
        };
        if len > SCRATCH_MAX {
            return Ok(false);
        }
        let counted = self.helpers.as_ref().map(|helpers| Counted {
            helpers,
            stats: &self.stats,
        });
        let fork = counted.as_ref().map(|c| c as &dyn Fork);
        // A byte-shuffled block: only the items read are unshuffled.
        if self.trusting(array, || {
            array.decode_block_part_forked(&layout, c, b, fork, offset, out)
        })? {
            self.keep_evidence(array, c, b, offset as usize, out);
            Stats::add(&self.stats.blocks_decoded, 1);
            Stats::add(&self.stats.bytes_decoded, len as u64);
            return Ok(true);
        }
        self.in_scratch(array, &layout, c, b, fork, |block| {
            out.copy_from_slice(&block[offset as usize..end as usize]);
            self.keep_evidence(array, c, b, offset as usize, out);
            Ok(())
        })?;
        Ok(true)
    }

    /// Decode block `b` of chunk `c` whole into this thread's scratch
    /// buffer (half of its streams through `fork`) and hand it to
    /// `use_block`; counted as one block decoded. The caller has checked
    /// that the block fits [`SCRATCH_MAX`].
    fn in_scratch(
        &self,
        array: &Array,
        layout: &ChunkLayout,
        c: u64,
        b: u64,
        fork: Option<&dyn Fork>,
        use_block: impl FnOnce(&[u8]) -> PResult<()>,
    ) -> PResult<()> {
        let len = layout.block_range(b as usize).len();
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            // Stale bytes are fine: the decoders overwrite the whole block.
            scratch.resize(len, 0);
            self.decode_forked(array, layout, c, b, fork, &mut scratch[..])?;
            use_block(&scratch[..])
        })?;
        Stats::add(&self.stats.blocks_decoded, 1);
        Stats::add(&self.stats.bytes_decoded, len as u64);
        Ok(())
    }

    /// Keep the start of a stretch served without caching, while the array
    /// has fewer than [`GROWTH_SAMPLES`] kept.
    fn keep_evidence(&self, array: &Array, chunk: u64, block: u64, offset: usize, bytes: &[u8]) {
        let mut evidence = self.evidence.lock();
        if !evidence.contains_key(&array.id()) && evidence.len() >= EVIDENCE_ARRAYS {
            if let Some(&other) = evidence.keys().next() {
                evidence.remove(&other);
            }
        }
        let kept = evidence.entry(array.id()).or_default();
        if kept.len() < GROWTH_SAMPLES {
            let bytes = bytes[..bytes.len().min(EVIDENCE_BYTES)].to_vec();
            kept.push(Evidence {
                chunk,
                block,
                offset,
                bytes,
            });
        }
    }

    /// Bytes `[offset, offset + out.len())` of block `b` of chunk `c` read
    /// straight from the source, without decoding or caching, when the
    /// chunk stores its blocks raw; false (nothing read) otherwise.
    pub fn read_raw_part(
        &self,
        array: &Array,
        c: u64,
        b: u64,
        offset: u64,
        out: &mut [u8],
    ) -> PResult<bool> {
        let layout = self.layout(array, c)?;
        let read = self.trusting(array, || {
            array.read_raw_block_part(&layout, c, b, offset, out)
        })?;
        if read {
            Stats::add(&self.stats.bytes_decoded, out.len() as u64);
            self.keep_evidence(array, c, b, offset as usize, out);
        }
        Ok(read)
    }

    /// The layout of chunk `c`, which must have a block `b`.
    pub fn block_layout(&self, array: &Array, c: u64, b: u64) -> PResult<Arc<ChunkLayout>> {
        let layout = self.layout(array, c)?;
        if b >= layout.nblocks() as u64 {
            return Err(
                Problem::OutOfRange(format!("block {b} of {}", layout.nblocks())).in_chunk(c),
            );
        }
        Ok(layout)
    }

    /// Decode block `b` of chunk `c` into `out` (its whole length), with
    /// block 0 from the cache first when the chunk's filters need it.
    fn decode_with(
        &self,
        array: &Array,
        layout: &ChunkLayout,
        c: u64,
        b: u64,
        out: &mut [u8],
    ) -> PResult<()> {
        self.decode_forked(array, layout, c, b, None, out)
    }

    /// [`Blocks::decode_with`], with half of the streams decoded through `fork`.
    fn decode_forked(
        &self,
        array: &Array,
        layout: &ChunkLayout,
        c: u64,
        b: u64,
        fork: Option<&dyn Fork>,
        out: &mut [u8],
    ) -> PResult<()> {
        let block0 = if b > 0 && layout.needs_block0() {
            Some(self.block(array, c, 0)?)
        } else {
            None
        };
        self.trusting(array, || {
            array.decode_block_forked(
                layout,
                c,
                b,
                block0.as_deref().map(Vec::as_slice),
                fork,
                out,
            )
        })
    }

    /// The block pieces `piece` stands for: itself, or for a plain frame's
    /// chunk bytes, their split into blocks by the chunk's layout.
    pub fn block_pieces(&self, array: &Array, piece: Piece) -> PResult<Vec<Piece>> {
        match piece.source {
            PieceSource::ChunkBytes { chunk, .. } => {
                array.block_pieces(&*self.layout(array, chunk)?, chunk, piece)
            }
            _ => Ok(vec![piece]),
        }
    }

    /// Run `read`; if the source changed under it, accept an append-only
    /// growth and run it once more; if the bytes it read were damaged and
    /// the source kept a copy of them (a disk cache), drop the copy and run
    /// it once more from the origin.
    fn trusting<T>(&self, array: &Array, mut read: impl FnMut() -> PResult<T>) -> PResult<T> {
        match read() {
            Err(problem) if problem.is_damage() && array.distrust_source() => {
                log::warn!("{problem}: dropped the cached copy, reading again from the origin");
                self.layouts.forget(array.id());
                read()
            }
            Err(problem) if problem.is_source_changed() => {
                let chunk = problem.chunk();
                let samples = self.cache.sample(array.id(), GROWTH_SAMPLES);
                let evidence = self.evidence.lock();
                let uncached = evidence
                    .get(&array.id())
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                let cached = samples.iter().map(|(k, block)| Seen {
                    chunk: k.chunk,
                    block: k.block,
                    offset: 0,
                    bytes: block.as_slice(),
                });
                let seen: Vec<Seen<'_>> = cached
                    .chain(uncached.iter().map(|e| Seen {
                        chunk: e.chunk,
                        block: e.block,
                        offset: e.offset,
                        bytes: &e.bytes,
                    }))
                    .collect();
                let accepted = array.accept_growth(&self.layouts.known(array.id()), &seen);
                drop(evidence);
                accepted.map_err(|p| match chunk {
                    Some(c) => p.in_chunk(c),
                    None => p,
                })?;
                read()
            }
            other => other,
        }
    }
}
