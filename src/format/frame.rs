//! Frames: the contiguous frame file and the index file of a sparse frame.
//!
//! Parses the msgpack header (sizes, codec, filters, metalayers), the chunk
//! offsets index (itself a Blosc2 chunk) and the trailer with the
//! variable-length metalayers. Every offset and size is checked against the
//! file length before it is used.

use serde_json::Value as Json;

use super::byte_source::{read_exact, ByteSource};
use super::bytes::{read_i32_be, read_i64_be, read_u16_be, read_u32_be, read_u8, slice_at};
use super::chunk::header::{ChunkHeader, Special, EXTENDED_HEADER_LEN};
use super::chunk::{decode_chunk, decode_chunk_limited};
use super::elsewhere::Elsewhere;
use super::error::{PResult, Problem};
use super::msgpack;

const HEADER_MIN_LEN: usize = 87;
const TRAILER_MIN_LEN: u64 = 25;
/// Largest header accepted (metalayers are small; C-Blosc2 caps them too).
const MAX_HEADER_LEN: usize = 64 << 20;
/// Largest trailer accepted.
const MAX_TRAILER_LEN: u64 = 64 << 20;
/// Largest chunk index accepted: 16 Mi chunks.
pub const MAX_CHUNKS: u64 = 16 << 20;
const MAX_METALAYERS: usize = 16;
/// Largest decoded size of all vlmetalayers together (they are small msgpack
/// values, and each msgpack byte can become a JSON value of ~70 bytes).
pub const MAX_VLMETA_BYTES: usize = 1 << 20;
const MAX_VLMETALAYERS: usize = 8 * 1024;

/// Where chunk `i` lives, as told by the offsets index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkOffset {
    /// Offset from the frame start (contiguous) or chunk file number (sparse).
    Stored(u64),
    /// A whole chunk of one special value, told by the index alone.
    Special(Special),
}

