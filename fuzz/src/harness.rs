//! The calls the fuzz targets make, shared with `tests/fuzz_regressions.rs`
//! (which includes this file with `#[path]`), so a saved crash input is
//! replayed through exactly the code that found it.
//!
//! Every function takes arbitrary bytes and must return without panicking,
//! hanging or allocating absurd amounts of memory; the library is free to
//! answer `Err` for anything it does not like. A few `assert!`s check
//! properties that must hold whatever the input (e.g. reading the same bytes
//! in one window or in several gives the same answer); a failing one is a
//! bug in the library, not in the harness.
#![allow(dead_code)]

use std::path::Path;

use blosc2fs::format::chunk::{decode_chunk, read_layout, BlockContext};
use blosc2fs::format::{codec, filter, msgpack, Flavor, Geometry, NdMeta, Region};
use blosc2fs::read::{read_uncached, Planner, View};
use blosc2fs::source::open_memory;
use blosc2fs::views::meta_json;

/// Most bytes of an array's `data` (or of one `chunks/` file) read per input.
pub const READ_BUDGET: u64 = 4 << 20;
/// Largest decoded chunk `decode_chunk` is asked for: it allocates the whole
/// chunk up front, as its callers (frame index, `.cdata` files) expect.
pub const WHOLE_CHUNK_CAP: usize = 4 << 20;
/// Largest single block decoded through `ChunkLayout::decode_block`.
pub const BLOCK_CAP: usize = 4 << 20;
/// Decoded bytes budget for the per-block pass over one chunk.
pub const BLOCKS_BUDGET: usize = 4 << 20;
/// Largest output asked of a codec.
pub const CODEC_OUT_CAP: usize = 1 << 20;

/// `frame`: open bytes as a contiguous frame and read from it.
pub fn frame(data: &[u8]) {
    let Ok(array) = open_memory(Path::new("fuzz.b2nd"), data.to_vec()) else {
        return;
    };
    let doc = meta_json::render(&array);
    let _ = doc.to_string();
    let _ = meta_json::format_name(&array);
    let _ = meta_json::codec_name(&array);
    let len = array.data_len();
    let nchunks = array.nchunks();

    // The first READ_BUDGET bytes of `data`, in one window and in three.
    let total = len.min(READ_BUDGET);
    let mut whole = vec![0u8; total as usize];
    let whole_ok = read_uncached(&array, Region::Data, 0, &mut whole).is_ok();
    let cuts = [0, total / 3, (2 * total / 3 + 1).min(total), total];
    let mut windows = vec![0u8; total as usize];
    let mut windows_ok = true;
    for w in cuts.windows(2) {
        let (a, b) = (w[0] as usize, w[1] as usize);
        if read_uncached(&array, Region::Data, a as u64, &mut windows[a..b]).is_err() {
            windows_ok = false;
        }
    }
    if whole_ok && windows_ok {
        assert!(
            whole == windows,
            "reading data in one window and in three gave different bytes"
        );
    }
    // The same window the way `blosc2fs cat` reads it: blocks used whole are
    // decoded straight into the output or scattered from scratch, not cached.
    let mut direct = Vec::new();
    if Planner::one_pass(1 << 20)
        .read_into(&array, &View::Data, 0, total, &mut direct)
        .is_ok()
        && whole_ok
    {
        assert!(
            direct == whole,
            "reading data through the cache and around it gave different bytes"
        );
    }

    // The tail of a large array, and a read straddling the end.
    if len > total {
        let n = (64 << 10).min(len);
        let mut tail = vec![0u8; n as usize];
        let _ = read_uncached(&array, Region::Data, len - n, &mut tail);
    }
    let mut straddle = vec![0u8; 32];
    let _ = read_uncached(&array, Region::Data, len.saturating_sub(16), &mut straddle);

    // `chunks/` files of the first and the last chunk.
    if nchunks > 0 {
        for c in [0, nchunks - 1] {
            if let Ok(flen) = array.region_len(Region::Chunk(c)) {
                let n = flen.min(READ_BUDGET);
                let mut out = vec![0u8; n as usize];
                let _ = read_uncached(&array, Region::Chunk(c), 0, &mut out);
            }
            if let Ok(layout) = array.read_layout(c) {
                if layout.needs_block0()
                    && layout.nblocks() > 0
                    && layout.block_range(0).len() <= BLOCK_CAP
                {
                    let mut block0 = vec![0u8; layout.block_range(0).len()];
                    let _ = array.decode_block(&layout, c, 0, None, &mut block0);
                }
            }
            let _ = array.index_special(c);
        }
    }
}

