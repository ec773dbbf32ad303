//! ZFP streams (C-Blosc2's codecs 33 `zfp_acc`, 34 `zfp_prec`, 35 `zfp_rate`).
//!
//! C-Blosc2's ZFP plugin compresses each block as one headerless ZFP stream:
//! the block is a ZFP field of 1 to 4 dimensions whose sizes are the b2nd
//! blockshape, fastest-varying dimension first to ZFP (so a C-order block
//! `[b0, b1]` is ZFP's `nx = b1, ny = b0`), with 4- or 8-byte floats from the
//! chunk's typesize. The mode's parameters come from the chunk header's
//! `compcode_meta` byte ([`params`]). A block (or stream) ZFP could not shrink
//! is stored raw and never reaches this decoder. With split blocks (python's
//! `ALWAYS_SPLIT`), C-Blosc2 hands ZFP one byte-stream at a time described as
//! a whole block; ZFP output for those was always found stored raw, and a ZFP
//! stream whose output is not exactly one block is refused as corrupt.
//!
//! The bit-level decoding (bit planes, negabinary, inverse lifting transform,
//! partial cells at the field's edges) is done by the pure-Rust `zfp-rs`
//! crate, which reproduces the C library's output bit for bit; tests/zfp.rs
//! checks that against C-Blosc2's own decode of files python-blosc2 wrote.
//! This module only sets the decoder up the way C-Blosc2 does and guards the
//! sizes: the output is exactly the block, and a stream that runs out before
//! the field is complete is [`CodecError::Truncated`], never a panic.

pub mod params;

use std::cell::RefCell;

use zfp_rs::{
    ZfpBitStreamRef, ZfpDecompressionError, ZfpDimensionality, ZfpFieldMut, ZfpScalarType,
};

use super::CodecError;
use params::Mode;

thread_local! {
    /// The stream copied into 64-bit words (ZFP reads whole little-endian
    /// words, and a block's bytes inside a chunk are not word-aligned).
    static WORDS: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
    /// Decoded values, when the output buffer is not aligned for them.
    static VALUES: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

fn corrupt(codec: &'static str, detail: impl Into<String>) -> CodecError {
    CodecError::Corrupt {
        codec,
        detail: detail.into(),
    }
}

/// Decode the ZFP stream `src` of codec `codec_id` (33, 34 or 35) with
/// header meta byte `meta` into `dst`, one whole block of `blockshape`
/// (C order, 1 to 4 dimensions) of `typesize`-byte floats (4 or 8).
pub fn decompress(
    codec_id: u8,
    meta: u8,
    typesize: usize,
    blockshape: &[u64],
    src: &[u8],
    dst: &mut [u8],
) -> Result<(), CodecError> {
    let mode = Mode::from_codec_id(codec_id)
        .ok_or_else(|| corrupt("zfp", format!("codec id {codec_id} is not a ZFP mode")))?;
    let codec = mode.codec_name();
    let scalar = match typesize {
        4 => ZfpScalarType::F32,
        8 => ZfpScalarType::F64,
        other => {
            return Err(corrupt(
                codec,
                format!("items of {other} bytes (ZFP decodes 4- or 8-byte floats)"),
            ))
        }
    };
    let ndim = blockshape.len();
    let dimensionality = match ndim {
        1 => ZfpDimensionality::D1,
        2 => ZfpDimensionality::D2,
        3 => ZfpDimensionality::D3,
        4 => ZfpDimensionality::D4,
        _ => {
            return Err(corrupt(
                codec,
                format!("needs a b2nd blockshape of 1 to 4 dimensions, the array has {ndim}"),
            ))
        }
    };
    // ZFP's dims are fastest first: the reverse of the C-order blockshape.
    let mut dims = [0usize; 4];
    let mut nitems: usize = 1;
    for (d, &n) in dims.iter_mut().zip(blockshape.iter().rev()) {
        *d = usize::try_from(n)
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| corrupt(codec, format!("blockshape {blockshape:?}")))?;
        nitems = nitems
            .checked_mul(*d)
            .ok_or_else(|| corrupt(codec, format!("blockshape {blockshape:?}")))?;
    }
    let expected = nitems.checked_mul(typesize);
    if expected != Some(dst.len()) {
        return Err(corrupt(
            codec,
            format!(
                "a block of {blockshape:?} × {typesize} bytes does not fill {} bytes",
                dst.len()
            ),
        ));
    }
    let config = params::config(mode, meta, scalar, dimensionality, ndim).ok_or_else(|| {
        corrupt(
            codec,
            format!("meta {meta} gives a rate ZFP does not accept"),
        )
    })?;

    WORDS.with(|words| {
        let mut words = words.borrow_mut();
        words.clear();
        // Trailing bytes short of a word are ignored, as C's `stream_open`
        // does (C-Blosc2's streams are always whole words).
        words.extend(
            src.chunks_exact(8)
                .map(|w| u64::from_le_bytes(w.try_into().expect("8-byte chunk"))),
        );
        let decode = |out: &mut [u8]| decode_into(codec, &words, &config, scalar, dims, out);
        if aligned(dst, typesize) {
            decode(dst)
        } else {
            VALUES.with(|values| {
                let mut values = values.borrow_mut();
                values.clear();
                values.resize(dst.len().div_ceil(8), 0.0);
                let staged = &mut bytemuck::cast_slice_mut::<f64, u8>(&mut values[..])[..dst.len()];
                decode(staged)?;
                dst.copy_from_slice(staged);
                Ok(())
            })
        }
    })
}

