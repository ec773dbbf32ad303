//! LZ4 *block* decoder (the raw block format, no frame), used for Blosc's
//! `lz4` and `lz4hc` streams.
//!
//! A block is a sequence of "sequences". Each one starts with a token byte:
//! the high nibble is the literal count, the low nibble the match length
//! minus 4. A nibble of 15 means the count continues in following bytes, each
//! added to it, until a byte other than 255. After the literals come a 2-byte
//! little-endian match offset (distance back from the write position, never
//! 0) and the extra match-length bytes. The last sequence of a block is
//! literals only: the block simply ends after them.
//!
//! With a dictionary, offsets that reach before the start of the output read
//! from the tail of the dictionary instead, as if the dictionary immediately
//! preceded the output.
//!
//! Speed: Blosc streams are dominated by short literal runs, short matches
//! and long matches with tiny offsets (runs left by the shuffle filter).
//! While the output has room to spare, the decoder therefore copies in fixed
//! 16-byte pieces that may write a little past the current sequence (those
//! bytes are overwritten later), and expands matches with offsets below 16
//! from a 16-byte pattern instead of byte by byte. Near the end of the output
//! it falls back to exact copies.

use super::CodecError;

const CODEC: &str = "lz4";

/// Fixed copy size of the fast paths.
const CHUNK: usize = 16;
/// Output room a fast-path match needs beyond its own end (chunked copies
/// overshoot by less than one chunk).
const MATCH_SLACK: usize = CHUNK;
/// The same, for other decoders of this folder.
pub(super) const FAST_SLACK: usize = MATCH_SLACK;
/// Matches longer than this use the exact copy strategies (memmove, memset,
/// doubling memmove) rather than 16-byte steps.
const LONG_MATCH: usize = 96;
/// The same for periods 2..=15, where 16-byte pattern stores stay ahead of
/// doubling memmoves for longer.
const LONG_PERIODIC: usize = 512;

#[inline]
fn truncated() -> CodecError {
    CodecError::Truncated { codec: CODEC }
}

#[inline]
fn overflow(expected: usize, got: usize) -> CodecError {
    CodecError::WrongLength {
        codec: CODEC,
        expected,
        got,
    }
}

/// Read the continuation bytes of a length whose nibble was 15.
#[inline]
fn read_extra_length(src: &[u8], ip: &mut usize) -> Result<usize, CodecError> {
    let mut total: usize = 0;
    loop {
        let b = *src.get(*ip).ok_or_else(truncated)?;
        *ip += 1;
        total = total.saturating_add(b as usize);
        if b != 255 {
            return Ok(total);
        }
    }
}

/// Copy `len` bytes that start `distance` bytes behind `op` to `op`, with LZ77
/// semantics (when `distance < len` the source overlaps the destination and
/// the copy repeats the last `distance` bytes). Writes nothing past
/// `op + len`.
///
/// The caller guarantees `1 <= distance <= op` and `op + len <= dst.len()`.
#[inline]
pub(super) fn copy_match(dst: &mut [u8], op: usize, distance: usize, len: usize) {
    let start = op - distance;
    if distance >= len {
        dst.copy_within(start..start + len, op);
    } else if distance == 1 {
        let b = dst[start];
        dst[op..op + len].fill(b);
    } else {
        copy_periodic(dst, start, op, len);
    }
}

/// Overlapping match: `dst[start..op]` is one period of the pattern. Each
/// round copies everything written so far of the pattern (always a whole
/// number of periods) right after itself, so the copy length doubles and
/// source and destination never overlap.
#[inline(never)]
fn copy_periodic(dst: &mut [u8], start: usize, op: usize, len: usize) {
    let end = op + len;
    if len <= 32 {
        // Short: a byte loop beats several memmove calls.
        let distance = op - start;
        for i in op..end {
            dst[i] = dst[i - distance];
        }
        return;
    }
    let mut pos = op;
    while pos < end {
        let n = (pos - start).min(end - pos);
        dst.copy_within(start..start + n, pos);
        pos += n;
    }
}

/// For a period `d < 16`: the largest multiple of `d` that fits in 16.
const PATTERN_STEP: [usize; CHUNK] = {
    let mut t = [0usize; CHUNK];
    let mut d = 1;
    while d < CHUNK {
        t[d] = CHUNK - CHUNK % d;
        d += 1;
    }
    t
};