/// The parsed frame: header fields, metalayers, chunk index and vlmetalayers.
#[derive(Debug, Clone)]
pub struct Frame {
    /// Whether this is the `chunks.b2frame` index of a sparse frame (frame type
    /// 1, chunks in separate `XXXXXXXX.chunk` files) rather than a contiguous
    /// frame (type 0). Always the `sparse` asked of [`Frame::read`], which
    /// checks it against the header's frame type.
    pub sparse: bool,
    /// Frame format version: bits 0..3 of the header's `general_flags` byte.
    pub version: u8,
    /// Length in bytes of the header, metalayers included (the header's
    /// `header_len`); at least 87 and at most [`Frame::frame_len`]. In a
    /// contiguous frame the chunks start right after it.
    pub header_len: u64,
    /// Length in bytes of the whole frame: header, chunks, chunk offsets index
    /// and trailer (the header's `frame_len`); checked to fit in the file.
    pub frame_len: u64,
    /// Uncompressed size in bytes of all the chunks' data, metadata excluded
    /// (the header's `uncompressed_size`); 0 for an empty frame.
    pub nbytes: u64,
    /// Compressed size in bytes of the chunks section, metadata excluded (the
    /// header's `compressed_size`); in a contiguous frame the chunk offsets index
    /// starts at `header_len + cbytes`.
    pub cbytes: u64,
    /// Size in bytes of one item (the header's `type_size`); never 0.
    pub typesize: usize,
    /// Size in bytes of the blocks within chunks (the header's `block_size`);
    /// never negative; 0 means not fixed by the frame (automatic). Every chunk
    /// header records the block size it actually uses.
    pub blocksize: i32,
    /// Fixed chunk size, or 0 when chunks differ in size.
    pub chunksize: u64,
    /// Default codec of the chunks: bits 0..3 of the header's `codec_flags` (0
    /// blosclz, 1 lz4/lz4hc, 3 zlib, 4 zstd, 6 user-defined: see
    /// [`Frame::udcodec`]). Each chunk header still names its own codec.
    pub codec_code: u8,
    /// Compression level: bits 4..7 of the header's `codec_flags` (informative;
    /// decoding does not need it).
    pub clevel: u8,
    /// Split mode as C-Blosc2's `BLOSC_*_SPLIT` value: 1 always, 2 never, 3 auto,
    /// 4 forward-compatible (bits 0..1 of the header's `other_flags`, plus one).
    pub splitmode: u8,
    /// User-defined codec id (the header's `udcodec` byte); meaningful when
    /// [`Frame::codec_code`] is 6.
    pub udcodec: u8,
    /// Metadata byte of the codec (the header's `compcode_meta`), used by
    /// user-defined codecs.
    pub compcode_meta: u8,
    /// Whether chunks were compressed with a dictionary (bit 0 of the header's
    /// `other_flags2`; only meaningful for codecs with dictionaries, e.g. zstd).
    pub use_dict: bool,
    /// Filter ids of the frame's default filter pipeline, in the order stored
    /// (at most 6; only the `nfilters` used slots).
    pub filters: Vec<u8>,
    /// Meta byte of each filter in [`Frame::filters`] (same length, same order).
    pub filters_meta: Vec<u8>,
    /// Fixed-size metalayers from the header, in stored order: name and raw
    /// content (the bin32 payload, usually msgpack, e.g. `b2nd`). At most 16.
    pub metalayers: Vec<(String, Vec<u8>)>,
    /// Variable-length metalayers from the trailer, in stored order: name and
    /// content (a Blosc2 chunk of msgpack) decoded to JSON. A layer that cannot
    /// be decoded, or that exceeds the shared [`MAX_VLMETA_BYTES`] budget, holds
    /// `{"error": "..."}` instead; empty when the frame has no trailer.
    pub vlmeta: Vec<(String, Json)>,
    /// Where each chunk lives, from the chunk offsets index, in chunk order (one
    /// entry per chunk; empty when `nbytes` is 0). Contiguous-frame offsets are
    /// checked to lie within the chunks section.
    pub offsets: Vec<ChunkOffset>,
}

impl Frame {
    /// Number of chunks (entries of the chunk offsets index).
    pub fn nchunks(&self) -> usize {
        self.offsets.len()
    }

    /// The marker that says this frame's values live elsewhere, if any
    /// (see [`Elsewhere`]).
    pub fn values_elsewhere(&self) -> Option<Elsewhere> {
        let frame = self;
        if let Some(bytes) = frame.metalayer("b2o") {
            let kind = msgpack::parse(bytes, "b2o metalayer")
                .ok()
                .map(|v| msgpack::to_json(&v))
                .and_then(|j| j.get("kind").and_then(Json::as_str).map(str::to_string))
                .unwrap_or_else(|| "b2o".to_string());
            return Some(Elsewhere::B2Object { kind });
        }
        if frame.metalayer("LazyArray").is_some() {
            return Some(Elsewhere::LegacyLazyArray);
        }
        if frame.metalayer("proxy-source").is_some() || frame.metalayer("proxy").is_some() {
            return Some(Elsewhere::Proxy);
        }
        let hdf5 = frame
            .vlmeta
            .iter()
            .any(|(name, value)| name == "_ftype" && value.as_str() == Some("hdf5"));
        if hdf5 {
            return Some(Elsewhere::Caterva2Hdf5);
        }
        None
    }

    /// Raw content of the fixed-size metalayer called `name` (the first one, if
    /// the name repeats), or `None` when there is none.
    pub fn metalayer(&self, name: &str) -> Option<&[u8]> {
        self.metalayers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }

