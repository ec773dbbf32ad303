//! The read planner: a read of a presented file becomes pieces (from the
//! format layer's geometry), pieces become cached blocks, and the blocks'
//! bytes are copied into the reply.
//!
//! It also carries the read policy for open files: a sequential reader's
//! next window is handed to the prefetcher, and a newly opened array gets
//! its first chunk layouts read ahead through the same bounded pool.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use crate::format::{Array, Error, PResult, Piece, PieceSource, Problem, Region};

use super::blocks::Blocks;
use super::cache::Block;
use super::prefetch::Prefetcher;
use super::stats::Stats;
use super::stream::StreamState;

/// Blocks one fill keeps at hand (enough for a row crossing 64 chunks), so a
/// request whose rows cross many chunks asks the cache once per block.
const AT_HAND: usize = 64;

/// Block cache budget of a one-off read ([`read_uncached`]): enough for
/// DELTA's block 0 to stay while the blocks after it are decoded.
const ONE_OFF_BUDGET: usize = 32 << 20;

/// Which byte view of an array a presented file shows.
#[derive(Debug, Clone)]
pub enum View {
    /// The C-order bytes (`data`).
    Data,
    /// A `.npy` header followed by the C-order bytes (`data.npy`).
    Npy(Arc<Vec<u8>>),
    /// One chunk over its chunkshape (`chunks/<coords>`).
    Chunk(u64),
    /// Some rows of the C-order bytes, in order, after a prefix (a table
    /// column's valid rows).
    Rows(Arc<RowSelection>),
}

/// Which rows of an array a [`View::Rows`] shows: runs of consecutive rows
/// (first stored row, count) of `row_bytes` bytes each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowSelection {
    runs: Vec<(u64, u64)>,
    /// Presented row index where each run starts.
    starts: Vec<u64>,
    count: u64,
    row_bytes: u64,
    prefix: Arc<Vec<u8>>,
}

impl RowSelection {
    /// Rows in `runs` (sorted, not overlapping), each `row_bytes` long,
    /// presented after `prefix`.
    pub fn new(runs: Vec<(u64, u64)>, row_bytes: u64, prefix: Arc<Vec<u8>>) -> RowSelection {
        let mut starts = Vec::with_capacity(runs.len());
        let mut count = 0u64;
        for &(_, n) in &runs {
            starts.push(count);
            count += n;
        }
        RowSelection {
            runs,
            starts,
            count,
            row_bytes,
            prefix,
        }
    }

    /// Rows shown.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Bytes of the rows shown (the prefix not included).
    pub fn body_len(&self) -> u64 {
        self.count.saturating_mul(self.row_bytes)
    }

    /// Where presented body byte `at` lies in the array's data, and how many
    /// bytes from there on are contiguous in both.
    fn locate(&self, at: u64) -> Option<(u64, u64)> {
        if self.row_bytes == 0 || at >= self.body_len() {
            return None;
        }
        let row = at / self.row_bytes;
        let k = self.starts.partition_point(|&s| s <= row).checked_sub(1)?;
        let (first, n) = self.runs[k];
        let run_end = (self.starts[k] + n) * self.row_bytes;
        let src = (first + (row - self.starts[k])) * self.row_bytes + at % self.row_bytes;
        Some((src, run_end - at))
    }
}

impl View {
    fn region(&self) -> Region {
        match self {
            View::Data | View::Npy(_) | View::Rows(_) => Region::Data,
            View::Chunk(c) => Region::Chunk(*c),
        }
    }

    fn prefix(&self) -> &[u8] {
        match self {
            View::Npy(header) => header,
            View::Rows(rows) => &rows.prefix,
            _ => &[],
        }
    }

    /// Size of the presented file.
    pub fn len(&self, array: &Array) -> PResult<u64> {
        if let View::Rows(rows) = self {
            return Ok(rows.prefix.len() as u64 + rows.body_len());
        }
        Ok(self.prefix().len() as u64 + array.region_len(self.region())?)
    }
}

/// What a fill does with blocks missing from the cache.
#[derive(Debug, Clone, Copy)]
struct Misses {
    /// Whole blocks are decoded straight into the output, not kept.
    direct: bool,
    /// Blocks read only in part are decoded into the cache, for the reads
    /// that will want the rest. Otherwise (a small read away from the
    /// last: a random reader) into a per-thread scratch buffer, which
    /// spares the fresh cache memory its page faults.
    keep_partial: bool,
}

