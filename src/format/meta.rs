//! Array metadata: the `b2nd` and legacy `caterva` metalayers.
//!
//! Both are msgpack arrays: `[version, ndim, shape, chunkshape, blockshape]`,
//! and b2nd adds `[dtype_format, dtype]`. Shapes are validated here (sizes,
//! products, blocks no larger than chunks) so geometry can trust them.

use rmpv::Value;

use super::dtype::{ItemKind, NumpyDtype};
use super::error::{PResult, Problem};
use super::msgpack;

/// Most dimensions accepted (C-Blosc2 allows 16).
pub const MAX_DIM: usize = 16;

/// Which metalayer described the array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// The `b2nd` metalayer (C-Blosc2's N-d arrays); may also carry a dtype.
    B2nd,
    /// The legacy `caterva` metalayer (Caterva arrays); never carries a dtype.
    Caterva,
}

/// Shape information from a b2nd or caterva metalayer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NdMeta {
    /// Which metalayer it was parsed from.
    pub flavor: Flavor,
    /// Metalayer format version (its first field), as stored; not checked.
    pub version: u64,
    /// Extent of the array along each dimension, in items: at most 16
    /// dimensions, each below 2^62, with a product below 2^62.
    pub shape: Vec<u64>,
    /// Extent of a chunk along each dimension, in items: below 2^31, and 0 only
    /// where the array's extent is 0.
    pub chunkshape: Vec<u64>,
    /// Extent of a block along each dimension, in items: never larger than the
    /// chunkshape, and 0 only where the chunkshape is 0.
    pub blockshape: Vec<u64>,
    /// 0 = NumPy dtype string.
    pub dtype_format: Option<u64>,
    /// The dtype description (a NumPy dtype string when `dtype_format` is 0),
    /// from a b2nd metalayer that carries one; `None` otherwise.
    pub dtype: Option<String>,
}

fn as_u64(v: &Value, what: &str) -> PResult<u64> {
    v.as_u64().ok_or_else(|| {
        Problem::corrupt(what, format!("expected a non-negative integer, found {v}"))
    })
}

fn as_dims(v: &Value, ndim: usize, what: &str) -> PResult<Vec<u64>> {
    let items = v
        .as_array()
        .ok_or_else(|| Problem::corrupt(what, "expected an array"))?;
    if items.len() != ndim {
        return Err(Problem::corrupt(
            what,
            format!("{} entries for {ndim} dimensions", items.len()),
        ));
    }
    items.iter().map(|x| as_u64(x, what)).collect()
}

impl NdMeta {
    /// Parse the content of a `b2nd` or `caterva` metalayer.
    pub fn parse(bytes: &[u8], flavor: Flavor) -> PResult<NdMeta> {
        let what = match flavor {
            Flavor::B2nd => "b2nd metalayer",
            Flavor::Caterva => "caterva metalayer",
        };
        let value = msgpack::parse(bytes, what)?;
        let items = value
            .as_array()
            .ok_or_else(|| Problem::corrupt(what, "not a msgpack array"))?;
        if items.len() < 5 {
            return Err(Problem::corrupt(
                what,
                format!("{} fields, expected at least 5", items.len()),
            ));
        }
        let version = as_u64(&items[0], what)?;
        let ndim = as_u64(&items[1], what)? as usize;
        if ndim > MAX_DIM {
            return Err(Problem::corrupt(
                what,
                format!("{ndim} dimensions (at most {MAX_DIM})"),
            ));
        }
        let shape = as_dims(&items[2], ndim, what)?;
        let chunkshape = as_dims(&items[3], ndim, what)?;
        let blockshape = as_dims(&items[4], ndim, what)?;
        let (dtype_format, dtype) = if flavor == Flavor::B2nd && items.len() >= 7 {
            let format = as_u64(&items[5], what)?;
            let dtype = items[6]
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| Problem::corrupt(what, "dtype is not a string"))?;
            (Some(format), Some(dtype))
        } else {
            (None, None)
        };
        let meta = NdMeta {
            flavor,
            version,
            shape,
            chunkshape,
            blockshape,
            dtype_format,
            dtype,
        };
        meta.validate(what)?;
        Ok(meta)
    }

    fn validate(&self, what: &str) -> PResult<()> {
        let mut nitems: u64 = 1;
        for d in 0..self.shape.len() {
            let (s, c, b) = (self.shape[d], self.chunkshape[d], self.blockshape[d]);
            if s >= 1 << 62 || c >= 1 << 31 || b >= 1 << 31 {
                return Err(Problem::corrupt(
                    what,
                    format!("dimension {d} too large (shape {s}, chunk {c}, block {b})"),
                ));
            }
            if c == 0 && s != 0 {
                return Err(Problem::corrupt(
                    what,
                    format!("dimension {d}: chunkshape 0 for a non-empty extent {s}"),
                ));
            }
            if b == 0 && c != 0 {
                return Err(Problem::corrupt(
                    what,
                    format!("dimension {d}: blockshape 0 for chunkshape {c}"),
                ));
            }
            if b > c {
                return Err(Problem::corrupt(
                    what,
                    format!("dimension {d}: blockshape {b} exceeds chunkshape {c}"),
                ));
            }
            nitems = nitems
                .checked_mul(s)
                .filter(|&n| n < 1 << 62)
                .ok_or_else(|| Problem::corrupt(what, "shape product overflows"))?;
        }
        Ok(())
    }

    /// Number of dimensions (0 for a scalar array).
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
}