/// Whether `bytes` can be viewed as items of `typesize` bytes in place.
fn aligned(bytes: &[u8], typesize: usize) -> bool {
    (bytes.as_ptr() as usize).is_multiple_of(typesize)
}

/// Decode `words` into `out` (aligned for the scalar type, exactly the field's size).
fn decode_into(
    codec: &'static str,
    words: &[u64],
    config: &zfp_rs::ZfpConfig,
    scalar: ZfpScalarType,
    dims: [usize; 4],
    out: &mut [u8],
) -> Result<(), CodecError> {
    let field = match scalar {
        ZfpScalarType::F32 => field_of(bytemuck::try_cast_slice_mut::<u8, f32>(out), dims),
        _ => field_of(bytemuck::try_cast_slice_mut::<u8, f64>(out), dims),
    };
    let mut field = field.map_err(|detail| corrupt(codec, detail))?;
    let mut stream = ZfpBitStreamRef::from_words(words);
    match stream.decompress(config, &mut field) {
        Ok(_) => Ok(()),
        Err(ZfpDecompressionError::Truncated { .. }) => Err(CodecError::Truncated { codec }),
        Err(other) => Err(corrupt(codec, other.to_string())),
    }
}

/// The ZFP field over `values` (a cast that may have failed) with `dims`
/// (fastest first, trailing zeros for unused dimensions).
fn field_of<'a, T: zfp_rs::ZfpScalar>(
    values: Result<&'a mut [T], bytemuck::PodCastError>,
    dims: [usize; 4],
) -> Result<ZfpFieldMut<'a>, String> {
    let values = values.map_err(|e| format!("output buffer: {e:?}"))?;
    let field = match dims {
        [x, 0, _, _] => ZfpFieldMut::new(values, [x]),
        [x, y, 0, _] => ZfpFieldMut::new(values, [x, y]),
        [x, y, z, 0] => ZfpFieldMut::new(values, [x, y, z]),
        all => ZfpFieldMut::new(values, all),
    };
    field.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::codec::codec_id::{ZFP_ACC, ZFP_PREC, ZFP_RATE};
    use crate::test_rng::Rng;

    /// Every corrupt, truncated or random stream gives an error or some
    /// output, never a panic, for every mode, type and dimensionality.
    #[test]
    fn random_and_truncated_streams_do_not_panic() {
        let mut rng = Rng::new(0x2545_f491_4f6c_dd1d);
        let shapes: [&[u64]; 5] = [&[7], &[3, 5], &[4, 4], &[2, 3, 5], &[2, 1, 3, 5]];
        for round in 0..400 {
            let codec = [ZFP_ACC, ZFP_PREC, ZFP_RATE][round % 3];
            let typesize = [4, 8][round / 3 % 2];
            let shape = shapes[round % shapes.len()];
            let meta = rng.next_u64() as u8;
            let len = (rng.next_u64() % 300) as usize;
            let src = rng.bytes(len);
            let n: u64 = shape.iter().product();
            let mut dst = vec![0u8; n as usize * typesize + 1];
            let offset = round % 2; // unaligned outputs too
            let _ = decompress(
                codec,
                meta,
                typesize,
                shape,
                &src,
                &mut dst[offset..offset + n as usize * typesize],
            );
        }
    }

    /// Valid streams (written by zfp-rs's encoder with C-Blosc2's parameters)
    /// decode; cut short they fail as truncated or decode to something,
    /// with bits flipped they decode to something or fail, never panic.
    #[test]
    fn valid_streams_cut_or_damaged_do_not_panic() {
        use zfp_rs::{ZfpBitStream, ZfpField};
        let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
        let cases: [(u8, u8, &[u64]); 6] = [
            (ZFP_ACC, 254, &[6, 7]),
            (ZFP_PREC, 20, &[5, 4, 6]),
            (ZFP_RATE, 30, &[13]),
            (ZFP_RATE, 50, &[4, 5, 4, 5]),
            (ZFP_ACC, 0, &[9]),
            (ZFP_PREC, 255, &[3, 9]),
        ];
        for (codec, meta, shape) in cases {
            let n = shape.iter().product::<u64>() as usize;
            let values: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin() * 100.0).collect();
            let dims: Vec<usize> = shape.iter().rev().map(|&d| d as usize).collect();
            let field = match dims.len() {
                1 => ZfpField::new(&values, [dims[0]]),
                2 => ZfpField::new(&values, [dims[0], dims[1]]),
                3 => ZfpField::new(&values, [dims[0], dims[1], dims[2]]),
                _ => ZfpField::new(&values, [dims[0], dims[1], dims[2], dims[3]]),
            }
            .unwrap();
            let mode = Mode::from_codec_id(codec).unwrap();
            let zdims = [
                ZfpDimensionality::D1,
                ZfpDimensionality::D2,
                ZfpDimensionality::D3,
                ZfpDimensionality::D4,
            ][dims.len() - 1];
            let config = params::config(mode, meta, ZfpScalarType::F64, zdims, dims.len()).unwrap();
            let mut stream = ZfpBitStream::new(
                config
                    .maximum_size(ZfpScalarType::F64, field.dims())
                    .unwrap(),
            )
            .unwrap();
            let size = stream.compress(&config, &field).unwrap();
            let bytes = stream.as_bytes()[..size].to_vec();
            let mut out = vec![0u8; n * 8];
            decompress(codec, meta, 8, shape, &bytes, &mut out).unwrap();
            if codec == ZFP_RATE {
                // Every word of a fixed-rate stream holds bits of some cell.
                assert_eq!(
                    decompress(codec, meta, 8, shape, &bytes[..size - 8], &mut out),
                    Err(CodecError::Truncated { codec: "zfp_rate" })
                );
            }
            for cut in 0..bytes.len() {
                let _ = decompress(codec, meta, 8, shape, &bytes[..cut], &mut out);
            }
            for _ in 0..200 {
                let mut damaged = bytes.clone();
                let bit = (rng.next_u64() % (8 * damaged.len() as u64)) as usize;
                damaged[bit / 8] ^= 1 << (bit % 8);
                let _ = decompress(codec, meta, 8, shape, &damaged, &mut out);
            }
        }
    }

    #[test]
    fn an_empty_stream_is_truncated() {
        let mut dst = vec![0u8; 16 * 8];
        assert_eq!(
            decompress(ZFP_PREC, 20, 8, &[4, 4], &[], &mut dst),
            Err(CodecError::Truncated { codec: "zfp_prec" })
        );
    }

    #[test]
    fn bad_parameters_are_errors() {
        let mut dst = vec![0u8; 32];
        let src = [0u8; 64];
        assert!(matches!(
            decompress(ZFP_ACC, 0, 2, &[16], &src, &mut dst),
            Err(CodecError::Corrupt { .. })
        ));
        assert!(matches!(
            decompress(ZFP_ACC, 0, 4, &[], &src, &mut dst),
            Err(CodecError::Corrupt { .. })
        ));
        assert!(matches!(
            decompress(ZFP_ACC, 0, 4, &[1, 1, 1, 2, 4], &src, &mut dst),
            Err(CodecError::Corrupt { .. })
        ));
        assert!(matches!(
            decompress(ZFP_ACC, 0, 4, &[9], &src, &mut dst),
            Err(CodecError::Corrupt { .. })
        ));
        assert!(matches!(
            decompress(ZFP_ACC, 0, 4, &[0, 8], &src, &mut dst),
            Err(CodecError::Corrupt { .. })
        ));
        assert!(matches!(
            decompress(ZFP_ACC, 0, 4, &[u64::MAX, 2], &src, &mut dst),
            Err(CodecError::Corrupt { .. })
        ));
        assert!(matches!(
            decompress(5, 0, 4, &[8], &src, &mut dst),
            Err(CodecError::Corrupt { .. })
        ));
    }
}