    /// Parse a frame held in `file` (a frame, or the `chunks.b2frame` index of a sparse frame).
    pub fn read(file: &dyn ByteSource, sparse: bool) -> PResult<Frame> {
        let file_len = file.len();
        if file_len < HEADER_MIN_LEN as u64 {
            if file_len >= 11 && looks_like_frame(&read_exact(file, 0, 11, "frame header")?) {
                return Err(Problem::truncated(
                    "frame header",
                    0,
                    HEADER_MIN_LEN as u64,
                    file_len,
                ));
            }
            return Err(Problem::NotBlosc2(format!(
                "{file_len} bytes is too short for a Blosc2 frame"
            )));
        }
        // One speculative read usually holds the whole header (metalayers
        // included): one round trip instead of two for a remote source.
        let first_len = (file.prefetch_hint().max(HEADER_MIN_LEN) as u64).min(file_len) as usize;
        let fixed = read_exact(file, 0, first_len, "frame header")?;
        if !looks_like_frame(&fixed) {
            return Err(Problem::NotBlosc2("no b2frame magic at the start".into()));
        }
        let header_len = read_i32_be(&fixed, 11, "frame header")?;
        let frame_len = read_i64_be(&fixed, 16, "frame header")?;
        if header_len < HEADER_MIN_LEN as i32 || header_len as usize > MAX_HEADER_LEN {
            return Err(Problem::corrupt(
                "frame header",
                format!("header length {header_len}"),
            ));
        }
        if frame_len < header_len as i64 || frame_len as u64 > file_len {
            return Err(Problem::corrupt(
                "frame header",
                format!("frame length {frame_len} does not fit the file of {file_len} bytes (header {header_len})"),
            ));
        }
        let header_len = header_len as usize;
        let frame_len = frame_len as u64;
        let header = if header_len <= fixed.len() {
            fixed[..header_len].to_vec()
        } else {
            read_exact(file, 0, header_len, "frame header")?
        };
        let general_flags = header[25];
        let version = general_flags & 0x0f;
        let frame_type = header[26] & 0x0f;
        let expected_type = if sparse { 1 } else { 0 };
        if frame_type != expected_type {
            return Err(Problem::corrupt(
                "frame header",
                format!("frame type {frame_type}, expected {expected_type}"),
            ));
        }
        let codec_flags = header[27];
        let other_flags = header[28];
        let nbytes = expect_marker(&header, 29, 0xd3, "uncompressed size")
            .and_then(|_| read_i64_be(&header, 30, "frame header"))?;
        let cbytes = expect_marker(&header, 38, 0xd3, "compressed size")
            .and_then(|_| read_i64_be(&header, 39, "frame header"))?;
        let typesize = read_i32_be(&header, 48, "frame header")?;
        let blocksize = read_i32_be(&header, 53, "frame header")?;
        let chunksize = read_i32_be(&header, 58, "frame header")?;
        // An empty frame stores chunksize -1 ("not known yet").
        let chunksize = if nbytes == 0 && chunksize < 0 {
            0
        } else {
            chunksize
        };
        if nbytes < 0 || cbytes < 0 || typesize <= 0 || chunksize < 0 || blocksize < 0 {
            return Err(Problem::corrupt(
                "frame header",
                format!("negative or zero size (nbytes {nbytes}, cbytes {cbytes}, typesize {typesize}, chunksize {chunksize}, blocksize {blocksize})"),
            ));
        }
        let nfilters = read_u8(&header, 70, "frame header")? as usize;
        if nfilters > 6 {
            return Err(Problem::corrupt(
                "frame header",
                format!("{nfilters} filters (at most 6)"),
            ));
        }
        let filters = header[71..71 + nfilters].to_vec();
        let filters_meta = header[79..79 + nfilters].to_vec();
        let mut frame = Frame {
            sparse,
            version,
            header_len: header_len as u64,
            frame_len,
            nbytes: nbytes as u64,
            cbytes: cbytes as u64,
            typesize: typesize as usize,
            blocksize,
            chunksize: chunksize as u64,
            codec_code: codec_flags & 0x0f,
            clevel: codec_flags >> 4,
            splitmode: (other_flags & 0x03) + 1,
            udcodec: header[77],
            compcode_meta: header[78],
            use_dict: header[85] & 0x01 != 0,
            filters,
            filters_meta,
            metalayers: Vec::new(),
            vlmeta: Vec::new(),
            offsets: Vec::new(),
        };
        frame.metalayers = parse_metalayers(&header, 89, &header, "metalayers", MAX_METALAYERS)?
            .into_iter()
            .collect();
        frame.offsets = read_offsets(file, &frame)?;
        frame.vlmeta = read_vlmeta(file, &frame)?;
        Ok(frame)
    }
}

