//! The read planner: answers reads of presented files through the shared
//! caches. A read becomes pieces that [`super::assemble`] copies into the
//! reply, or, inside one decoded block, is answered with the block itself.
//!
//! It also carries the read policy for open files: a sequential reader's
//! next window is handed to the prefetcher, and a newly opened array gets
//! its first chunk layouts read ahead through the same bounded pool.

use std::collections::HashSet;
use std::sync::Arc;

use crate::format::{Array, Error, PResult, Piece, PieceSource, Problem, Region};

use super::assemble::{fill_pieces, fill_rows, fill_with, tiling_pieces, Misses};
use super::block_cache::Block;
use super::blocks::Blocks;
use super::cores::CoreUse;
use super::interleave::fill_interleaved;
use super::prefetch::Prefetcher;
use super::stats::Stats;
use super::stream::StreamState;
use super::view::View;

/// Reads smaller than this, away from where the last read of the same
/// file ended, count as random: the blocks they use only in part are not
/// kept. The kernel's own readahead requests are larger.
const RANDOM_READ_MAX: u64 = 64 << 10;

/// The most channel stretches a window of an interleaved view is
/// prefetched as (a channel axis deep in the shape makes many short ones).
const PREFETCH_RUNS_MAX: usize = 256;

/// Where the bytes of a read are ([`Planner::read_served`]).
#[derive(Debug)]
pub enum Served {
    /// In the output buffer given.
    Buffer,
    /// Bytes `range` of a decoded block (a read inside one block).
    Shared {
        /// The block, held for as long as its bytes are being sent.
        block: Block,
        /// Where the read's bytes are in it.
        range: std::ops::Range<usize>,
    },
}

impl Served {
    /// The bytes read, given the output buffer the read was asked to use.
    pub fn bytes<'a>(&'a self, buffer: &'a [u8]) -> &'a [u8] {
        match self {
            Served::Buffer => buffer,
            Served::Shared { block, range } => &block[range.clone()],
        }
    }

    /// Leave the bytes read in `buffer` (copying them there if shared).
    pub fn into_buffer(self, buffer: &mut Vec<u8>) {
        if let Served::Shared { block, range } = self {
            buffer.clear();
            buffer.extend_from_slice(&block[range]);
        }
    }
}

/// An open file's reads as [`Planner::read_stream_served`] takes them.
#[derive(Debug, Clone, Copy)]
pub struct StreamRead<'a> {
    /// Where the file's reads have been going.
    pub stream: &'a StreamState,
    /// Whether the kernel reads ahead for the file (false for a direct_io
    /// file).
    pub kernel_reads_ahead: bool,
}

/// Reads presented files through the shared caches.
pub struct Planner {
    blocks: Arc<Blocks>,
    /// Whole blocks missing from the cache are decoded straight into the
    /// reply and not kept: a read that covers a block whole is not likely
    /// to want it again (the kernel's page cache keeps what it read), and
    /// the copy out of the cache is a large share of a scan's CPU time.
    direct: bool,
    prefetcher: Option<Prefetcher>,
    /// Bytes a sequential reader's prefetch runs ahead.
    window: u64,
    /// The stream reads being answered, against the cores: prefetch for a
    /// local source runs only on a core they leave idle.
    cores: CoreUse,
}

impl Planner {
    /// A planner over `blocks` for a mount: whole blocks not cached are
    /// decoded straight into the reply; with a prefetcher, sequential
    /// readers the kernel does not read ahead for get `window` bytes
    /// decoded ahead ([`Self::read_stream_served`]).
    pub fn new(blocks: Arc<Blocks>, prefetcher: Option<Prefetcher>, window: u64) -> Planner {
        Planner {
            blocks,
            prefetcher,
            window,
            direct: true,
            cores: CoreUse::of_this_machine(),
        }
    }

    /// This planner, counting `cores` cores (see [`Self::read_stream_served`]).
    pub fn with_cores(self, cores: usize) -> Planner {
        Planner {
            cores: CoreUse::new(cores),
            ..self
        }
    }

    /// A planner of its own for one pass front to back (`blosc2fs cat`):
    /// whole blocks are decoded straight into the output and not cached;
    /// `cache_budget` bytes keep the blocks a read uses only in part.
    pub fn one_pass(cache_budget: usize) -> Planner {
        Planner {
            direct: true,
            ..Planner::standalone(cache_budget)
        }
    }

