//! zlib streams (Blosc's `zlib` codec).
//!
//! Blosc compresses with zlib's `compress2` and decompresses with
//! `uncompress`, so each stream is a complete zlib-format stream: 2-byte
//! header, deflate data, Adler-32 trailer. We inflate straight into `dst`
//! and require the stream to end exactly when `dst` is full. As with
//! `uncompress`, bytes after the end of the zlib stream are ignored.

use std::cell::RefCell;

use flate2::{Decompress, FlushDecompress, Status};

use super::CodecError;

const CODEC: &str = "zlib";

thread_local! {
    /// One inflate state per thread, reset before each stream, so the hot
    /// path does not allocate.
    static INFLATE: RefCell<Option<Decompress>> = const { RefCell::new(None) };
}

/// Inflate the zlib stream `src` into exactly `dst.len()` bytes.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
    INFLATE.with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => {
            let inflater = match slot.as_mut() {
                Some(d) => {
                    d.reset(true);
                    d
                }
                None => slot.insert(Decompress::new(true)),
            };
            inflate_into(inflater, src, dst)
        }
        // Not reachable in practice (no re-entrancy), but stay correct.
        Err(_) => inflate_into(&mut Decompress::new(true), src, dst),
    })
}

fn corrupt(e: flate2::DecompressError) -> CodecError {
    CodecError::Corrupt {
        codec: CODEC,
        detail: e.to_string(),
    }
}

fn inflate_into(d: &mut Decompress, src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
    let expected = dst.len();
    let status = d
        .decompress(src, dst, FlushDecompress::Finish)
        .map_err(corrupt)?;
    let got = d.total_out() as usize;
    match status {
        Status::StreamEnd if got == expected => Ok(()),
        Status::StreamEnd => Err(CodecError::WrongLength {
            codec: CODEC,
            expected,
            got,
        }),
        Status::Ok | Status::BufError if got < expected => {
            // The input ran out before the stream ended.
            Err(CodecError::Truncated { codec: CODEC })
        }
        Status::Ok | Status::BufError => {
            // dst is full but the stream has not ended: either it holds more
            // output than promised, or it is cut short right here. Probe.
            let consumed = (d.total_in() as usize).min(src.len());
            let mut probe = [0u8; 64];
            let status = d
                .decompress(&src[consumed..], &mut probe, FlushDecompress::Finish)
                .map_err(corrupt)?;
            let total = d.total_out() as usize;
            if total > expected {
                Err(CodecError::WrongLength {
                    codec: CODEC,
                    expected,
                    got: total,
                })
            } else if status == Status::StreamEnd {
                Ok(())
            } else {
                Err(CodecError::Truncated { codec: CODEC })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_chunks;
    use super::*;
    use std::io::Write;

    fn compress(data: &[u8], level: u32) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(level));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn decode(src: &[u8], n: usize) -> Result<Vec<u8>, CodecError> {
        let mut out = vec![0xAAu8; n];
        decompress(src, &mut out).map(|()| out)
    }

    fn sample(n: usize) -> Vec<u8> {
        let mut x: u32 = 12345;
        (0..n)
            .map(|i| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                if i % 3 == 0 {
                    (x >> 24) as u8
                } else {
                    (i / 7) as u8
                }
            })
            .collect()
    }

    #[test]
    fn round_trips() {
        for n in [0usize, 1, 100, 65_536, 300_001] {
            let data = sample(n);
            for level in [0, 1, 6, 9] {
                let src = compress(&data, level);
                assert_eq!(src[0] & 0x0F, 8, "zlib header: deflate method");
                assert_eq!(decode(&src, n).unwrap(), data, "n {n} level {level}");
            }
        }
        // the thread-local inflater is reset between streams: interleave
        let a = sample(1000);
        let b = vec![7u8; 5000];
        let (ca, cb) = (compress(&a, 6), compress(&b, 6));
        for _ in 0..3 {
            assert_eq!(decode(&ca, a.len()).unwrap(), a);
            assert_eq!(decode(&cb, b.len()).unwrap(), b);
        }
    }

    #[test]
    fn wrong_lengths() {
        let data = sample(10_000);
        let src = compress(&data, 6);
        // dst too large: the stream ends early
        assert_eq!(
            decode(&src, 10_001),
            Err(CodecError::WrongLength {
                codec: CODEC,
                expected: 10_001,
                got: 10_000
            })
        );
        // dst too small: the stream has more
        for n in [0usize, 1, 9_999] {
            match decode(&src, n) {
                Err(CodecError::WrongLength { expected, got, .. }) => {
                    assert_eq!(expected, n);
                    assert!(got > n);
                }
                other => panic!("dst {n}: {other:?}"),
            }
        }
    }

    #[test]
    fn truncated_and_corrupt_streams() {
        let data = sample(3_000);
        let src = compress(&data, 6);
        for cut in 0..src.len() {
            assert!(
                decode(&src[..cut], data.len()).is_err(),
                "cut at {cut} of {}",
                src.len()
            );
        }
        // damaged Adler-32 trailer
        let mut bad = src.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert!(matches!(
            decode(&bad, data.len()),
            Err(CodecError::Corrupt { .. })
        ));
        // bad header check bits
        let mut bad = src.clone();
        bad[1] ^= 1;
        assert!(matches!(
            decode(&bad, data.len()),
            Err(CodecError::Corrupt { .. })
        ));
        // raw deflate (no zlib header) is not what Blosc writes
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
        e.write_all(&data).unwrap();
        let raw = e.finish().unwrap();
        assert!(decode(&raw, data.len()).is_err());
        // like zlib's uncompress(), bytes after the end of the stream are ignored
        let mut trailing = src.clone();
        trailing.extend_from_slice(b"junk");
        assert_eq!(decode(&trailing, data.len()).unwrap(), data);
    }

    #[test]
    fn garbage_never_panics() {
        let mut rng = crate::test_rng::Rng::new(99);
        for _ in 0..5_000 {
            let n = rng.index(64);
            let src = rng.bytes(n);
            let _ = decode(&src, rng.index(300));
        }
    }

    /// Real zlib chunks written by Blosc 1.3.0 .. 1.14.0.
    #[test]
    fn real_blosc_chunks() {
        test_chunks::assert_decodes_the_corpus(
            &[
                "blosc-1.3.0-zlib.cdata",
                "blosc-1.7.0-zlib.cdata",
                "blosc-1.11.1-zlib.cdata",
                "blosc-1.14.0-zlib.cdata",
            ],
            3,
            decompress,
        );
    }
}