/// Whether `bytes` starts like a frame header (fixarray + "b2frame\0").
pub fn looks_like_frame(bytes: &[u8]) -> bool {
    bytes.len() >= 11
        && bytes[0] & 0xf0 == 0x90
        && bytes[1] == 0xa8
        && &bytes[2..10] == b"b2frame\0"
}

fn expect_marker(bytes: &[u8], at: usize, marker: u8, what: &str) -> PResult<()> {
    let got = read_u8(bytes, at, "frame header")?;
    if got != marker {
        return Err(Problem::corrupt(
            "frame header",
            format!("{what}: msgpack marker 0x{got:02x}, expected 0x{marker:02x}"),
        ));
    }
    Ok(())
}

/// Parse a metalayer index (`0xde` map of name → i32 offset) starting at
/// `idx_at` of `index`, with contents (`0xc6` bin32) at offsets into `content`.
fn parse_metalayers(
    index: &[u8],
    idx_at: usize,
    content: &[u8],
    what: &str,
    max: usize,
) -> PResult<Vec<(String, Vec<u8>)>> {
    let _idx_size = read_u16_be(index, idx_at, what)?;
    let mut pos = idx_at + 2;
    if read_u8(index, pos, what)? != 0xde {
        return Err(Problem::corrupt(what, "index is not a msgpack map16"));
    }
    let count = read_u16_be(index, pos + 1, what)? as usize;
    pos += 3;
    if count > max {
        return Err(Problem::corrupt(
            what,
            format!("{count} entries (at most {max})"),
        ));
    }
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let marker = read_u8(index, pos, what)?;
        if marker & 0xe0 != 0xa0 {
            return Err(Problem::corrupt(
                what,
                format!("name marker 0x{marker:02x} is not a fixstr"),
            ));
        }
        let name_len = (marker & 0x1f) as usize;
        let name = String::from_utf8_lossy(slice_at(index, pos + 1, name_len, what)?).into_owned();
        pos += 1 + name_len;
        if read_u8(index, pos, what)? != 0xd2 {
            return Err(Problem::corrupt(
                what,
                format!("offset of {name:?} is not an int32"),
            ));
        }
        let offset = read_i32_be(index, pos + 1, what)?;
        pos += 5;
        if offset < 0 {
            return Err(Problem::corrupt(
                what,
                format!("negative offset for {name:?}"),
            ));
        }
        let offset = offset as usize;
        if read_u8(content, offset, what)? != 0xc6 {
            return Err(Problem::corrupt(
                what,
                format!("content of {name:?} is not a bin32"),
            ));
        }
        let len = read_i32_be(content, offset + 1, what)?;
        if len < 0 {
            return Err(Problem::corrupt(
                what,
                format!("negative length for {name:?}"),
            ));
        }
        let value = slice_at(content, offset + 5, len as usize, what)?.to_vec();
        out.push((name, value));
    }
    Ok(out)
}

