//! How C-Blosc2's ZFP plugin turns a chunk's one-byte `compcode_meta` into
//! ZFP's compression parameters.
//!
//! The ZFP streams Blosc2 writes carry no header, so the decoder must be set
//! up exactly as the encoder was. C-Blosc2's `blosc2-zfp.c` derives, from
//! the codec id, the meta byte, the block's number of dimensions and the item
//! size:
//! - `ZFP_ACC` (33): tolerance `10^m`, with `m` the meta byte read as a
//!   *signed* byte (python-blosc2 passes 0–255, so 254 means 10⁻²);
//! - `ZFP_PREC` (34): precision `meta + 5, 7, 9, 11` for 1 to 4 dimensions,
//!   capped at ZFP's maximum of 64 bits;
//! - `ZFP_RATE` (35): `meta / 100` of the item's bits, i.e. a rate of
//!   `(meta / 100) × typesize × 8` bits per value, which ZFP rounds to a
//!   whole number of bits per 4^d-value cell (at least the cell's header).
//!
//! The arithmetic is done in the same order and precision as the C code
//! (all in `f64`), so the bit budgets agree exactly.

use zfp_rs::{ZfpConfig, ZfpDimensionality, ZfpScalarType, ZfpStreamAlignment};

use super::super::codec_id;

/// The three ZFP modes C-Blosc2 registers as codecs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Fixed accuracy (codec 33): an absolute error tolerance.
    Accuracy,
    /// Fixed precision (codec 34): a number of bit planes.
    Precision,
    /// Fixed rate (codec 35): a number of bits per value.
    Rate,
}

impl Mode {
    /// The mode of codec `id`, if it is one of the ZFP codecs.
    pub fn from_codec_id(id: u8) -> Option<Mode> {
        match id {
            codec_id::ZFP_ACC => Some(Mode::Accuracy),
            codec_id::ZFP_PREC => Some(Mode::Precision),
            codec_id::ZFP_RATE => Some(Mode::Rate),
            _ => None,
        }
    }

    /// C-Blosc2's name for the codec (as in error messages).
    pub fn codec_name(self) -> &'static str {
        match self {
            Mode::Accuracy => "zfp_acc",
            Mode::Precision => "zfp_prec",
            Mode::Rate => "zfp_rate",
        }
    }
}

/// ZFP's largest precision (bit planes per value).
pub const MAX_PRECISION: u32 = 64;

/// The tolerance of `ZFP_ACC` with meta byte `meta`: `10^(meta as i8)`.
pub fn tolerance(meta: u8) -> f64 {
    // `powf` is the C library's `pow`, as C-Blosc2 calls it.
    10f64.powf(f64::from(meta as i8))
}

/// The precision of `ZFP_PREC` with meta byte `meta` for a block of `ndim`
/// (1..=4) dimensions.
pub fn precision(meta: u8, ndim: usize) -> u32 {
    let extra = 3 + 2 * ndim as u32;
    (u32::from(meta) + extra).min(MAX_PRECISION)
}

/// The rate (bits per value) of `ZFP_RATE` with meta byte `meta` for items
/// of `typesize` bytes.
pub fn rate(meta: u8, typesize: usize) -> f64 {
    let ratio = f64::from(meta) / 100.0;
    ratio * typesize as f64 * 8.0
}

/// The ZFP configuration C-Blosc2 uses for `mode` and `meta` on a block of
/// `ndim` dimensions of `scalar` values, or `None` if ZFP refuses it (a rate
/// that gives more bits per cell than ZFP allows).
pub fn config(
    mode: Mode,
    meta: u8,
    scalar: ZfpScalarType,
    dims: ZfpDimensionality,
    ndim: usize,
) -> Option<ZfpConfig> {
    match mode {
        Mode::Accuracy => Some(ZfpConfig::fixed_accuracy(tolerance(meta))),
        Mode::Precision => Some(ZfpConfig::fixed_precision(precision(meta, ndim))),
        Mode::Rate => {
            let typesize = match scalar {
                ZfpScalarType::F32 | ZfpScalarType::I32 => 4,
                ZfpScalarType::F64 | ZfpScalarType::I64 => 8,
            };
            ZfpConfig::fixed_rate(
                rate(meta, typesize),
                scalar,
                dims,
                ZfpStreamAlignment::Unaligned,
            )
            .ok()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accuracy_meta_is_a_signed_exponent() {
        assert_eq!(tolerance(0), 1.0);
        assert_eq!(tolerance(3), 1000.0);
        assert_eq!(tolerance(254), 0.01);
        assert_eq!(tolerance(128), 1e-128);
        // 2^-7 <= 10^-2 < 2^-6: ZFP keeps bit planes down to 2^-7.
        assert_eq!(
            config(
                Mode::Accuracy,
                254,
                ZfpScalarType::F64,
                ZfpDimensionality::D2,
                2
            )
            .unwrap()
            .min_exp(),
            -7
        );
        // A tolerance of exactly 1 keeps planes down to 2^0.
        assert_eq!(
            config(
                Mode::Accuracy,
                0,
                ZfpScalarType::F32,
                ZfpDimensionality::D1,
                1
            )
            .unwrap()
            .min_exp(),
            0
        );
    }

    #[test]
    fn precision_adds_per_dimension_and_caps_at_64() {
        assert_eq!(precision(0, 1), 5);
        assert_eq!(precision(10, 2), 17);
        assert_eq!(precision(10, 3), 19);
        assert_eq!(precision(10, 4), 21);
        assert_eq!(precision(59, 1), 64);
        assert_eq!(precision(60, 1), 64);
        assert_eq!(precision(255, 4), 64);
    }

    #[test]
    fn rate_is_a_fraction_of_the_item_bits() {
        assert_eq!(rate(50, 8), 32.0);
        assert_eq!(rate(37, 8), 0.37 * 8.0 * 8.0);
        // 1-D f32 at 10% of 32 bits: 3.2 bits/value, 12.8 → 13 bits per 4-value cell.
        let c = config(Mode::Rate, 10, ZfpScalarType::F32, ZfpDimensionality::D1, 1).unwrap();
        assert_eq!((c.min_bits(), c.max_bits()), (13, 13));
        // A zero rate is raised to the cell header (1 + 8 exponent bits for f32, 1 + 11 for f64).
        let c = config(Mode::Rate, 0, ZfpScalarType::F64, ZfpDimensionality::D3, 3).unwrap();
        assert_eq!(c.max_bits(), 12);
    }
}