    /// A planner of its own with a `cache_budget`-byte block cache, no
    /// prefetch, and every block read through the cache.
    pub fn standalone(cache_budget: usize) -> Planner {
        let stats = Arc::new(Stats::default());
        Planner {
            direct: false,
            ..Planner::new(
                Arc::new(Blocks::new(
                    cache_budget,
                    layout_budget(cache_budget),
                    stats,
                )),
                None,
                0,
            )
        }
    }

    /// The counters of this planner's caches.
    pub fn stats(&self) -> &Stats {
        self.blocks.stats()
    }

    /// The caches.
    pub fn blocks(&self) -> &Arc<Blocks> {
        &self.blocks
    }

    /// The items of the box `[origin, origin + extent)` of an N-d array, in
    /// C order over the box (items outside the array read as zeros), written
    /// into `out` (resized to fit): how a computed array reads the part of
    /// an operand one of its blocks needs. Blocks go through the shared
    /// cache and are kept there (the neighbouring blocks of the result want
    /// them too); nothing is decoded into the per-thread scratch buffer,
    /// which the computed block being made may be using.
    pub fn read_box_into(
        &self,
        array: &Array,
        origin: &[u64],
        extent: &[u64],
        out: &mut Vec<u8>,
    ) -> PResult<()> {
        let pieces = array.box_pieces(origin, extent)?;
        let len: u64 = pieces.iter().map(|p| p.len).sum();
        out.clear();
        out.resize(
            usize::try_from(len).map_err(|_| Problem::Limit(format!("a box of {len} bytes")))?,
            0,
        );
        fill_pieces(
            &self.blocks,
            array,
            pieces,
            out,
            Misses {
                direct: false,
                keep_partial: true,
            },
        )
    }