fn read_offsets(file: &dyn ByteSource, frame: &Frame) -> PResult<Vec<ChunkOffset>> {
    if frame.nbytes == 0 {
        return Ok(Vec::new());
    }
    let idx_pos = if frame.sparse {
        frame.header_len
    } else {
        frame.header_len.saturating_add(frame.cbytes)
    };
    if idx_pos.saturating_add(EXTENDED_HEADER_LEN as u64) > frame.frame_len {
        return Err(Problem::corrupt(
            "chunk offsets index",
            format!(
                "starts at {idx_pos}, past the frame end {}",
                frame.frame_len
            ),
        ));
    }
    let head = read_exact(file, idx_pos, EXTENDED_HEADER_LEN, "chunk offsets index")?;
    let index_header = ChunkHeader::parse(&head)
        .map_err(|p| Problem::corrupt("chunk offsets index", p.to_string()))?;
    let expected_chunks = if frame.chunksize > 0 {
        Some(frame.nbytes.div_ceil(frame.chunksize))
    } else {
        None
    };
    if index_header.nbytes % 8 != 0 {
        return Err(Problem::corrupt(
            "chunk offsets index",
            format!(
                "{} bytes is not a whole number of offsets",
                index_header.nbytes
            ),
        ));
    }
    let nchunks = (index_header.nbytes / 8) as u64;
    if let Some(expected) = expected_chunks {
        if expected != nchunks {
            return Err(Problem::corrupt(
                "chunk offsets index",
                format!("holds {nchunks} offsets, the header implies {expected} chunks"),
            ));
        }
    }
    if nchunks > MAX_CHUNKS {
        return Err(Problem::Limit(format!(
            "{nchunks} chunks (blosc2fs accepts up to {MAX_CHUNKS})"
        )));
    }
    if idx_pos + index_header.cbytes as u64 > frame.frame_len {
        return Err(Problem::truncated(
            "chunk offsets index",
            idx_pos,
            idx_pos + index_header.cbytes as u64,
            frame.frame_len,
        ));
    }
    let bytes = read_exact(file, idx_pos, index_header.cbytes, "chunk offsets index")?;
    let raw =
        decode_chunk(&bytes).map_err(|p| Problem::corrupt("chunk offsets index", p.to_string()))?;
    let mut offsets = Vec::with_capacity(nchunks as usize);
    for (i, item) in raw.chunks_exact(8).enumerate() {
        let value = i64::from_le_bytes(item.try_into().unwrap_or([0; 8]));
        if value < 0 {
            let special = match ((value as u64) >> 56) as u8 & 0x07 {
                1 => Special::Zeros,
                2 => Special::NaN,
                4 => Special::Uninit,
                other => {
                    return Err(Problem::corrupt(
                        "chunk offsets index",
                        format!("chunk {i}: unknown special kind {other}"),
                    ));
                }
            };
            offsets.push(ChunkOffset::Special(special));
        } else {
            let value = value as u64;
            if !frame.sparse
                && (value.saturating_add(EXTENDED_HEADER_LEN as u64) > frame.cbytes
                    || frame.header_len.saturating_add(value) > frame.frame_len)
            {
                return Err(Problem::corrupt(
                    "chunk offsets index",
                    format!(
                        "chunk {i} at offset {value} lies outside the chunks section ({} bytes)",
                        frame.cbytes
                    ),
                ));
            }
            offsets.push(ChunkOffset::Stored(value));
        }
    }
    Ok(offsets)
}

