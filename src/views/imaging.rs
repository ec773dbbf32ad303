//! What the three imaging sidecar headers (`data.nhdr`, `data.mhd`,
//! `data.hdr`) share: which element types they can name, the geometry they
//! describe, and the physical spacing and origin an array's vlmeta may carry.
//!
//! Each header describes `data` exactly as it is: the presented dtype
//! (byte order included) and the presented shape, C order, no offset. A
//! header that could misread is worse than none, so every renderer answers
//! `None` unless it can describe the array completely.
//!
//! Spacing and origin: the convention is the array's own axis order, the
//! order of `shape` (C order, slowest axis first), as a NumPy user writes
//! `arr.vlmeta["spacing"] = [dz, dy, dx]`. The headers list axes fastest
//! first, so the renderers reverse them. Accepted vlmeta names (the first
//! present wins): [`SPACING_KEYS`] and [`ORIGIN_KEYS`]. A value that is not
//! a list of one finite number per axis (spacing: positive) is ignored, and
//! the header falls back to unit spacing and a zero origin.

use serde_json::Value as Json;

use super::scalar::{ScalarFormat, ScalarKind};

/// vlmeta names read as the physical spacing between samples, per axis.
pub const SPACING_KEYS: [&str; 4] = ["spacing", "voxel_size", "pixel_spacing", "element_spacing"];

/// vlmeta names read as the physical position of the first sample, per axis.
pub const ORIGIN_KEYS: [&str; 3] = ["origin", "offset", "space_origin"];

/// The element of a dtype as the headers see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element {
    /// Booleans, one byte of 0 or 1 (shown as unsigned 8-bit).
    Bool,
    /// An integer of `size` bytes.
    Int {
        /// Whether it is signed.
        signed: bool,
        /// Bytes per item: 1, 2, 4 or 8.
        size: usize,
    },
    /// An IEEE float of `size` bytes: 2, 4 or 8.
    Float {
        /// Bytes per item.
        size: usize,
    },
    /// A complex of two floats, `size` bytes in all: 8 or 16.
    Complex {
        /// Bytes per item.
        size: usize,
    },
}

/// What a header needs to know about the presented array.
#[derive(Debug, Clone, PartialEq)]
pub struct Raster {
    /// Its element type.
    pub element: Element,
    /// Stored big-endian (only meaningful when the element has more than one byte).
    pub big_endian: bool,
    /// Its shape, C order (slowest axis first); every axis at least 1.
    pub shape: Vec<u64>,
    /// Physical spacing per axis, C order (unit when the vlmeta has none).
    pub spacing: Vec<f64>,
    /// Physical position of the first sample per axis, C order (zero when none).
    pub origin: Vec<f64>,
    /// Whether spacing or origin came from the vlmeta.
    pub placed: bool,
}

impl Raster {
    /// The raster of `data` holding `dtype` (a NumPy dtype string) items in
    /// `shape`, with the array's vlmeta; `None` for a dtype that is not one
    /// plain number (strings, records, voids, datetimes), for 0-d arrays and
    /// for arrays with an empty axis (no header format can say "0 samples").
    pub fn new(dtype: &str, shape: &[u64], vlmeta: &[(String, Json)]) -> Option<Raster> {
        let ScalarFormat {
            kind,
            size,
            big_endian,
        } = ScalarFormat::parse(dtype)?;
        let element = match kind {
            ScalarKind::Bool => Element::Bool,
            ScalarKind::Int { signed } => Element::Int { signed, size },
            ScalarKind::Float => Element::Float { size },
            ScalarKind::Complex => Element::Complex { size },
            ScalarKind::Bytes { .. } | ScalarKind::Unicode | ScalarKind::Time => return None,
        };
        if shape.is_empty() || shape.contains(&0) {
            return None;
        }
        let rank = shape.len();
        let spacing = per_axis(vlmeta, &SPACING_KEYS, rank, |x| x > 0.0);
        let origin = per_axis(vlmeta, &ORIGIN_KEYS, rank, |_| true);
        let placed = spacing.is_some() || origin.is_some();
        Some(Raster {
            element,
            big_endian,
            shape: shape.to_vec(),
            spacing: spacing.unwrap_or_else(|| vec![1.0; rank]),
            origin: origin.unwrap_or_else(|| vec![0.0; rank]),
            placed,
        })
    }

    /// Number of axes.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Bytes per item.
    pub fn item_size(&self) -> usize {
        match self.element {
            Element::Bool => 1,
            Element::Int { size, .. } | Element::Float { size } | Element::Complex { size } => size,
        }
    }

    /// The shape, fastest axis first, as space-separated numbers.
    pub fn sizes_fastest_first(&self) -> String {
        join_reversed(self.shape.iter().map(u64::to_string))
    }