    /// Bytes `[offset, offset + size)` of `view` (shorter at the end of the file).
    pub fn read(
        &self,
        array: &Array,
        view: &View,
        offset: u64,
        size: u64,
    ) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        self.read_into(array, view, offset, size, &mut out)?;
        Ok(out)
    }

    /// [`Self::read`] into `out`, which is resized to the bytes read: a
    /// buffer reused from one request to the next is neither cleared nor
    /// faulted in again (every byte of it is overwritten).
    pub fn read_into(
        &self,
        array: &Array,
        view: &View,
        offset: u64,
        size: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        self.read_served(array, view, offset, size, out)?
            .into_buffer(out);
        Ok(())
    }

    /// [`Self::read_into`], except that a read lying inside one decoded
    /// block is answered with that block itself ([`Served::Shared`]), so
    /// the caller can send its bytes without copying them first; `out` is
    /// then left as it was.
    pub fn read_served(
        &self,
        array: &Array,
        view: &View,
        offset: u64,
        size: u64,
        out: &mut Vec<u8>,
    ) -> Result<Served, Error> {
        self.read_served_with(
            array,
            view,
            offset,
            size,
            out,
            Misses {
                direct: self.direct,
                keep_partial: true,
            },
        )
    }

    fn read_served_with(
        &self,
        array: &Array,
        view: &View,
        offset: u64,
        size: u64,
        out: &mut Vec<u8>,
        misses: Misses,
    ) -> Result<Served, Error> {
        let total = view.len(array).map_err(|p| Error::new(array.name(), p))?;
        let start = offset.min(total);
        let end = offset.saturating_add(size).min(total);
        let prefix = view.prefix();
        let plen = prefix.len() as u64;
        let in_prefix = (plen.min(end).saturating_sub(start)) as usize;
        let body_start = start.saturating_sub(plen);
        let body_len = (end - start) - in_prefix as u64;
        let fail = |p| Error::new(array.name(), p);
        let mut pieces = None;
        if in_prefix == 0 && body_len > 0 && view.in_order() {
            let found = tiling_pieces(array, view.region(), body_start, body_len).map_err(fail)?;
            if let Some(shared) = self.one_block(array, &found, misses).map_err(fail)? {
                Stats::add(&self.stats().bytes_served, body_len);
                return Ok(shared);
            }
            pieces = Some(found);
        }
        out.resize((end - start) as usize, 0);
        if in_prefix > 0 {
            out[..in_prefix].copy_from_slice(&prefix[start as usize..start as usize + in_prefix]);
        }
        if body_len > 0 {
            let out = &mut out[in_prefix..];
            match (view, pieces) {
                (View::Rows(rows), _) => fill_rows(&self.blocks, array, rows, body_start, out),
                (View::Interleaved(il), _) => {
                    fill_interleaved(&self.blocks, array, il, body_start, out, misses)
                }
                (_, Some(pieces)) => fill_pieces(&self.blocks, array, pieces, out, misses),
                (_, None) => fill_with(&self.blocks, array, view.region(), body_start, out, misses),
            }
            .map_err(fail)?;
        }
        Stats::add(&self.stats().bytes_served, out.len() as u64);
        Ok(Served::Buffer)
    }

    /// The cached (or now decoded and cached) block holding all of a read
    /// when its pieces are one stretch of one block; `None` otherwise, and
    /// when that block is not cached and the fill would not cache it:
    /// the read is all of it (decoded into the output), or it is stored
    /// raw (the read's own bytes are read from the source), or the read is
    /// random (decoded into scratch).
    fn one_block(
        &self,
        array: &Array,
        pieces: &[Piece],
        misses: Misses,
    ) -> PResult<Option<Served>> {
        let [piece] = pieces else { return Ok(None) };
        let PieceSource::Block {
            chunk,
            block,
            offset,
        } = piece.source
        else {
            return Ok(None);
        };
        if !self.blocks.contains(array, chunk, block) {
            let layout = self.blocks.block_layout(array, chunk, block)?;
            let whole = offset == 0 && layout.block_range(block as usize).len() as u64 == piece.len;
            if (misses.direct && whole) || !misses.keep_partial || layout.stored_raw() {
                return Ok(None);
            }
        }
        super::prefetch::announce(&self.blocks, array, pieces)?;
        let data = self.blocks.block(array, chunk, block)?;
        let range = offset as usize..(offset + piece.len) as usize;
        if data.get(range.clone()).is_none() {
            return Err(Problem::corrupt(
                "chunk",
                format!("chunk {chunk} block {block} is shorter than its shape"),
            ));
        }
        Ok(Some(Served::Shared { block: data, range }))
    }

    /// [`Self::read_into`] for an open file whose reads `stream` follows: a
    /// sequential reader's next window is queued for prefetch first.
    pub fn read_stream_into(
        &self,
        array: &Arc<Array>,
        view: &View,
        stream: &StreamState,
        offset: u64,
        size: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let reads = StreamRead {
            stream,
            kernel_reads_ahead: false,
        };
        self.read_stream_served(array, view, reads, offset, size, out)?
            .into_buffer(out);
        Ok(())
    }

    /// [`Self::read_stream_into`] answering like [`Self::read_served`].
    ///
    /// Blocks are prefetched for a sequential reader only when the kernel
    /// does not read ahead for it ([`StreamRead::kernel_reads_ahead`] false:
    /// a direct_io file) or the source may wait on a network. Otherwise the
    /// kernel's readahead already sends several requests at once, the FUSE
    /// threads decode them side by side straight into their replies, and
    /// decoding into the cache first would only add a copy (measured: 0.92
    /// against 0.64 daemon CPU-seconds per GiB on an LZ4 scan).
    ///
    /// For a local source, prefetch also needs a core that the reads leave
    /// idle ([`CoreUse`]): where every core already decodes for a reader of
    /// its own (two Dask threads each reading a chunk file with direct_io),
    /// each read is decoded straight into its reply instead.
    pub fn read_stream_served(
        &self,
        array: &Arc<Array>,
        view: &View,
        reads: StreamRead<'_>,
        offset: u64,
        size: u64,
        out: &mut Vec<u8>,
    ) -> Result<Served, Error> {
        let StreamRead {
            stream,
            kernel_reads_ahead,
        } = reads;
        let sequential = stream.follows(offset, size);
        let reading = self.cores.start();
        let prefetcher = self.prefetcher.as_ref().filter(|_| {
            sequential && (array.may_wait() || (!kernel_reads_ahead && reading.spare_core))
        });
        if let Some(prefetcher) = prefetcher {
            if let Some(ahead) = stream.ahead(offset, size, self.window) {
                if self.prefetch(
                    prefetcher,
                    array,
                    view,
                    ahead.start,
                    ahead.end - ahead.start,
                ) {
                    stream.accepted(ahead.end);
                }
            }
        }
        // While the prefetcher decodes this reader's blocks into the cache,
        // the reader takes them from there (waiting for one in flight)
        // rather than decoding them a second time into its reply.
        let misses = Misses {
            direct: self.direct && prefetcher.is_none(),
            keep_partial: sequential || size >= RANDOM_READ_MAX,
        };
        self.read_served_with(array, view, offset, size, out, misses)
    }

    /// [`Self::read_stream_into`] into a new buffer.
    pub fn read_stream(
        &self,
        array: &Arc<Array>,
        view: &View,
        stream: &StreamState,
        offset: u64,
        size: u64,
    ) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        self.read_stream_into(array, view, stream, offset, size, &mut out)?;
        Ok(out)
    }

    /// Queue the blocks of `[next, next + len)` of `view` that are not cached;
    /// false when the queue was full.
    fn prefetch(
        &self,
        prefetcher: &Prefetcher,
        array: &Arc<Array>,
        view: &View,
        next: u64,
        len: u64,
    ) -> bool {
        let pieces = match view {
            View::Rows(_) => return true,
            // The stretch of each channel plane the window needs (few
            // enough to ask for; a window over many slabs is left alone).
            View::Interleaved(il) => {
                let runs = il.source_runs(next, len);
                if runs.len() > PREFETCH_RUNS_MAX {
                    return true;
                }
                let mut pieces = Vec::new();
                for (offset, n) in runs {
                    match array.pieces(Region::Data, offset, n) {
                        Ok(found) => pieces.extend(found),
                        Err(_) => return true,
                    }
                }
                pieces
            }
            _ => {
                let body_next = next.saturating_sub(view.prefix().len() as u64);
                let Ok(pieces) = array.pieces(view.region(), body_next, len) else {
                    return true;
                };
                pieces
            }
        };
        let mut seen = HashSet::new();
        let wanted: Vec<Piece> = pieces
            .into_iter()
            .filter(|p| match p.source {
                PieceSource::Zeros => false,
                PieceSource::Block { chunk, block, .. } => {
                    seen.insert((chunk, block)) && !self.blocks.contains(array, chunk, block)
                }
                PieceSource::ChunkBytes { .. } => true,
            })
            .collect();
        wanted.is_empty() || prefetcher.request(array.clone(), wanted)
    }

    /// For a one-pass reader of the data view without a prefetcher
    /// (`blosc2fs cat`): hint that the chunks under data bytes
    /// `[from, from + len)` will be read soon, so a remote source fetches
    /// them while the current ones decode (a local source ignores it).
    pub fn hint_ahead(&self, array: &Array, from: u64, len: u64) {
        if !array.takes_hints() || len == 0 {
            return;
        }
        if let Ok(pieces) = array.pieces(Region::Data, from, len) {
            super::prefetch::hint_chunks(array, &pieces);
        }
    }

    /// A newly opened array: read its first chunk layouts ahead of need, in
    /// the prefetch pool (dropped when the pool is busy).
    pub fn opened(&self, array: &Arc<Array>) {
        if let Some(prefetcher) = &self.prefetcher {
            prefetcher.preload_layouts(array.clone());
        }
    }
}

