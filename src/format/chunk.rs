//! One compressed chunk: where its blocks are, and how to decode one block.
//!
//! A [`ChunkLayout`] is read from the start of a chunk (header, block starts,
//! optional dictionary) and then answers "which bytes of the chunk hold block
//! b" and "how long is block b decoded", so that a reader can fetch and
//! decode one block without touching the rest of the chunk.

use std::cell::RefCell;

use super::chunk_header::{filter_id, filter_name, ChunkHeader, Codec, Special, EXTENDED_HEADER_LEN};
use super::codec::{self, CodecError};
use super::error::{read_i32_le, slice_at, PResult, Problem};
use super::filter;

/// Bytes read at once from the start of a chunk to find its layout.
const PREFIX_READ: usize = 4096;

/// Largest dictionary C-Blosc2 writes (BLOSC2_MAXDICTSIZE).
const MAX_DICT_SIZE: usize = 128 * 1024;

/// Random access to the bytes of one stored chunk (a file region or memory).
pub trait ChunkBytes {
    /// Bytes available for this chunk (its `cbytes` must fit in them).
    fn available(&self) -> u64;
    /// Exactly `len` bytes at `offset` from the start of the chunk.
    fn read(&self, offset: u64, len: usize) -> PResult<Vec<u8>>;
}

impl ChunkBytes for &[u8] {
    fn available(&self) -> u64 {
        self.len() as u64
    }
    fn read(&self, offset: u64, len: usize) -> PResult<Vec<u8>> {
        let start = usize::try_from(offset).map_err(|_| Problem::corrupt("chunk", "offset overflows"))?;
        Ok(slice_at(self, start, len, "chunk")?.to_vec())
    }
}

/// How a chunk stores its blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Storage {
    /// One value for the whole chunk; `value` holds it for `Special::Value`.
    Special { kind: Special, value: Vec<u8> },
    /// Raw bytes right after the header.
    Memcpyed,
    /// Compressed streams; `extents[b]` = byte range of block b in the chunk.
    Streams { extents: Vec<(u32, u32)> },
}

/// Everything needed to fetch and decode single blocks of a chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkLayout {
    pub header: ChunkHeader,
    pub storage: Storage,
    pub dict: Vec<u8>,
    /// For variable-length blocks only: decoded offset of each block within
    /// the chunk, plus the total at the end (fixed blocks are computed, so a
    /// header claiming billions of tiny blocks allocates nothing).
    block_offsets: Vec<usize>,
}

impl ChunkLayout {
    /// Read the layout of a chunk through `bytes`, which must hold the whole chunk.
    pub fn read(bytes: &dyn ChunkBytes) -> PResult<ChunkLayout> {
        let available = bytes.available();
        // One read usually covers header, block starts and dictionary size.
        let prefix_len = available.min(PREFIX_READ as u64) as usize;
        let prefix = bytes.read(0, prefix_len)?;
        let header = ChunkHeader::parse(&prefix)?;
        if header.cbytes as u64 > available {
            return Err(Problem::truncated("chunk", 0, header.cbytes as u64, available));
        }
        let mut dict = Vec::new();
        let storage = if let Some(kind) = header.special {
            let value = if kind == Special::Value {
                bytes.read(header.header_len as u64, header.typesize)?
            } else {
                Vec::new()
            };
            Storage::Special { kind, value }
        } else if header.is_memcpyed() {
            Storage::Memcpyed
        } else if header.nbytes == 0 {
            Storage::Streams { extents: Vec::new() }
        } else {
            let starts_len = header
                .nblocks
                .checked_mul(4)
                .filter(|n| header.header_len + n <= header.cbytes)
                .ok_or_else(|| Problem::corrupt("chunk", format!("{} block starts do not fit in cbytes {}", header.nblocks, header.cbytes)))?;
            let mut index_len = header.header_len + starts_len;
            if header.uses_dict() {
                index_len += 4;
            }
            let reread;
            let index = if index_len <= prefix.len() {
                &prefix[..index_len]
            } else {
                reread = bytes.read(0, index_len.min(header.cbytes))?;
                slice_at(&reread, 0, index_len, "chunk block starts")?
            };
            let mut streams_start = header.header_len + starts_len;
            if header.uses_dict() {
                let dict_size = read_i32_le(index, streams_start, "chunk dictionary size")?;
                if dict_size <= 0 || dict_size as usize > MAX_DICT_SIZE {
                    return Err(Problem::corrupt("chunk", format!("dictionary size {dict_size}")));
                }
                let dict_start = streams_start + 4;
                if dict_start + dict_size as usize > header.cbytes {
                    return Err(Problem::corrupt("chunk", "dictionary runs past the end of the chunk"));
                }
                dict = bytes.read(dict_start as u64, dict_size as usize)?;
                streams_start = dict_start + dict_size as usize;
            }
            let mut starts = Vec::with_capacity(header.nblocks);
            for b in 0..header.nblocks {
                let start = read_i32_le(index, header.header_len + 4 * b, "chunk block starts")?;
                if start < streams_start as i32 || start as usize >= header.cbytes {
                    return Err(Problem::corrupt("chunk", format!("block {b} starts at {start}, outside the streams")));
                }
                starts.push(start as u32);
            }
            // A block's streams end where the next block (in file order) begins.
            let mut sorted = starts.clone();
            sorted.sort_unstable();
            let extents = starts
                .iter()
                .map(|&s| {
                    let next = sorted.partition_point(|&x| x <= s);
                    let end = sorted.get(next).copied().unwrap_or(header.cbytes as u32);
                    (s, end)
                })
                .collect();
            Storage::Streams { extents }
        };
        let mut layout = ChunkLayout { header, storage, dict, block_offsets: Vec::new() };
        layout.block_offsets = layout.compute_block_offsets(bytes)?;
        Ok(layout)
    }

