//! Bit unshuffle: the inverse of Blosc's BITSHUFFLE filter (filter id 2).
//!
//! For a block of `n` elements of `typesize` bytes (n a multiple of 8), the
//! encoder writes `8 * typesize` bit planes of `n / 8` bytes each. Plane
//! `r = 8 * j + k` collects bit `k` of byte `j` of every element: bit `e % 8`
//! of its byte `e / 8` is that bit of element `e`. Decoding puts every bit
//! back, so bit `k` of byte `j` of element `e` comes from bit `e % 8` of
//! `src[(8 * j + k) * (n / 8) + e / 8]`.
//!
//! How much of a block is bit-shuffled depends on the chunk's format version
//! (header byte 0), exactly as C-Blosc2's `bitunshuffle` decides:
//! - version 2 (the Blosc1 format): if the element count is a multiple of 8
//!   the whole `n * typesize` bytes are unshuffled; otherwise the whole
//!   block was stored unshuffled and is copied. In the first case the
//!   `len % typesize` trailing bytes are undefined: Blosc1 encoders never
//!   wrote them and C-Blosc2 never writes them either (its output keeps
//!   whatever its destination buffer held). We copy them from `src`, so the
//!   result is at least deterministic;
//! - every other version: the first `n - n % 8` elements are unshuffled and
//!   the remaining bytes (whole leftover elements and the partial one) are
//!   copied unchanged.
//!
//! Decoding runs in two steps over tiles of the block:
//! 1. the 8 bit planes of byte `j` are turned back into the byte plane `j`
//!    (byte `j` of every element, in element order): an 8x8 bit transpose
//!    per plane column, done with shift-and-mask swaps on 64-bit words
//!    (portable) or 256-bit registers (AVX2);
//! 2. the byte planes are interleaved into elements with the byte
//!    [`unshuffle`](super::shuffle::unshuffle) kernels (a typesize of 1 skips
//!    this step).
//!
//! So a bit-shuffled block is a byte-shuffled block whose planes are
//! additionally bit-transposed in groups of 8 bytes, which is also how
//! C-Blosc2's encoder builds it. Tests prove the AVX2 code byte-identical to
//! the portable code and both equal to a bit-by-bit reference.

use super::shuffle::{detected_level, transpose8x8, unshuffle_at, Level};
use super::FilterError;

/// Undo Blosc's bit shuffle of one block of `src.len()` bytes.
///
/// `format_version` is byte 0 of the chunk header (see the module docs for
/// why it matters). A `typesize` of 0 is rejected; `dst` must be as long as
/// `src`.
pub fn bitunshuffle(
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
    format_version: u8,
) -> Result<(), FilterError> {
    bitunshuffle_at(detected_level(), typesize, src, dst, format_version)
}

/// [`bitunshuffle`] with an explicit implementation, for tests and
/// benchmarks. `Level::Sse2` uses the portable code.
pub(crate) fn bitunshuffle_at(
    level: Level,
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
    format_version: u8,
) -> Result<(), FilterError> {
    if src.len() != dst.len() {
        return Err(FilterError::LengthMismatch {
            src: src.len(),
            dst: dst.len(),
        });
    }
    if typesize == 0 {
        return Err(FilterError::InvalidTypesize(typesize));
    }
    let n = src.len() / typesize;
    let shuffled_elements = if format_version == 2 {
        if !n.is_multiple_of(8) {
            dst.copy_from_slice(src);
            return Ok(());
        }
        n
    } else {
        n - n % 8
    };
    let body = shuffled_elements * typesize;
    dst[body..].copy_from_slice(&src[body..]);
    untranspose_bits(level, typesize, &src[..body], &mut dst[..body]);
    Ok(())
}

/// Elements per tile: 64 columns of the bit planes (one cache line of each),
/// i.e. 512 elements; the byte planes of a tile stay in a small scratch.
const TILE_COLUMNS: usize = 64;

/// Untranspose `src` (a multiple of `8 * typesize` bytes) into `dst`.
fn untranspose_bits(level: Level, typesize: usize, src: &[u8], dst: &mut [u8]) {
    let row_len = src.len() / (8 * typesize);
    if row_len == 0 {
        return;
    }
    if typesize == 1 {
        planes_to_bytes(level, src, row_len, 0, 0, dst);
        return;
    }
    let tile = TILE_COLUMNS.min(row_len);
    let mut scratch = vec![0u8; 8 * tile * typesize];
    let mut col = 0;
    while col < row_len {
        let cols = tile.min(row_len - col);
        let elements = 8 * cols;
        let byte_planes = &mut scratch[..elements * typesize];
        for (j, plane) in byte_planes.chunks_exact_mut(elements).enumerate() {
            planes_to_bytes(level, src, row_len, j, col, plane);
        }
        let out = &mut dst[8 * col * typesize..8 * (col + cols) * typesize];
        unshuffle_at(level, typesize, byte_planes, out);
        col += cols;
    }
}

