//! What the three imaging sidecar headers (`data.nhdr`, `data.mhd`,
//! `data.hdr`) share: which element types they can name, the geometry they
//! describe, and where that geometry comes from.
//!
//! Each header describes `data` exactly as it is: the presented dtype
//! (byte order included) and the presented shape, C order, no offset. A
//! header that could misread is worse than none, so every renderer answers
//! `None` unless it can describe the array completely.
//!
//! Geometry ([`Geometry`]) is what the data carries, never a guess: the
//! array's own vlmeta under the names below, or (found by the catalog) an
//! nnU-Net plans file beside a preprocessed folder. Everything is in the
//! array's own axis order, the order of `shape` (C order, slowest axis
//! first), as a NumPy user writes `arr.vlmeta["spacing"] = [dz, dy, dx]`:
//!
//! - `channel_axis`: the axis holding channels (an integer, negative counts
//!   from the end); the headers show it as components, not as a dimension.
//! - spacing ([`SPACING_KEYS`]): one positive number per spatial axis (every
//!   axis but the channel axis; a list of one per axis is also taken, the
//!   channel axis's entry ignored).
//! - origin ([`ORIGIN_KEYS`]): the position of the first sample, one number
//!   per spatial axis, as spacing.
//! - `direction`: one unit-free vector per spatial axis (a list of lists,
//!   or their concatenation), its components in the same array axis order;
//!   the matrix must not be singular.
//!
//! The headers list axes fastest first, so the renderers reverse both the
//! axes and each direction's components. A value that does not fit (wrong
//! length, not a finite number, a zero or negative spacing, a singular
//! direction, a channel axis out of range) is ignored alone; the rest is
//! kept.

use serde_json::{json, Value as Json};

use super::scalar::{ScalarFormat, ScalarKind};

/// vlmeta names read as the physical spacing between samples, per axis.
pub const SPACING_KEYS: [&str; 4] = ["spacing", "voxel_size", "pixel_spacing", "element_spacing"];

/// vlmeta names read as the physical position of the first sample, per axis.
pub const ORIGIN_KEYS: [&str; 3] = ["origin", "offset", "space_origin"];

/// The vlmeta name of the direction vectors of the spatial axes.
pub const DIRECTION_KEY: &str = "direction";

/// The vlmeta name of the axis holding channels.
pub const CHANNEL_AXIS_KEY: &str = "channel_axis";

/// Where an array's geometry comes from and what it says, in the array's
/// axis order. Every part is optional; an empty one places nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Geometry {
    /// The axis holding channels (components), when one does.
    pub channel_axis: Option<usize>,
    /// Spacing per spatial axis (every axis but the channel axis), C order.
    pub spacing: Option<Vec<f64>>,
    /// Position of the first sample per spatial axis, C order.
    pub origin: Option<Vec<f64>>,
    /// One direction vector per spatial axis, components in C order.
    pub direction: Option<Vec<Vec<f64>>>,
}

impl Geometry {
    /// What `vlmeta` says of an array of `rank` axes, each part that fits
    /// kept, the rest ignored.
    pub fn from_vlmeta(vlmeta: &[(String, Json)], rank: usize) -> Geometry {
        let find = |keys: &[&str]| {
            keys.iter()
                .find_map(|k| vlmeta.iter().find(|(name, _)| name == k).map(|(_, v)| v))
        };
        let channel_axis = find(&[CHANNEL_AXIS_KEY])
            .and_then(Json::as_i64)
            .and_then(|a| axis_index(a, rank))
            .filter(|_| rank >= 2);
        let spatial = rank - usize::from(channel_axis.is_some());
        let per_axis = |keys: &[&str], ok: fn(f64) -> bool| {
            let list = numbers(find(keys)?)?;
            let list = match (list.len(), channel_axis) {
                (n, _) if n == spatial => list,
                (n, Some(c)) if n == rank => drop_axis(&list, c),
                _ => return None,
            };
            list.iter().all(|x| ok(*x)).then_some(list)
        };
        let spacing = per_axis(&SPACING_KEYS, |x| x > 0.0);
        let origin = per_axis(&ORIGIN_KEYS, |_| true);
        let direction = find(&[DIRECTION_KEY]).and_then(|v| matrix(v, spatial));
        Geometry {
            channel_axis,
            spacing,
            origin,
            direction,
        }
    }