/// Layout cache budget that goes with a block cache of `cache_budget` bytes.
pub fn layout_budget(cache_budget: usize) -> usize {
    (cache_budget / 8).clamp(1 << 20, 64 << 20)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::testing::fixture;

    #[test]
    fn random_small_reads_decode_into_scratch_and_sequential_ones_keep_their_blocks() {
        // 33 x 21 float64 in 12 x 8 chunks of 5 x 3 blocks (120-byte blocks).
        let (array, _) = fixture("dtype_le_f8");
        let array = Arc::new(array);
        let want = Planner::standalone(1 << 20)
            .read(&array, &View::Data, 0, u64::MAX)
            .unwrap();
        let planner = Planner::new(
            Arc::new(Blocks::new(1 << 20, 1 << 20, Arc::new(Stats::default()))),
            None,
            0,
        );
        let stream = StreamState::default();
        let reads = StreamRead {
            stream: &stream,
            kernel_reads_ahead: true,
        };
        let mut out = vec![0x5Au8; 3];
        // Small reads, each away from where the last one ended.
        for (start, n) in [(1000u64, 40u64), (17, 9), (4000, 200), (2500, 8)] {
            let served = planner
                .read_stream_served(&array, &View::Data, reads, start, n, &mut out)
                .unwrap();
            assert!(matches!(served, Served::Buffer));
            assert!(
                out == want[start as usize..(start + n) as usize],
                "random read {start}+{n}"
            );
        }
        assert_eq!(
            planner.blocks().cache().usage(),
            (0, 0),
            "a random reader's blocks are not kept"
        );
        assert!(Stats::get(&planner.stats().blocks_decoded) > 0);
        // A reader going on from where it was keeps the blocks it uses in part.
        let mut at = 2508u64;
        for n in [10u64, 30, 7] {
            let mut buf = Vec::new();
            let served = planner
                .read_stream_served(&array, &View::Data, reads, at, n, &mut buf)
                .unwrap();
            let got = served.bytes(&buf).to_vec();
            assert!(
                got == want[at as usize..(at + n) as usize],
                "sequential read {at}+{n}"
            );
            at += n;
        }
        assert!(
            planner.blocks().cache().usage().1 > 0,
            "a sequential reader's partly read blocks are cached"
        );
    }

    #[test]
    fn a_prefetched_reader_takes_its_blocks_from_the_cache_and_each_is_decoded_once() {
        // No kernel readahead (a direct_io file): the prefetcher decodes
        // ahead, and whole blocks must not also be decoded into the replies.
        // 700 items in chunks of 256 and blocks of 64: reads of whole blocks.
        let (array, _) = fixture("split_always_split_zstd");
        let array = Arc::new(array);
        let want = Planner::standalone(1 << 20)
            .read(&array, &View::Data, 0, u64::MAX)
            .unwrap();
        let mut distinct = HashSet::new();
        for p in array.pieces(Region::Data, 0, want.len() as u64).unwrap() {
            if let PieceSource::Block { chunk, block, .. } = p.source {
                distinct.insert((chunk, block));
            }
        }
        let block_bytes = 64 * want.len() as u64 / 700;
        for round in 0..50 {
            let blocks = Arc::new(Blocks::new(16 << 20, 1 << 20, Arc::new(Stats::default())));
            let planner = Planner::new(
                blocks.clone(),
                Some(Prefetcher::start(blocks, 2)),
                4 * block_bytes,
            )
            .with_cores(2);
            let stream = StreamState::default();
            let mut got = Vec::new();
            while got.len() < want.len() {
                let mut buf = Vec::new();
                let served = planner
                    .read_stream_served(
                        &array,
                        &View::Data,
                        StreamRead {
                            stream: &stream,
                            kernel_reads_ahead: false,
                        },
                        got.len() as u64,
                        block_bytes,
                        &mut buf,
                    )
                    .unwrap();
                got.extend_from_slice(served.bytes(&buf));
            }
            assert!(got == want, "round {round}");
            // Prefetch may also have decoded blocks past the end of the
            // reads, never a block twice.
            assert!(
                Stats::get(&planner.stats().blocks_decoded) <= distinct.len() as u64,
                "round {round}: a block decoded twice"
            );
        }
    }

    #[test]
    fn a_direct_io_reader_is_prefetched_for_only_while_a_core_is_left_idle() {
        // 700 items in chunks of 256 and blocks of 64 (split, zstd).
        let (array, _) = fixture("split_always_split_zstd");
        let array = Arc::new(array);
        let want = Planner::standalone(1 << 20)
            .read(&array, &View::Data, 0, u64::MAX)
            .unwrap();
        let block_bytes = 64 * want.len() as u64 / 700;
        let scan = |planner: &Planner| {
            let stream = StreamState::default();
            let mut got = Vec::new();
            while got.len() < want.len() {
                let mut buf = Vec::new();
                let reads = StreamRead {
                    stream: &stream,
                    kernel_reads_ahead: false,
                };
                let served = planner
                    .read_stream_served(
                        &array,
                        &View::Data,
                        reads,
                        got.len() as u64,
                        block_bytes,
                        &mut buf,
                    )
                    .unwrap();
                got.extend_from_slice(served.bytes(&buf));
            }
            got
        };
        let planner = |cores: usize| {
            let blocks = Arc::new(Blocks::new(16 << 20, 1 << 20, Arc::new(Stats::default())));
            Planner::new(
                blocks.clone(),
                Some(Prefetcher::start(blocks, 1)),
                4 * block_bytes,
            )
            .with_cores(cores)
        };
        // Two cores, no other read being answered: the window ahead is
        // queued for prefetch, and the reader takes its blocks from the
        // cache (whichever thread decoded them first).
        let idle = planner(2);
        assert!(scan(&idle) == want);
        assert!(
            idle.blocks().cache().usage().1 > 0,
            "the blocks went through the cache"
        );
        assert_eq!(idle.cores.reading(), 0, "every read counted out");
        // Another read being answered on the other core: nothing is
        // prefetched, every block is decoded straight into its reply.
        let busy = planner(2);
        let other = busy.cores.start();
        assert!(scan(&busy) == want);
        assert_eq!(Stats::get(&busy.stats().prefetched_blocks), 0);
        let plain = Planner::new(
            Arc::new(Blocks::new(16 << 20, 1 << 20, Arc::new(Stats::default()))),
            None,
            0,
        );
        assert!(scan(&plain) == want);
        assert_eq!(
            busy.blocks().cache().usage(),
            plain.blocks().cache().usage(),
            "blocks cached as without a prefetcher (the short last block, read in part)"
        );
        drop(other);
        // One core: never an idle one.
        let one = planner(1);
        assert!(scan(&one) == want);
        assert_eq!(Stats::get(&one.stats().prefetched_blocks), 0);
    }
}