/// Rebuild `out.len() / 8` columns, from `col` on, of byte plane `j` from
/// its 8 bit planes (`src` rows `8j..8j+8`, each `row_len` bytes long):
/// bit `k` of `out[8c + m]` is bit `m` of row `8j + k`'s byte `col + c`.
fn planes_to_bytes(level: Level, src: &[u8], row_len: usize, j: usize, col: usize, out: &mut [u8]) {
    let columns = out.len() / 8;
    let done = match level {
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 if detected_level() == Level::Avx2 => {
            x86::planes_to_bytes_avx2(src, row_len, j, col, out)
        }
        _ => 0,
    };
    let mut c = done;
    while c + 8 <= columns {
        // 8 columns per u64; byte q of words[k] is row 8j+k, column col+c+q.
        let mut words = [0u64; 8];
        for (k, word) in words.iter_mut().enumerate() {
            *word = read_u64(src, (8 * j + k) * row_len + col + c);
        }
        transpose_bits_across(&mut words);
        // Byte q of words[m] is now out[8(c+q) + m]: regroup by column.
        transpose8x8(&mut words);
        for (q, word) in words.iter().enumerate() {
            out[8 * (c + q)..8 * (c + q) + 8].copy_from_slice(&word.to_le_bytes());
        }
        c += 8;
    }
    for c in c..columns {
        let mut x = 0u64;
        for k in 0..8 {
            x |= (src[(8 * j + k) * row_len + col + c] as u64) << (8 * k);
        }
        out[8 * c..8 * c + 8].copy_from_slice(&transpose_bits8x8(x).to_le_bytes());
    }
}

/// Transpose the 8x8 bit matrices spread across eight words: for every byte
/// position, bit `m` of that byte of `rows[k]` moves to bit `k` of that byte
/// of `rows[m]`.
#[inline(always)]
fn transpose_bits_across(rows: &mut [u64; 8]) {
    // Swap the off-diagonal halves of 2x2, 4x4, then 8x8 blocks; masks keep
    // bits inside their byte so the shifts never mix neighbouring bytes.
    #[inline(always)]
    fn swap(rows: &mut [u64; 8], a: usize, shift: u32, mask: u64) {
        let b = a + shift as usize;
        let t = ((rows[a] >> shift) ^ rows[b]) & mask;
        rows[b] ^= t;
        rows[a] ^= t << shift;
    }
    for a in [0, 2, 4, 6] {
        swap(rows, a, 1, 0x5555_5555_5555_5555);
    }
    for a in [0, 1, 4, 5] {
        swap(rows, a, 2, 0x3333_3333_3333_3333);
    }
    for a in [0, 1, 2, 3] {
        swap(rows, a, 4, 0x0F0F_0F0F_0F0F_0F0F);
    }
}

/// Transpose the 8x8 bit matrix held in `x`: bit `m` of byte `k` moves to
/// bit `k` of byte `m`.
#[inline(always)]
fn transpose_bits8x8(mut x: u64) -> u64 {
    // Same block swaps within one word: a row is 8 bits apart, a column 1.
    let t = (x ^ (x >> 7)) & 0x00AA_00AA_00AA_00AA;
    x ^= t ^ (t << 7);
    let t = (x ^ (x >> 14)) & 0x0000_CCCC_0000_CCCC;
    x ^= t ^ (t << 14);
    let t = (x ^ (x >> 28)) & 0x0000_0000_F0F0_F0F0;
    x ^ t ^ (t << 28)
}