impl Misses {
    /// Every block through the cache (one-off and standalone reads).
    const CACHED: Misses = Misses {
        direct: false,
        keep_partial: true,
    };
}

/// Reads smaller than this, away from where the last read of the same
/// file ended, count as random: the blocks they use only in part are not
/// kept. The kernel's own readahead requests are larger.
const RANDOM_READ_MAX: u64 = 64 << 10;

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
        if in_prefix == 0 && body_len > 0 && !matches!(view, View::Rows(_)) {
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
        let prefetcher = self
            .prefetcher
            .as_ref()
            .filter(|_| sequential && (!kernel_reads_ahead || array.may_wait()));
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
        if let View::Rows(_) = view {
            return true;
        }
        let body_next = next.saturating_sub(view.prefix().len() as u64);
        let Ok(pieces) = array.pieces(view.region(), body_next, len) else {
            return true;
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

/// Fill `out` with bytes `[start, start + out.len())` of `region`.
pub fn fill(
    blocks: &Blocks,
    array: &Array,
    region: Region,
    start: u64,
    out: &mut [u8],
) -> PResult<()> {
    fill_with(blocks, array, region, start, out, Misses::CACHED)
}

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

/// [`fill`], treating blocks not cached as `misses` says.
fn fill_with(
    blocks: &Blocks,
    array: &Array,
    region: Region,
    start: u64,
    out: &mut [u8],
    misses: Misses,
) -> PResult<()> {
    let pieces = tiling_pieces(array, region, start, out.len() as u64)?;
    fill_pieces(blocks, array, pieces, out, misses)
}

/// The pieces of bytes `[start, start + len)` of `region`, checked to tile
/// them exactly: an output buffer may hold bytes of an earlier request, and
/// none of them may be served again.
fn tiling_pieces(array: &Array, region: Region, start: u64, len: u64) -> PResult<Vec<Piece>> {
    let pieces = array.pieces(region, start, len)?;
    let mut covered = 0u64;
    for p in &pieces {
        if p.out_offset != covered {
            return Err(Problem::OutOfRange(format!(
                "bytes {start}..{}: piece at {} where {covered} was expected",
                start + len,
                p.out_offset
            )));
        }
        covered += p.len;
    }
    if covered != len {
        return Err(Problem::OutOfRange(format!(
            "bytes {start}..{} lie past the end",
            start + len
        )));
    }
    Ok(pieces)
}

/// Fill `out` from `pieces`, which tile it ([`tiling_pieces`]).
///
/// Pieces whose block another thread is decoding right now are left for
/// last: two requests that share blocks (a C-order read of narrow chunks
/// uses part of each block, the next request the rest) would otherwise
/// walk them in the same order, one thread decoding while the other waits
/// for it. Left for last, the other thread decodes the next block meanwhile.
///
/// With `misses.direct`, a block not cached whose every byte this read
/// uses, in several pieces, is decoded once into scratch and its pieces
/// copied out from there ([`scatter_whole_blocks`]).
fn fill_pieces(
    blocks: &Blocks,
    array: &Array,
    pieces: Vec<Piece>,
    out: &mut [u8],
    misses: Misses,
) -> PResult<()> {
    super::prefetch::announce(blocks, array, &pieces)?;
    let mut resolved = Vec::with_capacity(pieces.len());
    for piece in pieces {
        if let PieceSource::ChunkBytes { .. } = piece.source {
            resolved.extend(blocks.block_pieces(array, piece)?);
        } else {
            resolved.push(piece);
        }
    }
    let pieces = if misses.direct {
        scatter_whole_blocks(blocks, array, resolved, out)?
    } else {
        resolved
    };
    let mut at_hand: Vec<((u64, u64), Block)> = Vec::new();
    let mut later: Vec<Piece> = Vec::new();
    for p in pieces {
        if decoding_elsewhere(blocks, array, &p, &at_hand) {
            later.push(p);
        } else {
            copy_piece(blocks, array, p, out, &mut at_hand, misses)?;
        }
    }
    // Most of these blocks are ready by now; the rest are waited for.
    for p in later {
        copy_piece(blocks, array, p, out, &mut at_hand, misses)?;
    }
    Ok(())
}

/// Serve the pieces whose block is not cached, not stored raw, and used
/// whole by this read in more than one piece: each such block is decoded
/// once into scratch and its pieces copied out while it is hot. Answers
/// the pieces left, in their order.
fn scatter_whole_blocks(
    blocks: &Blocks,
    array: &Array,
    pieces: Vec<Piece>,
    out: &mut [u8],
) -> PResult<Vec<Piece>> {
    let mut by_block: BTreeMap<(u64, u64), Vec<usize>> = BTreeMap::new();
    for (i, p) in pieces.iter().enumerate() {
        if let PieceSource::Block { chunk, block, .. } = p.source {
            by_block.entry((chunk, block)).or_default().push(i);
        }
    }
    let mut served = vec![false; pieces.len()];
    for ((chunk, block), idx) in by_block {
        if idx.len() < 2 || blocks.contains(array, chunk, block) {
            continue;
        }
        let layout = blocks.block_layout(array, chunk, block)?;
        if layout.stored_raw()
            || !tiles_block(
                &pieces,
                &idx,
                layout.block_range(block as usize).len() as u64,
            )
        {
            continue;
        }
        let scattered = blocks.decode_whole_with(array, chunk, block, |data| {
            for &i in &idx {
                let p = &pieces[i];
                let PieceSource::Block { offset, .. } = p.source else {
                    continue;
                };
                let (src, dst) = (offset as usize, p.out_offset as usize);
                let n = p.len as usize;
                let dst = out
                    .get_mut(dst..dst + n)
                    .ok_or_else(|| Problem::OutOfRange("piece outside the output".into()))?;
                dst.copy_from_slice(data.get(src..src + n).ok_or_else(|| {
                    Problem::corrupt(
                        "chunk",
                        format!("chunk {chunk} block {block} is shorter than its shape"),
                    )
                })?);
            }
            Ok(())
        })?;
        if scattered {
            for &i in &idx {
                served[i] = true;
            }
        }
    }
    Ok(pieces
        .into_iter()
        .zip(served)
        .filter(|(_, s)| !s)
        .map(|(p, _)| p)
        .collect())
}

/// Whether the block pieces `idx` of `pieces` cover bytes `[0, len)` of
/// their block exactly, each byte once.
fn tiles_block(pieces: &[Piece], idx: &[usize], len: u64) -> bool {
    let mut spans: Vec<(u64, u64)> = idx
        .iter()
        .filter_map(|&i| match pieces[i].source {
            PieceSource::Block { offset, .. } => Some((offset, pieces[i].len)),
            _ => None,
        })
        .collect();
    spans.sort_unstable();
    let mut at = 0u64;
    for (offset, n) in spans {
        if offset != at {
            return false;
        }
        at = offset.saturating_add(n);
    }
    at == len
}

/// Whether piece `p` needs a block that is not at hand and that another
/// thread is decoding into the cache now.
fn decoding_elsewhere(
    blocks: &Blocks,
    array: &Array,
    p: &Piece,
    at_hand: &[((u64, u64), Block)],
) -> bool {
    match p.source {
        PieceSource::Block { chunk, block, .. } => {
            !at_hand.iter().any(|(k, _)| *k == (chunk, block))
                && blocks.decoding(array, chunk, block)
        }
        _ => false,
    }
}

/// Fill `out` with presented body bytes `[start, start + out.len())` of a
/// row selection: each stretch inside one run of rows is one [`fill`].
fn fill_rows(
    blocks: &Blocks,
    array: &Array,
    rows: &RowSelection,
    start: u64,
    out: &mut [u8],
) -> PResult<()> {
    let mut done = 0usize;
    while done < out.len() {
        let at = start + done as u64;
        let (src, avail) = rows
            .locate(at)
            .ok_or_else(|| Problem::OutOfRange(format!("row byte {at} lies past the end")))?;
        let n = avail.min((out.len() - done) as u64) as usize;
        fill(blocks, array, Region::Data, src, &mut out[done..done + n])?;
        done += n;
    }
    Ok(())
}

/// Copy one block (or zeros) piece into `out`, keeping the blocks used at
/// hand. A block not cached and stored raw is read from the source into
/// place; other blocks not cached are decoded as `misses` says.
fn copy_piece(
    blocks: &Blocks,
    array: &Array,
    p: Piece,
    out: &mut [u8],
    at_hand: &mut Vec<((u64, u64), Block)>,
    misses: Misses,
) -> PResult<()> {
    let dst_start = p.out_offset as usize;
    let dst = out
        .get_mut(dst_start..dst_start + p.len as usize)
        .ok_or_else(|| Problem::OutOfRange("piece outside the output".into()))?;
    match p.source {
        PieceSource::Zeros => dst.fill(0),
        PieceSource::ChunkBytes { chunk, .. } => {
            return Err(Problem::corrupt(
                "chunk",
                format!("chunk {chunk}: bytes not resolved into blocks"),
            ));
        }
        PieceSource::Block {
            chunk,
            block,
            offset,
        } => {
            let key = (chunk, block);
            if !at_hand.iter().any(|(k, _)| *k == key) && !blocks.contains(array, chunk, block) {
                if blocks.read_raw_part(array, chunk, block, offset, dst)? {
                    return Ok(());
                }
                if misses.direct
                    && offset == 0
                    && blocks.decode_whole_into(array, chunk, block, dst)?
                {
                    return Ok(());
                }
                if !misses.keep_partial
                    && blocks.decode_part_into(array, chunk, block, offset, dst)?
                {
                    return Ok(());
                }
            }
            let data = match at_hand.iter().rev().find(|(k, _)| *k == key) {
                Some((_, data)) => data.clone(),
                None => {
                    let data = blocks.block(array, chunk, block)?;
                    if at_hand.len() == AT_HAND {
                        at_hand.remove(0);
                    }
                    at_hand.push((key, data.clone()));
                    data
                }
            };
            let src = data
                .get(offset as usize..offset as usize + p.len as usize)
                .ok_or_else(|| {
                    Problem::corrupt(
                        "chunk",
                        format!("chunk {chunk} block {block} is shorter than its shape"),
                    )
                })?;
            dst.copy_from_slice(src);
        }
    }
    Ok(())
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
    use super::*;
    use crate::read::cache::BlockKey;
    use crate::source::open_array;
    use sha2::{Digest, Sha256};

    fn fixture(name: &str) -> (Array, serde_json::Value) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
        let entry = manifest[name].clone();
        let array = open_array(&dir.join(entry["path"].as_str().unwrap())).unwrap();
        (array, entry)
    }

    /// `data` read front to back in reads of `steps` bytes, in turn, joined.
    fn read_in_steps(planner: &Planner, array: &Array, steps: &[u64]) -> Vec<u8> {
        let mut joined = Vec::new();
        for (i, step) in steps.iter().cycle().enumerate() {
            let got = planner
                .read(array, &View::Data, joined.len() as u64, *step)
                .unwrap();
            if got.is_empty() {
                break;
            }
            joined.extend_from_slice(&got);
            assert!(i < 10_000, "reads never reached the end");
        }
        joined
    }

    fn sha256_hex(bytes: &[u8]) -> String {
        Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    #[test]
    fn data_npy_and_chunk_views_are_assembled_from_pieces() {
        // 33 x 21 float64 in 12 x 8 chunks of 5 x 3 blocks: edge chunks and blocks.
        let (array, entry) = fixture("dtype_le_f8");
        let planner = Planner::standalone(1 << 20);
        let data = planner.read(&array, &View::Data, 0, u64::MAX).unwrap();
        assert_eq!(
            sha256_hex(&data),
            entry["sha256"].as_str().unwrap(),
            "data against numpy's bytes"
        );

        // Odd windows put back together give the same bytes.
        assert!(read_in_steps(&planner, &array, &[7, 4093, 1, 513]) == data);

        // A prefix view splices its header before the data.
        let npy = View::Npy(Arc::new(b"HEADER".to_vec()));
        assert_eq!(npy.len(&array).unwrap(), 6 + data.len() as u64);
        assert_eq!(
            planner.read(&array, &npy, 0, 10).unwrap(),
            [b"HEADER".as_slice(), &data[..4]].concat()
        );
        assert_eq!(
            planner.read(&array, &npy, 4, 4).unwrap(),
            [b"ER".as_slice(), &data[..2]].concat()
        );
        assert_eq!(
            planner.read(&array, &npy, 6 + 100, 3).unwrap(),
            &data[100..103]
        );

        // Chunk 8 (grid 2, 2): rows 24..33 of 24..36, cols 16..21 of 16..24, zeros beyond.
        let chunk = planner.read(&array, &View::Chunk(8), 0, u64::MAX).unwrap();
        assert_eq!(chunk.len(), 12 * 8 * 8);
        let mut want = vec![0u8; 12 * 8 * 8];
        for r in 0..12 {
            for c in 0..8 {
                let (row, col) = (24 + r, 16 + c);
                if row < 33 && col < 21 {
                    let src = (row * 21 + col) * 8;
                    want[(r * 8 + c) * 8..(r * 8 + c + 1) * 8].copy_from_slice(&data[src..src + 8]);
                }
            }
        }
        assert!(chunk == want, "edge chunk view");
        assert!(
            planner.read(&array, &View::Chunk(9), 0, 8).is_err(),
            "no chunk 9"
        );

        // Rows 1, 3..5 and 32 of the 33 rows of 21 items, after a prefix.
        let row = 21 * 8;
        let rows = View::Rows(Arc::new(RowSelection::new(
            vec![(1, 1), (3, 2), (32, 1)],
            row as u64,
            Arc::new(b"H".to_vec()),
        )));
        let want = [
            b"H".as_slice(),
            &data[row..2 * row],
            &data[3 * row..5 * row],
            &data[32 * row..],
        ]
        .concat();
        assert_eq!(rows.len(&array).unwrap(), want.len() as u64);
        assert!(planner.read(&array, &rows, 0, u64::MAX).unwrap() == want);
        for (start, n) in [
            (0u64, 1u64),
            (1, 170),
            (100, 400),
            (want.len() as u64 - 3, 10),
        ] {
            let end = (start + n).min(want.len() as u64);
            assert!(
                planner.read(&array, &rows, start, n).unwrap()
                    == want[start as usize..end as usize],
                "rows {start}+{n}"
            );
        }
    }

    #[test]
    fn blocks_a_read_uses_whole_in_pieces_are_decoded_once_into_scratch() {
        // 33 x 21 float64 in 12 x 8 chunks of 5 x 3 blocks: a C-order read
        // takes each block in pieces of 3 items, one per block row. Per
        // chunk row 3, 3 and 2 block rows hold array rows (2, 2 and 1 of
        // them whole: 12 = 5 + 5 + 2 rows, 9 = 5 + 4), and likewise per
        // chunk column for the columns (8 = 3 + 3 + 2, 5 = 3 + 2): 8 x 8 = 64
        // blocks are used, 5 x 5 = 25 of them whole.
        let (array, entry) = fixture("dtype_le_f8");
        let planner = Planner::one_pass(1 << 20);
        let data = planner.read(&array, &View::Data, 0, u64::MAX).unwrap();
        assert_eq!(sha256_hex(&data), entry["sha256"].as_str().unwrap());
        assert_eq!(
            Stats::get(&planner.stats().blocks_decoded),
            64,
            "each block decoded once"
        );
        assert_eq!(
            planner.blocks().cache().usage().1,
            64 - 25,
            "the whole ones are not kept"
        );

        // Reads of odd sizes through a mount's planner: a block is scattered
        // only when one read uses all of it; the bytes are the same.
        let planner = Planner::new(
            Arc::new(Blocks::new(1 << 20, 1 << 20, Arc::new(Stats::default()))),
            None,
            0,
        );
        assert!(read_in_steps(&planner, &array, &[1000, 1, 2500, 168, 3000]) == data);
        let decoded = Stats::get(&planner.stats().blocks_decoded);
        assert!(
            (64..64 + 25).contains(&decoded),
            "{decoded} block decodes: cached blocks are decoded once, scattered ones at most twice"
        );
    }

    #[test]
    fn raw_chunks_are_read_in_place_and_never_decoded_or_cached() {
        let (array, entry) = fixture("clevel0_zstd");
        assert!(
            array.read_layout(0).unwrap().stored_raw(),
            "clevel 0 stores its chunks raw"
        );
        let want = Planner::standalone(1 << 20)
            .read(&array, &View::Data, 0, u64::MAX)
            .unwrap();
        assert_eq!(sha256_hex(&want), entry["sha256"].as_str().unwrap());
        // Small reads at odd places, through a mount's planner: each reads
        // only its own bytes, none decodes or keeps a block.
        let planner = Planner::new(
            Arc::new(Blocks::new(1 << 20, 1 << 20, Arc::new(Stats::default()))),
            None,
            0,
        );
        let len = want.len() as u64;
        for (start, n) in [
            (0u64, 1u64),
            (3, 17),
            (len / 2 - 5, 1001),
            (len - 9, 9),
            (len / 3, len / 3),
        ] {
            let mut out = vec![0xA5u8; 7];
            let served = planner
                .read_served(&array, &View::Data, start, n, &mut out)
                .unwrap();
            assert!(
                matches!(served, Served::Buffer),
                "raw bytes are read into the reply"
            );
            assert!(
                out == want[start as usize..(start + n) as usize],
                "bytes {start}+{n}"
            );
        }
        assert_eq!(Stats::get(&planner.stats().blocks_decoded), 0);
        assert_eq!(planner.blocks().cache().usage(), (0, 0), "nothing cached");
    }

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
            );
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
    fn a_block_another_thread_is_decoding_is_left_for_last() {
        // 33 x 21 float64 in 12 x 8 chunks of 5 x 3 blocks: row 0 of the
        // data starts in block 0 of chunk 0 and also lies in block 0 of
        // chunks 1 and 2 (8 blocks in all).
        let (array, entry) = fixture("dtype_le_f8");
        let array = Arc::new(array);
        let blocks = Arc::new(Blocks::new(1 << 20, 1 << 20, Arc::new(Stats::default())));
        let first = BlockKey {
            array: array.id(),
            chunk: 0,
            block: 0,
        };
        let (started_tx, started) = std::sync::mpsc::channel();
        let (release, release_rx) = std::sync::mpsc::channel::<()>();
        // Another thread is decoding block 0 of chunk 0 (it finishes when released).
        let decoding = {
            let (array, blocks) = (array.clone(), blocks.clone());
            std::thread::spawn(move || {
                blocks.cache().get_or_decode(first, || {
                    started_tx.send(()).unwrap();
                    release_rx.recv().unwrap();
                    Blocks::new(1 << 20, 1 << 20, Arc::new(Stats::default())).block(&array, 0, 0)
                })
            })
        };
        started.recv().unwrap();
        assert!(blocks.decoding(&array, 0, 0));
        let reader = {
            let (array, blocks) = (array.clone(), blocks.clone());
            std::thread::spawn(move || {
                let mut out = vec![0u8; 21 * 8];
                fill(&blocks, &array, Region::Data, 0, &mut out).map(|()| out)
            })
        };
        // The reader decodes the other blocks of the row while the first is
        // still being decoded, instead of waiting for it before anything else.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !(blocks.contains(&array, 1, 0) && blocks.contains(&array, 2, 0)) {
            assert!(
                std::time::Instant::now() < deadline,
                "the reader waited for the block being decoded first"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(
            !reader.is_finished() && blocks.decoding(&array, 0, 0),
            "it still needs the first block"
        );
        release.send(()).unwrap();
        decoding.join().unwrap().unwrap();
        let row = reader.join().unwrap().unwrap();
        let data = Planner::standalone(1 << 20)
            .read(&array, &View::Data, 0, u64::MAX)
            .unwrap();
        assert_eq!(sha256_hex(&data), entry["sha256"].as_str().unwrap());
        assert!(row == data[..21 * 8], "row 0");
        let distinct: HashSet<(u64, u64)> = array
            .pieces(Region::Data, 0, 21 * 8)
            .unwrap()
            .into_iter()
            .filter_map(|p| match p.source {
                PieceSource::Block { chunk, block, .. } => Some((chunk, block)),
                _ => None,
            })
            .collect();
        assert_eq!(distinct.len(), 8);
        assert_eq!(
            Stats::get(&blocks.stats().blocks_decoded),
            8,
            "each block decoded once"
        );
    }

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
