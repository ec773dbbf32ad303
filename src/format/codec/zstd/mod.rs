//! Zstandard streams (Blosc's `zstd` codec), optionally with a dictionary.
//!
//! Each Blosc stream is one zstd frame (concatenated frames and skippable
//! frames are accepted too, as `ZSTD_decompressDCtx` does). The dictionary,
//! when the chunk has one, is whatever Blosc stored: a ZDICT-format
//! dictionary (magic `0xEC30A437`, entropy tables, content) as C-Blosc2's
//! trainer writes it; libzstd also takes plain bytes as "raw content".
//!
//! Two decoders sit behind the one entry point: libzstd (C, through the
//! `zstd` crate) with the default cargo feature `zstd-c`, and the pure-Rust
//! `ruzstd` without it, so that a local-only build compiles no C. Both keep
//! decoder state per thread and give the same errors for a wrong length.

use super::CodecError;

mod corrupt;
#[cfg(feature = "zstd-c")]
mod libzstd;
#[cfg(feature = "zstd-c")]
use libzstd as backend;
#[cfg(not(feature = "zstd-c"))]
mod pure;
#[cfg(not(feature = "zstd-c"))]
use pure as backend;

/// Which decoder this build uses, as `blosc2fs --version` names it.
pub const BACKEND: &str = if cfg!(feature = "zstd-c") {
    "libzstd (C)"
} else {
    "ruzstd (pure Rust)"
};

/// Decode the zstd frame(s) in `src` into exactly `dst.len()` bytes, using
/// `dict` as dictionary when it is not empty.
pub fn decompress(src: &[u8], dst: &mut [u8], dict: &[u8]) -> Result<(), CodecError> {
    backend::decompress(src, dst, dict)
}

#[cfg(test)]
mod tests {
    use super::super::test_chunks;
    use super::corrupt::CODEC;
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
        let mut rng = crate::test_rng::Rng::new(seed);
        let mut out = Vec::with_capacity(n + 16);
        while out.len() < n {
            let x = rng.next_u64();
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
    #[cfg(not(feature = "zstd-c"))]
    fn raw_content_dictionary_is_named_unsupported_by_ruzstd() {
        let dict = text(20_000, 77);
        let data: Vec<u8> = dict.chunks(1000).rev().flatten().copied().collect();
        let src = compress(&data, 3, &dict);
        assert_eq!(
            decode(&src, data.len(), &dict),
            Err(CodecError::Unsupported {
                codec: CODEC,
                detail: "a raw-content dictionary (no ZDICT magic) is read only by the libzstd decoder (cargo feature `zstd-c`)".into()
            })
        );
    }

    #[test]
    #[cfg(feature = "zstd-c")]
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
        // ruzstd reads only ZDICT dictionaries; libzstd also raw content.
        let d1 = if cfg!(feature = "zstd-c") {
            text(10_000, 1)
        } else {
            zdict(7, &text(10_000, 1))
        };
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

    #[test]
    #[cfg(not(feature = "zstd-c"))]
    fn ruzstd_refuses_a_window_the_output_does_not_justify() {
        use std::io::Write;
        let data = text(4_000, 12);
        let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
        enc.window_log(27).unwrap();
        enc.write_all(&data).unwrap();
        let src = enc.finish().unwrap();
        let err = decode(&src, data.len(), &[]).unwrap_err();
        assert_eq!(
            err,
            CodecError::Corrupt {
                codec: CODEC,
                detail: "Specified window_size is too big; Requested: 134217728, Max: 8388608"
                    .into()
            }
        );
    }

    /// Real zstd chunks written by Blosc 1.11.1, 1.14.0 and C-Blosc2 3.0.0.
    #[test]
    fn real_blosc_chunks() {
        test_chunks::assert_decodes_the_corpus(
            &[
                "blosc-1.11.1-zstd.cdata",
                "blosc-1.14.0-zstd.cdata",
                "blosc-zstd-3.0.0.cdata",
            ],
            4,
            |s, d| decompress(s, d, &[]),
        );
    }
}