/// Item size of a plain NumPy dtype string (`<f8`: 8, `|S7`: 7, `<U5`: 20,
/// `<M8`: 8) as [`NumpyDtype::parse`] reads it; `None` for a structured
/// dtype, a subarray, an object, a string that is no dtype, and a datetime
/// or timedelta that names its unit (`<M8[ns]`): those are not counted
/// here, so the views present such arrays as voids of their typesize
/// (meta.json keeps the declared string).
pub fn simple_dtype_itemsize(dtype: &str) -> Option<u64> {
    let parsed = NumpyDtype::parse(dtype).ok()?;
    let scalar = parsed.as_scalar()?;
    match scalar.kind {
        ItemKind::Object => None,
        ItemKind::Datetime | ItemKind::Timedelta if scalar.unit.is_some() => None,
        _ => Some(scalar.size),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The b2nd metalayer of conformance/example_day_month_temp.b2nd, as shown
    /// in C-Blosc2's frame documentation: [0, 2, [400, 3], [110, 3], [57, 3], 0, "|u1"].
    fn day_month_temp() -> Vec<u8> {
        let mut b = vec![0x97, 0x00, 0x02, 0x92, 0xd3];
        b.extend_from_slice(&400i64.to_be_bytes());
        b.push(0xd3);
        b.extend_from_slice(&3i64.to_be_bytes());
        b.extend_from_slice(&[0x92, 0xd2]);
        b.extend_from_slice(&110i32.to_be_bytes());
        b.push(0xd2);
        b.extend_from_slice(&3i32.to_be_bytes());
        b.extend_from_slice(&[0x92, 0xd2]);
        b.extend_from_slice(&57i32.to_be_bytes());
        b.push(0xd2);
        b.extend_from_slice(&3i32.to_be_bytes());
        b.extend_from_slice(&[0x00, 0xdb]);
        b.extend_from_slice(&3u32.to_be_bytes());
        b.extend_from_slice(b"|u1");
        b
    }

    #[test]
    fn simple_itemsizes() {
        for (dtype, size) in [
            ("<f8", Some(8)),
            ("|S7", Some(7)),
            ("<U5", Some(20)),
            ("|b1", Some(1)),
            ("?", Some(1)),
            ("|V16", Some(16)),
            (">c16", Some(16)),
            ("<M8", Some(8)),
            ("<M8[ns]", None),
            ("<m8[s]", None),
            ("|O", None),
            ("[('a', '<i4')]", None),
            ("('<i4', (2,))", None),
            ("<i3", None),
            ("", None),
        ] {
            assert_eq!(simple_dtype_itemsize(dtype), size, "{dtype}");
        }
    }

    #[test]
    fn parses_b2nd() {
        let meta = NdMeta::parse(&day_month_temp(), Flavor::B2nd).unwrap();
        assert_eq!(meta.shape, vec![400, 3]);
        assert_eq!(meta.chunkshape, vec![110, 3]);
        assert_eq!(meta.blockshape, vec![57, 3]);
        assert_eq!(meta.dtype.as_deref(), Some("|u1"));
        assert_eq!(meta.dtype_format, Some(0));
    }

    #[test]
    fn caterva_has_no_dtype() {
        let bytes = day_month_temp();
        let meta = NdMeta::parse(&bytes, Flavor::Caterva).unwrap();
        assert_eq!(meta.dtype, None);
        assert_eq!(meta.shape, vec![400, 3]);
    }

    #[test]
    fn rejects_block_larger_than_chunk_and_truncation() {
        let mut bytes = day_month_temp();
        // blockshape[0] = 57 → 200 (> chunkshape 110)
        let pos = bytes
            .windows(4)
            .position(|w| w == 57i32.to_be_bytes())
            .unwrap();
        bytes[pos..pos + 4].copy_from_slice(&200i32.to_be_bytes());
        assert!(matches!(
            NdMeta::parse(&bytes, Flavor::B2nd),
            Err(Problem::Corrupt { .. })
        ));
        let good = day_month_temp();
        for cut in 0..good.len() - 4 {
            assert!(
                NdMeta::parse(&good[..cut], Flavor::B2nd).is_err(),
                "cut at {cut}"
            );
        }
    }
}