    /// Whether it says nothing.
    pub fn is_empty(&self) -> bool {
        *self == Geometry::default()
    }

    /// Whether it fits an array of `shape`; why not, when it does not.
    pub fn check(&self, shape: &[u64]) -> Result<(), String> {
        let rank = shape.len();
        if let Some(c) = self.channel_axis {
            if c >= rank || rank < 2 {
                return Err(format!(
                    "channel axis {c} does not fit an array of {rank} axes"
                ));
            }
        }
        let spatial = rank - usize::from(self.channel_axis.is_some());
        for (what, list) in [("spacing", &self.spacing), ("origin", &self.origin)] {
            if let Some(list) = list {
                if list.len() != spatial {
                    return Err(format!(
                        "{what} has {} entries for {spatial} spatial axes (shape {shape:?})",
                        list.len()
                    ));
                }
            }
        }
        if let Some(d) = &self.direction {
            if d.len() != spatial || d.iter().any(|row| row.len() != spatial) {
                return Err(format!(
                    "direction is not {spatial} by {spatial} (shape {shape:?})"
                ));
            }
        }
        Ok(())
    }

    /// What it says as attributes of the array's `zarr.json` (the names of
    /// the vlmeta convention, values in array axis order).
    pub fn attributes(&self) -> Vec<(String, Json)> {
        let mut out = Vec::new();
        if let Some(c) = self.channel_axis {
            out.push((CHANNEL_AXIS_KEY.to_string(), json!(c)));
        }
        if let Some(s) = &self.spacing {
            out.push(("spacing".to_string(), json!(s)));
        }
        if let Some(o) = &self.origin {
            out.push(("origin".to_string(), json!(o)));
        }
        if let Some(d) = &self.direction {
            out.push((DIRECTION_KEY.to_string(), json!(d)));
        }
        out
    }
}

/// `a` as an index among `rank` axes (negative counts from the end).
fn axis_index(a: i64, rank: usize) -> Option<usize> {
    let rank = i64::try_from(rank).ok()?;
    let a = if a < 0 { a + rank } else { a };
    (0..rank).contains(&a).then(|| a as usize)
}

/// A JSON list of finite numbers.
fn numbers(value: &Json) -> Option<Vec<f64>> {
    value
        .as_array()?
        .iter()
        .map(|v| v.as_f64().filter(|x| x.is_finite()))
        .collect()
}

/// `list` without its entry `axis`.
fn drop_axis(list: &[f64], axis: usize) -> Vec<f64> {
    list.iter()
        .enumerate()
        .filter(|(i, _)| *i != axis)
        .map(|(_, x)| *x)
        .collect()
}

/// An `n` by `n` non-singular matrix of finite numbers: a list of `n`
/// lists, or `n * n` numbers row after row.
fn matrix(value: &Json, n: usize) -> Option<Vec<Vec<f64>>> {
    if n == 0 {
        return None;
    }
    let rows: Vec<Vec<f64>> = match numbers(value) {
        Some(flat) if flat.len() == n * n => flat.chunks(n).map(<[f64]>::to_vec).collect(),
        Some(_) => return None,
        None => value
            .as_array()?
            .iter()
            .map(numbers)
            .collect::<Option<Vec<_>>>()?,
    };
    if rows.len() != n || rows.iter().any(|r| r.len() != n) {
        return None;
    }
    (determinant(&rows).abs() > 1e-9).then_some(rows)
}

/// The determinant of a square matrix (Gaussian elimination; `n` is a
/// handful of axes).
fn determinant(rows: &[Vec<f64>]) -> f64 {
    let mut m = rows.to_vec();
    let n = m.len();
    let mut det = 1.0;
    for col in 0..n {
        let Some(pivot) = (col..n).max_by(|a, b| m[*a][col].abs().total_cmp(&m[*b][col].abs()))
        else {
            return 0.0;
        };
        if m[pivot][col] == 0.0 {
            return 0.0;
        }
        if pivot != col {
            m.swap(pivot, col);
            det = -det;
        }
        det *= m[col][col];
        for r in col + 1..n {
            let f = m[r][col] / m[col][col];
            for c in col..n {
                m[r][c] -= f * m[col][c];
            }
        }
    }
    det
}

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
    /// The axis holding channels, when one does.
    pub channel_axis: Option<usize>,
    /// Physical spacing per spatial axis, C order (unit when nothing says).
    pub spacing: Vec<f64>,
    /// Physical position of the first sample per spatial axis, C order
    /// (zero when nothing says).
    pub origin: Vec<f64>,
    /// Direction vectors of the spatial axes, C order (axis-aligned when
    /// `None`).
    pub direction: Option<Vec<Vec<f64>>>,
    /// Whether spacing, origin or direction were given.
    pub placed: bool,
}

