//! Test support: a small, independent parser of stored chunks (header,
//! block starts, streams) so each codec's tests can decode the real
//! C-Blosc2 chunks in the conformance set without going through the
//! decoder under test.

use super::CodecError;
use sha2::{Digest, Sha256};

/// sha256 of the 4,000,000 raw bytes stored in every `blosc-*-<codec>.cdata`
/// chunk without bitshuffle.
pub const CORPUS_SHA256: &str = "02e21fa3c89fa7d7b61826918a8bd35d3127827b4ef3f3ee47ade5e64e3c2a80";

/// A file of the conformance directory (`BLOSC2FS_CONFORMANCE`, or
/// `../shared/conformance/c-blosc2` next to the crate, or under
/// /work/shared). Missing files fail the test.
pub fn read(name: &str) -> Vec<u8> {
    let beside =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/c-blosc2");
    let dir = std::env::var_os("BLOSC2FS_CONFORMANCE")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            if beside.is_dir() {
                beside
            } else {
                std::path::PathBuf::from("/work/shared/conformance/c-blosc2")
            }
        });
    let path = dir.join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("conformance file {}: {e}", path.display()))
}

fn le32(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// One stream of a chunk: its compressed size field, its bytes (after
/// that field) and its raw size.
pub struct Stream<'a> {
    pub csize: i32,
    pub data: &'a [u8],
    pub raw_len: usize,
}

pub struct Chunk<'a> {
    pub codec: u8,
    pub typesize: usize,
    pub nbytes: usize,
    pub shuffle: bool,
    pub bitshuffle: bool,
    /// Per block: its streams, in order.
    pub blocks: Vec<Vec<Stream<'a>>>,
}

/// Parse the layout of a chunk without dictionary, not memcpyed and not
/// special. Extended headers may only use no filter or byte shuffle.
pub fn parse(b: &[u8]) -> Chunk<'_> {
    let version = b[0];
    let flags = b[2];
    let typesize = b[3] as usize;
    let nbytes = le32(b, 4) as usize;
    let blocksize = le32(b, 8) as usize;
    let cbytes = le32(b, 12) as usize;
    assert_eq!(cbytes, b.len(), "cbytes");
    assert_eq!(flags & 0x02, 0, "memcpyed chunks not handled here");
    let extended = flags & 0x05 == 0x05;
    let (header_len, shuffle, bitshuffle) = if extended {
        let filters = &b[16..22];
        assert!(filters[..5].iter().all(|&f| f == 0), "filters {filters:?}");
        assert!(filters[5] <= 1, "filters {filters:?}");
        assert_eq!(b[31], 0, "blosc2_flags (dict/special) not handled here");
        (32, filters[5] == 1, false)
    } else {
        (16, flags & 0x01 != 0, flags & 0x04 != 0)
    };
    let dont_split = flags & 0x10 != 0;
    let nblocks = nbytes.div_ceil(blocksize);
    let mut blocks = Vec::new();
    for i in 0..nblocks {
        let start = le32(b, header_len + 4 * i) as usize;
        let bsize = if i + 1 == nblocks {
            nbytes - i * blocksize
        } else {
            blocksize
        };
        let leftover = bsize < blocksize;
        // Blosc1 (format version <= 2) also did not split when the type
        // was too large or the block too small, before the flag existed.
        let split = !dont_split
            && !leftover
            && (version >= 3 || (typesize <= 16 && blocksize / typesize >= 128));
        let nstreams = if split { typesize } else { 1 };
        let raw_len = bsize / nstreams;
        let mut pos = start;
        let mut streams = Vec::new();
        for _ in 0..nstreams {
            let csize = le32(b, pos);
            pos += 4;
            // (a negative csize, a run of one byte, is followed by a
            // one-byte token)
            let n = if csize < 0 { 1 } else { csize as usize };
            streams.push(Stream {
                csize,
                data: &b[pos..pos + n],
                raw_len,
            });
            pos += n;
        }
        blocks.push(streams);
    }
    Chunk {
        codec: flags >> 5,
        typesize,
        nbytes,
        shuffle,
        bitshuffle,
        blocks,
    }
}

/// The codec-compressed streams of a chunk (not the stored or run ones).
pub fn streams(b: &[u8]) -> impl Iterator<Item = Stream<'_>> {
    parse(b)
        .blocks
        .into_iter()
        .flatten()
        .filter(|s| s.csize > 0 && s.csize as usize != s.raw_len)
}

/// Decode a whole chunk with `codec` for the compressed streams.
/// Returns the raw bytes and how many streams went through `codec`.
pub fn decode(
    b: &[u8],
    mut codec: impl FnMut(&[u8], &mut [u8]) -> Result<(), CodecError>,
) -> (Vec<u8>, usize) {
    let chunk = parse(b);
    assert!(!chunk.bitshuffle, "bitshuffle not handled here");
    let mut out = Vec::with_capacity(chunk.nbytes);
    let mut coded = 0;
    for streams in &chunk.blocks {
        let mut block = Vec::new();
        for s in streams {
            let at = block.len();
            block.resize(at + s.raw_len, 0);
            let dst = &mut block[at..];
            if s.csize == 0 {
                // zeros: already there
            } else if s.csize < 0 {
                dst.fill((-s.csize) as u8);
            } else if s.csize as usize == s.raw_len {
                dst.copy_from_slice(s.data);
            } else {
                codec(s.data, dst).unwrap_or_else(|e| panic!("stream: {e}"));
                coded += 1;
            }
        }
        if chunk.shuffle && chunk.typesize > 1 {
            block = unshuffle(&block, chunk.typesize);
        }
        out.extend_from_slice(&block);
    }
    assert_eq!(out.len(), chunk.nbytes);
    (out, coded)
}

/// Plain byte unshuffle; the trailing `len % typesize` bytes are stored
/// unshuffled.
pub fn unshuffle(src: &[u8], typesize: usize) -> Vec<u8> {
    let n = src.len() / typesize;
    let mut out = vec![0u8; src.len()];
    for j in 0..typesize {
        for i in 0..n {
            out[i * typesize + j] = src[j * n + i];
        }
    }
    out[n * typesize..].copy_from_slice(&src[n * typesize..]);
    out
}

/// Decode each named chunk of the corpus (all hold the same 4,000,000
/// bytes) with `codec` for its compressed streams, and check that the chunk
/// uses the format code `format` (the header's 3-bit codec), that some
/// streams went through the codec, and that the bytes are the corpus's.
pub fn assert_decodes_the_corpus(
    names: &[&str],
    format: u8,
    mut codec: impl FnMut(&[u8], &mut [u8]) -> Result<(), CodecError>,
) {
    for name in names {
        let bytes = read(name);
        assert_eq!(parse(&bytes).codec, format, "{name}: another codec");
        let (raw, coded) = decode(&bytes, &mut codec);
        assert!(coded > 0, "{name}: no compressed streams");
        assert_eq!(raw.len(), 4_000_000, "{name}");
        assert_eq!(sha256_hex(&raw), CORPUS_SHA256, "{name}");
    }
}

pub fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