/// `chunk`: bytes as one stored chunk, decoded whole and block by block.
pub fn chunk(data: &[u8]) {
    let layout = match read_layout(data) {
        Ok(layout) => layout,
        Err(_) => {
            assert!(
                decode_chunk(data).is_err(),
                "decode_chunk accepted a chunk whose layout is unreadable"
            );
            return;
        }
    };
    let whole = if layout.nbytes() <= WHOLE_CHUNK_CAP {
        decode_chunk(data).ok()
    } else {
        None
    };

    let nblocks = layout.nblocks();
    let mut block0: Option<Vec<u8>> = None;
    let mut budget = BLOCKS_BUDGET;
    // The first blocks and the last one.
    let mut order: Vec<usize> = (0..nblocks.min(64)).collect();
    if nblocks > 64 {
        order.push(nblocks - 1);
    }
    for b in order {
        let range = layout.block_range(b);
        let bsize = range.len();
        if bsize > BLOCK_CAP || bsize > budget {
            break;
        }
        budget -= bsize;
        let src = layout.block_source_range(b);
        // Give the decoder what the chunk really has, even if that is short.
        let start = (src.start.min(data.len() as u64)) as usize;
        let end = (src.end.min(data.len() as u64)) as usize;
        let source = &data[start..end.max(start)];
        let needs0 = b > 0 && layout.needs_block0();
        if needs0 && block0.is_none() {
            break;
        }
        let mut out = vec![0u8; bsize];
        let context = BlockContext {
            block0: if needs0 { block0.as_deref() } else { None },
            blockshape: &[],
            fork: None,
        };
        let ok = layout.decode_block(b, source, &context, &mut out).is_ok();
        if ok {
            if let Some(whole) = &whole {
                assert!(
                    whole[range.clone()] == out[..],
                    "block {b} decoded alone differs from decode_chunk"
                );
            }
        }
        // A small read's window of the block, decoded in part where the
        // block allows it: the same bytes as the whole block.
        let at = bsize / 2;
        let mut part = vec![0u8; (bsize - at).min(13)];
        if let Ok(true) = layout.decode_block_part(b, source, &context, at, &mut part) {
            if ok {
                assert!(
                    part[..] == out[at..at + part.len()],
                    "block {b} decoded in part differs from the whole block"
                );
            }
        }
        if b == 0 {
            if !ok {
                break;
            }
            block0 = Some(out);
        }
    }
    let _ = layout.block_at(0);
    let _ = layout.block_at(layout.nbytes().saturating_sub(1));
}

/// `metalayer`: bytes as a b2nd / caterva metalayer and as any msgpack value.
pub fn metalayer(data: &[u8]) {
    for flavor in [Flavor::B2nd, Flavor::Caterva] {
        let Ok(meta) = NdMeta::parse(data, flavor) else {
            continue;
        };
        let _ = meta.ndim();
        for itemsize in [1u64, 8] {
            let Ok(g) = Geometry::new(&meta.shape, &meta.chunkshape, &meta.blockshape, itemsize)
            else {
                continue;
            };
            let _ = (
                g.nitems(),
                g.nbytes(),
                g.nchunks(),
                g.chunk_nbytes(),
                g.chunk_view_nbytes(),
                g.block_nbytes(),
            );
            let want = 4096u64;
            let pieces = g.pieces(0, want);
            let covered: u64 = pieces.iter().map(|p| p.len).sum();
            assert_eq!(
                covered,
                want.min(g.nbytes()),
                "pieces do not cover the requested range"
            );
            if g.nchunks() > 0 {
                let last = g.nchunks() - 1;
                let _ = g.chunk_coords(last);
                let pieces = g.chunk_view_pieces(last, 0, want);
                let covered: u64 = pieces.iter().map(|p| p.len).sum();
                assert_eq!(
                    covered,
                    want.min(g.chunk_view_nbytes()),
                    "chunk view pieces do not cover the request"
                );
            }
        }
    }
    if let Ok(value) = msgpack::parse(data, "fuzz") {
        let json = msgpack::to_json(&value);
        let _ = json.to_string();
    }
}

