//! BloscLZ decoder.
//!
//! BloscLZ is Blosc's own LZ77 codec, derived from FastLZ "level 2". The
//! stream format has not changed from Blosc 1.0 to Blosc2 3.x (only the
//! compressor's heuristics did), so one decoder reads them all.
//!
//! The stream is a sequence of instructions, each starting with a control
//! byte `c` (for the first instruction only its low 5 bits count; the top 3
//! bits there are a format marker):
//!
//! * `c < 32`: a literal run of `c + 1` bytes copied from the input.
//! * otherwise a match. `len = (c >> 5) - 1` is 0..=6; 6 means extension
//!   bytes follow, each added to `len`, until one is not 255. Then a
//!   distance byte `lo`; the match copies `len + 3` bytes starting
//!   `((c & 31) << 8) + lo + 1` bytes behind the write position.
//!   The combination `c & 31 == 31` and `lo == 255` (which a near match can
//!   never produce) announces a far match: two more bytes hold a big-endian
//!   16-bit value `far`, and the distance is `far + 8192`.
//!
//! Matches may overlap their own output (distance < length): the copy then
//! repeats the last `distance` bytes, distance 1 being a run of one byte.
//! The stream ends when the input is exhausted.

use super::lz4::{copy_match, copy_match_fast, FAST_SLACK};
use super::CodecError;

const CODEC: &str = "blosclz";

/// Far matches store their distance minus this value (minus one more for
/// the usual distance bias).
const NEAR_LIMIT: usize = 8191;

#[inline]
fn truncated() -> CodecError {
    CodecError::Truncated { codec: CODEC }
}