    fn compute_block_offsets(&self, bytes: &dyn ChunkBytes) -> PResult<Vec<usize>> {
        let h = &self.header;
        if !h.is_vlblocks() {
            return Ok(Vec::new());
        }
        let mut offsets = Vec::with_capacity(h.nblocks + 1);
        // Variable-length blocks: each block's stream starts with its decoded size.
        let Storage::Streams { extents } = &self.storage else {
            return Err(Problem::corrupt("chunk", "variable-length blocks without streams"));
        };
        let mut total = 0usize;
        offsets.push(0);
        for (b, &(start, end)) in extents.iter().enumerate() {
            if end <= start + 4 {
                return Err(Problem::corrupt("chunk", format!("variable-length block {b} is too short")));
            }
            let size = read_i32_le(&bytes.read(start as u64, 4)?, 0, "variable-length block size")?;
            if size <= 0 {
                return Err(Problem::corrupt("chunk", format!("variable-length block {b} has size {size}")));
            }
            total = total
                .checked_add(size as usize)
                .filter(|&t| t <= h.nbytes)
                .ok_or_else(|| Problem::corrupt("chunk", "variable-length block sizes exceed nbytes"))?;
            offsets.push(total);
        }
        if total != h.nbytes {
            return Err(Problem::corrupt("chunk", format!("variable-length blocks add up to {total}, not nbytes {}", h.nbytes)));
        }
        Ok(offsets)
    }

    pub fn nblocks(&self) -> usize {
        self.header.nblocks
    }

    /// Decoded size of the whole chunk.
    pub fn nbytes(&self) -> usize {
        self.header.nbytes
    }

    /// Decoded byte range of block `b` within the chunk.
    pub fn block_range(&self, b: usize) -> std::ops::Range<usize> {
        if self.header.is_vlblocks() {
            return self.block_offsets[b]..self.block_offsets[b + 1];
        }
        let h = &self.header;
        (b * h.blocksize).min(h.nbytes)..((b + 1) * h.blocksize).min(h.nbytes)
    }

    /// The block holding decoded byte `offset` of the chunk.
    pub fn block_at(&self, offset: usize) -> usize {
        if !self.header.is_vlblocks() {
            return offset / self.header.blocksize.max(1);
        }
        self.block_offsets.partition_point(|&o| o <= offset).saturating_sub(1)
    }