#[inline(always)]
fn read_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! AVX2 version of the bit-plane step: 32 columns (256 output bytes) per
    //! round, the 8 bit planes in 8 registers. The public function checks
    //! the lengths; every load and store goes through a fixed-size array
    //! reference cut from a bounds-checked slice.
    use std::arch::x86_64::*;

    use super::super::x86_mem::*;

    /// One swap step of the bit transpose across registers `a` and `a + S`
    /// (see `transpose_bits_across`); 16-bit shifts are fine because the
    /// masks drop every bit that crosses a byte.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn swap<const S: i32>(v: &mut [__m256i; 8], a: usize, mask: __m256i) {
        let b = a + S as usize;
        let t = _mm256_and_si256(_mm256_xor_si256(_mm256_srli_epi16::<S>(v[a]), v[b]), mask);
        v[b] = _mm256_xor_si256(v[b], t);
        v[a] = _mm256_xor_si256(v[a], _mm256_slli_epi16::<S>(t));
    }

    #[target_feature(enable = "avx2")]
    fn body(src: &[u8], row_len: usize, j: usize, col: usize, out: &mut [u8]) -> usize {
        let columns = out.len() / 8;
        let m1 = _mm256_set1_epi8(0x55);
        let m2 = _mm256_set1_epi8(0x33);
        let m4 = _mm256_set1_epi8(0x0F);
        // Byte order for the final interleave: plane slot for bitrev3(m).
        const BITREV3: [usize; 8] = [0, 4, 2, 6, 1, 5, 3, 7];
        let mut c = 0;
        while c + 32 <= columns {
            let mut v = [_mm256_setzero_si256(); 8];
            for (k, reg) in v.iter_mut().enumerate() {
                *reg = load256(at32(src, (8 * j + k) * row_len + col + c));
            }
            for a in [0, 2, 4, 6] {
                swap::<1>(&mut v, a, m1);
            }
            for a in [0, 1, 4, 5] {
                swap::<2>(&mut v, a, m2);
            }
            for a in [0, 1, 2, 3] {
                swap::<4>(&mut v, a, m4);
            }
            // v[m] byte q is out[8(c+q) + m]: interleave the 8 registers
            // bytewise (three unpack rounds on bit-reversed slots).
            let mut w = [_mm256_setzero_si256(); 8];
            for m in 0..8 {
                w[BITREV3[m]] = v[m];
            }
            for p in 0..4 {
                v[2 * p] = _mm256_unpacklo_epi8(w[p], w[p + 4]);
                v[2 * p + 1] = _mm256_unpackhi_epi8(w[p], w[p + 4]);
            }
            for p in 0..4 {
                w[2 * p] = _mm256_unpacklo_epi16(v[p], v[p + 4]);
                w[2 * p + 1] = _mm256_unpackhi_epi16(v[p], v[p + 4]);
            }
            for p in 0..4 {
                v[2 * p] = _mm256_unpacklo_epi32(w[p], w[p + 4]);
                v[2 * p + 1] = _mm256_unpackhi_epi32(w[p], w[p + 4]);
            }
            // v[t]: low lane = output bytes 16t.. of columns 0..16, high
            // lane = the same for columns 16..32.
            let chunk = &mut out[8 * c..8 * c + 256];
            for u in 0..4 {
                let first = _mm256_permute2x128_si256::<0x20>(v[2 * u], v[2 * u + 1]);
                let second = _mm256_permute2x128_si256::<0x31>(v[2 * u], v[2 * u + 1]);
                store256(at32_mut(chunk, 32 * u), first);
                store256(at32_mut(chunk, 128 + 32 * u), second);
            }
            c += 32;
        }
        c
    }

    /// AVX2 bit-plane step for the leading multiple of 32 columns; returns
    /// how many columns it wrote. Callers must have checked AVX2 support.
    pub(super) fn planes_to_bytes_avx2(
        src: &[u8],
        row_len: usize,
        j: usize,
        col: usize,
        out: &mut [u8],
    ) -> usize {
        let columns = out.len() / 8;
        assert!(col + columns <= row_len && (8 * j + 8) * row_len <= src.len());
        assert!(std::arch::is_x86_feature_detected!("avx2"));
        // SAFETY: AVX2 support was just checked.
        unsafe { body(src, row_len, j, col, out) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Forward bit transpose of `n` elements (n a multiple of 8), built like
    /// C-Blosc2's bshuf_trans_bit_elem_scal: byte transpose, bit transpose
    /// of each 8-byte word into eight row streams, then regroup the rows.
    fn trans_bit_elem(typesize: usize, n: usize, src: &[u8]) -> Vec<u8> {
        assert_eq!(n % 8, 0);
        let nbyte = n * typesize;
        // 1. bytes: out[j * n + i] = in[i * typesize + j]
        let mut by_byte = vec![0u8; nbyte];
        for i in 0..n {
            for j in 0..typesize {
                by_byte[j * n + i] = src[i * typesize + j];
            }
        }
        // 2. bits within each 8-byte word: bit b of byte q of word w goes to
        //    bit q of byte w of row b, rows nbyte/8 bytes long.
        let row = nbyte / 8;
        let mut rows = vec![0u8; nbyte];
        for w in 0..row {
            for q in 0..8 {
                for b in 0..8 {
                    let bit = (by_byte[8 * w + q] >> b) & 1;
                    rows[b * row + w] |= bit << q;
                }
            }
        }
        // 3. regroup: view as 8 x typesize blocks of n/8 bytes, transpose.
        let blk = n / 8;
        let mut out = vec![0u8; nbyte];
        for b in 0..8 {
            for j in 0..typesize {
                let from = (b * typesize + j) * blk;
                let to = (j * 8 + b) * blk;
                out[to..to + blk].copy_from_slice(&rows[from..from + blk]);
            }
        }
        out
    }

    /// C-Blosc2's encoder (blosc2_bitshuffle, used with format >= 3).
    fn bitshuffle_v3(typesize: usize, src: &[u8]) -> Vec<u8> {
        let n = src.len() / typesize;
        let n = n - n % 8;
        let mut out = trans_bit_elem(typesize, n, &src[..n * typesize]);
        out.extend_from_slice(&src[n * typesize..]);
        out
    }

    /// Blosc1's encoder (format 2): whole block or nothing; bytes past the
    /// last whole element were never written (we put 0x5A there).
    fn bitshuffle_v2(typesize: usize, src: &[u8]) -> Vec<u8> {
        let n = src.len() / typesize;
        if !n.is_multiple_of(8) {
            return src.to_vec();
        }
        let mut out = trans_bit_elem(typesize, n, &src[..n * typesize]);
        out.resize(src.len(), 0x5A);
        out
    }

    /// The decoding rule straight from its definition, bit by bit.
    fn naive_untranspose(typesize: usize, src: &[u8]) -> Vec<u8> {
        let n = src.len() / typesize;
        assert_eq!(n % 8, 0);
        let row_len = n / 8;
        let mut out = vec![0u8; src.len()];
        for e in 0..n {
            for j in 0..typesize {
                for k in 0..8 {
                    let bit = (src[(8 * j + k) * row_len + e / 8] >> (e % 8)) & 1;
                    out[e * typesize + j] |= bit << k;
                }
            }
        }
        out
    }

    fn levels() -> Vec<Level> {
        let mut v = vec![Level::Portable];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            v.push(Level::Avx2);
        }
        v
    }

    fn run(level: Level, typesize: usize, src: &[u8], version: u8) -> Vec<u8> {
        let mut dst = vec![0xEEu8; src.len()];
        bitunshuffle_at(level, typesize, src, &mut dst, version).unwrap();
        dst
    }

    fn first_diff(a: &[u8], b: &[u8]) -> Option<usize> {
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

    #[test]
    fn transpose_bits_moves_each_bit() {
        for k in 0..8 {
            for m in 0..8 {
                let x = 1u64 << (8 * k + m);
                assert_eq!(
                    transpose_bits8x8(x),
                    1u64 << (8 * m + k),
                    "byte {k} bit {m}"
                );
            }
        }
    }

    #[test]
    fn hand_example_typesize1() {
        // Element 0 = 0x80 (bit 7 -> plane 7, bit 0), element 2 = 0x01
        // (bit 0 -> plane 0, bit 2).
        let src = [0x04, 0, 0, 0, 0, 0, 0, 0x01];
        let want = [0x80, 0, 0x01, 0, 0, 0, 0, 0];
        for level in levels() {
            for version in [2, 3, 5] {
                assert_eq!(run(level, 1, &src, version), want);
            }
        }
        assert_eq!(bitshuffle_v3(1, &want), src);
    }

    #[test]
    fn hand_example_typesize2_with_leftover() {
        // 9 elements of 2 bytes + 1 byte: 8 elements are transposed in
        // format >= 3, the 9th element and the odd byte are copied.
        let mut src = vec![0u8; 19];
        src[8] = 0x20; // plane 8 = byte 1 bit 0; bit 5 = element 5
        src[1] = 0x01; // plane 1 = byte 0 bit 1; bit 0 = element 0
        src[16] = 0xAB;
        src[17] = 0xCD;
        src[18] = 0xEF;
        let mut want = vec![0u8; 19];
        want[0] = 0x02; // element 0, byte 0, bit 1
        want[11] = 0x01; // element 5, byte 1, bit 0
        want[16..].copy_from_slice(&[0xAB, 0xCD, 0xEF]);
        for level in levels() {
            assert_eq!(run(level, 2, &src, 3), want);
            // Format 2: 9 elements is not a multiple of 8, all is copied.
            assert_eq!(run(level, 2, &src, 2), src);
        }
        assert_eq!(bitshuffle_v3(2, &want), src);
    }

    #[test]
    fn format2_copies_partial_element() {
        // 8 elements of 4 bytes + 3 bytes: format 2 transposes the 32 bytes;
        // the 3 bytes were never written by the encoder (0x5A here) and are
        // copied. Format 3 copies the original 3 bytes.
        let data: Vec<u8> = (0..35u8).map(|b| b.wrapping_mul(37)).collect();
        let enc = bitshuffle_v2(4, &data);
        for level in levels() {
            let got = run(level, 4, &enc, 2);
            assert_eq!(&got[..32], &data[..32]);
            assert_eq!(&got[32..], &[0x5A; 3]);
            let got3 = run(level, 4, &bitshuffle_v3(4, &data), 3);
            assert_eq!(got3, data);
        }
    }

    #[test]
    fn fewer_than_eight_elements_are_copied() {
        let data: Vec<u8> = (0..14).collect(); // 3 elements of 4 + 2 bytes
        for level in levels() {
            for version in [2, 3, 4] {
                assert_eq!(run(level, 4, &data, version), data);
            }
        }
    }

    #[test]
    fn errors() {
        let mut dst = [0u8; 4];
        assert_eq!(
            bitunshuffle(4, &[0u8; 8], &mut dst, 3),
            Err(FilterError::LengthMismatch { src: 8, dst: 4 })
        );
        assert_eq!(
            bitunshuffle(0, &[0u8; 4], &mut dst, 3),
            Err(FilterError::InvalidTypesize(0))
        );
    }

    #[test]
    fn exhaustive_small_shapes_match_naive() {
        for typesize in 1..=20 {
            for n in [8usize, 16, 248, 256, 264, 512, 520, 1024 + 64] {
                let len = n * typesize;
                let data: Vec<u8> = (0..len).map(|k| ((k * 151 + 3) ^ (k >> 7)) as u8).collect();
                let want = naive_untranspose(typesize, &data);
                for level in levels() {
                    let got = run(level, typesize, &data, 3);
                    assert_eq!(
                        first_diff(&got, &want),
                        None,
                        "ts {typesize} n {n} {level:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn round_trip_256k_blocks() {
        let data: Vec<u8> = (0..262_144u32 + 13)
            .map(|k| (k.wrapping_mul(2_654_435_761) >> 15) as u8)
            .collect();
        for typesize in [1, 2, 3, 4, 8, 16, 255] {
            let enc = bitshuffle_v3(typesize, &data);
            for level in levels() {
                assert_eq!(
                    first_diff(&run(level, typesize, &enc, 5), &data),
                    None,
                    "ts {typesize} {level:?}"
                );
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn avx2_equals_portable_and_round_trips(
            typesize in prop_oneof![1usize..=32, Just(3usize), Just(7), Just(255), Just(300)],
            elements in 0usize..700,
            extra in 0usize..40,
            seed in any::<u64>(),
            version in prop_oneof![Just(2u8), Just(3u8), Just(5u8), Just(6u8)],
        ) {
            let len = elements * typesize + extra % typesize.max(1) + if extra >= 20 { typesize } else { 0 };
            let mut rng = crate::test_rng::Rng::new(seed);
            let data: Vec<u8> = (0..len).map(|_| (rng.next_u64() >> 24) as u8).collect();
            let want = run(Level::Portable, typesize, &data, version);
            for level in levels() {
                prop_assert_eq!(first_diff(&run(level, typesize, &data, version), &want), None, "{:?}", level);
            }
            // Round trips with the matching encoder.
            if version >= 3 {
                let enc = bitshuffle_v3(typesize, &data);
                prop_assert_eq!(first_diff(&run(Level::Portable, typesize, &enc, version), &data), None);
            } else {
                let enc = bitshuffle_v2(typesize, &data);
                let got = run(Level::Portable, typesize, &enc, 2);
                let body = if (len / typesize) % 8 == 0 { len / typesize * typesize } else { len };
                prop_assert_eq!(first_diff(&got[..body], &data[..body]), None);
            }
        }
    }
}
