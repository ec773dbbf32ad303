//! Where a chunk's blocks are: the header, the block-start table, the
//! dictionary, and the decoded extent of every block.
//!
//! A [`ChunkLayout`] is read from the start of a stored chunk (one read of
//! the source covers header, block starts and dictionary size in the usual
//! case) and then answers "which stored bytes hold block b" and "how long is
//! block b decoded", so a reader can fetch and decode one block without
//! touching the rest of the chunk. Decoding itself is in `pipeline.rs`.

use std::ops::Range;

use super::header::{ChunkHeader, Special, EXTENDED_HEADER_LEN};
use crate::format::byte_source::ByteSource;
use crate::format::bytes::{read_i32_le, slice_at};
use crate::format::error::{PResult, Problem};
use crate::format::filter::filter_id;

/// Largest dictionary C-Blosc2 writes (BLOSC2_MAXDICTSIZE).
const MAX_DICT_SIZE: usize = 128 * 1024;

/// The bytes of one stored chunk: `[start, start + available)` of a source.
#[derive(Debug, Clone, Copy)]
pub struct ChunkRegion<'a> {
    pub source: &'a dyn ByteSource,
    pub start: u64,
    /// Bytes available for this chunk (its `cbytes` must fit in them).
    pub available: u64,
}

impl ChunkRegion<'_> {
    /// Exactly `len` bytes at `offset` from the start of the chunk.
    pub fn read(&self, offset: u64, len: usize) -> PResult<Vec<u8>> {
        let end = offset
            .checked_add(len as u64)
            .ok_or_else(|| Problem::corrupt("chunk", "offset overflows"))?;
        if end > self.available {
            return Err(Problem::truncated("chunk", offset, end, self.available));
        }
        let mut buf = vec![0u8; len];
        self.source.read_needed(self.start + offset, &mut buf)?;
        Ok(buf)
    }

    /// Several ranges (relative to the chunk start) in one call to the source.
    pub fn read_ranges(&self, ranges: &[Range<u64>]) -> PResult<Vec<Vec<u8>>> {
        let mut absolute = Vec::with_capacity(ranges.len());
        for r in ranges {
            if r.end > self.available || r.start > r.end {
                return Err(Problem::truncated("chunk", r.start, r.end, self.available));
            }
            absolute.push(self.start + r.start..self.start + r.end);
        }
        self.source.read_ranges(&absolute)
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
    /// Read the layout of the chunk stored in `bytes` (which must hold all of it).
    pub fn read(bytes: &ChunkRegion<'_>) -> PResult<ChunkLayout> {
        Self::read_sized(bytes, 0)
    }

    /// [`Self::read`], with a first read of at least `guess` bytes (header,
    /// block starts and dictionary size as the caller expects them).
    pub fn read_sized(bytes: &ChunkRegion<'_>, guess: usize) -> PResult<ChunkLayout> {
        let available = bytes.available;
        // One read usually covers header, block starts and dictionary size.
        let prefix_len = available.min(
            bytes
                .source
                .prefetch_hint()
                .max(guess)
                .max(EXTENDED_HEADER_LEN) as u64,
        ) as usize;
        let prefix = bytes.read(0, prefix_len)?;
        let header = ChunkHeader::parse(&prefix)?;
        if header.cbytes as u64 > available {
            return Err(Problem::truncated(
                "chunk",
                0,
                header.cbytes as u64,
                available,
            ));
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
            Storage::Streams {
                extents: Vec::new(),
            }
        } else {
            let starts_len = header
                .nblocks
                .checked_mul(4)
                .filter(|n| header.header_len + n <= header.cbytes)
                .ok_or_else(|| {
                    Problem::corrupt(
                        "chunk",
                        format!(
                            "{} block starts do not fit in cbytes {}",
                            header.nblocks, header.cbytes
                        ),
                    )
                })?;
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
                    return Err(Problem::corrupt(
                        "chunk",
                        format!("dictionary size {dict_size}"),
                    ));
                }
                let dict_start = streams_start + 4;
                if dict_start + dict_size as usize > header.cbytes {
                    return Err(Problem::corrupt(
                        "chunk",
                        "dictionary runs past the end of the chunk",
                    ));
                }
                dict = bytes.read(dict_start as u64, dict_size as usize)?;
                streams_start = dict_start + dict_size as usize;
            }
            let mut starts = Vec::with_capacity(header.nblocks);
            for b in 0..header.nblocks {
                let start = read_i32_le(index, header.header_len + 4 * b, "chunk block starts")?;
                if start < streams_start as i32 || start as usize >= header.cbytes {
                    return Err(Problem::corrupt(
                        "chunk",
                        format!("block {b} starts at {start}, outside the streams"),
                    ));
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
        let mut layout = ChunkLayout {
            header,
            storage,
            dict,
            block_offsets: Vec::new(),
        };
        layout.block_offsets = layout.compute_block_offsets(bytes)?;
        Ok(layout)
    }

    fn compute_block_offsets(&self, bytes: &ChunkRegion<'_>) -> PResult<Vec<usize>> {
        let h = &self.header;
        if !h.is_vlblocks() {
            return Ok(Vec::new());
        }
        let mut offsets = Vec::with_capacity(h.nblocks + 1);
        // Variable-length blocks: each block's stream starts with its decoded size.
        let Storage::Streams { extents } = &self.storage else {
            return Err(Problem::corrupt(
                "chunk",
                "variable-length blocks without streams",
            ));
        };
        let mut total = 0usize;
        offsets.push(0);
        for (b, &(start, end)) in extents.iter().enumerate() {
            if end <= start + 4 {
                return Err(Problem::corrupt(
                    "chunk",
                    format!("variable-length block {b} is too short"),
                ));
            }
        }
        // Every block's size field in one call to the source.
        let fields: Vec<Range<u64>> = extents
            .iter()
            .map(|&(start, _)| start as u64..start as u64 + 4)
            .collect();
        for (b, field) in bytes.read_ranges(&fields)?.iter().enumerate() {
            let size = read_i32_le(field, 0, "variable-length block size")?;
            if size <= 0 {
                return Err(Problem::corrupt(
                    "chunk",
                    format!("variable-length block {b} has size {size}"),
                ));
            }
            total = total
                .checked_add(size as usize)
                .filter(|&t| t <= h.nbytes)
                .ok_or_else(|| {
                    Problem::corrupt("chunk", "variable-length block sizes exceed nbytes")
                })?;
            offsets.push(total);
        }
        if total != h.nbytes {
            return Err(Problem::corrupt(
                "chunk",
                format!(
                    "variable-length blocks add up to {total}, not nbytes {}",
                    h.nbytes
                ),
            ));
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
        self.block_offsets
            .partition_point(|&o| o <= offset)
            .saturating_sub(1)
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

    /// Whether the blocks are stored raw (memcpyed): a block's decoded
    /// bytes are its stored bytes.
    pub fn stored_raw(&self) -> bool {
        self.storage == Storage::Memcpyed
    }

    /// Whether decoding block `b > 0` needs block 0 of this chunk (DELTA filter).
    pub fn needs_block0(&self) -> bool {
        matches!(self.storage, Storage::Streams { .. })
            && self.header.filters.contains(&filter_id::DELTA)
    }

    /// The layout of a chunk told only by a special entry in the offsets index.
    pub fn special(kind: Special, nbytes: usize, blocksize: usize, typesize: usize) -> ChunkLayout {
        let blocksize = if blocksize == 0 || blocksize > nbytes {
            nbytes.max(1)
        } else {
            blocksize
        };
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
        ChunkLayout {
            header,
            storage: Storage::Special {
                kind,
                value: Vec::new(),
            },
            dict: Vec::new(),
            block_offsets: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::byte_source::SliceSource;

    /// A Blosc1-form chunk header (16 bytes): version 2, versionlz 1,
    /// `flags`, typesize, then nbytes, blocksize and cbytes (little endian).
    fn header(flags: u8, typesize: u8, nbytes: u32, blocksize: u32, cbytes: u32) -> Vec<u8> {
        let mut h = vec![2, 1, flags, typesize];
        for v in [nbytes, blocksize, cbytes] {
            h.extend_from_slice(&v.to_le_bytes());
        }
        h
    }

    /// A memcpyed chunk (flags 0x02, here with 0x10 "not split") holds its
    /// bytes raw after the header: 1000 bytes in blocks of 256 are four
    /// blocks, the last of 232, each stored at header + its decoded start.
    #[test]
    fn a_memcpyed_chunk_places_its_blocks_after_the_header() {
        let mut chunk = header(0x12, 4, 1000, 256, 16 + 1000);
        chunk.extend((0..1000u32).map(|i| i as u8));
        let source = SliceSource(&chunk);
        let region = ChunkRegion {
            source: &source,
            start: 0,
            available: chunk.len() as u64,
        };
        let layout = ChunkLayout::read(&region).unwrap();
        assert!(layout.stored_raw());
        assert_eq!(layout.nbytes(), 1000);
        assert_eq!(layout.nblocks(), 4);
        assert_eq!(layout.block_range(0), 0..256);
        assert_eq!(layout.block_range(3), 768..1000);
        assert_eq!(layout.block_at(700), 2);
        assert_eq!(layout.block_source_range(1), 16 + 256..16 + 512);
        assert_eq!(layout.block_source_range(3), 16 + 768..16 + 1000);
        assert!(!layout.needs_block0());
    }

    /// A chunk whose `cbytes` runs past the bytes it has is refused, as is
    /// a header cut short.
    #[test]
    fn a_chunk_past_its_bytes_is_an_error() {
        let mut chunk = header(0x12, 4, 1000, 256, 16 + 1000);
        chunk.extend(std::iter::repeat_n(7u8, 500));
        let source = SliceSource(&chunk);
        let region = ChunkRegion {
            source: &source,
            start: 0,
            available: chunk.len() as u64,
        };
        assert!(ChunkLayout::read(&region).is_err());
        let short = ChunkRegion {
            source: &source,
            start: 0,
            available: 10,
        };
        assert!(ChunkLayout::read(&short).is_err());
    }
}