    /// Bytes of the chunk to fetch for block `b` (empty for special chunks).
    pub fn block_source_range(&self, b: usize) -> std::ops::Range<u64> {
        match &self.storage {
            Storage::Special { .. } => 0..0,
            Storage::Memcpyed => {
                let r = self.block_range(b);
                let base = self.header.header_len as u64;
                base + r.start as u64..base + r.end as u64
            }
            Storage::Streams { extents } => extents[b].0 as u64..extents[b].1 as u64,
        }
    }

    /// Whether decoding block `b > 0` needs block 0 of this chunk (DELTA filter).
    pub fn needs_block0(&self) -> bool {
        matches!(self.storage, Storage::Streams { .. }) && self.header.filters.contains(&filter_id::DELTA)
    }

    /// Decode block `b` into `out` (exactly `block_range(b).len()` bytes).
    /// `source` holds the bytes of `block_source_range(b)`; `block0` is the
    /// decoded block 0 of the same chunk when [`Self::needs_block0`] and b > 0.
    pub fn decode_block(&self, b: usize, source: &[u8], block0: Option<&[u8]>, out: &mut [u8]) -> PResult<()> {
        let bsize = self.block_range(b).len();
        if out.len() != bsize {
            return Err(Problem::OutOfRange(format!("block {b} is {bsize} bytes, output buffer {}", out.len())));
        }
        match &self.storage {
            Storage::Special { kind, value } => {
                fill_special(*kind, value, self.header.typesize, out);
                Ok(())
            }
            Storage::Memcpyed => {
                out.copy_from_slice(slice_at(source, 0, bsize, "memcpyed block")?);
                Ok(())
            }
            Storage::Streams { .. } => self.decode_streams(b, source, block0, out),
        }
    }

