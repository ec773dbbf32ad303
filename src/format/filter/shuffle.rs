//! Byte unshuffle: the inverse of Blosc's SHUFFLE filter (filter id 1).
//!
//! The encoder splits a block of `n = len / typesize` elements into
//! `typesize` byte planes: plane `j` holds byte `j` of every element, in
//! element order. Decoding interleaves the planes again, so byte `j` of
//! element `i` is read from `src[j * n + i]`. The `len % typesize` bytes that
//! do not fill a whole element sit at the end of the block and are copied
//! unchanged; a typesize of 1 is a plain copy.
//!
//! This is on the hot path of every shuffled block, so there are three
//! implementations of the same transpose:
//! - a safe portable one that moves eight elements at a time through 8x8 byte
//!   transposes held in `u64`s (any typesize);
//! - SSE2 and AVX2 kernels for typesizes 2, 4, 8 and 16, chosen once per
//!   process from the CPU's features.
//!
//! The SIMD kernels only handle whole groups of 16 (SSE2) or 32 (AVX2)
//! elements; the portable code finishes the rest. Tests prove every kernel
//! byte-identical to the portable code.

use std::sync::OnceLock;

/// Which implementation the dispatcher uses; chosen once per process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    Portable,
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    Sse2,
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    Avx2,
}

/// The best implementation this CPU supports, detected on first use.
pub(crate) fn detected_level() -> Level {
    static LEVEL: OnceLock<Level> = OnceLock::new();
    *LEVEL.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                return Level::Avx2;
            }
            if std::arch::is_x86_feature_detected!("sse2") {
                return Level::Sse2;
            }
        }
        Level::Portable
    })
}

/// Undo Blosc's byte shuffle of one block.
///
/// `src` is the shuffled block, `dst` receives the element-ordered block; both
/// must have the same length (the block's size in bytes). A `typesize` of 0 or
/// 1 copies the block. Trailing `len % typesize` bytes are copied unchanged,
/// as C-Blosc2 does.
///
/// # Panics
/// If `src.len() != dst.len()`.
pub fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    unshuffle_at(detected_level(), typesize, src, dst);
}

/// [`unshuffle`] with an explicit implementation (tests and benchmarks use
/// this to compare them). A level the CPU lacks falls back to the portable
/// code rather than faulting.
pub(crate) fn unshuffle_at(level: Level, typesize: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(
        src.len(),
        dst.len(),
        "unshuffle: source and destination lengths differ"
    );
    let n = if typesize > 1 {
        src.len() / typesize
    } else {
        0
    };
    if n == 0 {
        dst.copy_from_slice(src);
        return;
    }
    let body = n * typesize;
    dst[body..].copy_from_slice(&src[body..]);
    let planes: Vec<&[u8]> = src[..body].chunks_exact(n).collect();
    interleave_at(level, &planes, &mut dst[..body]);
}

/// Undo Blosc's byte shuffle of one block whose byte planes are not back to
/// back: `planes[j]` holds byte `j` of every element (a split block's
/// streams, some decoded into a scratch buffer, some stored raw and used
/// where they lie). `dst` receives `planes.len() * n` bytes, `n` being the
/// planes' common length.
///
/// # Panics
/// If the planes differ in length or `dst` is not exactly their total.
pub fn unshuffle_planes(planes: &[&[u8]], dst: &mut [u8]) {
    interleave_at(detected_level(), planes, dst);
}

/// Interleave `planes` (at least one, all `n` bytes) into `dst`
/// (`planes.len() * n` bytes) with the implementation `level`.
fn interleave_at(level: Level, planes: &[&[u8]], dst: &mut [u8]) {
    let typesize = planes.len();
    let n = planes.first().map_or(0, |p| p.len());
    assert!(
        planes.iter().all(|p| p.len() == n),
        "unshuffle: planes differ in length"
    );
    assert_eq!(
        dst.len(),
        typesize * n,
        "unshuffle: destination is not the planes' total length"
    );
    if typesize == 1 {
        dst.copy_from_slice(planes[0]);
        return;
    }
    let done = match level {
        Level::Portable => 0,
        #[cfg(target_arch = "x86_64")]
        Level::Sse2 if detected_level() != Level::Portable => x86::unshuffle_sse2(planes, n, dst),
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 if detected_level() == Level::Avx2 => x86::unshuffle_avx2(planes, n, dst),
        _ => 0,
    };
    unshuffle_portable(planes, n, done, dst);
}

