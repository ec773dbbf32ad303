//! Decoding one block: streams → codec → filters undone last slot first.
//!
//! Pure: given the stored bytes of a block (fetched by the caller through
//! the layout's `block_source_range`) and a [`BlockContext`], it writes the
//! decoded block. Nothing here reads a source or keeps decoded blocks.

use std::cell::RefCell;

use super::header::{Codec, Special};
use super::layout::{ChunkLayout, Storage};
use super::split::{decode_classic, decode_streams_forked, is_classic};
use crate::format::bytes::{read_i32_le, slice_at};
use crate::format::codec::{self, CodecError};
use crate::format::error::{PResult, Problem};
use crate::format::filter::{self, filter_id, filter_name};

/// Somewhere to run a job on another thread. A block's split streams are
/// independent, so a reader waiting on one block (a random read) can have
/// some of them decoded by a spare core (`split.rs`); the format layer only
/// asks, the read layer owns the threads.
pub trait Fork: Sync {
    /// Run `job` on another thread soon, or drop it (the caller does not
    /// rely on it ever running).
    fn spawn(&self, job: Box<dyn FnOnce() + Send>);
}

/// What decoding a block needs from outside the block itself.
#[derive(Clone, Copy, Default)]
pub struct BlockContext<'a> {
    /// The decoded block 0 of the same chunk, for blocks b > 0 of a chunk
    /// whose filters include DELTA ([`ChunkLayout::needs_block0`]).
    pub block0: Option<&'a [u8]>,
    /// The array's block shape (its length is the array's ndim; empty for a
    /// plain frame or a bare chunk). Plugin codecs and filters (ZFP, NDLZ,
    /// NDCELL, NDMEAN) need it; the item size comes from the chunk header.
    pub blockshape: &'a [u64],
    /// Where to decode half of a split block's streams at the same time
    /// (none: one after the other on this thread).
    pub fork: Option<&'a dyn Fork>,
}

impl std::fmt::Debug for BlockContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockContext")
            .field("block0", &self.block0.map(<[u8]>::len))
            .field("blockshape", &self.blockshape)
            .field("fork", &self.fork.is_some())
            .finish()
    }
}

/// One stream of a block as stored: its decoded bytes are all zeros, all
/// one byte, or the codec's output for a payload.
pub(super) enum Stream<'s> {
    Zeros,
    Fill(u8),
    Payload(&'s [u8]),
}

impl<'s> Stream<'s> {
    /// The payload the codec must decode into `dst`; none, with `dst`
    /// written, for a stream of zeros, of one byte, or stored raw (a
    /// payload as long as its decoded bytes).
    pub(super) fn payload_to_decode(&self, dst: &mut [u8]) -> Option<&'s [u8]> {
        match *self {
            Stream::Zeros => dst.fill(0),
            Stream::Fill(byte) => dst.fill(byte),
            Stream::Payload(payload) if payload.len() == dst.len() => dst.copy_from_slice(payload),
            Stream::Payload(payload) => return Some(payload),
        }
        None
    }
}

impl ChunkLayout {
    /// Decode block `b` into `out` (exactly `block_range(b).len()` bytes).
    /// `source` holds the stored bytes of `block_source_range(b)`; `context`
    /// tells what the pipeline needs from outside the block.
    pub fn decode_block(
        &self,
        b: usize,
        source: &[u8],
        context: &BlockContext<'_>,
        out: &mut [u8],
    ) -> PResult<()> {
        let bsize = self.block_range(b).len();
        if out.len() != bsize {
            return Err(Problem::OutOfRange(format!(
                "block {b} is {bsize} bytes, output buffer {}",
                out.len()
            )));
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
            Storage::Streams { .. } => self.decode_streams(b, source, context, out),
        }
    }