impl Raster {
    /// The raster of `data` holding `dtype` (a NumPy dtype string) items in
    /// `shape`, placed by what the array's vlmeta says ([`Geometry`]).
    pub fn new(dtype: &str, shape: &[u64], vlmeta: &[(String, Json)]) -> Option<Raster> {
        Raster::placed(dtype, shape, &Geometry::from_vlmeta(vlmeta, shape.len()))
    }

    /// The raster of `data` holding `dtype` items in `shape`, placed by
    /// `geometry` (ignored when it does not fit the shape); `None` for a
    /// dtype that is not one plain number (strings, records, voids,
    /// datetimes), for 0-d arrays and for arrays with an empty axis (no
    /// header format can say "0 samples").
    pub fn placed(dtype: &str, shape: &[u64], geometry: &Geometry) -> Option<Raster> {
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
        let empty = Geometry::default();
        let geometry = if geometry.check(shape).is_ok() {
            geometry
        } else {
            &empty
        };
        let spatial = shape.len() - usize::from(geometry.channel_axis.is_some());
        Some(Raster {
            element,
            big_endian,
            shape: shape.to_vec(),
            channel_axis: geometry.channel_axis,
            spacing: geometry
                .spacing
                .clone()
                .unwrap_or_else(|| vec![1.0; spatial]),
            origin: geometry
                .origin
                .clone()
                .unwrap_or_else(|| vec![0.0; spatial]),
            direction: geometry.direction.clone(),
            placed: geometry.spacing.is_some()
                || geometry.origin.is_some()
                || geometry.direction.is_some(),
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

    /// The shape of the spatial axes (all but the channel axis), C order.
    pub fn spatial_shape(&self) -> Vec<u64> {
        self.shape
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != self.channel_axis)
            .map(|(_, n)| *n)
            .collect()
    }

    /// The number of channels (1 without a channel axis).
    pub fn channels(&self) -> u64 {
        self.channel_axis.map_or(1, |c| self.shape[c])
    }

    /// The whole shape, fastest axis first, as space-separated numbers.
    pub fn sizes_fastest_first(&self) -> String {
        join_reversed(self.shape.iter().map(u64::to_string))
    }

    /// The spatial shape, fastest axis first.
    pub fn spatial_sizes_fastest_first(&self) -> String {
        join_reversed(self.spatial_shape().iter().map(u64::to_string))
    }

    /// The spacing of the spatial axes, fastest first.
    pub fn spacing_fastest_first(&self) -> String {
        join_reversed(self.spacing.iter().map(|x| number(*x)))
    }

    /// The origin, fastest axis first.
    pub fn origin_fastest_first(&self) -> String {
        join_reversed(self.origin.iter().map(|x| number(*x)))
    }

    /// The direction of each spatial axis, fastest axis first, each
    /// vector's components fastest first too (x, y, z as ITK has them);
    /// the identity when nothing says.
    pub fn directions_fastest_first(&self) -> Vec<Vec<f64>> {
        let n = self.spacing.len();
        (0..n)
            .map(|k| {
                let axis = n - 1 - k;
                match &self.direction {
                    Some(d) => d[axis].iter().rev().copied().collect(),
                    None => (0..n).map(|j| if j == k { 1.0 } else { 0.0 }).collect(),
                }
            })
            .collect()
    }
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

    #[test]
    fn a_channel_axis_takes_spacing_for_the_other_axes() {
        let shape = [2, 4, 5, 6];
        let g = Geometry::from_vlmeta(
            &meta(&[
                ("channel_axis", json!(0)),
                ("spacing", json!([3, 0.625, 0.5])),
            ]),
            4,
        );
        assert_eq!(g.channel_axis, Some(0));
        assert_eq!(g.spacing, Some(vec![3.0, 0.625, 0.5]));
        assert!(g.check(&shape).is_ok());
        // One entry per axis: the channel axis's is dropped.
        let g = Geometry::from_vlmeta(
            &meta(&[("channel_axis", json!(-1)), ("spacing", json!([3, 2, 9]))]),
            3,
        );
        assert_eq!((g.channel_axis, g.spacing), (Some(2), Some(vec![3.0, 2.0])));
        // Out of range, not an integer, or a 1-D array: no channel axis.
        for bad in [json!(4), json!(-5), json!("0"), json!(1.5)] {
            let g = Geometry::from_vlmeta(&meta(&[("channel_axis", bad.clone())]), 4);
            assert_eq!(g.channel_axis, None, "{bad}");
        }
        assert_eq!(
            Geometry::from_vlmeta(&meta(&[("channel_axis", json!(0))]), 1).channel_axis,
            None
        );
        let r = Raster::placed(
            "<f4",
            &shape,
            &Geometry {
                channel_axis: Some(0),
                spacing: Some(vec![3.0, 0.625, 0.5]),
                ..Geometry::default()
            },
        )
        .unwrap();
        assert_eq!((r.spatial_shape(), r.channels()), (vec![4, 5, 6], 2));
        assert_eq!(r.spacing_fastest_first(), "0.5 0.625 3");
        assert_eq!(r.spatial_sizes_fastest_first(), "6 5 4");
    }

    #[test]
    fn geometry_that_does_not_fit_the_shape_is_refused_whole() {
        let g = Geometry {
            channel_axis: Some(0),
            spacing: Some(vec![1.0, 2.0]),
            ..Geometry::default()
        };
        assert!(
            g.check(&[2, 3, 4, 5]).is_err(),
            "3 spatial axes, 2 spacings"
        );
        assert!(g.check(&[2, 3, 4]).is_ok());
        assert!(Geometry {
            channel_axis: Some(3),
            ..Geometry::default()
        }
        .check(&[2, 3, 4])
        .is_err());
        let r = Raster::placed("<f4", &[2, 3, 4, 5], &g).unwrap();
        assert_eq!((r.channel_axis, r.placed), (None, false));
        assert_eq!(r.spacing, [1.0; 4]);
    }

    #[test]
    fn directions_are_matrices_that_are_not_singular_written_fastest_first() {
        let rows = json!([[0, 0, 1], [0, 1, 0], [-1, 0, 0]]);
        let flat = json!([0, 0, 1, 0, 1, 0, -1, 0, 0]);
        for value in [rows, flat] {
            let r = Raster::new("<u1", &[5, 6, 7], &meta(&[("direction", value)])).unwrap();
            assert!(r.placed);
            // Header axis 0 is array axis 2 ([-1, 0, 0]), components reversed.
            assert_eq!(
                r.directions_fastest_first(),
                [[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
            );
        }
        for bad in [
            json!([[1, 0, 0], [1, 0, 0], [0, 0, 1]]),
            json!([[1, 0], [0, 1]]),
            json!([1, 0, 0, 1]),
            json!([[1, 0, 0], [0, 1, 0], [0, 0, null]]),
        ] {
            let r = Raster::new("<u1", &[5, 6, 7], &meta(&[("direction", bad.clone())])).unwrap();
            assert_eq!((r.direction.clone(), r.placed), (None, false), "{bad}");
        }
        let unplaced = Raster::new("<u1", &[5, 6], &[]).unwrap();
        assert_eq!(
            unplaced.directions_fastest_first(),
            [[1.0, 0.0], [0.0, 1.0]]
        );
    }

    #[test]
    fn geometry_becomes_zarr_attributes_under_the_vlmeta_names() {
        let g = Geometry {
            channel_axis: Some(0),
            spacing: Some(vec![3.0, 0.5, 0.5]),
            ..Geometry::default()
        };
        assert_eq!(
            g.attributes(),
            meta(&[
                ("channel_axis", json!(0)),
                ("spacing", json!([3.0, 0.5, 0.5]))
            ])
        );
        assert!(Geometry::default().is_empty() && !g.is_empty());
    }
}