fn read_vlmeta(file: &dyn ByteSource, frame: &Frame) -> PResult<Vec<(String, Json)>> {
    if frame.frame_len < frame.header_len + TRAILER_MIN_LEN {
        return Ok(Vec::new());
    }
    let tail = read_exact(
        file,
        frame.frame_len - TRAILER_MIN_LEN,
        TRAILER_MIN_LEN as usize,
        "frame trailer",
    )?;
    if tail[2] != 0xce {
        return Err(Problem::corrupt(
            "frame trailer",
            "trailer length marker missing",
        ));
    }
    let trailer_len = read_u32_be(&tail, 3, "frame trailer")? as u64;
    if trailer_len < TRAILER_MIN_LEN
        || trailer_len > frame.frame_len - frame.header_len
        || trailer_len > MAX_TRAILER_LEN
    {
        return Err(Problem::corrupt(
            "frame trailer",
            format!("trailer length {trailer_len}"),
        ));
    }
    let trailer = read_exact(
        file,
        frame.frame_len - trailer_len,
        trailer_len as usize,
        "frame trailer",
    )?;
    // [fixarray, version, 0x93 fixarray(3), 0xcd uint16 idx size, map...]
    let layers = parse_metalayers(&trailer, 4, &trailer, "vlmetalayers", MAX_VLMETALAYERS)?;
    let mut out = Vec::with_capacity(layers.len());
    // One budget for all layers together: each msgpack byte can become a
    // JSON value of ~70 bytes, and a trailer may hold thousands of layers.
    let mut budget = MAX_VLMETA_BYTES;
    for (name, content) in layers {
        let value = decode_chunk_limited(&content, budget)
            .inspect(|raw| budget -= raw.len())
            .and_then(|raw| msgpack::parse(&raw, "vlmetalayer"))
            .map(|v| msgpack::to_json(&v))
            .unwrap_or_else(|p| serde_json::json!({ "error": p.to_string() }));
        out.push((name, value));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::format::byte_source::SliceSource;

    fn fixture(name: &str) -> Vec<u8> {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        std::fs::read(path).unwrap()
    }

    /// The header fields of a frame python-blosc2 wrote (the fixtures'
    /// manifest: 45 x 37 `<f4` in 20 x 16 chunks of 8 x 5 blocks, blosclz
    /// clevel 5, split mode auto, no dictionary): 3 x 3 chunks, blocks of
    /// 8 * 5 * 4 = 160 bytes, and a chunk stores whole blocks (b2nd pads its
    /// chunkshape to the blockshape: 3 x 4 blocks, 12 * 160 = 1920 bytes).
    #[test]
    fn a_python_blosc2_frame_reads_as_written() {
        let bytes = fixture("codec_blosclz_shuffle.b2nd");
        assert!(looks_like_frame(&bytes));
        let frame = Frame::read(&SliceSource(&bytes), false).unwrap();
        assert_eq!(frame.nchunks(), 9);
        assert_eq!(frame.typesize, 4);
        assert_eq!(frame.chunksize, 1920);
        assert_eq!(frame.nbytes, 9 * 1920);
        assert_eq!(frame.blocksize, 160);
        assert_eq!(frame.codec_code, 0);
        assert_eq!(frame.clevel, 5);
        assert_eq!(frame.splitmode, 3);
        assert!(!frame.use_dict);
        assert!(frame.metalayer("b2nd").is_some());
        assert!(frame.metalayer("nothing").is_none());
        assert!(frame.values_elsewhere().is_none());
        assert!(frame
            .offsets
            .iter()
            .all(|o| matches!(o, ChunkOffset::Stored(_))));
    }

    /// Variable-length metadata comes back as JSON (lz4 this time).
    #[test]
    fn vlmeta_reads_as_json() {
        let bytes = fixture("placed_2d_be_f4.b2nd");
        let frame = Frame::read(&SliceSource(&bytes), false).unwrap();
        assert_eq!(frame.codec_code, 1);
        let voxel = frame
            .vlmeta
            .iter()
            .find(|(name, _)| name == "voxel_size")
            .map(|(_, v)| v.clone());
        assert_eq!(voxel, Some(serde_json::json!([1.5, 3])));
    }

    /// Cut short anywhere, a frame is an error, never a panic; bytes that
    /// are not a frame do not look like one.
    #[test]
    fn truncated_frames_are_errors() {
        let bytes = fixture("codec_blosclz_shuffle.b2nd");
        for len in [0, 10, 11, 60, 200, bytes.len() / 2, bytes.len() - 1] {
            assert!(
                Frame::read(&SliceSource(&bytes[..len]), false).is_err(),
                "{len}"
            );
        }
        assert!(!looks_like_frame(&[0u8; 64]));
    }
}
