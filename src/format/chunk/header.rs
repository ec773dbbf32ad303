//! The chunk header: the 16-byte Blosc1 form and the 32-byte Blosc2 extension.
//!
//! Every size in the header is checked here, once, so that the rest of the
//! decoder can trust `nbytes`, `blocksize`, `nblocks` and the stream layout.

use crate::format::bytes::{read_i32_le, slice_at};
use crate::format::codec::{codec_id, codec_name};
use crate::format::error::{PResult, Problem};
use crate::format::filter::filter_id;

/// Smallest header (Blosc1 form).
pub const MIN_HEADER_LEN: usize = 16;
/// Header with the Blosc2 extension (filters, flags).
pub const EXTENDED_HEADER_LEN: usize = 32;
/// C-Blosc2's upper bound for a block (and typesize).
pub const MAX_BLOCKSIZE: usize = 536_866_816;

const FLAG_SHUFFLE: u8 = 0x01;
const FLAG_MEMCPYED: u8 = 0x02;
const FLAG_BITSHUFFLE: u8 = 0x04;
const FLAG_DELTA: u8 = 0x08;
const FLAG_DONT_SPLIT: u8 = 0x10;

/// Which codec compressed a chunk's streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    BloscLz,
    Lz4,
    Snappy,
    Zlib,
    Zstd,
    /// A codec identified by its registered / user-defined id (NDLZ, ZFP, J2K, ...).
    Registered(u8),
    /// Format code 5 or 7: reserved in the format.
    Reserved(u8),
}

impl Codec {
    /// Decode the 3-bit format code (and the user-defined codec byte for code 6).
    pub fn from_format(code: u8, udcodec: u8) -> Codec {
        match code {
            0 => Codec::BloscLz,
            1 => Codec::Lz4,
            2 => Codec::Snappy,
            3 => Codec::Zlib,
            4 => Codec::Zstd,
            6 => Codec::Registered(udcodec),
            other => Codec::Reserved(other),
        }
    }

    /// The codec id C-Blosc2 gives this codec (see [`codec_id`]).
    pub fn id(&self) -> u8 {
        match self {
            Codec::BloscLz => codec_id::BLOSCLZ,
            Codec::Lz4 => codec_id::LZ4,
            Codec::Snappy => codec_id::SNAPPY,
            Codec::Zlib => codec_id::ZLIB,
            Codec::Zstd => codec_id::ZSTD,
            Codec::Registered(id) => *id,
            Codec::Reserved(code) => *code,
        }
    }

    /// The codec's name.
    pub fn name(&self) -> String {
        match self {
            Codec::Reserved(code) => format!("reserved codec format {code}"),
            other => codec_name(other.id()),
        }
    }
}

/// A whole chunk filled with one value, told by the header instead of blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    Zeros,
    NaN,
    /// The repeated value follows the header (its length is the item size).
    Value,
    /// Never written: reads as zeros.
    Uninit,
}

/// A parsed, validated chunk header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkHeader {
    pub version: u8,
    pub versionlz: u8,
    pub flags: u8,
    /// The typesize byte (for a `Special::Value` chunk: the value's length).
    pub typesize: usize,
    pub nbytes: usize,
    /// Bytes per block (clamped to `nbytes`); 0 for variable-length blocks.
    pub blocksize: usize,
    pub nblocks: usize,
    pub cbytes: usize,
    pub filters: [u8; 6],
    pub filters_meta: [u8; 6],
    pub udcodec: u8,
    pub compcode_meta: u8,
    pub blosc2_flags: u8,
    pub blosc2_flags2: u8,
    /// 16 or 32.
    pub header_len: usize,
    pub special: Option<Special>,
}

