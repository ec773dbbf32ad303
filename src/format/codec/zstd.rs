//! Zstandard streams (Blosc's `zstd` codec), optionally with a dictionary.
//!
//! Each Blosc stream is one zstd frame (the library would also accept
//! several concatenated frames and skippable frames, as `ZSTD_decompressDCtx`
//! does). The dictionary, when the chunk has one, is whatever Blosc stored:
//! normally a ZDICT-format dictionary (magic `0xEC30A437`, entropy tables,
//! content), but zstd also accepts plain bytes as "raw content" and tells the
//! two apart by the magic number.
//!
//! Decompression contexts are kept per thread: one without dictionary, and
//! one for the most recently used dictionary (loading a dictionary builds its
//! entropy tables, so it is worth not repeating for every block).

use std::cell::RefCell;

use zstd::bulk::Decompressor;

use super::CodecError;

const CODEC: &str = "zstd";

thread_local! {
    static PLAIN: RefCell<Option<Decompressor<'static>>> = const { RefCell::new(None) };
    static WITH_DICT: RefCell<Option<(Vec<u8>, Decompressor<'static>)>> = const { RefCell::new(None) };
}

fn corrupt(detail: impl ToString) -> CodecError {
    CodecError::Corrupt {
        codec: CODEC,
        detail: detail.to_string(),
    }
}

/// Decode the zstd frame(s) in `src` into exactly `dst.len()` bytes, using
/// `dict` as dictionary when it is not empty.
pub fn decompress(src: &[u8], dst: &mut [u8], dict: &[u8]) -> Result<(), CodecError> {
    if dict.is_empty() {
        PLAIN.with(|cell| match cell.try_borrow_mut() {
            Ok(mut slot) => {
                if slot.is_none() {
                    *slot = Some(Decompressor::new().map_err(corrupt)?);
                }
                let d = slot.as_mut().expect("just filled");
                run(d, src, dst)
            }
            Err(_) => run(&mut Decompressor::new().map_err(corrupt)?, src, dst),
        })
    } else {
        WITH_DICT.with(|cell| match cell.try_borrow_mut() {
            Ok(mut slot) => {
                let reuse = matches!(slot.as_ref(), Some((cached, _)) if cached.as_slice() == dict);
                if !reuse {
                    // Drop the old context first so we never hold two.
                    *slot = None;
                    let d = Decompressor::with_dictionary(dict)
                        .map_err(|e| corrupt(format!("bad dictionary: {e}")))?;
                    *slot = Some((dict.to_vec(), d));
                }
                let (_, d) = slot.as_mut().expect("just filled");
                run(d, src, dst)
            }
            Err(_) => {
                let mut d = Decompressor::with_dictionary(dict)
                    .map_err(|e| corrupt(format!("bad dictionary: {e}")))?;
                run(&mut d, src, dst)
            }
        })
    }
}

fn run(d: &mut Decompressor<'_>, src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
    let expected = dst.len();
    match d.decompress_to_buffer(src, dst) {
        Ok(got) if got == expected => Ok(()),
        Ok(got) => Err(CodecError::WrongLength {
            codec: CODEC,
            expected,
            got,
        }),
        Err(e) => {
            // Give a length error when the frame header says so (typically
            // "destination buffer too small"); otherwise report zstd's words.
            if let Ok(Some(size)) = zstd::zstd_safe::get_frame_content_size(src) {
                if size != expected as u64 {
                    return Err(CodecError::WrongLength {
                        codec: CODEC,
                        expected,
                        got: usize::try_from(size).unwrap_or(usize::MAX),
                    });
                }
            }
            Err(corrupt(e))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_chunks;
    use super::*;

    fn compress(data: &[u8], level: i32, dict: &[u8]) -> Vec<u8> {
        zstd::bulk::Compressor::with_dictionary(level, dict)
            .unwrap()
            .compress(data)
            .unwrap()
    }

    fn decode(src: &[u8], n: usize, dict: &[u8]) -> Result<Vec<u8>, CodecError> {
        let mut out = vec![0xAAu8; n];
        decompress(src, &mut out, dict).map(|()| out)
    }

    fn text(n: usize, seed: u64) -> Vec<u8> {
        let words = [
            "temperature",
            "pressure",
            "humidity",
            "station",
            "north",
            "south",
            "reading",
            "sensor",
            "value",
            "daily",
            "mean",
            "max",
            "min",
            "2024",
            "07",
            "-",
            ",",
            ";",
        ];
        let mut x = seed | 1;
        let mut out = Vec::with_capacity(n + 16);
        while out.len() < n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            out.extend_from_slice(words[(x % words.len() as u64) as usize].as_bytes());
            out.push(if x.is_multiple_of(5) { b'\n' } else { b' ' });
        }
        out.truncate(n);
        out
    }

    /// LSB-first bit writer, as zstd's table descriptions use.
    struct Bits {
        out: Vec<u8>,
        acc: u64,
        n: u32,
    }
    impl Bits {
        fn put(&mut self, value: u64, bits: u32) {
            self.acc |= value << self.n;
            self.n += bits;
            while self.n >= 8 {
                self.out.push(self.acc as u8);
                self.acc >>= 8;
                self.n -= 8;
            }
        }
        fn finish(mut self) -> Vec<u8> {
            if self.n > 0 {
                self.out.push(self.acc as u8);
            }
            self.out
        }
    }

    /// FSE table description (RFC 8878, 4.1.1) of strictly positive
    /// normalized counts summing to `1 << log`.
    fn fse_table(counts: &[i32], log: u32) -> Vec<u8> {
        assert_eq!(counts.iter().sum::<i32>(), 1 << log);
        assert!(counts.iter().all(|&c| c > 0));
        let mut w = Bits {
            out: Vec::new(),
            acc: 0,
            n: 0,
        };
        w.put((log - 5) as u64, 4);
        let mut remaining: i32 = (1 << log) + 1;
        let mut threshold: i32 = 1 << log;
        let mut nbits: u32 = log + 1;
        for &c in counts {
            let max = (2 * threshold - 1) - remaining;
            remaining -= c;
            let mut v = c + 1;
            if v >= threshold {
                v += max;
            }
            // small values take one bit less
            w.put(v as u64, if v < max { nbits - 1 } else { nbits });
            while remaining < threshold {
                nbits -= 1;
                threshold >>= 1;
            }
        }
        assert_eq!(remaining, 1);
        w.finish()
    }

    /// A ZDICT-format dictionary built by hand: magic, id, entropy tables
    /// (a Huffman tree in direct representation; offset, match-length and
    /// literal-length FSE tables; three repeat offsets), then `content`.
    fn zdict(id: u32, content: &[u8]) -> Vec<u8> {
        let mut d = Vec::new();
        d.extend_from_slice(&0xEC30_A437u32.to_le_bytes());
        d.extend_from_slice(&id.to_le_bytes());
        // Huffman: 128 explicit weights of 1 (symbols 0..=127); zstd infers
        // the last symbol (128) with weight 8 to complete the tree. (The
        // vendored libzstd 1.5.7 accepts a dictionary whose literal table
        // does not cover all 256 byte values; libzstd 1.5.4 refused it.)
        d.push(127 + 128);
        d.extend(std::iter::repeat_n(0x11, 64));
        // offset codes 0..=31, log 5: all 1
        d.extend(fse_table(&[1; 32], 5));
        // match-length codes 0..=52, log 6: 12 then 52 ones
        let mut ml = vec![1; 53];
        ml[0] = 12;
        d.extend(fse_table(&ml, 6));
        // literal-length codes 0..=35, log 6: 29 then 35 ones
        let mut ll = vec![1; 36];
        ll[0] = 29;
        d.extend(fse_table(&ll, 6));
        for rep in [1u32, 4, 8] {
            d.extend_from_slice(&rep.to_le_bytes());
        }
        d.extend_from_slice(content);
        d
    }

    #[test]
    fn round_trips_without_dictionary() {
        for (i, n) in [0usize, 1, 1000, 100_000, 1_000_000]
            .into_iter()
            .enumerate()
        {
            let data = text(n, i as u64 + 1);
            for level in [-5, 1, 3, 19] {
                let src = compress(&data, level, &[]);
                assert_eq!(decode(&src, n, &[]).unwrap(), data, "n {n} level {level}");
            }
        }
        // runs and binary data
        let data: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i / 100).to_le_bytes())
            .collect();
        let src = compress(&data, 5, &[]);
        assert_eq!(decode(&src, data.len(), &[]).unwrap(), data);
    }

    #[test]
    fn frame_without_content_size_and_concatenated_frames() {
        let data = text(50_000, 9);
        // the streaming encoder does not record the content size
        let src = zstd::stream::encode_all(&data[..], 3).unwrap();
        assert!(matches!(
            zstd::zstd_safe::get_frame_content_size(&src),
            Ok(None)
        ));
        assert_eq!(decode(&src, data.len(), &[]).unwrap(), data);
        // too small a dst is then still an error
        assert!(decode(&src, data.len() - 1, &[]).is_err());
        // two frames back to back decode as their concatenation
        let more = text(7_000, 10);
        let mut two = compress(&data, 3, &[]);
        two.extend(compress(&more, 3, &[]));
        let mut want = data.clone();
        want.extend_from_slice(&more);
        assert_eq!(decode(&two, want.len(), &[]).unwrap(), want);
    }

    #[test]
    fn raw_content_dictionary() {
        let dict = text(20_000, 77);
        // the data repeats pieces of the dictionary
        let data: Vec<u8> = dict.chunks(1000).rev().flatten().copied().collect();
        let src = compress(&data, 3, &dict);
        let plain = compress(&data, 3, &[]);
        assert!(
            src.len() * 3 < plain.len(),
            "dictionary unused: {} vs {}",
            src.len(),
            plain.len()
        );
        assert_eq!(decode(&src, data.len(), &dict).unwrap(), data);
        // without the dictionary, or with another one: error or wrong bytes
        // are both failures here, zstd reports an error
        assert!(decode(&src, data.len(), &[]).is_err());
        let other = text(20_000, 78);
        assert_ne!(decode(&src, data.len(), &other).ok(), Some(data.clone()));
    }

    #[test]
    fn zdict_format_dictionary() {
        let content = text(16_000, 5);
        let dict = zdict(0x1234_5678, &content);
        assert_eq!(
            zstd::zstd_safe::get_dict_id_from_dict(&dict).map(|x| x.get()),
            Some(0x1234_5678),
            "zstd does not see a ZDICT dictionary"
        );
        let data: Vec<u8> = content.chunks(700).rev().flatten().copied().collect();
        for level in [1, 3, 19] {
            let src = compress(&data, level, &dict);
            assert_eq!(
                zstd::zstd_safe::get_dict_id_from_frame(&src).map(|x| x.get()),
                Some(0x1234_5678)
            );
            assert_eq!(
                decode(&src, data.len(), &dict).unwrap(),
                data,
                "level {level}"
            );
            assert!(decode(&src, data.len(), &[]).is_err());
        }
    }

    #[test]
    fn dictionary_context_is_switched_and_reused() {
        let d1 = text(10_000, 1);
        let d2 = zdict(42, &text(10_000, 2));
        let data1: Vec<u8> = d1.chunks(500).rev().flatten().copied().collect();
        let data2 = text(30_000, 2);
        let s1 = compress(&data1, 3, &d1);
        let s2 = compress(&data2, 3, &d2);
        let s0 = compress(&data2, 3, &[]);
        for _ in 0..3 {
            assert_eq!(decode(&s1, data1.len(), &d1).unwrap(), data1);
            assert_eq!(decode(&s2, data2.len(), &d2).unwrap(), data2);
            assert_eq!(decode(&s0, data2.len(), &[]).unwrap(), data2);
            assert_eq!(decode(&s1, data1.len(), &d1).unwrap(), data1);
            assert_eq!(decode(&s1, data1.len(), &d1).unwrap(), data1);
        }
    }

    #[test]
    fn wrong_lengths_and_truncation() {
        let data = text(20_000, 3);
        let src = compress(&data, 3, &[]);
        assert_eq!(
            decode(&src, 20_001, &[]),
            Err(CodecError::WrongLength {
                codec: CODEC,
                expected: 20_001,
                got: 20_000
            })
        );
        assert_eq!(
            decode(&src, 19_999, &[]),
            Err(CodecError::WrongLength {
                codec: CODEC,
                expected: 19_999,
                got: 20_000
            })
        );
        for cut in 0..src.len() {
            assert!(
                decode(&src[..cut], data.len(), &[]).is_err(),
                "cut at {cut}"
            );
        }
        let mut bad = src.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 0x55;
        assert!(decode(&bad, data.len(), &[]).ok() != Some(data.clone()));
        assert!(matches!(
            decode(b"not zstd", 8, &[]),
            Err(CodecError::Corrupt { .. })
        ));
    }

    /// Real zstd chunks written by Blosc 1.11.1, 1.14.0 and C-Blosc2 3.0.0.
    #[test]
    fn real_blosc_chunks() {
        for name in [
            "blosc-1.11.1-zstd.cdata",
            "blosc-1.14.0-zstd.cdata",
            "blosc-zstd-3.0.0.cdata",
        ] {
            let bytes = test_chunks::read(name);
            assert_eq!(test_chunks::parse(&bytes).codec, 4, "{name} is not zstd");
            let (raw, coded) = test_chunks::decode(&bytes, |s, d| decompress(s, d, &[]));
            assert!(coded > 0, "{name}: no compressed streams");
            assert_eq!(
                test_chunks::sha256_hex(&raw),
                test_chunks::CORPUS_SHA256,
                "{name}"
            );
        }
    }
}
