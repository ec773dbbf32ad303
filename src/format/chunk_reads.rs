//! Reading an array's stored chunks: the layout of chunk c, block b of it
//! decoded (whole, in part, or copied raw), a whole chunk, the whole array.
//!
//! Apart from [`Array`]'s definition so that what an array is and how its
//! bytes are fetched and decoded each stay one file: every read here goes
//! through the chunk's source and is checked against the version the array
//! trusts (`growth.rs`) before its bytes are used.

use std::sync::Arc;

use super::array::{Array, Container, Region, Shape};
use super::byte_source::ByteSource;
use super::chunk::header::EXTENDED_HEADER_LEN;
use super::chunk::{decode_chunk_into, BlockContext, ChunkLayout, ChunkRegion, Fork, Storage};
use super::error::{PResult, Problem};
use super::frame::ChunkOffset;
use super::geometry::{Geometry, PieceSource};

/// Largest single decoded block accepted (C-Blosc2's own maximum block size).
pub const MAX_BLOCK_BYTES: usize = super::chunk::header::MAX_BLOCKSIZE;

impl Array {
    /// Every byte of the array in C order, decoded chunk by chunk: for a
    /// small frame held in memory (a region a server built), never for a
    /// mounted array (the read layer serves those).
    pub fn read_all(&self) -> PResult<Vec<u8>> {
        let len = usize::try_from(self.data_len())
            .map_err(|_| Problem::Limit("array too large to read whole".into()))?;
        let mut out = vec![0u8; len];
        let mut decoded: Option<(u64, Vec<u8>)> = None;
        for piece in self.pieces(Region::Data, 0, len as u64)? {
            let (chunk, at) = match piece.source {
                PieceSource::Zeros => continue,
                PieceSource::Block {
                    chunk,
                    block,
                    offset,
                } => {
                    let block_len = self.geometry().map_or(0, Geometry::block_nbytes);
                    (
                        chunk,
                        block.saturating_mul(block_len).saturating_add(offset),
                    )
                }
                PieceSource::ChunkBytes { chunk, offset } => (chunk, offset),
            };
            if decoded.as_ref().is_none_or(|(c, _)| *c != chunk) {
                decoded = Some((chunk, self.decode_chunk(chunk)?));
            }
            let bytes = decoded
                .as_ref()
                .map(|(_, d)| d.as_slice())
                .unwrap_or_default();
            let from = usize::try_from(at).unwrap_or(usize::MAX);
            let src = from
                .checked_add(piece.len as usize)
                .and_then(|end| bytes.get(from..end));
            let src = src.ok_or_else(|| {
                Problem::corrupt(
                    "chunk",
                    format!(
                        "chunk {chunk} decodes to {} bytes, a piece needs {at}+{}",
                        bytes.len(),
                        piece.len
                    ),
                )
            })?;
            out[piece.out_offset as usize..piece.out_offset as usize + src.len()]
                .copy_from_slice(src);
        }
        Ok(out)
    }

    /// Decoded size chunk `c` must have according to the frame.
    fn expected_chunk_nbytes(&self, c: u64) -> Option<u64> {
        match &self.shape {
            Shape::Nd { geometry, .. } => Some(geometry.chunk_nbytes()),
            Shape::Plain { chunk_starts } if !chunk_starts.is_empty() => {
                Some(chunk_starts[c as usize + 1] - chunk_starts[c as usize])
            }
            Shape::Plain { .. } => {
                if self.frame.chunksize > 0 {
                    let start = c * self.frame.chunksize;
                    Some(
                        self.frame
                            .chunksize
                            .min(self.frame.nbytes.saturating_sub(start)),
                    )
                } else {
                    None
                }
            }
        }
    }

    /// Where chunk `c` is stored: its source and its region in it.
    fn chunk_home(&self, c: u64, pos: u64) -> PResult<(Arc<dyn ByteSource>, u64, u64)> {
        match &self.container {
            Container::Contiguous(source) => {
                let start = self.frame.header_len + pos;
                let limit = (self.frame.header_len + self.frame.cbytes).min(self.frame.frame_len);
                Ok((source.clone(), start, limit.saturating_sub(start)))
            }
            Container::Sparse { chunks, .. } => {
                let file = chunks.open_chunk(pos).map_err(|p| p.in_chunk(c))?;
                let len = file.len();
                Ok((file, 0, len))
            }
        }
    }