/// Fast match copy. The caller guarantees `1 <= distance <= op` and
/// `op + len + MATCH_SLACK <= dst.len()`; bytes in `op + len ..
/// op + len + MATCH_SLACK` may be overwritten with scratch.
#[inline(always)]
pub(super) fn copy_match_fast(dst: &mut [u8], op: usize, distance: usize, len: usize) {
    if len > LONG_MATCH && (distance >= CHUNK || distance == 1 || len > LONG_PERIODIC) {
        // Long: memmove, memset or doubling memmove beat 16-byte steps.
        copy_match(dst, op, distance, len);
        return;
    }
    let end = op + len;
    if distance >= CHUNK {
        // Each 16-byte piece reads only bytes that are already final.
        let mut pos = op;
        loop {
            dst.copy_within(pos - distance..pos - distance + CHUNK, pos);
            pos += CHUNK;
            if pos >= end {
                return;
            }
        }
    }
    // Offset below 16: build 16 bytes of the repeating pattern once, then
    // store it repeatedly, advancing by a whole number of periods.
    let start = op - distance;
    // (start + 16 <= op + 15 < dst.len(); bytes past `op` are masked off)
    let mut head = [0u8; CHUNK];
    head.copy_from_slice(&dst[start..start + CHUNK]);
    let bits = 8 * distance as u32; // 8..=120
    let mut pattern = u128::from_le_bytes(head) & ((1u128 << bits) - 1);
    let mut width = bits;
    while width < 128 {
        pattern |= pattern << width;
        width *= 2;
    }
    let pattern = pattern.to_le_bytes();
    let step = PATTERN_STEP[distance];
    let mut pos = op;
    while pos < end {
        dst[pos..pos + CHUNK].copy_from_slice(&pattern);
        pos += step;
    }
}

/// Decode one LZ4 block from `src` into exactly `dst.len()` bytes.
///
/// `dict` (may be empty) is the external dictionary: match offsets that reach
/// before the start of `dst` continue into its tail. Returns an error for any
/// malformed input (truncated stream, zero or out-of-range offset, output
/// shorter or longer than `dst`); never panics.
pub fn decompress(src: &[u8], dst: &mut [u8], dict: &[u8]) -> Result<(), CodecError> {
    decode(src, dst, dict, usize::MAX)
}

/// Decode at least the first `need` bytes (at most `dst.len()`) of the LZ4
/// block `src`, whose whole output is `dst.len()` bytes: decoding stops at
/// the first sequence that ends at or past `need`. The bytes of `dst` after
/// the ones decoded are unspecified. A stream that ends before `need` bytes
/// (or before `dst.len()`, when it ends within `need`) is an error, as in
/// [`decompress`]; the rest of the stream is not looked at.
pub fn decompress_prefix(
    src: &[u8],
    dst: &mut [u8],
    dict: &[u8],
    need: usize,
) -> Result<(), CodecError> {
    if need >= dst.len() {
        return decompress(src, dst, dict);
    }
    decode(src, dst, dict, need)
}