/// Transpose an 8x8 byte matrix held as eight little-endian rows: afterwards
/// byte `c` of `rows[r]` is what byte `r` of `rows[c]` was.
#[inline(always)]
pub(crate) fn transpose8x8(rows: &mut [u64; 8]) {
    // Swap the off-diagonal halves of 2x2, then 4x4 (in 2x2 units), then 8x8
    // (in 4x4 units) sub-blocks.
    #[inline(always)]
    fn swap(rows: &mut [u64; 8], a: usize, b: usize, shift: u32, mask: u64) {
        let t = ((rows[a] >> shift) ^ rows[b]) & mask;
        rows[b] ^= t;
        rows[a] ^= t << shift;
    }
    for r in [0, 2, 4, 6] {
        swap(rows, r, r + 1, 8, 0x00FF_00FF_00FF_00FF);
    }
    for r in [0, 1, 4, 5] {
        swap(rows, r, r + 2, 16, 0x0000_FFFF_0000_FFFF);
    }
    for r in [0, 1, 2, 3] {
        swap(rows, r, r + 4, 32, 0x0000_0000_FFFF_FFFF);
    }
}

#[inline(always)]
fn read_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

#[inline(always)]
fn write_u64(bytes: &mut [u8], at: usize, value: u64) {
    bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

/// Spread the four bytes of `x` over the even bytes of a `u64`.
#[inline(always)]
fn spread_bytes(x: u32) -> u64 {
    let x = x as u64;
    let x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
    (x | (x << 8)) & 0x00FF_00FF_00FF_00FF
}

/// Safe portable unshuffle of elements `start..n` (`src` holds the
/// `typesize >= 2` planes of `n` bytes, `dst` exactly `n * typesize` bytes).
fn unshuffle_portable(src: &[&[u8]], n: usize, start: usize, dst: &mut [u8]) {
    let typesize = src.len();
    // Literal typesizes let the compiler specialise the inlined loops.
    let done = match typesize {
        2 => portable2(n, start, src, dst),
        3 => portable_tiles(3, n, start, src, dst),
        4 => portable4(n, start, src, dst),
        5 => portable_tiles(5, n, start, src, dst),
        6 => portable_tiles(6, n, start, src, dst),
        7 => portable_tiles(7, n, start, src, dst),
        8 => portable8(n, start, src, dst),
        12 => portable_tiles(12, n, start, src, dst),
        16 => portable_tiles(16, n, start, src, dst),
        _ => portable_tiles(typesize, n, start, src, dst),
    };
    // Fewer than eight elements left.
    for e in done..n {
        for j in 0..typesize {
            dst[e * typesize + j] = src[j][e];
        }
    }
}

/// Typesize 2: spread the bytes of the two planes into alternate bytes.
fn portable2(n: usize, start: usize, src: &[&[u8]], dst: &mut [u8]) -> usize {
    let mut i = start;
    while i + 8 <= n {
        let s0 = read_u64(src[0], i);
        let s1 = read_u64(src[1], i);
        let lo = spread_bytes(s0 as u32) | (spread_bytes(s1 as u32) << 8);
        let hi = spread_bytes((s0 >> 32) as u32) | (spread_bytes((s1 >> 32) as u32) << 8);
        write_u64(dst, 2 * i, lo);
        write_u64(dst, 2 * i + 8, hi);
        i += 8;
    }
    i
}

/// Typesize 4: the four planes as the top half of an 8x8 byte transpose.
fn portable4(n: usize, start: usize, src: &[&[u8]], dst: &mut [u8]) -> usize {
    let mut i = start;
    while i + 8 <= n {
        let mut rows = [
            read_u64(src[0], i),
            read_u64(src[1], i),
            read_u64(src[2], i),
            read_u64(src[3], i),
            0,
            0,
            0,
            0,
        ];
        transpose8x8(&mut rows);
        // rows[e] holds the 4 bytes of element i+e in its low half.
        let out = &mut dst[4 * i..4 * i + 32];
        for (pair, chunk) in out.chunks_exact_mut(8).enumerate() {
            let v = (rows[2 * pair] & 0xFFFF_FFFF) | (rows[2 * pair + 1] << 32);
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        i += 8;
    }
    i
}

/// Typesize 8: one 8x8 byte transpose per 8 elements.
fn portable8(n: usize, start: usize, src: &[&[u8]], dst: &mut [u8]) -> usize {
    let mut i = start;
    while i + 8 <= n {
        let mut rows = [0u64; 8];
        for (r, row) in rows.iter_mut().enumerate() {
            *row = read_u64(src[r], i);
        }
        transpose8x8(&mut rows);
        let out = &mut dst[8 * i..8 * i + 64];
        for (chunk, row) in out.chunks_exact_mut(8).zip(rows) {
            chunk.copy_from_slice(&row.to_le_bytes());
        }
        i += 8;
    }
    i
}

/// Elements per tile in the portable code: 64 bytes (one cache line) of
/// every plane are copied out at once, so no plane line is fetched twice.
const PORTABLE_TILE: usize = 64;

/// Any typesize: planes are taken 8 at a time (fewer for the last group),
/// 8x8 byte transposes turn 8 elements' bytes of a plane group into 8
/// element slices. Returns the first element not written.
#[inline(always)]
fn portable_tiles(typesize: usize, n: usize, start: usize, src: &[&[u8]], dst: &mut [u8]) -> usize {
    let mut i = start;
    while i + 8 <= n {
        let tile = if i + PORTABLE_TILE <= n {
            PORTABLE_TILE
        } else {
            8
        };
        let out = &mut dst[typesize * i..typesize * (i + tile)];
        let mut j0 = 0;
        while j0 < typesize {
            let width = (typesize - j0).min(8);
            let mut lines = [[0u8; PORTABLE_TILE]; 8];
            for (r, line) in lines.iter_mut().enumerate().take(width) {
                line[..tile].copy_from_slice(&src[j0 + r][i..i + tile]);
            }
            for sub in (0..tile).step_by(8) {
                let mut rows = [0u64; 8];
                for (row, line) in rows.iter_mut().zip(&lines).take(width) {
                    *row = read_u64(line, sub);
                }
                transpose8x8(&mut rows);
                // rows[e]'s low `width` bytes are bytes j0.. of element i+sub+e.
                let elements = &mut out[sub * typesize..(sub + 8) * typesize];
                for (element, row) in elements.chunks_exact_mut(typesize).zip(rows) {
                    let bytes = row.to_le_bytes();
                    if width == 8 {
                        element[j0..j0 + 8].copy_from_slice(&bytes);
                    } else {
                        element[j0..j0 + width].copy_from_slice(&bytes[..width]);
                    }
                }
            }
            j0 += width;
        }
        i += tile;
    }
    i
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! SSE2/AVX2 kernels. Each public function checks the slice lengths it
    //! relies on, then calls a `#[target_feature]` body whose loads and stores
    //! go through fixed-size array references taken from bounds-checked
    //! slices, so every raw pointer access is in bounds by construction.
    use std::arch::x86_64::*;

    use super::super::x86_mem::*;

    /// Reverse the low log2(`size`) bits of `j` (`size` a power of two).
    #[inline(always)]
    const fn bit_reverse(j: usize, size: usize) -> usize {
        let bits = size.trailing_zeros();
        if bits == 0 {
            0
        } else {
            j.reverse_bits() >> (usize::BITS - bits)
        }
    }

    /// Interleave 16 elements' worth of `TS` byte planes: plane `j` is in
    /// `v[bit_reverse(j)]`; on return `v[t]` holds output bytes
    /// `16t..16t+16`.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn interleave_sse2<const TS: usize>(v: &mut [__m128i; TS]) {
        // Each round merges registers `p` and `p + TS/2` into units twice as
        // wide. With the planes loaded in bit-reversed order, the byte units
        // come out in plane order and the registers in output order.
        let mut width = 1;
        while width < TS {
            let mut next = [_mm_setzero_si128(); TS];
            let half = TS / 2;
            for p in 0..half {
                let (a, b) = (v[p], v[p + half]);
                let (lo, hi) = match width {
                    1 => (_mm_unpacklo_epi8(a, b), _mm_unpackhi_epi8(a, b)),
                    2 => (_mm_unpacklo_epi16(a, b), _mm_unpackhi_epi16(a, b)),
                    4 => (_mm_unpacklo_epi32(a, b), _mm_unpackhi_epi32(a, b)),
                    _ => (_mm_unpacklo_epi64(a, b), _mm_unpackhi_epi64(a, b)),
                };
                next[2 * p] = lo;
                next[2 * p + 1] = hi;
            }
            *v = next;
            width *= 2;
        }
    }

    #[target_feature(enable = "sse2")]
    fn sse2_body<const TS: usize>(planes: &[&[u8]], n: usize, dst: &mut [u8]) -> usize {
        let src: [&[u8]; TS] = std::array::from_fn(|j| planes[j]);
        let mut i = 0;
        while i + 16 <= n {
            let mut v = [_mm_setzero_si128(); TS];
            for j in 0..TS {
                v[bit_reverse(j, TS)] = load128(at16(src[j], i));
            }
            interleave_sse2::<TS>(&mut v);
            let out = &mut dst[TS * i..TS * (i + 16)];
            for (t, r) in v.iter().enumerate() {
                store128(at16_mut(out, 16 * t), *r);
            }
            i += 16;
        }
        i
    }

    /// SSE2 unshuffle of the leading multiple of 16 elements; returns how
    /// many elements it wrote (0 for typesizes it does not handle).
    pub(super) fn unshuffle_sse2(planes: &[&[u8]], n: usize, dst: &mut [u8]) -> usize {
        assert!(planes.iter().all(|p| p.len() >= n) && dst.len() >= planes.len() * n);
        // SAFETY: SSE2 is part of the x86_64 baseline.
        unsafe {
            match planes.len() {
                2 => sse2_body::<2>(planes, n, dst),
                4 => sse2_body::<4>(planes, n, dst),
                8 => sse2_body::<8>(planes, n, dst),
                16 => sse2_body::<16>(planes, n, dst),
                _ => 0,
            }
        }
    }

    /// AVX2 version of [`interleave_sse2`], run on both 128-bit lanes at
    /// once: lane 0 handles elements `0..16`, lane 1 elements `16..32`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn interleave_avx2<const TS: usize>(v: &mut [__m256i; TS]) {
        let mut width = 1;
        while width < TS {
            let mut next = [_mm256_setzero_si256(); TS];
            let half = TS / 2;
            for p in 0..half {
                let (a, b) = (v[p], v[p + half]);
                let (lo, hi) = match width {
                    1 => (_mm256_unpacklo_epi8(a, b), _mm256_unpackhi_epi8(a, b)),
                    2 => (_mm256_unpacklo_epi16(a, b), _mm256_unpackhi_epi16(a, b)),
                    4 => (_mm256_unpacklo_epi32(a, b), _mm256_unpackhi_epi32(a, b)),
                    _ => (_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b)),
                };
                next[2 * p] = lo;
                next[2 * p + 1] = hi;
            }
            *v = next;
            width *= 2;
        }
    }

    /// Interleave 32 elements starting at `i` whose planes are in `v` (plane
    /// `j` in slot `bit_reverse(j)`) and store them.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn interleave_store<const TS: usize>(mut v: [__m256i; TS], i: usize, dst: &mut [u8]) {
        interleave_avx2::<TS>(&mut v);
        // Lane 0 of v[t] is output bytes 16t.. of the first 16 elements,
        // lane 1 the same for the next 16: pair registers to store whole
        // 32-byte runs.
        let out = &mut dst[TS * i..TS * (i + 32)];
        for u in 0..TS / 2 {
            let (a, b) = (v[2 * u], v[2 * u + 1]);
            let first = _mm256_permute2x128_si256::<0x20>(a, b);
            let second = _mm256_permute2x128_si256::<0x31>(a, b);
            store256(at32_mut(out, 32 * u), first);
            store256(at32_mut(out, 16 * TS + 32 * u), second);
        }
    }

    #[target_feature(enable = "avx2")]
    fn avx2_body<const TS: usize>(planes: &[&[u8]], n: usize, dst: &mut [u8]) -> usize {
        let src: [&[u8]; TS] = std::array::from_fn(|j| planes[j]);
        let mut i = 0;
        // With 16 planes, 64 elements per round: both halves of each plane's
        // cache line are loaded back to back, so no line is fetched twice
        // when all 16 compete for one cache set (plane stride a multiple of
        // 4 KiB, the usual case). Measured slower for fewer planes.
        while TS >= 16 && i + 64 <= n {
            let mut first = [_mm256_setzero_si256(); TS];
            let mut second = [_mm256_setzero_si256(); TS];
            for j in 0..TS {
                first[bit_reverse(j, TS)] = load256(at32(src[j], i));
                second[bit_reverse(j, TS)] = load256(at32(src[j], i + 32));
            }
            interleave_store::<TS>(first, i, dst);
            interleave_store::<TS>(second, i + 32, dst);
            i += 64;
        }
        while i + 32 <= n {
            let mut v = [_mm256_setzero_si256(); TS];
            for j in 0..TS {
                v[bit_reverse(j, TS)] = load256(at32(src[j], i));
            }
            interleave_store::<TS>(v, i, dst);
            i += 32;
        }
        i
    }

    /// AVX2 unshuffle of the leading multiple of 32 elements; returns how
    /// many elements it wrote (0 for typesizes it does not handle).
    ///
    /// Callers must have checked that the CPU supports AVX2.
    pub(super) fn unshuffle_avx2(planes: &[&[u8]], n: usize, dst: &mut [u8]) -> usize {
        assert!(planes.iter().all(|p| p.len() >= n) && dst.len() >= planes.len() * n);
        assert!(std::arch::is_x86_feature_detected!("avx2"));
        // SAFETY: AVX2 support was just checked.
        unsafe {
            match planes.len() {
                2 => avx2_body::<2>(planes, n, dst),
                4 => avx2_body::<4>(planes, n, dst),
                8 => avx2_body::<8>(planes, n, dst),
                16 => avx2_body::<16>(planes, n, dst),
                _ => 0,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Forward byte shuffle as C-Blosc2's shuffle_generic does it.
    fn shuffle(typesize: usize, src: &[u8]) -> Vec<u8> {
        let mut out = src.to_vec();
        if typesize <= 1 {
            return out;
        }
        let n = src.len() / typesize;
        for i in 0..n {
            for j in 0..typesize {
                out[j * n + i] = src[i * typesize + j];
            }
        }
        out
    }

    fn naive_unshuffle(typesize: usize, src: &[u8]) -> Vec<u8> {
        let mut out = src.to_vec();
        if typesize <= 1 {
            return out;
        }
        let n = src.len() / typesize;
        for i in 0..n {
            for j in 0..typesize {
                out[i * typesize + j] = src[j * n + i];
            }
        }
        out
    }

    /// Index of the first differing byte (or the shorter length).
    pub(crate) fn first_diff(a: &[u8], b: &[u8]) -> Option<usize> {
        if a == b {
            return None;
        }
        Some(
            a.iter()
                .zip(b)
                .position(|(x, y)| x != y)
                .unwrap_or(a.len().min(b.len())),
        )
    }

    fn assert_same(got: &[u8], want: &[u8], what: &str) {
        if let Some(at) = first_diff(got, want) {
            let end = (at + 8).min(got.len()).min(want.len());
            panic!(
                "{what}: lengths {} / {}, first difference at byte {at}: got {:?} want {:?}",
                got.len(),
                want.len(),
                &got[at.min(end)..end],
                &want[at.min(end)..end]
            );
        }
    }

    fn levels() -> Vec<Level> {
        let mut v = vec![Level::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            v.push(Level::Sse2);
            if std::arch::is_x86_feature_detected!("avx2") {
                v.push(Level::Avx2);
            }
        }
        v
    }

    fn run(level: Level, typesize: usize, src: &[u8]) -> Vec<u8> {
        let mut dst = vec![0xEEu8; src.len()];
        unshuffle_at(level, typesize, src, &mut dst);
        dst
    }

    #[test]
    fn hand_example_typesize4_with_leftover() {
        // 3 elements of 4 bytes plus 2 trailing bytes.
        let shuffled = [
            0x10, 0x20, 0x30, // byte 0 of elements 0,1,2
            0x11, 0x21, 0x31, // byte 1
            0x12, 0x22, 0x32, // byte 2
            0x13, 0x23, 0x33, // byte 3
            0xAA, 0xBB, // leftovers
        ];
        let expected = [
            0x10, 0x11, 0x12, 0x13, 0x20, 0x21, 0x22, 0x23, 0x30, 0x31, 0x32, 0x33, 0xAA, 0xBB,
        ];
        for level in levels() {
            assert_eq!(run(level, 4, &shuffled), expected, "{level:?}");
        }
        assert_eq!(shuffle(4, &expected), shuffled);
    }

    #[test]
    fn hand_example_typesize2() {
        let shuffled = [1, 2, 3, 4, 5, 6, 9];
        for level in levels() {
            assert_eq!(run(level, 2, &shuffled), [1, 4, 2, 5, 3, 6, 9], "{level:?}");
        }
    }

    #[test]
    fn typesize_one_and_zero_copy() {
        let data: Vec<u8> = (0..100).collect();
        for level in levels() {
            assert_eq!(run(level, 1, &data), data);
            assert_eq!(run(level, 0, &data), data);
        }
    }

    #[test]
    fn block_shorter_than_one_element_is_copied() {
        let data = [7u8, 8, 9];
        for level in levels() {
            assert_eq!(run(level, 8, &data), data);
        }
    }

    #[test]
    fn all_levels_match_naive_on_exhaustive_small_shapes() {
        for typesize in 1..=40 {
            for len in [
                0usize,
                1,
                15,
                16,
                31,
                32,
                33,
                63,
                64,
                65,
                100,
                257,
                511,
                512,
                1000,
                1024 + 3,
            ] {
                let len = len * typesize.max(1) / 4 + len % 7;
                let data: Vec<u8> = (0..len)
                    .map(|k| (k * 131 + 7) as u8 ^ (k >> 8) as u8)
                    .collect();
                let want = naive_unshuffle(typesize, &data);
                for level in levels() {
                    assert_same(
                        &run(level, typesize, &data),
                        &want,
                        &format!("ts {typesize} len {len} {level:?}"),
                    );
                }
            }
        }
    }

    #[test]
    fn round_trip_large_block() {
        let data: Vec<u8> = (0..262_147u32)
            .map(|k| (k.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for typesize in [2, 3, 4, 7, 8, 12, 16, 255] {
            let shuffled = shuffle(typesize, &data);
            for level in levels() {
                assert_same(
                    &run(level, typesize, &shuffled),
                    &data,
                    &format!("ts {typesize} {level:?}"),
                );
            }
        }
    }

    /// Planes living in separate buffers (offset by a varying number of
    /// bytes so no two share an alignment) interleave exactly like the same
    /// planes back to back, at every level.
    #[test]
    fn planes_apart_equal_planes_packed() {
        for typesize in [2usize, 3, 4, 8, 12, 16, 17] {
            for n in [0usize, 1, 7, 8, 31, 32, 33, 64, 65, 1000] {
                let data: Vec<u8> = (0..typesize * n).map(|i| (i * 131 + 7) as u8).collect();
                let packed = shuffle(typesize, &data);
                let owned: Vec<Vec<u8>> = (0..typesize)
                    .map(|j| {
                        let mut buf = vec![0x5Au8; j % 5];
                        buf.extend_from_slice(&packed[j * n..(j + 1) * n]);
                        buf
                    })
                    .collect();
                let planes: Vec<&[u8]> =
                    owned.iter().enumerate().map(|(j, b)| &b[j % 5..]).collect();
                for level in levels() {
                    let mut dst = vec![0xEEu8; typesize * n];
                    interleave_at(level, &planes, &mut dst);
                    assert_same(&dst, &data, &format!("ts {typesize} n {n} {level:?}"));
                }
                let mut dst = vec![0xEEu8; typesize * n];
                unshuffle_planes(&planes, &mut dst);
                assert_same(&dst, &data, &format!("ts {typesize} n {n} detected"));
            }
        }
    }

    #[test]
    #[should_panic(expected = "planes differ in length")]
    fn planes_of_different_lengths_are_refused() {
        let (a, b) = ([1u8, 2, 3], [4u8, 5]);
        unshuffle_planes(&[&a, &b], &mut [0u8; 5]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn simd_equals_portable(
            typesize in prop_oneof![1usize..=32, Just(3usize), Just(7), Just(255), Just(300)],
            data in proptest::collection::vec(any::<u8>(), 0..4000),
        ) {
            let want = run(Level::Portable, typesize, &data);
            prop_assert_eq!(first_diff(&want, &naive_unshuffle(typesize, &data)), None);
            for level in levels() {
                prop_assert_eq!(first_diff(&run(level, typesize, &data), &want), None, "{:?}", level);
            }
            prop_assert_eq!(first_diff(&run(Level::Portable, typesize, &shuffle(typesize, &data)), &data), None);
        }
    }
}