    fn decode_streams(&self, b: usize, source: &[u8], block0: Option<&[u8]>, out: &mut [u8]) -> PResult<()> {
        let h = &self.header;
        let bsize = out.len();
        let leftover_block = !h.is_vlblocks() && b + 1 == h.nblocks && h.leftover() > 0;
        let nstreams = if h.is_vlblocks() || h.dont_split() || leftover_block { 1 } else { h.typesize };
        let stream_len = bsize / nstreams;
        if stream_len == 0 || stream_len * nstreams != bsize {
            return Err(Problem::corrupt("chunk", format!("block {b} of {bsize} bytes cannot hold {nstreams} streams")));
        }
        let has_filters = h.filters.iter().any(|&f| f != filter_id::NONE && f != filter_id::TRUNC_PREC);
        let decode_all = |stage: &mut [u8]| -> PResult<()> {
            let mut pos = 0usize;
            for (s, dst) in stage.chunks_exact_mut(stream_len).enumerate() {
                pos = self.decode_stream(b, source, pos, dst).map_err(|p| match p {
                    Problem::Codec { .. } => p,
                    other => Problem::corrupt("chunk", format!("block {b} stream {s}: {other}")),
                })?;
            }
            Ok(())
        };
        if !has_filters {
            return decode_all(out);
        }
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let (stage, spare) = &mut *scratch;
            stage.resize(bsize, 0);
            decode_all(&mut stage[..])?;
            self.undo_filters(b, &mut stage[..], spare, block0, out)
        })
    }

    /// Decode one stream starting at `pos` of `source` into `dst`; returns the next position.
    fn decode_stream(&self, b: usize, source: &[u8], pos: usize, dst: &mut [u8]) -> PResult<usize> {
        let h = &self.header;
        let csize = read_i32_le(source, pos, "stream size")?;
        let mut pos = pos + 4;
        let payload_len = if h.is_vlblocks() {
            if csize as usize != dst.len() {
                return Err(Problem::corrupt("chunk", format!("variable-length block {b} says {csize} bytes, expected {}", dst.len())));
            }
            source.len() - pos
        } else if csize == 0 {
            dst.fill(0);
            return Ok(pos);
        } else if csize < 0 {
            let token = slice_at(source, pos, 1, "stream token")?[0];
            pos += 1;
            if token & 0x01 == 0 || csize < -255 {
                return Err(Problem::corrupt("chunk", format!("block {b}: unknown stream token {token} with size {csize}")));
            }
            dst.fill((-csize) as u8);
            return Ok(pos);
        } else {
            csize as usize
        };
        let payload = slice_at(source, pos, payload_len, "compressed stream")?;
        if payload_len == dst.len() {
            dst.copy_from_slice(payload);
        } else {
            let result = match h.codec() {
                Codec::BloscLz => codec::blosclz::decompress(payload, dst),
                Codec::Lz4 => codec::lz4::decompress(payload, dst, &self.dict),
                Codec::Zlib => codec::zlib::decompress(payload, dst),
                Codec::Zstd => codec::zstd::decompress(payload, dst, &self.dict),
                other => return Err(Problem::UnsupportedCodec { name: other.name(), id: codec_id(other) }),
            };
            result.map_err(|source: CodecError| Problem::Codec { block: b as u64, source })?;
        }
        Ok(pos + payload_len)
    }

    /// Undo the filter pipeline (last slot first). `stage` holds the codec output.
    fn undo_filters(&self, b: usize, stage: &mut [u8], spare: &mut Vec<u8>, block0: Option<&[u8]>, out: &mut [u8]) -> PResult<()> {
        let h = &self.header;
        let typesize = h.typesize;
        spare.resize(stage.len(), 0);
        // The data lives in `stage`, `spare` or `out`; track where.
        #[derive(Clone, Copy, PartialEq)]
        enum At {
            Stage,
            Spare,
            Out,
        }
        let mut at = At::Stage;
        let spare = &mut spare[..];
        for slot in (0..6).rev() {
            let id = h.filters[slot];
            let meta = h.filters_meta[slot];
            match id {
                filter_id::NONE | filter_id::TRUNC_PREC | filter_id::INT_TRUNC => {}
                filter_id::SHUFFLE | filter_id::BITSHUFFLE => {
                    let (src, dst): (&[u8], &mut [u8]) = match at {
                        At::Stage => (&*stage, &mut *out),
                        At::Out => (&*out, &mut *spare),
                        At::Spare => (&*spare, &mut *out),
                    };
                    // Safety of aliasing: src and dst are always different buffers above.
                    if id == filter_id::SHUFFLE {
                        let group = if meta == 0 { typesize } else { meta as usize };
                        filter::shuffle::unshuffle(group, src, dst);
                    } else {
                        filter::bitshuffle::bitunshuffle(typesize, src, dst, h.version)
                            .map_err(|e| Problem::corrupt("chunk", format!("block {b}: bitshuffle: {e}")))?;
                    }
                    at = match at {
                        At::Stage | At::Spare => At::Out,
                        At::Out => At::Spare,
                    };
                }
                filter_id::DELTA => {
                    let data: &mut [u8] = match at {
                        At::Stage => &mut *stage,
                        At::Out => &mut *out,
                        At::Spare => &mut *spare,
                    };
                    let reference = if b == 0 {
                        None
                    } else {
                        Some(block0.ok_or_else(|| Problem::OutOfRange(format!("block {b} needs block 0 for delta")))?)
                    };
                    filter::delta::undo_delta(reference, typesize, data).map_err(|e| Problem::corrupt("chunk", format!("block {b}: delta: {e}")))?;
                }
                filter_id::BYTEDELTA | filter_id::BYTEDELTA_BUGGY => {
                    let data: &mut [u8] = match at {
                        At::Stage => &mut *stage,
                        At::Out => &mut *out,
                        At::Spare => &mut *spare,
                    };
                    let group = if meta == 0 { typesize } else { meta as usize };
                    let undone = if id == filter_id::BYTEDELTA {
                        filter::bytedelta::undo_bytedelta(group, data)
                    } else {
                        filter::bytedelta::undo_bytedelta_buggy(group, data)
                    };
                    undone.map_err(|e| Problem::corrupt("chunk", format!("block {b}: bytedelta: {e}")))?;
                }
                other => return Err(Problem::UnsupportedFilter { name: filter_name(other), id: other }),
            }
        }
        match at {
            At::Out => {}
            At::Stage => out.copy_from_slice(stage),
            At::Spare => out.copy_from_slice(spare),
        }
        Ok(())
    }
}