/// The decoder: stops once `stop_at` bytes are out (`usize::MAX`: decodes
/// the whole stream and checks its length).
fn decode(src: &[u8], dst: &mut [u8], dict: &[u8], stop_at: usize) -> Result<(), CodecError> {
    let dst_len = dst.len();
    let src_len = src.len();
    if src_len == 0 {
        return if dst_len == 0 {
            Ok(())
        } else {
            Err(truncated())
        };
    }
    let mut ip = 0usize;
    let mut op = 0usize;

    while ip < src_len {
        if op >= stop_at {
            return Ok(());
        }
        let token = src[ip];
        ip += 1;

        // ---- literals ----
        let lit_nibble = (token >> 4) as usize;
        if lit_nibble != 15 && ip + CHUNK <= src_len && op + CHUNK <= dst_len {
            // Copy a fixed 16 bytes; only the first `lit_nibble` count, the
            // rest is scratch that later writes overwrite.
            dst[op..op + CHUNK].copy_from_slice(&src[ip..ip + CHUNK]);
            ip += lit_nibble;
            op += lit_nibble;
        } else {
            let mut lit = lit_nibble;
            if lit == 15 {
                lit = lit.saturating_add(read_extra_length(src, &mut ip)?);
            }
            if lit > src_len - ip {
                return Err(truncated());
            }
            if lit > dst_len - op {
                return Err(overflow(dst_len, op.saturating_add(lit)));
            }
            dst[op..op + lit].copy_from_slice(&src[ip..ip + lit]);
            ip += lit;
            op += lit;
        }

        if ip == src_len {
            // The final sequence carries literals only.
            break;
        }

        // ---- match ----
        if src_len - ip < 2 {
            return Err(truncated());
        }
        let distance = u16::from_le_bytes([src[ip], src[ip + 1]]) as usize;
        ip += 2;
        if distance == 0 {
            return Err(CodecError::BadOffset {
                codec: CODEC,
                offset: 0,
            });
        }
        let ml_nibble = (token & 15) as usize;
        if ml_nibble != 15 && distance >= CHUNK && distance <= op && op + 2 * CHUNK <= dst_len {
            // Short match (4..=18 bytes) from at least 16 back: two fixed
            // 16-byte copies, the second reading what the first wrote.
            let from = op - distance;
            dst.copy_within(from..from + CHUNK, op);
            dst.copy_within(from + CHUNK..from + 2 * CHUNK, op + CHUNK);
            op += ml_nibble + 4;
            continue;
        }
        let mut mlen = ml_nibble + 4;
        if mlen == 19 {
            mlen = mlen.saturating_add(read_extra_length(src, &mut ip)?);
        }
        if distance <= op && mlen < dst_len - op && dst_len - op - mlen >= MATCH_SLACK {
            copy_match_fast(dst, op, distance, mlen);
            op += mlen;
            continue;
        }

        // Exact path: near the end of the output, or reaching into the
        // dictionary, or invalid.
        if mlen > dst_len - op {
            return Err(overflow(dst_len, op.saturating_add(mlen)));
        }
        if distance > op {
            // The match starts inside the dictionary.
            let back = distance - op; // bytes before the start of dst
            if back > dict.len() {
                return Err(CodecError::BadOffset {
                    codec: CODEC,
                    offset: distance,
                });
            }
            let from = dict.len() - back;
            let n = back.min(mlen);
            dst[op..op + n].copy_from_slice(&dict[from..from + n]);
            op += n;
            mlen -= n;
            if mlen == 0 {
                continue;
            }
            // The rest continues from the start of dst, `distance` back.
        }
        copy_match(dst, op, distance, mlen);
        op += mlen;
    }

    if op != dst_len {
        return Err(CodecError::WrongLength {
            codec: CODEC,
            expected: dst_len,
            got: op,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_chunks;
    use super::*;

    fn decode(src: &[u8], n: usize, dict: &[u8]) -> Result<Vec<u8>, CodecError> {
        let mut out = vec![0xAAu8; n];
        decompress(src, &mut out, dict).map(|()| out)
    }

    use crate::test_rng::Rng;

    fn shuffle(raw: &[u8], typesize: usize) -> Vec<u8> {
        let n = raw.len() / typesize;
        let mut out = raw.to_vec();
        for j in 0..typesize {
            for i in 0..n {
                out[j * n + i] = raw[i * typesize + j];
            }
        }
        out
    }

    /// Byte-shuffled float64 values of a slowly varying signal, the typical
    /// Blosc input: long runs in the high bytes, noise in the low ones.
    fn shuffled_f64(n: usize) -> Vec<u8> {
        let raw: Vec<u8> = (0..n)
            .flat_map(|i| {
                let x = i as f64 * 0.001;
                (20.0 + 5.0 * x.sin() + (i % 7) as f64 * 0.125).to_le_bytes()
            })
            .collect();
        shuffle(&raw, 8)
    }

    fn corpus() -> Vec<(String, Vec<u8>)> {
        let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
        let mut v: Vec<(String, Vec<u8>)> = vec![
            ("empty".into(), vec![]),
            ("one".into(), vec![7]),
            ("tiny".into(), b"abcabcabcabcab".to_vec()),
            ("random".into(), rng.bytes(100_000)),
            ("zeros".into(), vec![0; 300_000]),
            (
                "text".into(),
                "It was the best of times, it was the worst of times, it was the age of \
                 wisdom, it was the age of foolishness, "
                    .repeat(1500)
                    .into_bytes(),
            ),
            ("shuffled-f64".into(), shuffled_f64(32_768)),
        ];
        for period in [2usize, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 31, 33, 100] {
            let pat = rng.bytes(period);
            let len = 1000 + period * 37;
            v.push((
                format!("period{period}"),
                pat.iter().copied().cycle().take(len).collect(),
            ));
        }
        // runs of random lengths with random short patterns: many overlapping
        // matches of every size, interleaved with literals
        let mut mixed = Vec::new();
        while mixed.len() < 200_000 {
            let kind = rng.next_u64() % 4;
            let len = (rng.next_u64() % 300) as usize + 1;
            match kind {
                0 => mixed.extend(rng.bytes(len)),
                1 => {
                    let b = rng.next_u64() as u8;
                    mixed.extend(std::iter::repeat_n(b, len))
                }
                _ => {
                    let plen = (rng.next_u64() % 9) as usize + 2;
                    let pat = rng.bytes(plen);
                    mixed.extend(pat.iter().copied().cycle().take(len));
                }
            }
        }
        v.push(("mixed".into(), mixed));
        v
    }

    #[test]
    fn a_prefix_decodes_like_the_start_of_the_whole_stream() {
        let mut checked = 0;
        for (name, data) in corpus() {
            let src = lz4_flex::block::compress(&data);
            let n = data.len();
            for need in [
                0,
                1,
                15,
                16,
                17,
                n / 3,
                n / 2,
                n.saturating_sub(1),
                n,
                n + 5,
            ] {
                let mut out = vec![0xAAu8; n];
                decompress_prefix(&src, &mut out, &[], need)
                    .unwrap_or_else(|e| panic!("{name} need {need}: {e}"));
                let upto = need.min(n);
                assert!(out[..upto] == data[..upto], "{name}: first {upto} bytes");
                checked += 1;
            }
            // A stream cut short still fails when the prefix lies past its end.
            if n > 64 {
                let cut = &src[..src.len() / 2];
                let mut out = vec![0u8; n];
                assert!(
                    decompress_prefix(cut, &mut out, &[], n - 1).is_err(),
                    "{name}: truncated stream"
                );
            }
        }
        assert!(checked > 50);
    }

    #[test]
    fn round_trips_against_lz4_flex() {
        for (name, data) in corpus() {
            let src = lz4_flex::block::compress(&data);
            let ours = decode(&src, data.len(), &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(ours, data, "{name}");
            // and the oracle agrees on the stream
            assert_eq!(
                lz4_flex::block::decompress(&src, data.len()).unwrap(),
                data,
                "{name}"
            );
        }
    }

    #[test]
    fn hand_built_sequences() {
        // only literals: token 0x50 + 5 bytes
        assert_eq!(decode(b"\x50hello", 5, &[]).unwrap(), b"hello");
        // literal length 15 + 0 extension, and 15 + 255 + 3 extension
        let mut src = vec![0xF0, 0];
        src.extend(0u8..15);
        assert_eq!(
            decode(&src, 15, &[]).unwrap(),
            (0u8..15).collect::<Vec<_>>()
        );
        let lits: Vec<u8> = (0..273u32).map(|i| (i * 7) as u8).collect();
        let mut src = vec![0xF0, 255, 3];
        src.extend_from_slice(&lits);
        assert_eq!(decode(&src, 273, &[]).unwrap(), lits);
        // "ab" + match offset 2 of 4+15+255+1 = 275 bytes, then 1 literal
        let src = [0x2F, b'a', b'b', 2, 0, 255, 1, 0x10, b'!'];
        let mut want: Vec<u8> = b"ab".iter().copied().cycle().take(277).collect();
        want.push(b'!');
        assert_eq!(decode(&src, 278, &[]).unwrap(), want);
        // offset 1 run, minimal match length 4
        assert_eq!(
            decode(&[0x10, b'z', 1, 0, 0x10, b'.'], 6, &[]).unwrap(),
            b"zzzzz."
        );
        // a block may end right after a match (liblz4 itself never writes
        // this, we accept it)
        assert_eq!(decode(&[0x10, b'z', 1, 0], 5, &[]).unwrap(), b"zzzzz");
        // empty block: one zero token
        assert_eq!(decode(&[0x00], 0, &[]).unwrap(), b"");
    }

    /// Encode `n` with the LZ4 length extension after a nibble of 15.
    fn push_extra(src: &mut Vec<u8>, mut n: usize) {
        while n >= 255 {
            src.push(255);
            n -= 255;
        }
        src.push(n as u8);
    }

    const MATCH_LENGTHS: &[usize] = &[
        4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 18, 19, 20, 23, 31, 32, 33, 47, 48, 64, 95, 96, 97, 100,
        128, 200, 255, 300, 511, 512, 513, 1000, 4000,
    ];

    #[test]
    fn every_offset_and_many_lengths() {
        // 64 distinct literals, a match of each offset 1..=64 and many
        // lengths (on both sides of every internal threshold), then a tail
        // of literals: 1 byte (exact copies near the end of the output) or
        // 40 bytes (fast paths with room to spare). Checked against a
        // byte-by-byte reference copy.
        let lits: Vec<u8> = (0..64u8)
            .map(|i| i.wrapping_mul(37).wrapping_add(11))
            .collect();
        for offset in 1..=64usize {
            for &mlen in MATCH_LENGTHS {
                for tail in [1usize, 40] {
                    let ml_nibble = (mlen - 4).min(15) as u8;
                    let mut src = vec![0xF0 | ml_nibble];
                    push_extra(&mut src, lits.len() - 15);
                    src.extend_from_slice(&lits);
                    src.extend_from_slice(&(offset as u16).to_le_bytes());
                    if ml_nibble == 15 {
                        push_extra(&mut src, mlen - 19);
                    }
                    let tail_bytes: Vec<u8> = (0..tail as u8).map(|i| 200 ^ i).collect();
                    src.push((tail.min(15) as u8) << 4);
                    if tail >= 15 {
                        push_extra(&mut src, tail - 15);
                    }
                    src.extend_from_slice(&tail_bytes);
                    let mut want = lits.clone();
                    for _ in 0..mlen {
                        want.push(want[want.len() - offset]);
                    }
                    want.extend_from_slice(&tail_bytes);
                    let got = decode(&src, want.len(), &[]);
                    assert_eq!(
                        got.as_deref(),
                        Ok(&want[..]),
                        "offset {offset} len {mlen} tail {tail}"
                    );
                }
            }
        }
    }

    #[test]
    fn short_sequences_back_to_back() {
        // Many short sequences (the hot path) whose fixed-size copies spill
        // scratch bytes into where the next sequence writes.
        let mut rng = Rng::new(11);
        for _ in 0..200 {
            let mut src = Vec::new();
            let mut want: Vec<u8> = Vec::new();
            for _ in 0..50 {
                let lit = (rng.next_u64() % 15) as usize;
                let mlen = (rng.next_u64() % 15) as usize + 4;
                let lit_bytes = rng.bytes(lit);
                want.extend_from_slice(&lit_bytes);
                if want.is_empty() {
                    continue;
                }
                let offset = (rng.next_u64() as usize % want.len().min(40)) + 1;
                src.push(((lit as u8) << 4) | (mlen - 4) as u8);
                src.extend_from_slice(&lit_bytes);
                src.extend_from_slice(&(offset as u16).to_le_bytes());
                for _ in 0..mlen {
                    want.push(want[want.len() - offset]);
                }
            }
            src.extend_from_slice(&[0x10, 0xEE]);
            want.push(0xEE);
            assert_eq!(decode(&src, want.len(), &[]).unwrap(), want);
        }
    }

    #[test]
    fn dictionary_from_lz4_flex() {
        let mut rng = Rng::new(5);
        let dict = rng.bytes(32 * 1024);
        // data made of pieces of the dictionary, so matches reach into it
        let mut data = Vec::new();
        while data.len() < 100_000 {
            let at = (rng.next_u64() % 32_000) as usize;
            let len = (rng.next_u64() % 700) as usize + 8;
            data.extend_from_slice(&dict[at..(at + len).min(dict.len())]);
            data.extend(rng.bytes(3));
        }
        let src = lz4_flex::block::compress_with_dict(&data, &dict);
        assert!(src.len() < data.len() / 4, "the dictionary was not used");
        assert_eq!(decode(&src, data.len(), &dict).unwrap(), data);
        assert_eq!(
            lz4_flex::block::decompress_with_dict(&src, data.len(), &dict).unwrap(),
            data
        );
        // without the dictionary the same stream must be refused
        assert!(matches!(
            decode(&src, data.len(), &[]),
            Err(CodecError::BadOffset { .. })
        ));
        // with only the last 100 bytes of it too (unless they suffice)
        assert!(decode(&src, data.len(), &dict[dict.len() - 100..]).is_err());
    }

    #[test]
    fn dictionary_match_crossing_into_output() {
        let dict = b"...WXYZ";
        // 0 literals, match offset 3 length 10: "XYZ" from the dict, then
        // the copy continues from the start of the output (overlapping)
        let src = [0x06, 3, 0, 0x10, b'!'];
        assert_eq!(decode(&src, 11, dict).unwrap(), b"XYZXYZXYZX!");
        // literal "ab", then offset 5 length 6: "XYZ" (the last 3 bytes of
        // the dict), then "abX" from the output
        let src = [0x22, b'a', b'b', 5, 0, 0x10, b'!'];
        assert_eq!(decode(&src, 9, dict).unwrap(), b"abXYZabX!");
        // match lying entirely in the dictionary
        let src = [0x00, 7, 0, 0x10, b'!'];
        assert_eq!(decode(&src, 5, dict).unwrap(), b"...W!");
        // offset reaching before the dictionary
        let src = [0x00, 8, 0, 0x10, b'!'];
        assert_eq!(
            decode(&src, 5, dict),
            Err(CodecError::BadOffset {
                codec: CODEC,
                offset: 8
            })
        );
    }

    #[test]
    fn bad_offsets() {
        // offset 0
        assert_eq!(
            decode(&[0x10, b'a', 0, 0, 0x10, b'b'], 6, &[]),
            Err(CodecError::BadOffset {
                codec: CODEC,
                offset: 0
            })
        );
        // offset before the start, no dictionary; both short and long paths
        assert_eq!(
            decode(&[0x10, b'a', 2, 0, 0x10, b'b'], 6, &[]),
            Err(CodecError::BadOffset {
                codec: CODEC,
                offset: 2
            })
        );
        let mut src = vec![0xF0, 20];
        src.extend(0u8..35);
        src.extend_from_slice(&[0xFF, 0xFF, 0x10, b'b']);
        assert_eq!(
            decode(&src, 35 + 4 + 1, &[]),
            Err(CodecError::BadOffset {
                codec: CODEC,
                offset: 0xFFFF
            })
        );
    }

    #[test]
    fn wrong_lengths() {
        let data = corpus().into_iter().find(|(n, _)| n == "text").unwrap().1;
        let src = lz4_flex::block::compress(&data);
        for n in [0, 1, data.len() - 1, data.len() + 1, data.len() + 100] {
            assert!(
                matches!(decode(&src, n, &[]), Err(CodecError::WrongLength { .. })),
                "dst {n}"
            );
        }
        assert_eq!(decode(&[], 0, &[]), Ok(vec![]));
        assert_eq!(
            decode(&[], 3, &[]),
            Err(CodecError::Truncated { codec: CODEC })
        );
    }

    #[test]
    fn every_truncation_is_an_error() {
        for (name, data) in corpus() {
            let data = &data[..data.len().min(4_000)];
            let src = lz4_flex::block::compress(data);
            // (an empty input is a valid encoding of empty output)
            let first = if data.is_empty() { 1 } else { 0 };
            for cut in first..src.len() {
                assert!(
                    decode(&src[..cut], data.len(), &[]).is_err(),
                    "{name}: cut at {cut} of {}",
                    src.len()
                );
            }
        }
    }

    #[test]
    fn garbage_never_panics() {
        let mut rng = Rng::new(77);
        let dict = rng.bytes(300);
        for round in 0..30_000 {
            let n = (rng.next_u64() % 100) as usize;
            let src = rng.bytes(n);
            let dst_len = (rng.next_u64() % 2000) as usize;
            let d: &[u8] = if round % 3 == 0 { &dict } else { &[] };
            let _ = decode(&src, dst_len, d);
        }
        // mutated valid streams: flip one byte anywhere
        let data = shuffled_f64(2048);
        let src = lz4_flex::block::compress(&data);
        for i in 0..src.len() {
            let mut bad = src.clone();
            bad[i] ^= (rng.next_u64() as u8) | 1;
            let _ = decode(&bad, data.len(), &[]);
        }
    }

    /// Real LZ4 / LZ4HC chunks written by Blosc 1.3.0 .. C-Blosc2 3.0.0
    /// (liblz4's own compressor). Whole chunks must give the known bytes;
    /// for the bitshuffled ones every stream must match lz4_flex.
    #[test]
    fn real_blosc_chunks() {
        test_chunks::assert_decodes_the_corpus(
            &[
                "blosc-1.3.0-lz4.cdata",
                "blosc-1.3.0-lz4hc.cdata",
                "blosc-1.7.0-lz4.cdata",
                "blosc-1.7.0-lz4hc.cdata",
                "blosc-1.11.1-lz4.cdata",
                "blosc-1.11.1-lz4hc.cdata",
                "blosc-1.14.0-lz4.cdata",
                "blosc-1.14.0-lz4hc.cdata",
                "blosc-lz4-3.0.0.cdata",
            ],
            1,
            |s, d| decompress(s, d, &[]),
        );
        for name in [
            "blosc-1.17.1-lz4-bitshuffle4-memcpy.cdata",
            "blosc-1.17.1-lz4-bitshuffle8-nomemcpy.cdata",
            "blosc-1.18.0-lz4-bitshuffle4-memcpy.cdata",
            "blosc-1.18.0-lz4-bitshuffle8-nomemcpy.cdata",
            "blosc-2.0.0-lz4-bitshuffle4-memcpy.cdata",
            "blosc-2.0.0-lz4-bitshuffle8-nomemcpy.cdata",
        ] {
            let bytes = test_chunks::read(name);
            let mut checked = 0;
            for s in test_chunks::streams(&bytes) {
                let want = lz4_flex::block::decompress(s.data, s.raw_len).unwrap();
                assert_eq!(want.len(), s.raw_len, "{name}");
                assert_eq!(decode(s.data, s.raw_len, &[]).unwrap(), want, "{name}");
                checked += 1;
            }
            assert!(checked > 0, "{name}: no compressed streams");
        }
    }

    /// Throughput of this decoder against lz4_flex's safe decoder. Run by
    /// hand: `cargo test --release -- --ignored --nocapture lz4_throughput`.
    #[test]
    #[ignore]
    fn lz4_throughput() {
        use std::time::Instant;
        // best of many runs, alternating the two decoders (noisy machine)
        fn best_gbps(bytes: usize, mut a: impl FnMut(), mut b: impl FnMut()) -> (f64, f64) {
            let (mut best_a, mut best_b) = (f64::MAX, f64::MAX);
            for _ in 0..60 {
                let t = Instant::now();
                a();
                best_a = best_a.min(t.elapsed().as_secs_f64());
                let t = Instant::now();
                b();
                best_b = best_b.min(t.elapsed().as_secs_f64());
            }
            (bytes as f64 / best_a / 1e9, bytes as f64 / best_b / 1e9)
        }
        type Streams = Vec<(Vec<u8>, usize)>;
        let mut cases: Vec<(String, Streams)> = Vec::new();
        // synthetic: shuffled float64, 256 KiB blocks, lz4_flex compressor
        let data = shuffled_f64(8 * 1024 * 1024 / 8);
        let blocks = data
            .chunks(256 * 1024)
            .map(|b| (lz4_flex::block::compress(b), b.len()))
            .collect();
        cases.push(("shuffled f64 (lz4_flex-compressed, 8 MiB)".into(), blocks));
        // real Blosc streams (liblz4 / liblz4hc, shuffled)
        for name in [
            "blosc-lz4-3.0.0.cdata",
            "blosc-1.14.0-lz4hc.cdata",
            "blosc-1.18.0-lz4-bitshuffle8-nomemcpy.cdata",
        ] {
            let bytes = test_chunks::read(name);
            let streams = test_chunks::streams(&bytes)
                .map(|s| (s.data.to_vec(), s.raw_len))
                .collect();
            cases.push((name.into(), streams));
        }
        for (name, streams) in &cases {
            let total: usize = streams.iter().map(|s| s.1).sum();
            let csize: usize = streams.iter().map(|s| s.0.len()).sum();
            let max = streams.iter().map(|s| s.1).max().unwrap();
            let (mut out_a, mut out_b) = (vec![0u8; max], vec![0u8; max]);
            let (ours, flex) = best_gbps(
                total,
                || {
                    for (src, n) in streams {
                        decompress(src, &mut out_a[..*n], &[]).unwrap();
                    }
                },
                || {
                    for (src, n) in streams {
                        lz4_flex::block::decompress_into(src, &mut out_b[..*n]).unwrap();
                    }
                },
            );
            println!(
                "{name}: {total} B in {} streams, ratio {:.2}: ours {ours:.2} GB/s, lz4_flex {flex:.2} GB/s",
                streams.len(),
                total as f64 / csize as f64
            );
        }
    }
}