/// A ZFP case: codec id, meta, typesize, blockshape and the stream.
type ZfpCase<'a> = (u8, u8, usize, Vec<u64>, &'a [u8]);

/// ZFP parameters from the fuzz input: byte 0 = mode (bits 0-1: 33, 34, 35),
/// typesize (bit 2: 4 or 8) and ndim (bits 3-4: 1 to 4); byte 1 = meta;
/// bytes 2..6 = the blockshape (each 1 to 16); the rest is the stream.
fn zfp_case(rest: &[u8]) -> Option<ZfpCase<'_>> {
    if rest.len() < 6 {
        return None;
    }
    let codec_id = 33 + (rest[0] & 3) % 3;
    let typesize = if rest[0] & 4 == 0 { 4 } else { 8 };
    let ndim = 1 + ((rest[0] >> 3) & 3) as usize;
    let blockshape = rest[2..2 + ndim]
        .iter()
        .map(|&d| 1 + u64::from(d % 16))
        .collect();
    Some((codec_id, rest[1], typesize, blockshape, &rest[6..]))
}

/// `codecs`: byte 0 picks a codec or filter, bytes 1..3 the output length
/// (u16 LE; with the top bit set, the low 15 bits times 32, so up to ~1 MiB),
/// the rest is the input. ZFP (op 14) takes its parameters from the input
/// instead (see [`zfp_case`]). Bytes 240-255 pick the JPEG 2000 family
/// (op 15): then the input's first byte picks codec 36, 37, 39 or 40.
/// Bytes 224-239 pick OpenZL (op 16): then the input's first byte picks the
/// item size (1, 2, 4 or 8), and the rest is one OpenZL frame.
pub fn codecs(data: &[u8]) {
    if data.len() < 3 {
        return;
    }
    // 240-255: the JPEG 2000 family (op 15); 224-239: OpenZL (op 16);
    // below, 15 ops by remainder.
    let op = match data[0] {
        240.. => 15,
        224.. => 16,
        b => b % 15,
    };
    let raw = u16::from_le_bytes([data[1], data[2]]);
    let out_len = if raw & 0x8000 != 0 {
        ((raw & 0x7fff) as usize) << 5
    } else {
        raw as usize
    }
    .min(CODEC_OUT_CAP);
    let rest = &data[3..];
    // NDLZ (op 11): rest[0] picks the cell size (4, 8 or an invalid value); the
    // output length is the stream header's block size when that is plausible.
    let out_len = match (op, rest.get(1..10)) {
        (11, Some(h)) => {
            let dim = |a: usize| i32::from_le_bytes([h[a], h[a + 1], h[a + 2], h[a + 3]]) as i64;
            let n = dim(1) * dim(5);
            if (0..=CODEC_OUT_CAP as i64).contains(&n) && raw & 1 == 0 {
                n as usize
            } else {
                out_len
            }
        }
        _ => out_len,
    };
    // Optional dictionary: first byte of rest * 16 bytes, then the stream.
    let with_dict = |rest: &[u8]| -> (Vec<u8>, Vec<u8>) {
        if rest.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let n = (rest[0] as usize * 16).min(rest.len() - 1);
        (rest[1..1 + n].to_vec(), rest[1 + n..].to_vec())
    };
    type Decode<'a> = Box<dyn Fn(&mut [u8]) -> Result<(), codec::CodecError> + 'a>;
    let decode: Option<Decode> = match op {
        0 => Some(Box::new(move |dst: &mut [u8]| {
            codec::blosclz::decompress(rest, dst)
        })),
        1 => Some(Box::new(move |dst: &mut [u8]| {
            codec::lz4::decompress(rest, dst, &[])
        })),
        2 => Some(Box::new(move |dst: &mut [u8]| {
            codec::zlib::decompress(rest, dst)
        })),
        3 => Some(Box::new(move |dst: &mut [u8]| {
            codec::zstd::decompress(rest, dst, &[])
        })),
        4 => {
            let (dict, src) = with_dict(rest);
            Some(Box::new(move |dst: &mut [u8]| {
                codec::lz4::decompress(&src, dst, &dict)
            }))
        }
        5 => {
            let (dict, src) = with_dict(rest);
            Some(Box::new(move |dst: &mut [u8]| {
                codec::zstd::decompress(&src, dst, &dict)
            }))
        }
        11 if !rest.is_empty() => {
            let (c, src) = (rest[0], &rest[1..]);
            let cell = match c % 4 {
                0 => 4,
                1 => 8,
                _ => c,
            };
            Some(Box::new(move |dst: &mut [u8]| {
                codec::ndlz::decompress(src, dst, cell)
            }))
        }
        14 => {
            let Some((codec_id, meta, typesize, blockshape, src)) = zfp_case(rest) else {
                return;
            };
            let n = blockshape.iter().product::<u64>() as usize * typesize;
            let decode = move |dst: &mut [u8]| {
                codec::zfp::decompress(codec_id, meta, typesize, &blockshape, src, dst)
            };
            let (mut a, mut b) = (vec![0x00u8; n], vec![0xffu8; n]);
            let (ra, rb) = (decode(&mut a), decode(&mut b));
            assert_eq!(
                ra.is_ok(),
                rb.is_ok(),
                "zfp answered differently for the same input"
            );
            assert!(
                ra.is_err() || a == b,
                "zfp said Ok but left output bytes unwritten"
            );
            return;
        }
        // JPEG 2000 / HTJ2K: rest[0] picks the codec id (36, 37, 39 or 40).
        15 if !rest.is_empty() => {
            let id = [36u8, 37, 39, 40][rest[0] as usize % 4];
            let src = &rest[1..];
            Some(Box::new(move |dst: &mut [u8]| {
                codec::jpeg2000::decompress(id, src, dst)
            }))
        }
        // OpenZL: rest[0] picks the item size, the rest is the frame.
        16 if !rest.is_empty() => {
            let typesize = [1usize, 2, 4, 8][rest[0] as usize % 4];
            let src = &rest[1..];
            Some(Box::new(move |dst: &mut [u8]| {
                codec::openzl::decompress(src, dst, typesize)
            }))
        }
        _ => None,
    };
    if let Some(decode) = decode {
        // Decode twice into differently pre-filled buffers: a decoder that
        // says Ok must have written every output byte.
        let mut a = vec![0x00u8; out_len];
        let mut b = vec![0xffu8; out_len];
        let ra = decode(&mut a);
        let rb = decode(&mut b);
        assert_eq!(
            ra.is_ok(),
            rb.is_ok(),
            "codec {op} answered differently for the same input"
        );
        if ra.is_ok() {
            assert!(a == b, "codec {op} said Ok but left output bytes unwritten");
        }
        if let Err(e) = &ra {
            let _ = e.to_string();
        }
        // LZ4 decoded only up to a point: the same first bytes as the whole
        // decode where that succeeded; never a panic either way.
        if op == 1 {
            for need in [0, out_len / 3, out_len.saturating_sub(1)] {
                let mut part = vec![0x5Au8; out_len];
                if codec::lz4::decompress_prefix(rest, &mut part, &[], need).is_ok() && ra.is_ok() {
                    assert!(
                        part[..need] == a[..need],
                        "lz4 prefix of {need} bytes differs from the whole decode"
                    );
                }
            }
        }
        return;
    }
    // Filters: rest[0] = typesize / group, rest[1] = format version (bitshuffle)
    // or "no reference" flag (delta); the rest is the block.
    if rest.len() < 2 {
        return;
    }
    let typesize = rest[0] as usize;
    let body = &rest[2..];
    match op {
        6 => {
            let mut dst = vec![0u8; body.len()];
            filter::shuffle::unshuffle(typesize, body, &mut dst);
        }
        7 => {
            let mut dst = vec![0u8; body.len()];
            let _ = filter::bitshuffle::bitunshuffle(typesize, body, &mut dst, rest[1]);
        }
        8 => {
            // First half: the reference (block 0); second half (maybe one
            // byte longer than the reference): the block.
            let half = body.len() / 2;
            let (reference, block) = body.split_at(half);
            let mut block = block.to_vec();
            let reference = if rest[1] & 1 == 0 {
                Some(reference)
            } else {
                None
            };
            let _ = filter::delta::undo_delta(reference, typesize, &mut block);
        }
        9 => {
            let mut block = body.to_vec();
            let _ = filter::bytedelta::undo_bytedelta(typesize, &mut block);
        }
        10 => {
            let mut block = body.to_vec();
            let _ = filter::bytedelta::undo_bytedelta_buggy(typesize, &mut block);
        }
        _ => {
            // NDCELL (12) / NDMEAN (13): rest[1] = meta; body[0] % 9 = ndim, then
            // ndim block dimensions (each byte % 17), then the block.
            let meta = rest[1];
            let Some((&n, body)) = body.split_first() else {
                return;
            };
            let ndim = (n % 9) as usize;
            if body.len() < ndim {
                return;
            }
            let (dims, block) = body.split_at(ndim);
            let shape: Vec<u64> = dims.iter().map(|&d| (d % 17) as u64).collect();
            let mut dst = vec![0u8; block.len()];
            let undo = if op == 12 {
                filter::ndcell::undo_ndcell
            } else {
                filter::ndmean::undo_ndmean
            };
            if let Err(e) = undo(meta, &shape, typesize, block, &mut dst) {
                let _ = e.to_string();
            }
        }
    }
}