/// Decode one BloscLZ stream from `src` into exactly `dst.len()` bytes.
///
/// Errors on truncated input, a match that reaches before the start of the
/// output, or output that is shorter or longer than `dst`; never panics.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
    let src_len = src.len();
    let dst_len = dst.len();
    if src_len == 0 {
        return if dst_len == 0 {
            Ok(())
        } else {
            Err(truncated())
        };
    }
    let byte_at = |i: usize| -> Result<usize, CodecError> {
        src.get(i).map(|&b| b as usize).ok_or_else(truncated)
    };

    let mut ip = 1usize;
    let mut op = 0usize;
    let mut ctrl = (src[0] & 31) as usize;

    loop {
        if ctrl < 32 {
            // literal run
            let n = ctrl + 1;
            if src_len - ip >= 32 && dst_len - op >= 32 {
                // Copy a fixed 32 bytes; only the first `n` count, the rest
                // is scratch that later writes overwrite.
                dst[op..op + 32].copy_from_slice(&src[ip..ip + 32]);
            } else {
                if n > src_len - ip {
                    return Err(truncated());
                }
                if n > dst_len - op {
                    return Err(CodecError::WrongLength {
                        codec: CODEC,
                        expected: dst_len,
                        got: op + n,
                    });
                }
                dst[op..op + n].copy_from_slice(&src[ip..ip + n]);
            }
            ip += n;
            op += n;
        } else {
            // match
            let mut len = (ctrl >> 5) - 1;
            if len == 6 {
                loop {
                    let b = byte_at(ip)?;
                    ip += 1;
                    len = len.saturating_add(b);
                    if b != 255 {
                        break;
                    }
                }
            }
            let lo = byte_at(ip)?;
            ip += 1;
            let hi = ctrl & 31;
            let distance = if hi == 31 && lo == 255 {
                let far = (byte_at(ip)? << 8) | byte_at(ip + 1)?;
                ip += 2;
                far + NEAR_LIMIT + 1
            } else {
                (hi << 8) + lo + 1
            };
            let len = len.saturating_add(3);
            if distance > op {
                return Err(CodecError::BadOffset {
                    codec: CODEC,
                    offset: distance,
                });
            }
            if len < dst_len - op && dst_len - op - len >= FAST_SLACK {
                copy_match_fast(dst, op, distance, len);
            } else {
                if len > dst_len - op {
                    return Err(CodecError::WrongLength {
                        codec: CODEC,
                        expected: dst_len,
                        got: op.saturating_add(len),
                    });
                }
                copy_match(dst, op, distance, len);
            }
            op += len;
        }

        if ip >= src_len {
            break;
        }
        ctrl = src[ip] as usize;
        ip += 1;
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

/// Test-only reader for the real Blosc chunks in the shared conformance
/// directory, shared by the codec tests of this folder. It understands just
/// enough of the chunk format (headers, block starts, split streams, byte
/// shuffle) to feed each stream to a codec and check the whole chunk.
#[cfg(test)]
mod tests {
    use super::super::test_chunks;
    use super::*;

    /// A small greedy BloscLZ encoder for tests. It emits every instruction
    /// kind the format has: literal runs, short and long matches, near and
    /// far distances, overlapping matches. (Not the C compressor's choices,
    /// only its format.)
    fn encode(input: &[u8]) -> Vec<u8> {
        const MAX_FAR: usize = 65535 + NEAR_LIMIT + 1;
        let mut out = Vec::new();
        let mut lits: Vec<u8> = Vec::new();
        let flush = |out: &mut Vec<u8>, lits: &mut Vec<u8>| {
            for run in lits.chunks(32) {
                out.push((run.len() - 1) as u8);
                out.extend_from_slice(run);
            }
            lits.clear();
        };
        let mut table = std::collections::HashMap::<[u8; 3], usize>::new();
        let mut i = 0;
        while i < input.len() {
            let mut best = (0usize, 0usize); // (len, distance)
            if i + 3 <= input.len() {
                let key = [input[i], input[i + 1], input[i + 2]];
                // candidates: hashed position, and the runs/periods 1..=8
                let mut cands: Vec<usize> = (1..=8).filter(|&d| d <= i).collect();
                if let Some(&p) = table.get(&key) {
                    cands.push(i - p);
                }
                for d in cands {
                    if d == 0 || d > MAX_FAR {
                        continue;
                    }
                    let mut l = 0;
                    while i + l < input.len() && input[i + l] == input[i + l - d] && l < 5000 {
                        l += 1;
                    }
                    if l > best.0 {
                        best = (l, d);
                    }
                }
                table.insert(key, i);
            }
            let (len, dist) = best;
            if len < 3 {
                lits.push(input[i]);
                i += 1;
                continue;
            }
            flush(&mut out, &mut lits);
            let lfield = len - 2; // len = field + 2, field 1..=6 short, 7 long
            let far = dist > NEAR_LIMIT;
            let (hi, lo, tail): (u8, u8, Option<u16>) = if far {
                (31, 255, Some((dist - NEAR_LIMIT - 1) as u16))
            } else {
                (((dist - 1) >> 8) as u8, ((dist - 1) & 255) as u8, None)
            };
            if lfield < 7 {
                out.push(((lfield as u8) << 5) | hi);
            } else {
                out.push((7 << 5) | hi);
                let mut rest = lfield - 7;
                while rest >= 255 {
                    out.push(255);
                    rest -= 255;
                }
                out.push(rest as u8);
            }
            out.push(lo);
            if let Some(t) = tail {
                out.extend_from_slice(&t.to_be_bytes());
            }
            i += len;
        }
        flush(&mut out, &mut lits);
        // The first instruction must be a literal run; real streams also
        // carry a marker in its top bits, which the decoder must ignore.
        assert!(out[0] < 32, "test encoder must start with a literal");
        out[0] |= 1 << 5;
        out
    }

    fn decode(src: &[u8], n: usize) -> Result<Vec<u8>, CodecError> {
        let mut out = vec![0xAAu8; n];
        decompress(src, &mut out).map(|()| out)
    }

    use crate::test_rng::Rng;

    #[test]
    fn literal_runs_and_first_byte_marker() {
        // first control byte carries the marker bits 0b001 in its top 3 bits
        let src = [0x22, b'a', b'b', b'c', 0x01, b'd', b'e'];
        assert_eq!(decode(&src, 5).unwrap(), b"abcde");
        // a maximal literal run of 32 bytes
        let mut src = vec![0x20 | 31];
        src.extend(0u8..32);
        assert_eq!(decode(&src, 32).unwrap(), (0u8..32).collect::<Vec<_>>());
    }

    #[test]
    fn short_matches_runs_and_overlaps() {
        // 'x' then a run: field 2 -> 4 bytes, distance 1
        assert_eq!(decode(&[0x20, b'x', 0x40, 0x00], 5).unwrap(), b"xxxxx");
        // "abc" then field 6 (8 bytes) at distance 3: overlapping pattern
        assert_eq!(
            decode(&[0x22, b'a', b'b', b'c', 0xC0, 0x02], 11).unwrap(),
            b"abcabcabcab"
        );
        // non-overlapping: "abcdef" then 3 bytes (field 1) from distance 6
        assert_eq!(
            decode(
                &[0x25, b'a', b'b', b'c', b'd', b'e', b'f', 0x20, 0x05, 0x00, b'z'],
                10
            )
            .unwrap(),
            b"abcdefabcz"
        );
    }

    #[test]
    fn long_matches_with_extension_bytes() {
        // 'q' then a long run: field 7, extension 255, 255, 10
        // -> len = 7 + 255 + 255 + 10 + 2 = 529
        let src = [0x20, b'q', 0xE0, 255, 255, 10, 0x00];
        assert_eq!(decode(&src, 530).unwrap(), vec![b'q'; 530]);
        // extension of exactly 0 after 255: len = 7 + 255 + 0 + 2 = 264
        let src = [0x21, b'a', b'b', 0xE0, 255, 0, 0x01];
        let want: Vec<u8> = b"ab".iter().copied().cycle().take(266).collect();
        assert_eq!(decode(&src, 266).unwrap(), want);
        // long match, extension byte 0: len = 7 + 0 + 2 = 9
        let src = [0x21, b'a', b'b', 0xE0, 0, 0x01];
        assert_eq!(decode(&src, 11).unwrap(), b"abababababa");
    }

    /// Encode one match instruction (near or far) of `len` bytes.
    fn push_match(src: &mut Vec<u8>, distance: usize, len: usize) {
        let field = len - 2; // the decoder adds 2 (minus 1, plus 3)
        let (hi, lo, far) = if distance > NEAR_LIMIT {
            (31u8, 255u8, Some((distance - NEAR_LIMIT - 1) as u16))
        } else {
            (
                ((distance - 1) >> 8) as u8,
                ((distance - 1) & 255) as u8,
                None,
            )
        };
        if field < 7 {
            src.push(((field as u8) << 5) | hi);
        } else {
            src.push((7 << 5) | hi);
            let mut rest = field - 7;
            while rest >= 255 {
                src.push(255);
                rest -= 255;
            }
            src.push(rest as u8);
        }
        src.push(lo);
        if let Some(f) = far {
            src.extend_from_slice(&f.to_be_bytes());
        }
    }

    #[test]
    fn every_distance_and_many_lengths() {
        // 64 distinct literal bytes, one match of each distance 1..=64 and
        // many lengths (both sides of the copy strategies' thresholds),
        // then 1 literal (exact copies at the end of the output) or 40
        // (fast paths). Checked against a byte-by-byte reference.
        let lits: Vec<u8> = (0..64u8)
            .map(|i| i.wrapping_mul(37).wrapping_add(11))
            .collect();
        let lengths = [
            3usize, 4, 5, 6, 7, 8, 9, 10, 15, 16, 17, 18, 31, 32, 33, 64, 95, 96, 97, 128, 263,
            264, 265, 511, 512, 513, 1000, 5000,
        ];
        for distance in 1..=64usize {
            for &len in &lengths {
                for tail in [1usize, 40] {
                    let mut src = literal_prefix(&lits);
                    push_match(&mut src, distance, len);
                    let tail_bytes: Vec<u8> = (0..tail as u8).map(|i| 200 ^ i).collect();
                    for run in tail_bytes.chunks(32) {
                        src.push((run.len() - 1) as u8);
                        src.extend_from_slice(run);
                    }
                    let mut want = lits.clone();
                    for _ in 0..len {
                        want.push(want[want.len() - distance]);
                    }
                    want.extend_from_slice(&tail_bytes);
                    let got = decode(&src, want.len());
                    assert_eq!(
                        got.as_deref(),
                        Ok(&want[..]),
                        "distance {distance} len {len} tail {tail}"
                    );
                }
            }
        }
    }

    /// A prefix of `n` random bytes as literal runs (marker set).
    fn literal_prefix(data: &[u8]) -> Vec<u8> {
        let mut src = Vec::new();
        for run in data.chunks(32) {
            src.push((run.len() - 1) as u8);
            src.extend_from_slice(run);
        }
        src[0] |= 0x20;
        src
    }

    #[test]
    fn near_and_far_distances() {
        let prefix = Rng::new(7).bytes(20000);
        // distance 8191: the largest near distance (hi 31, lo 254)
        let mut src = literal_prefix(&prefix);
        src.extend_from_slice(&[(1 << 5) | 31, 254]);
        let mut want = prefix.clone();
        for _ in 0..3 {
            want.push(want[want.len() - 8191]);
        }
        assert_eq!(decode(&src, want.len()).unwrap(), want);

        // hi 31 + lo 255 switches to a far distance: 8192 + big-endian u16
        for far in [0u16, 1, 0x0328, 11807] {
            let distance = far as usize + 8192;
            for field in [1usize, 6, 7, 300] {
                let mut src = literal_prefix(&prefix);
                if field < 7 {
                    src.push(((field as u8) << 5) | 31);
                } else {
                    src.push((7 << 5) | 31);
                    let mut rest = field - 7;
                    while rest >= 255 {
                        src.push(255);
                        rest -= 255;
                    }
                    src.push(rest as u8);
                }
                src.push(255);
                src.extend_from_slice(&far.to_be_bytes());
                let mut want = prefix.clone();
                for _ in 0..field + 2 {
                    want.push(want[want.len() - distance]);
                }
                assert_eq!(
                    decode(&src, want.len()).unwrap(),
                    want,
                    "far {far} field {field}"
                );
            }
        }
    }

    fn corpus() -> Vec<(String, Vec<u8>)> {
        let mut rng = Rng::new(0x1234_5678_9abc_def1);
        let mut v = vec![
            ("empty-ish".to_string(), vec![42u8]),
            ("random".to_string(), rng.bytes(70_000)),
            ("zeros".to_string(), vec![0u8; 100_000]),
            (
                "text".to_string(),
                "the quick brown fox jumps over the lazy dog; "
                    .repeat(2000)
                    .into_bytes(),
            ),
        ];
        for period in [2usize, 3, 5, 7, 8, 13, 31] {
            let pat = rng.bytes(period);
            v.push((
                format!("period{period}"),
                pat.iter().copied().cycle().take(50_000).collect(),
            ));
        }
        // random block repeated far away (> 8191, < 73727) with noise between
        let block = rng.bytes(3000);
        let mut far = block.clone();
        far.extend(rng.bytes(20_000));
        far.extend_from_slice(&block);
        far.extend(rng.bytes(50_000));
        far.extend_from_slice(&block);
        v.push(("far".to_string(), far));
        // shuffled doubles: runs of the high bytes
        let vals: Vec<f64> = (0..20_000).map(|i| 1000.0 + (i as f64) * 0.25).collect();
        let raw: Vec<u8> = vals.iter().flat_map(|x| x.to_le_bytes()).collect();
        let n = vals.len();
        let mut shuffled = vec![0u8; raw.len()];
        for j in 0..8 {
            for i in 0..n {
                shuffled[j * n + i] = raw[i * 8 + j];
            }
        }
        v.push(("shuffled-f64".to_string(), shuffled));
        v
    }

    #[test]
    fn round_trips_through_test_encoder() {
        for (name, data) in corpus() {
            let src = encode(&data);
            assert_eq!(decode(&src, data.len()).unwrap(), data, "{name}");
        }
    }

    #[test]
    fn every_truncation_is_an_error() {
        for (name, data) in corpus() {
            let data = &data[..data.len().min(6_000)];
            let src = encode(data);
            for cut in 0..src.len() {
                let got = decode(&src[..cut], data.len());
                assert!(
                    got.is_err(),
                    "{name}: cut at {cut} of {} decoded",
                    src.len()
                );
            }
        }
        // far match whose two distance bytes are cut
        let prefix = Rng::new(3).bytes(9000);
        let mut src = literal_prefix(&prefix);
        src.extend_from_slice(&[0x20 | 31, 255, 0x00, 0x10]);
        assert!(decode(&src, 9003).is_ok());
        for cut in [src.len() - 1, src.len() - 2, src.len() - 3] {
            assert_eq!(
                decode(&src[..cut], 9003),
                Err(CodecError::Truncated { codec: CODEC }),
                "cut {cut}"
            );
        }
    }

    #[test]
    fn bad_offsets_and_lengths() {
        // match distance 2 after only 1 byte of output
        assert_eq!(
            decode(&[0x20, b'x', 0x40, 0x01], 5),
            Err(CodecError::BadOffset {
                codec: CODEC,
                offset: 2
            })
        );
        // far distance before the start
        assert_eq!(
            decode(&[0x20, b'x', 0x3F, 0xFF, 0x00, 0x00], 4),
            Err(CodecError::BadOffset {
                codec: CODEC,
                offset: 8192
            })
        );
        // output longer than dst
        assert!(matches!(
            decode(&[0x20, b'x', 0x40, 0x00], 4),
            Err(CodecError::WrongLength { expected: 4, .. })
        ));
        assert!(matches!(
            decode(&[0x22, b'a', b'b', b'c'], 2),
            Err(CodecError::WrongLength { expected: 2, .. })
        ));
        // output shorter than dst
        assert_eq!(
            decode(&[0x22, b'a', b'b', b'c'], 4),
            Err(CodecError::WrongLength {
                codec: CODEC,
                expected: 4,
                got: 3
            })
        );
        // empty stream
        assert_eq!(decode(&[], 0), Ok(vec![]));
        assert_eq!(decode(&[], 1), Err(CodecError::Truncated { codec: CODEC }));
        // literal run longer than the input
        assert_eq!(
            decode(&[0x25, 1, 2], 6),
            Err(CodecError::Truncated { codec: CODEC })
        );
    }

    #[test]
    fn garbage_never_panics() {
        let mut rng = Rng::new(99);
        let mut oks = 0;
        for round in 0..20_000 {
            let n = (rng.next_u64() % 200) as usize;
            let mut src = rng.bytes(n);
            if round % 2 == 0 && !src.is_empty() {
                // start with a literal so that some get further
                src[0] &= 0x3f;
            }
            let dst_len = (rng.next_u64() % 600) as usize;
            if decode(&src, dst_len).is_ok() {
                oks += 1;
            }
        }
        // sanity: the generator is not trivially rejected by the first check
        assert!(oks < 20_000);
    }

    /// Real BloscLZ chunks written by Blosc 1.3.0, 1.7.0, 1.11.1, 1.14.0 and
    /// C-Blosc2 3.0.0 (different compressor generations): every stream must
    /// decode to its exact size and the whole chunk to the known bytes.
    #[test]
    fn real_blosc_chunks() {
        test_chunks::assert_decodes_the_corpus(
            &[
                "blosc-1.3.0-blosclz.cdata",
                "blosc-1.7.0-blosclz.cdata",
                "blosc-1.11.1-blosclz.cdata",
                "blosc-1.14.0-blosclz.cdata",
                "blosc-blosclz-3.0.0.cdata",
            ],
            0,
            decompress,
        );
    }
}