impl ChunkHeader {
    /// Parse the header at the start of `bytes` (at least 16 bytes; 32 for
    /// the extended form). Checks sizes against C-Blosc2's own limits.
    pub fn parse(bytes: &[u8]) -> PResult<ChunkHeader> {
        let head = slice_at(bytes, 0, MIN_HEADER_LEN, "chunk header")?;
        let version = head[0];
        let versionlz = head[1];
        let flags = head[2];
        let typesize_byte = head[3] as usize;
        let nbytes = read_i32_le(head, 4, "chunk header")?;
        let blocksize_field = read_i32_le(head, 8, "chunk header")?;
        let cbytes = read_i32_le(head, 12, "chunk header")?;
        if version == 0 {
            return Err(Problem::corrupt(
                "chunk header",
                format!("unknown format version {version}"),
            ));
        }
        if nbytes < 0 {
            return Err(Problem::corrupt(
                "chunk header",
                format!("negative nbytes {nbytes}"),
            ));
        }
        if cbytes < MIN_HEADER_LEN as i32 {
            return Err(Problem::corrupt(
                "chunk header",
                format!("cbytes {cbytes} is smaller than a header"),
            ));
        }
        if blocksize_field <= 0 || blocksize_field as usize > MAX_BLOCKSIZE {
            return Err(Problem::corrupt(
                "chunk header",
                format!("blocksize {blocksize_field} out of range"),
            ));
        }
        if typesize_byte == 0 {
            return Err(Problem::corrupt("chunk header", "typesize is zero"));
        }
        let extended = flags & FLAG_SHUFFLE != 0 && flags & FLAG_BITSHUFFLE != 0;
        let mut header = ChunkHeader {
            version,
            versionlz,
            flags,
            typesize: typesize_byte,
            nbytes: nbytes as usize,
            blocksize: blocksize_field as usize,
            nblocks: 0,
            cbytes: cbytes as usize,
            filters: [0; 6],
            filters_meta: [0; 6],
            udcodec: 0,
            compcode_meta: 0,
            blosc2_flags: 0,
            blosc2_flags2: 0,
            header_len: MIN_HEADER_LEN,
            special: None,
        };
        if extended {
            if header.cbytes < EXTENDED_HEADER_LEN {
                return Err(Problem::corrupt(
                    "chunk header",
                    format!("cbytes {cbytes} is smaller than an extended header"),
                ));
            }
            let ext = slice_at(bytes, 0, EXTENDED_HEADER_LEN, "extended chunk header")?;
            header.header_len = EXTENDED_HEADER_LEN;
            header.filters.copy_from_slice(&ext[16..22]);
            header.udcodec = ext[22];
            header.compcode_meta = ext[23];
            header.filters_meta.copy_from_slice(&ext[24..30]);
            header.blosc2_flags2 = ext[30];
            header.blosc2_flags = ext[31];
            if version == 3 {
                // The Blosc2 alpha format left the sixth slot uninitialised.
                header.filters[5] = 0;
                header.filters_meta[5] = 0;
            }
            header.special = match (header.blosc2_flags >> 4) & 0x07 {
                0 => None,
                1 => Some(Special::Zeros),
                2 => Some(Special::NaN),
                3 => Some(Special::Value),
                4 => Some(Special::Uninit),
                other => {
                    return Err(Problem::corrupt(
                        "chunk header",
                        format!("unknown special value kind {other}"),
                    ))
                }
            };
            if header.is_vlblocks() && header.special.is_some() {
                return Err(Problem::corrupt(
                    "chunk header",
                    "variable-length blocks cannot be special",
                ));
            }
            if header.blosc2_flags & 0x08 != 0 && header.special.is_none() {
                return Err(Problem::unsupported("chunk", "lazy chunk stored in a file"));
            }
            if header.blosc2_flags2 & !0x01 != 0 {
                return Err(Problem::unsupported(
                    "chunk header",
                    format!("flags2 0x{:02x}", header.blosc2_flags2),
                ));
            }
            match header.special {
                Some(Special::Value) => {
                    let size = header.cbytes - EXTENDED_HEADER_LEN;
                    if size == 0
                        || size > header.nbytes.max(1)
                        || (header.nbytes > 0 && !header.nbytes.is_multiple_of(size))
                    {
                        return Err(Problem::corrupt(
                            "chunk header",
                            format!("repeated value of {size} bytes does not tile nbytes {nbytes}"),
                        ));
                    }
                    header.typesize = size;
                }
                Some(Special::NaN) => {
                    if header.typesize != 4 && header.typesize != 8 {
                        return Err(Problem::corrupt(
                            "chunk header",
                            format!("NaN chunk with typesize {}", header.typesize),
                        ));
                    }
                    if !header.nbytes.is_multiple_of(header.typesize) {
                        return Err(Problem::corrupt(
                            "chunk header",
                            "nbytes is not a multiple of typesize",
                        ));
                    }
                }
                _ => {}
            }
        } else {
            // Blosc1 form: the filters are told by the flag bits.
            if flags & FLAG_SHUFFLE != 0 {
                header.filters[5] = filter_id::SHUFFLE;
            }
            if flags & FLAG_BITSHUFFLE != 0 {
                header.filters[5] = filter_id::BITSHUFFLE;
            }
            if flags & FLAG_DELTA != 0 {
                header.filters[4] = filter_id::DELTA;
            }
        }
        if header.is_vlblocks() {
            if header.is_memcpyed() {
                return Err(Problem::corrupt(
                    "chunk header",
                    "variable-length blocks cannot be memcpyed",
                ));
            }
            header.nblocks = header.blocksize;
            header.blocksize = 0;
        } else {
            if header.nbytes > 0 && header.blocksize > header.nbytes {
                header.blocksize = header.nbytes;
            }
            header.nblocks = header.nbytes.div_ceil(header.blocksize);
        }
        if header.nbytes == 0 {
            // An empty chunk has no blocks, whatever the block count field says.
            header.nblocks = 0;
        }
        if header.is_memcpyed()
            && header.special.is_none()
            && header.cbytes != header.nbytes + header.header_len
        {
            return Err(Problem::corrupt(
                "chunk header",
                format!(
                    "memcpyed chunk has cbytes {} but nbytes {} + header {}",
                    header.cbytes, header.nbytes, header.header_len
                ),
            ));
        }
        Ok(header)
    }