    /// The spacing, fastest axis first.
    pub fn spacing_fastest_first(&self) -> String {
        join_reversed(self.spacing.iter().map(|x| number(*x)))
    }

    /// The origin, fastest axis first.
    pub fn origin_fastest_first(&self) -> String {
        join_reversed(self.origin.iter().map(|x| number(*x)))
    }
}

/// The first of `keys` in `vlmeta` that holds one number per axis passing
/// `ok`, as f64s in C order.
fn per_axis(
    vlmeta: &[(String, Json)],
    keys: &[&str],
    rank: usize,
    ok: impl Fn(f64) -> bool,
) -> Option<Vec<f64>> {
    let value = keys
        .iter()
        .find_map(|k| vlmeta.iter().find(|(name, _)| name == k).map(|(_, v)| v))?;
    let list = value.as_array().filter(|l| l.len() == rank)?;
    list.iter()
        .map(|v| v.as_f64().filter(|x| x.is_finite() && ok(*x)))
        .collect()
}

/// `items` reversed, joined by single spaces.
fn join_reversed(items: impl DoubleEndedIterator<Item = String>) -> String {
    items.rev().collect::<Vec<_>>().join(" ")
}

/// `x` as the shortest decimal that reads back to it (`1`, `0.5`, `2.5e-7`).
pub fn number(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x:?}")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn meta(pairs: &[(&str, Json)]) -> Vec<(String, Json)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn numbers_and_bools_qualify_strings_records_and_empty_shapes_do_not() {
        let r = Raster::new(">i2", &[3, 4], &[]).unwrap();
        assert_eq!(
            (r.element, r.big_endian, r.item_size()),
            (
                Element::Int {
                    signed: true,
                    size: 2
                },
                true,
                2
            )
        );
        assert_eq!(
            Raster::new("|b1", &[5], &[]).unwrap().element,
            Element::Bool
        );
        assert_eq!(
            Raster::new("<c16", &[2, 2], &[]).unwrap().element,
            Element::Complex { size: 16 }
        );
        assert!(Raster::new("|S4", &[3], &[]).is_none());
        assert!(Raster::new("[('a', '<i4')]", &[3], &[]).is_none());
        assert!(Raster::new("|V8", &[3], &[]).is_none());
        assert!(Raster::new("<f8", &[], &[]).is_none(), "0-d");
        assert!(Raster::new("<f8", &[3, 0], &[]).is_none(), "empty axis");
    }

    #[test]
    fn spacing_and_origin_come_from_vlmeta_in_c_order_and_are_written_fastest_first() {
        let r = Raster::new(
            "<f4",
            &[10, 20, 30],
            &meta(&[
                ("spacing", json!([2.5, 1, 0.5])),
                ("origin", json!([-1, 0, 7.25])),
            ]),
        )
        .unwrap();
        assert!(r.placed);
        assert_eq!(r.sizes_fastest_first(), "30 20 10");
        assert_eq!(r.spacing_fastest_first(), "0.5 1 2.5");
        assert_eq!(r.origin_fastest_first(), "7.25 0 -1");
        // Other names imaging users write.
        let r = Raster::new("<f4", &[2, 3], &meta(&[("voxel_size", json!([3, 4]))])).unwrap();
        assert_eq!(
            (
                r.spacing_fastest_first().as_str(),
                r.origin_fastest_first().as_str()
            ),
            ("4 3", "0 0")
        );
    }

    #[test]
    fn unusable_geometry_falls_back_to_unit_spacing() {
        for bad in [
            json!([1, 2]),
            json!("1 2 3"),
            json!([1, 0, 2]),
            json!([1, -1, 2]),
            json!([1, null, 2]),
        ] {
            let r = Raster::new("<u1", &[4, 5, 6], &meta(&[("spacing", bad.clone())])).unwrap();
            assert_eq!(r.spacing, [1.0; 3], "{bad}");
            assert!(!r.placed, "{bad}");
        }
        // A negative origin is fine; a wrong length is not.
        assert_eq!(
            Raster::new("<u1", &[4, 5], &meta(&[("origin", json!([-2, -3]))]))
                .unwrap()
                .origin,
            [-2.0, -3.0]
        );
        assert_eq!(
            Raster::new("<u1", &[4, 5], &meta(&[("origin", json!([1]))]))
                .unwrap()
                .origin,
            [0.0, 0.0]
        );
    }

    #[test]
    fn numbers_read_back() {
        assert_eq!(number(1.0), "1");
        assert_eq!(number(-0.0), "0");
        assert_eq!(number(0.1), "0.1");
        assert_eq!(number(2.5e-7), "2.5e-7");
        assert_eq!(number(1e300).parse::<f64>().unwrap(), 1e300);
    }
}