    /// Read and check the layout of chunk `c` (header, block positions).
    pub fn read_layout(&self, c: u64) -> PResult<ChunkLayout> {
        self.read_layout_inner(c).map_err(|p| p.in_chunk(c))
    }

    fn read_layout_inner(&self, c: u64) -> PResult<ChunkLayout> {
        let offset = *self
            .frame
            .offsets
            .get(c as usize)
            .ok_or_else(|| Problem::OutOfRange(format!("chunk {c} of {}", self.nchunks())))?;
        let layout = match offset {
            ChunkOffset::Special(kind) => {
                let nbytes = self
                    .expected_chunk_nbytes(c)
                    .unwrap_or(self.frame.chunksize) as usize;
                // Blocks must match the geometry's; a plain frame's special
                // chunk is cut in blocks of at least 1 MiB whatever the header
                // says, so a tiny declared blocksize cannot explode the work.
                let blocksize = match &self.shape {
                    Shape::Nd { geometry, .. } => geometry.block_nbytes() as usize,
                    Shape::Plain { .. } => (self.frame.blocksize.max(0) as usize).max(1 << 20),
                };
                return Ok(ChunkLayout::special(
                    kind,
                    nbytes,
                    blocksize,
                    self.frame.typesize,
                ));
            }
            ChunkOffset::Stored(pos) => {
                let (source, start, available) = self.chunk_home(c, pos)?;
                let layout = ChunkLayout::read_sized(
                    &ChunkRegion {
                        source: &*source,
                        start,
                        available,
                    },
                    self.layout_guess(),
                )?;
                self.confirm_trusted(c)?;
                layout
            }
        };
        if let Some(expected) = self.expected_chunk_nbytes(c) {
            if layout.nbytes() as u64 != expected {
                return Err(Problem::corrupt(
                    "chunk",
                    format!(
                        "decodes to {} bytes, the frame expects {expected}",
                        layout.nbytes()
                    ),
                ));
            }
        }
        if let Shape::Nd { geometry, .. } = &self.shape {
            let h = &layout.header;
            if layout.nbytes() > 0
                && h.special.is_none()
                && !h.is_vlblocks()
                && h.blocksize as u64 != geometry.block_nbytes().min(layout.nbytes() as u64)
            {
                return Err(Problem::corrupt(
                    "chunk",
                    format!(
                        "blocks of {} bytes, the blockshape implies {}",
                        h.blocksize,
                        geometry.block_nbytes()
                    ),
                ));
            }
        }
        for b in 0..layout.nblocks() {
            if layout.block_range(b).len() > MAX_BLOCK_BYTES {
                return Err(Problem::Limit(format!(
                    "block {b} is larger than {MAX_BLOCK_BYTES} bytes"
                )));
            }
        }
        Ok(layout)
    }

    /// Decode block `b` of chunk `c` (whose layout is `layout`) into `out`
    /// (exactly the block's decoded length). `block0` must be the decoded
    /// block 0 of the chunk when `layout.needs_block0()` and b > 0.
    pub fn decode_block(
        &self,
        layout: &ChunkLayout,
        c: u64,
        b: u64,
        block0: Option<&[u8]>,
        out: &mut [u8],
    ) -> PResult<()> {
        self.decode_block_forked(layout, c, b, block0, None, out)
    }

    /// [`Array::decode_block`], with half of a split block's streams
    /// decoded through `fork` at the same time (for a reader waiting on
    /// this one block).
    pub fn decode_block_forked(
        &self,
        layout: &ChunkLayout,
        c: u64,
        b: u64,
        block0: Option<&[u8]>,
        fork: Option<&dyn Fork>,
        out: &mut [u8],
    ) -> PResult<()> {
        self.refuse_made_up()?;
        if let Some(producer) = &self.producer {
            if b >= layout.nblocks() as u64 || out.len() != layout.block_range(b as usize).len() {
                return Err(Problem::OutOfRange(format!(
                    "block {b} of {} ({} bytes asked)",
                    layout.nblocks(),
                    out.len()
                ))
                .in_chunk(c));
            }
            return producer.produce_block(c, b, out).map_err(|p| p.in_chunk(c));
        }
        self.decode_block_inner(layout, c, b as usize, block0, fork, out)
            .map_err(|p| p.in_chunk(c))
    }