    pub fn codec(&self) -> Codec {
        Codec::from_format(self.flags >> 5, self.udcodec)
    }

    pub fn is_memcpyed(&self) -> bool {
        self.flags & FLAG_MEMCPYED != 0
    }

    /// Blocks are one stream each (no split into `typesize` streams).
    pub fn dont_split(&self) -> bool {
        self.flags & FLAG_DONT_SPLIT != 0
    }

    pub fn is_vlblocks(&self) -> bool {
        self.header_len == EXTENDED_HEADER_LEN && self.blosc2_flags2 & 0x01 != 0
    }

    pub fn uses_dict(&self) -> bool {
        self.header_len == EXTENDED_HEADER_LEN && self.blosc2_flags & 0x01 != 0
    }

    /// Size of the last block when it is shorter than the others (0 if not).
    pub fn leftover(&self) -> usize {
        if self.blocksize == 0 {
            0
        } else {
            self.nbytes % self.blocksize
        }
    }

    /// Decoded size of block `b` of a fixed-block chunk.
    pub fn fixed_block_len(&self, b: usize) -> usize {
        if b + 1 == self.nblocks && self.leftover() > 0 {
            self.leftover()
        } else {
            self.blocksize
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blosc1(flags: u8, typesize: u8, nbytes: i32, blocksize: i32, cbytes: i32) -> Vec<u8> {
        let mut h = vec![2, 1, flags, typesize];
        h.extend_from_slice(&nbytes.to_le_bytes());
        h.extend_from_slice(&blocksize.to_le_bytes());
        h.extend_from_slice(&cbytes.to_le_bytes());
        h
    }

    #[test]
    fn blosc1_flags_become_filters() {
        let h = ChunkHeader::parse(&blosc1(0x01 | 0x08 | (1 << 5), 4, 1000, 256, 400)).unwrap();
        assert_eq!(
            h.filters,
            [0, 0, 0, 0, filter_id::DELTA, filter_id::SHUFFLE]
        );
        assert_eq!(h.codec(), Codec::Lz4);
        assert_eq!(h.nblocks, 4);
        assert_eq!(h.leftover(), 1000 - 768);
        assert_eq!(h.fixed_block_len(3), 232);
        assert_eq!(h.fixed_block_len(0), 256);
    }

    #[test]
    fn blocksize_clamped_to_nbytes() {
        let h = ChunkHeader::parse(&blosc1(0, 1, 100, 4096, 200)).unwrap();
        assert_eq!(h.blocksize, 100);
        assert_eq!(h.nblocks, 1);
    }

    #[test]
    fn rejects_bad_sizes() {
        assert!(matches!(
            ChunkHeader::parse(&blosc1(0, 1, 100, 0, 200)),
            Err(Problem::Corrupt { .. })
        ));
        assert!(matches!(
            ChunkHeader::parse(&blosc1(0, 0, 100, 10, 200)),
            Err(Problem::Corrupt { .. })
        ));
        assert!(matches!(
            ChunkHeader::parse(&blosc1(0, 1, -5, 10, 200)),
            Err(Problem::Corrupt { .. })
        ));
        assert!(matches!(
            ChunkHeader::parse(&blosc1(0, 1, 100, 10, 3)),
            Err(Problem::Corrupt { .. })
        ));
        assert!(matches!(
            ChunkHeader::parse(&[2, 1, 0]),
            Err(Problem::Truncated { .. })
        ));
        // memcpyed but cbytes disagrees with nbytes + header
        assert!(matches!(
            ChunkHeader::parse(&blosc1(0x02, 1, 100, 100, 100)),
            Err(Problem::Corrupt { .. })
        ));
    }

    #[test]
    fn extended_header_special_value() {
        let mut h = blosc1(0x05 | (4 << 5), 8, 64, 64, 40);
        h.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x30]);
        h.extend_from_slice(&7u64.to_le_bytes());
        let parsed = ChunkHeader::parse(&h).unwrap();
        assert_eq!(parsed.special, Some(Special::Value));
        assert_eq!(parsed.typesize, 8);
        assert_eq!(parsed.codec(), Codec::Zstd);
        assert_eq!(parsed.filters[5], filter_id::SHUFFLE);
    }
}