fn codec_id(codec: Codec) -> u8 {
    match codec {
        Codec::BloscLz => 0,
        Codec::Lz4 => 1,
        Codec::Snappy => 3,
        Codec::Zlib => 4,
        Codec::Zstd => 5,
        Codec::Registered(id) => id,
        Codec::Reserved(code) => code,
    }
}

/// Fill `out` with the value of a special chunk.
pub fn fill_special(kind: Special, value: &[u8], typesize: usize, out: &mut [u8]) {
    match kind {
        Special::Zeros | Special::Uninit => out.fill(0),
        Special::NaN => {
            if typesize == 4 {
                for item in out.chunks_mut(4) {
                    item.copy_from_slice(&f32::NAN.to_le_bytes()[..item.len()]);
                }
            } else {
                for item in out.chunks_mut(8) {
                    let n = item.len();
                    item.copy_from_slice(&f64::NAN.to_le_bytes()[..n]);
                }
            }
        }
        Special::Value => {
            if value.len() <= 1 {
                out.fill(value.first().copied().unwrap_or(0));
            } else {
                for item in out.chunks_mut(value.len()) {
                    let n = item.len();
                    item.copy_from_slice(&value[..n]);
                }
            }
        }
    }
}

thread_local! {
    /// Per-thread scratch buffers for codec output and filter staging.
    static SCRATCH: RefCell<(Vec<u8>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// Decode a whole chunk held in memory (e.g. a `.cdata` file or an index chunk).
pub fn decode_chunk(bytes: &[u8]) -> PResult<Vec<u8>> {
    decode_chunk_limited(bytes, usize::MAX)
}

/// [`decode_chunk`], refusing chunks that decode to more than `limit` bytes.
pub fn decode_chunk_limited(bytes: &[u8], limit: usize) -> PResult<Vec<u8>> {
    let layout = ChunkLayout::read(&bytes)?;
    if layout.nbytes() > limit {
        return Err(Problem::Limit(format!("chunk decodes to {} bytes (at most {limit} accepted here)", layout.nbytes())));
    }
    let mut out = vec![0u8; layout.nbytes()];
    decode_chunk_into(&layout, bytes, &mut out)?;
    Ok(out)
}

/// Decode every block of an in-memory chunk into `out` (`layout.nbytes()` bytes).
pub fn decode_chunk_into(layout: &ChunkLayout, bytes: &[u8], out: &mut [u8]) -> PResult<()> {
    if out.len() != layout.nbytes() {
        return Err(Problem::OutOfRange(format!("chunk is {} bytes, output {}", layout.nbytes(), out.len())));
    }
    let block0_len = if layout.nblocks() > 0 { layout.block_range(0).len() } else { 0 };
    let (first, rest) = out.split_at_mut(block0_len);
    for b in 0..layout.nblocks() {
        let src_range = layout.block_source_range(b);
        let source = slice_at(bytes, src_range.start as usize, (src_range.end - src_range.start) as usize, "block")?;
        if b == 0 {
            layout.decode_block(0, source, None, first)?;
        } else {
            let r = layout.block_range(b);
            let dst = &mut rest[r.start - block0_len..r.end - block0_len];
            layout.decode_block(b, source, Some(first), dst)?;
        }
    }
    Ok(())
}

impl ChunkLayout {
    /// The layout of a chunk told only by a special entry in the offsets index.
    pub fn special(kind: Special, nbytes: usize, blocksize: usize, typesize: usize) -> ChunkLayout {
        let blocksize = if blocksize == 0 || blocksize > nbytes { nbytes.max(1) } else { blocksize };
        let nblocks = nbytes.div_ceil(blocksize);
        let header = ChunkHeader {
            version: 5,
            versionlz: 1,
            flags: 0x05,
            typesize,
            nbytes,
            blocksize,
            nblocks,
            cbytes: EXTENDED_HEADER_LEN,
            filters: [0; 6],
            filters_meta: [0; 6],
            udcodec: 0,
            compcode_meta: 0,
            blosc2_flags: 0,
            blosc2_flags2: 0,
            header_len: EXTENDED_HEADER_LEN,
            special: Some(kind),
        };
        ChunkLayout { header, storage: Storage::Special { kind, value: Vec::new() }, dict: Vec::new(), block_offsets: Vec::new() }
    }
}