    fn decode_block_inner(
        &self,
        layout: &ChunkLayout,
        c: u64,
        b: usize,
        block0: Option<&[u8]>,
        fork: Option<&dyn Fork>,
        out: &mut [u8],
    ) -> PResult<()> {
        let context = BlockContext {
            block0,
            blockshape: self.blockshape(),
            fork,
        };
        self.with_stored_block(layout, c, b, |stored| {
            layout.decode_block(b, stored, &context, out)
        })
    }

    /// Decoded bytes `[offset, offset + out.len())` of block `b` of chunk
    /// `c`, for a small read: only the items holding them are unshuffled
    /// ([`ChunkLayout::decode_block_part`]), with half of the streams
    /// decoded through `fork`. `Ok(false)`, with nothing written, for a
    /// block that must be decoded whole ([`Array::decode_block_forked`]).
    pub fn decode_block_part_forked(
        &self,
        layout: &ChunkLayout,
        c: u64,
        b: u64,
        fork: Option<&dyn Fork>,
        offset: u64,
        out: &mut [u8],
    ) -> PResult<bool> {
        self.refuse_made_up()?;
        let b = b as usize;
        let offset = usize::try_from(offset).map_err(|_| {
            Problem::OutOfRange(format!("offset {offset} in block {b}")).in_chunk(c)
        })?;
        // Known before the stored bytes are read: a block decoded whole
        // reads them once, in the caller's whole decode (a produced block
        // is always made whole).
        if self.producer.is_some() || !layout.decodes_in_part(b) {
            return Ok(false);
        }
        let context = BlockContext {
            block0: None,
            blockshape: self.blockshape(),
            fork,
        };
        self.with_stored_block(layout, c, b, |stored| {
            layout.decode_block_part(b, stored, &context, offset, out)
        })
        .map_err(|p| p.in_chunk(c))
    }

    /// `decode` run on the stored bytes of block `b` of chunk `c` (none for
    /// a special chunk), read through the chunk's source.
    fn with_stored_block<T>(
        &self,
        layout: &ChunkLayout,
        c: u64,
        b: usize,
        decode: impl FnOnce(&[u8]) -> PResult<T>,
    ) -> PResult<T> {
        if b >= layout.nblocks() {
            return Err(Problem::OutOfRange(format!(
                "block {b} of {}",
                layout.nblocks()
            )));
        }
        let range = layout.block_source_range(b);
        let stored = match (&layout.storage, self.frame.offsets.get(c as usize)) {
            (Storage::Special { .. }, _) | (_, Some(ChunkOffset::Special(_))) => None,
            (_, Some(ChunkOffset::Stored(pos))) => Some(*pos),
            (_, None) => {
                return Err(Problem::OutOfRange(format!(
                    "chunk {c} of {}",
                    self.nchunks()
                )))
            }
        };
        let Some(pos) = stored else {
            return decode(&[]);
        };
        let (source, start, available) = self.chunk_home(c, pos)?;
        if range.end > available {
            return Err(Problem::truncated(
                "block",
                range.start,
                range.end,
                available,
            ));
        }
        let contiguous = matches!(self.container, Container::Contiguous(_));
        read_and_decode(
            &*source,
            start,
            layout,
            b,
            || {
                if contiguous {
                    self.confirm_trusted(c)
                } else {
                    Ok(())
                }
            },
            decode,
        )
    }