/// `zip_directory`: read bytes as a `.b2z` archive's central directory, then
/// every member's window from its local header (a window always lies inside
/// the archive), and the embed frame if there is one.
pub fn zip_directory(data: &[u8]) {
    use blosc2fs::format::byte_source::SliceSource;
    use blosc2fs::source::store::zip::{read_directory, MAX_ENTRIES};
    let src = SliceSource(data);
    let Ok(entries) = read_directory(&src) else {
        return;
    };
    assert!(entries.len() as u64 <= MAX_ENTRIES);
    for entry in entries.iter().take(1024) {
        if let Ok((start, len)) = entry.data_window(&src) {
            assert!(
                start + len <= data.len() as u64,
                "member window past the end"
            );
            if entry.name == "embed.b2e" {
                embed_frame(&data[start as usize..(start + len) as usize]);
            }
        }
    }
}

/// `embed_map`: decode bytes as an EmbedStore frame, check its embed map and
/// open every embedded value (each must lie inside the decoded data).
pub fn embed_frame(data: &[u8]) {
    use blosc2fs::source::store::{embedded_source, read_embed};
    use blosc2fs::source::MemorySource;
    let source = std::sync::Arc::new(MemorySource::new("fuzz.b2e", data.to_vec()));
    let Ok(embed) = read_embed(Path::new("fuzz.b2e"), source) else {
        return;
    };
    for (key, value) in embed.map.iter().take(256) {
        if let blosc2fs::source::store::embed::EmbedValue::Frame { .. } = value {
            let src = embedded_source(&embed, value, key)
                .expect("a checked embed entry lies inside the data");
            if let Ok(array) = blosc2fs::format::Array::from_source(Path::new(key), src) {
                let n = array.data_len().min(1 << 16);
                let mut out = vec![0u8; n as usize];
                let _ = read_uncached(&array, Region::Data, 0, &mut out);
            }
        }
    }
}