    fn decode_streams(
        &self,
        b: usize,
        source: &[u8],
        context: &BlockContext<'_>,
        out: &mut [u8],
    ) -> PResult<()> {
        let h = &self.header;
        let bsize = out.len();
        let nstreams = self.nstreams(b);
        let stream_len = bsize / nstreams;
        if stream_len == 0 || stream_len * nstreams != bsize {
            return Err(Problem::corrupt(
                "chunk",
                format!("block {b} of {bsize} bytes cannot hold {nstreams} streams"),
            ));
        }
        let has_filters = h
            .filters
            .iter()
            .any(|&f| f != filter_id::NONE && f != filter_id::TRUNC_PREC);
        let decode_all = |stage: &mut [u8]| -> PResult<()> {
            let streams = self.streams_of(b, source, nstreams, stream_len)?;
            let decode_run =
                |first: usize, streams: &[Stream<'_>], stage: &mut [u8]| -> PResult<()> {
                    for (i, (stream, dst)) in streams
                        .iter()
                        .zip(stage.chunks_exact_mut(stream_len))
                        .enumerate()
                    {
                        self.decode_stream(b, stream, context, dst)
                            .map_err(|p| in_stream(b, first + i, p))?;
                    }
                    Ok(())
                };
            match context.fork {
                // LZ4 and BloscLZ decode a stream in a few microseconds, less than a handoff.
                Some(fork) if nstreams >= 2 && matches!(h.codec(), Codec::Zstd | Codec::Zlib) => {
                    decode_streams_forked(
                        h.codec(),
                        &self.dict,
                        b,
                        &streams,
                        stream_len,
                        fork,
                        stage,
                    )
                }
                _ => decode_run(0, &streams, stage),
            }
        };
        if !has_filters {
            return decode_all(out);
        }
        let forked = context.fork.is_some() && matches!(h.codec(), Codec::Zstd | Codec::Zlib);
        if nstreams >= 2 && !forked && self.only_shuffle_over(nstreams) {
            return self.decode_planes(b, source, context, stream_len, out);
        }
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let (stage, spare) = &mut *scratch;
            stage.resize(bsize, 0);
            decode_all(&mut stage[..])?;
            self.undo_filters(b, &mut stage[..], spare, context, out)
        })
    }

    /// Streams block `b` is stored in: `typesize` for a split block, 1 for
    /// a block not split, a variable-length block and the leftover block.
    fn nstreams(&self, b: usize) -> usize {
        let h = &self.header;
        let leftover_block = !h.is_vlblocks() && b + 1 == h.nblocks && h.leftover() > 0;
        if h.is_vlblocks() || h.dont_split() || leftover_block {
            1
        } else {
            h.typesize
        }
    }

    /// Whether [`Self::decode_block_part`] decodes block `b` in part: a block
    /// stored in split streams whose only filter is a byte shuffle over them.
    /// Cheap, and known before the block's stored bytes are read.
    pub fn decodes_in_part(&self, b: usize) -> bool {
        let nstreams = self.nstreams(b);
        b < self.nblocks()
            && matches!(self.storage, Storage::Streams { .. })
            && nstreams >= 2
            && self.block_range(b).len().is_multiple_of(nstreams)
            && self.only_shuffle_over(nstreams)
    }

    /// Bytes `[offset, offset + out.len())` of block `b` (inputs as for
    /// [`Self::decode_block`]), for a small read: when the block's only
    /// filter is a byte shuffle over its split streams
    /// ([`Self::decodes_in_part`]), the streams are decoded (LZ4 ones only up
    /// to the last item read) and only the items holding those bytes are
    /// interleaved (a 4 KiB read of a 256 KiB block no longer unshuffles the
    /// other 252 KiB). `Ok(false)`, with nothing written, for any other
    /// block: decode it whole instead.
    pub fn decode_block_part(
        &self,
        b: usize,
        source: &[u8],
        context: &BlockContext<'_>,
        offset: usize,
        out: &mut [u8],
    ) -> PResult<bool> {
        let bsize = self.block_range(b).len();
        let Some(end) = offset.checked_add(out.len()).filter(|&end| end <= bsize) else {
            return Err(Problem::OutOfRange(format!(
                "bytes {offset}+{} of block {b} ({bsize} bytes)",
                out.len()
            )));
        };
        if !self.decodes_in_part(b) {
            return Ok(false);
        }
        let h = &self.header;
        let nstreams = h.typesize;
        let stream_len = bsize / nstreams;
        let streams = self.streams_of(b, source, nstreams, stream_len)?;
        // Item i's byte j is byte i of plane j: the bytes asked for lie in
        // items first..last.
        let (first, last) = (offset / nstreams, end.div_ceil(nstreams));
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let (stage, items) = &mut *scratch;
            stage.resize(bsize, 0);
            match context.fork {
                Some(fork) if matches!(h.codec(), Codec::Zstd | Codec::Zlib) => {
                    decode_streams_forked(
                        h.codec(),
                        &self.dict,
                        b,
                        &streams,
                        stream_len,
                        fork,
                        stage,
                    )?;
                }
                _ => self.decode_unstored(b, &streams, context, stream_len, last, stage)?,
            }
            items.resize((last - first) * nstreams, 0);
            interleave(&streams, stage, stream_len, first..last, items);
            let skip = offset - first * nstreams;
            out.copy_from_slice(&items[skip..skip + out.len()]);
            Ok(true)
        })
    }

    /// Whether the filters undo to a single byte shuffle whose planes are
    /// the block's `nstreams` streams.
    fn only_shuffle_over(&self, nstreams: usize) -> bool {
        let h = &self.header;
        let mut shuffles = 0;
        for (&id, &meta) in h.filters.iter().zip(&h.filters_meta) {
            match id {
                filter_id::NONE | filter_id::TRUNC_PREC | filter_id::INT_TRUNC => {}
                filter_id::SHUFFLE
                    if (if meta == 0 { h.typesize } else { meta as usize }) == nstreams =>
                {
                    shuffles += 1
                }
                _ => return false,
            }
        }
        shuffles == 1
    }

    /// Decode a block whose only filter is a byte shuffle over its streams:
    /// the planes are interleaved from where they are, the streams stored
    /// raw straight from `source` and the others from the scratch buffer
    /// they decode into, so a raw stream is never copied on its own.
    fn decode_planes(
        &self,
        b: usize,
        source: &[u8],
        context: &BlockContext<'_>,
        stream_len: usize,
        out: &mut [u8],
    ) -> PResult<()> {
        let streams = self.streams_of(b, source, out.len() / stream_len, stream_len)?;
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let stage = &mut scratch.0;
            stage.resize(out.len(), 0);
            self.decode_unstored(b, &streams, context, stream_len, stream_len, stage)?;
            interleave(&streams, stage, stream_len, 0..stream_len, out);
            Ok(())
        })
    }

    /// Decode `streams` of block `b` into `stage` (stream `s` at
    /// `s * stream_len`), all but those stored raw, which stay where they
    /// are; an LZ4 stream only up to its first `need` bytes.
    fn decode_unstored(
        &self,
        b: usize,
        streams: &[Stream<'_>],
        context: &BlockContext<'_>,
        stream_len: usize,
        need: usize,
        stage: &mut [u8],
    ) -> PResult<()> {
        let lz4 = self.header.codec() == Codec::Lz4;
        for (s, (stream, dst)) in streams
            .iter()
            .zip(stage.chunks_exact_mut(stream_len))
            .enumerate()
        {
            match *stream {
                Stream::Payload(raw) if raw.len() == stream_len => {}
                Stream::Payload(payload) if lz4 && need < stream_len => {
                    codec::lz4::decompress_prefix(payload, dst, &self.dict, need).map_err(
                        |source| {
                            in_stream(
                                b,
                                s,
                                Problem::Codec {
                                    block: b as u64,
                                    source,
                                },
                            )
                        },
                    )?
                }
                _ => self
                    .decode_stream(b, stream, context, dst)
                    .map_err(|p| in_stream(b, s, p))?,
            }
        }
        Ok(())
    }

    /// The `nstreams` streams of block `b`, each decoding to `len` bytes,
    /// all found before any is decoded (a bad size is told first).
    fn streams_of<'s>(
        &self,
        b: usize,
        source: &'s [u8],
        nstreams: usize,
        len: usize,
    ) -> PResult<Vec<Stream<'s>>> {
        let mut streams = Vec::with_capacity(nstreams);
        let mut pos = 0usize;
        for s in 0..nstreams {
            let (stream, next) = self
                .stream_at(b, source, pos, len)
                .map_err(|p| in_stream(b, s, p))?;
            streams.push(stream);
            pos = next;
        }
        Ok(streams)
    }

    /// The stream whose size field is at `pos` of `source` (it decodes to
    /// `len` bytes), and the position after it.
    fn stream_at<'s>(
        &self,
        b: usize,
        source: &'s [u8],
        pos: usize,
        len: usize,
    ) -> PResult<(Stream<'s>, usize)> {
        let h = &self.header;
        let csize = read_i32_le(source, pos, "stream size")?;
        let pos = pos + 4;
        let payload_len = if h.is_vlblocks() {
            if csize as usize != len {
                return Err(Problem::corrupt(
                    "chunk",
                    format!("variable-length block {b} says {csize} bytes, expected {len}"),
                ));
            }
            source.len().saturating_sub(pos)
        } else if csize == 0 {
            return Ok((Stream::Zeros, pos));
        } else if csize < 0 {
            let token = slice_at(source, pos, 1, "stream token")?[0];
            if token & 0x01 == 0 || csize < -255 {
                return Err(Problem::corrupt(
                    "chunk",
                    format!("block {b}: unknown stream token {token} with size {csize}"),
                ));
            }
            return Ok((Stream::Fill((-csize) as u8), pos + 1));
        } else {
            csize as usize
        };
        Ok((
            Stream::Payload(slice_at(source, pos, payload_len, "compressed stream")?),
            pos + payload_len,
        ))
    }

    /// Decode one stream into `dst`.
    fn decode_stream(
        &self,
        b: usize,
        stream: &Stream<'_>,
        context: &BlockContext<'_>,
        dst: &mut [u8],
    ) -> PResult<()> {
        let h = &self.header;
        let Some(payload) = stream.payload_to_decode(dst) else {
            return Ok(());
        };
        let result = match h.codec() {
            classic if is_classic(classic) => {
                return decode_classic(classic, &self.dict, b, payload, dst)
            }
            Codec::Registered(codec::codec_id::NDLZ) => {
                codec::ndlz::decompress(payload, dst, h.compcode_meta)
            }
            Codec::Registered(id @ codec::codec_id::ZFP_ACC..=codec::codec_id::ZFP_RATE) => {
                codec::zfp::decompress(
                    id,
                    h.compcode_meta,
                    h.typesize,
                    context.blockshape,
                    payload,
                    dst,
                )
            }
            Codec::Registered(id @ codec::codec_id::OPENHTJ2K..=codec::codec_id::HTJ2K)
                if id != codec::codec_id::OPENZL =>
            {
                codec::jpeg2000::decompress(id, payload, dst)
            }
            Codec::Registered(codec::codec_id::OPENZL) if codec::openzl::AVAILABLE => {
                codec::openzl::decompress(payload, dst, h.typesize)
            }
            other => return Err(unsupported_codec(other)),
        };
        result.map_err(|source: CodecError| Problem::Codec {
            block: b as u64,
            source,
        })
    }

    /// Undo the filter pipeline (last slot first). `stage` holds the codec output.
    fn undo_filters(
        &self,
        b: usize,
        stage: &mut [u8],
        spare: &mut Vec<u8>,
        context: &BlockContext<'_>,
        out: &mut [u8],
    ) -> PResult<()> {
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
                filter_id::SHUFFLE
                | filter_id::BITSHUFFLE
                | filter_id::NDCELL
                | filter_id::NDMEAN => {
                    let (src, dst): (&[u8], &mut [u8]) = match at {
                        At::Stage => (&*stage, &mut *out),
                        At::Out => (&*out, &mut *spare),
                        At::Spare => (&*spare, &mut *out),
                    };
                    // Safety of aliasing: src and dst are always different buffers above.
                    if id == filter_id::SHUFFLE {
                        let group = if meta == 0 { typesize } else { meta as usize };
                        filter::shuffle::unshuffle(group, src, dst);
                    } else if id == filter_id::NDCELL || id == filter_id::NDMEAN {
                        let undo = if id == filter_id::NDCELL {
                            filter::ndcell::undo_ndcell
                        } else {
                            filter::ndmean::undo_ndmean
                        };
                        undo(meta, context.blockshape, typesize, src, dst)
                            .map_err(|e| Problem::corrupt("chunk", format!("block {b}: {e}")))?;
                    } else {
                        filter::bitshuffle::bitunshuffle(typesize, src, dst, h.version).map_err(
                            |e| Problem::corrupt("chunk", format!("block {b}: bitshuffle: {e}")),
                        )?;
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
                        Some(context.block0.ok_or_else(|| {
                            Problem::OutOfRange(format!("block {b} needs block 0 for delta"))
                        })?)
                    };
                    filter::delta::undo_delta(reference, typesize, data)
                        .map_err(|e| Problem::corrupt("chunk", format!("block {b}: delta: {e}")))?;
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
                    undone.map_err(|e| {
                        Problem::corrupt("chunk", format!("block {b}: bytedelta: {e}"))
                    })?;
                }
                other => {
                    return Err(Problem::UnsupportedFilter {
                        name: filter_name(other),
                        id: other,
                    })
                }
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

/// Interleave items `items` of the planes of `streams` into `dst`: a
/// stream stored raw from where it is stored, the others from `stage`
/// (stream `s` at `s * stream_len`).
fn interleave(
    streams: &[Stream<'_>],
    stage: &[u8],
    stream_len: usize,
    items: std::ops::Range<usize>,
    dst: &mut [u8],
) {
    let planes: Vec<&[u8]> = streams
        .iter()
        .zip(stage.chunks_exact(stream_len))
        .map(|(stream, decoded)| match *stream {
            Stream::Payload(raw) if raw.len() == stream_len => &raw[items.clone()],
            _ => &decoded[items.clone()],
        })
        .collect();
    filter::shuffle::unshuffle_planes(&planes, dst);
}

/// A stream's problem, said of its block and stream (codec problems keep their own words).
pub(super) fn in_stream(b: usize, s: usize, problem: Problem) -> Problem {
    match problem {
        Problem::Codec { .. } | Problem::UnsupportedCodec { .. } => problem,
        other => Problem::corrupt("chunk", format!("block {b} stream {s}: {other}")),
    }
}

/// The error for a codec the pipeline has no decoder for.
fn unsupported_codec(codec: Codec) -> Problem {
    let support = match codec {
        Codec::Registered(id) => codec::codec_support(id),
        _ => codec::Support::Unknown,
    };
    Problem::UnsupportedCodec {
        name: codec.name(),
        id: codec.id(),
        support,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::byte_source::SliceSource;
    use crate::format::chunk::layout::ChunkRegion;

    const N: usize = 256;

    /// A one-block chunk of `N` 4-byte elements, LZ4, byte-shuffled by the
    /// Blosc1 flag, whose four streams are stored four ways: LZ4 (plane 0),
    /// all zeros (plane 1), raw (plane 2: as long as its decoded bytes) and
    /// one repeated byte (plane 3). Returns the chunk and its decoded block.
    fn four_way_chunk() -> (Vec<u8>, Vec<u8>) {
        let planes: [Vec<u8>; 4] = [
            (0..N).map(|i| (i / 16) as u8).collect(),
            vec![0; N],
            (0..N).map(|i| (i * 167 + 13) as u8).collect(),
            vec![0x55; N],
        ];
        let mut block = Vec::new();
        let lz4 = lz4_flex::block::compress(&planes[0]);
        block.extend_from_slice(&(lz4.len() as i32).to_le_bytes());
        block.extend_from_slice(&lz4);
        block.extend_from_slice(&0i32.to_le_bytes());
        block.extend_from_slice(&(N as i32).to_le_bytes());
        block.extend_from_slice(&planes[2]);
        block.extend_from_slice(&(-0x55i32).to_le_bytes());
        block.push(0x01);
        let cbytes = 16 + 4 + block.len();
        let mut chunk = vec![2, 1, 0x01 | (1 << 5), 4];
        for v in [4 * N, 4 * N, cbytes] {
            chunk.extend_from_slice(&(v as i32).to_le_bytes());
        }
        chunk.extend_from_slice(&20i32.to_le_bytes());
        chunk.extend_from_slice(&block);
        let decoded = (0..N)
            .flat_map(|i| [planes[0][i], planes[1][i], planes[2][i], planes[3][i]])
            .collect();
        (chunk, decoded)
    }

    fn decode(chunk: &[u8]) -> PResult<Vec<u8>> {
        let source = SliceSource(chunk);
        let layout = ChunkLayout::read(&ChunkRegion {
            source: &source,
            start: 0,
            available: chunk.len() as u64,
        })?;
        let range = layout.block_source_range(0);
        let mut out = vec![0xEEu8; layout.block_range(0).len()];
        layout.decode_block(
            0,
            &chunk[range.start as usize..range.end as usize],
            &BlockContext::default(),
            &mut out,
        )?;
        Ok(out)
    }

    #[test]
    fn shuffled_block_interleaves_raw_zero_fill_and_coded_streams() {
        let (chunk, decoded) = four_way_chunk();
        let source = SliceSource(&chunk);
        let layout = ChunkLayout::read(&ChunkRegion {
            source: &source,
            start: 0,
            available: chunk.len() as u64,
        })
        .unwrap();
        assert!(
            layout.only_shuffle_over(4),
            "the block takes the planar path"
        );
        assert_eq!(decode(&chunk).unwrap(), decoded);
    }

    #[test]
    fn a_bad_stream_is_named_on_the_planar_path() {
        let (mut chunk, _) = four_way_chunk();
        // The LZ4 payload of stream 0 starts at 24: a literal run longer than the stream.
        chunk[24] = 0xF0;
        chunk[25] = 0xFF;
        let err = decode(&chunk).unwrap_err();
        assert!(matches!(err, Problem::Codec { block: 0, .. }), "{err}");
        // A stream size past the block's end is found before anything decodes.
        let (mut chunk, _) = four_way_chunk();
        let last = chunk.len() - 5;
        chunk[last..last + 4].copy_from_slice(&1000i32.to_le_bytes());
        let err = decode(&chunk).unwrap_err();
        assert!(err.to_string().contains("block 0 stream 3"), "{err}");
    }
}