    /// Decoded bytes `[offset, offset + out.len())` of block `b` of chunk
    /// `c`, read straight from the source when the chunk stores its blocks
    /// raw (memcpyed: decoding would be a copy). `Ok(false)`, with nothing
    /// read, for any other chunk. A small read of such a block reads only
    /// its own bytes.
    pub fn read_raw_block_part(
        &self,
        layout: &ChunkLayout,
        c: u64,
        b: u64,
        offset: u64,
        out: &mut [u8],
    ) -> PResult<bool> {
        self.refuse_made_up()?;
        let Some(ChunkOffset::Stored(pos)) = self.frame.offsets.get(c as usize) else {
            return Ok(false);
        };
        if !layout.stored_raw() || self.producer.is_some() {
            return Ok(false);
        }
        let mut read = || -> PResult<()> {
            if b as usize >= layout.nblocks() {
                return Err(Problem::OutOfRange(format!(
                    "block {b} of {}",
                    layout.nblocks()
                )));
            }
            let range = layout.block_source_range(b as usize);
            if offset
                .checked_add(out.len() as u64)
                .is_none_or(|e| e > range.end - range.start)
            {
                return Err(Problem::OutOfRange(format!(
                    "bytes {offset}+{} of block {b} ({} bytes)",
                    out.len(),
                    range.end - range.start
                )));
            }
            let (source, start, available) = self.chunk_home(c, *pos)?;
            if range.end > available {
                return Err(Problem::truncated(
                    "block",
                    range.start,
                    range.end,
                    available,
                ));
            }
            source.read_needed(start + range.start + offset, out)?;
            match self.container {
                Container::Contiguous(_) => self.confirm_trusted(c),
                Container::Sparse { .. } => Ok(()),
            }
        };
        read().map_err(|p| p.in_chunk(c))?;
        Ok(true)
    }

    /// All decoded bytes of chunk `c` as stored (blocks in order, padding
    /// included), from one read of the stored chunk.
    pub fn decode_chunk(&self, c: u64) -> PResult<Vec<u8>> {
        self.refuse_made_up()?;
        if self.producer.is_some() {
            return Err(Problem::Unsupported {
                what: "chunk of a computed array".into(),
                detail: "it stores no bytes; read its blocks".into(),
            });
        }
        let layout = self.read_layout(c)?;
        let mut out = vec![0u8; layout.nbytes()];
        let stored = match self.frame.offsets.get(c as usize) {
            Some(ChunkOffset::Stored(pos))
                if !matches!(layout.storage, Storage::Special { .. }) =>
            {
                let (source, start, _) = self.chunk_home(c, *pos)?;
                let mut bytes = vec![0u8; layout.header.cbytes];
                source
                    .read_needed(start, &mut bytes)
                    .map_err(|p| p.in_chunk(c))?;
                if matches!(self.container, Container::Contiguous(_)) {
                    self.confirm_trusted(c).map_err(|p| p.in_chunk(c))?;
                }
                bytes
            }
            _ => Vec::new(),
        };
        decode_chunk_into(&layout, &stored, self.blockshape(), &mut out)
            .map_err(|p| p.in_chunk(c))?;
        Ok(out)
    }

    /// Bytes a chunk's header, block starts and dictionary size take when
    /// its blocks are the geometry's (0 when not known: a plain frame).
    fn layout_guess(&self) -> usize {
        match &self.shape {
            Shape::Nd { geometry, .. } if geometry.block_nbytes() > 0 => {
                let nblocks = geometry.chunk_nbytes().div_ceil(geometry.block_nbytes());
                usize::try_from(
                    nblocks
                        .saturating_mul(4)
                        .saturating_add(EXTENDED_HEADER_LEN as u64 + 4),
                )
                .unwrap_or(usize::MAX)
            }
            _ => 0,
        }
    }
}

/// Read the stored bytes of block `b` of the chunk at `start` of `source`,
/// run `after_read` (the version check), then decode them into `out`.
pub(super) fn read_and_decode<T>(
    source: &dyn ByteSource,
    start: u64,
    layout: &ChunkLayout,
    b: usize,
    after_read: impl FnOnce() -> PResult<()>,
    decode: impl FnOnce(&[u8]) -> PResult<T>,
) -> PResult<T> {
    let range = layout.block_source_range(b);
    STORED.with(|buf| {
        let mut buf = buf.borrow_mut();
        buf.resize(super::byte_source::range_len(&range)?, 0);
        source.read_needed(start + range.start, &mut buf)?;
        after_read()?;
        decode(&buf)
    })
}

thread_local! {
    /// Per-thread buffer for a block's stored bytes, reused across reads.
    static STORED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}