/// `expression`: compile arbitrary text as a lazy expression against a few
/// operands of assorted dtypes, byte orders and shapes (broadcasting), and
/// evaluate the whole result and a region the first byte picks. Compiling
/// may refuse anything; evaluating a compiled program with inputs of the
/// right lengths must succeed, and with a wrong length must fail cleanly.
pub fn expression(data: &[u8]) {
    use blosc2fs::compute::{OperandInfo, Program};
    let Some((&pick, text)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(text);
    let op = |name: &str, dtype: &str, shape: &[u64]| {
        (
            name.to_string(),
            OperandInfo {
                dtype_str: dtype.to_string(),
                shape: shape.to_vec(),
            },
        )
    };
    let operands = [
        op("a", "<f8", &[4, 3]),
        op("b", ">i2", &[3]),
        op("c", "|b1", &[4, 1]),
        op("d", "<c8", &[1, 3]),
        op("e", "<u8", &[]),
        op("f", ">f4", &[4, 3]),
        op("g", "|i1", &[1]),
        op("s", "<U4", &[3]),
    ];
    let Ok(program) = Program::compile(&text, &operands) else {
        return;
    };
    let shape = program.shape().to_vec();
    assert!(
        shape.iter().product::<u64>() <= 12,
        "{text:?}: shape {shape:?}"
    );
    // The whole result, then [pick % dim, ...) to the end on each axis.
    let start_sub: Vec<u64> = shape
        .iter()
        .map(|&d| if d == 0 { 0 } else { pick as u64 % d })
        .collect();
    for start in [vec![0; shape.len()], start_sub] {
        let sub: Vec<u64> = shape.iter().zip(&start).map(|(d, s)| d - s).collect();
        let inputs: Vec<Vec<u8>> = (0..program.operands().len())
            .map(|i| {
                let name = &program.operands()[i];
                let info = &operands.iter().find(|(n, _)| n == name).unwrap().1;
                let item = blosc2fs::compute::DType::parse(&info.dtype_str)
                    .unwrap()
                    .0
                    .itemsize();
                let (_, oshape) = program.operand_region(i, &start, &sub);
                let n = oshape.iter().product::<u64>() as usize * item;
                // Deterministic bytes from the input: NaNs, huge and tiny
                // values, zero divisors all come up.
                (0..n)
                    .map(|k| data[k % data.len()].wrapping_mul(k as u8 | 1))
                    .collect()
            })
            .collect();
        let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        let n = sub.iter().product::<u64>() as usize;
        let mut out = vec![0u8; n * program.dtype().itemsize()];
        let r = program.evaluate(&start, &sub, &refs, &mut out);
        assert!(r.is_ok(), "{text:?} over {start:?}+{sub:?}: {r:?}");
        if let Some(first) = inputs.first().filter(|b| !b.is_empty()) {
            let mut short = refs.clone();
            short[0] = &first[1..];
            assert!(program.evaluate(&start, &sub, &short, &mut out).is_err());
        }
    }
}

/// `listing`: bytes as a store's listing answer (S3/GCS and Azure XML):
/// cleaning it never panics, shortens it when it takes entries out, and
/// says why each one went.
pub fn listing(data: &[u8]) {
    use blosc2fs::source::listing_filter::{filter_listing, key_problem, unescape, Dialect};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for dialect in [Dialect::S3, Dialect::Azure] {
        if let Some((kept, skipped)) = filter_listing(text, dialect) {
            assert!(kept.len() < text.len(), "cleaning removes text");
            assert!(!skipped.is_empty());
            for skip in &skipped {
                assert_eq!(key_problem(&skip.key), Some(skip.problem));
            }
        }
    }
    let _ = key_problem(&unescape(text));
}
