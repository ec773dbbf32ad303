//! `preview.png`: a picture of an array, decoded through the read layer.
//!
//! What is drawn depends on the shape alone, so the PNG's dimensions (and,
//! with the stored-deflate encoder of [`super::png`], its length)
//! are known at `stat` time:
//! - 1-D: a line plot, 512 x 256, each pixel column the min/max envelope of
//!   the values it covers;
//! - N-D whose last axis has length 3 or 4 and dtype `u1` (N >= 3): an RGB(A)
//!   image of the axes -3 and -2;
//! - other N-D (N >= 2): the last two axes through a colour map (viridis,
//!   from the smallest finite value to the largest; NaN magenta).
//!
//! Axes before the pictured ones are taken at index 0. An image axis longer
//! than 512 is shown every k-th element (one k for both axes). When the
//! blocks behind the picture would be larger than the cache (or
//! [`FULL_LIMIT`]), the picture is *sampled*: it becomes a mosaic of tiles,
//! each showing one block spread evenly over the array, decoding at most
//! [`MAX_SAMPLED_BLOCKS`] blocks; the `Sampled` text says so and the range
//! shown is the sample's. The `Range` text holds the smallest and largest
//! finite values drawn.

use crate::format::filter::filter_id::DELTA;
use crate::format::{Array, Error, Geometry, Problem, Shape};
use crate::read::{Planner, View};

use super::dtype::presented_dtype;
use super::png::{encode, png_len, TextField};
use super::scalar::{ScalarFormat, ScalarKind};

/// Longest side of a pictured image, in pixels.
pub const MAX_SIDE: u64 = 512;

/// Most blocks a sampled picture decodes.
pub const MAX_SAMPLED_BLOCKS: u64 = 64;

/// Most bytes of blocks a picture decodes whole, whatever the cache.
pub const FULL_LIMIT: u64 = 128 << 20;

/// Size of a line plot.
const PLOT_WIDTH: u32 = 512;
const PLOT_HEIGHT: u32 = 256;

/// Most bytes asked of the planner at once.
const READ_PIECE: u64 = 1 << 20;

/// Colour of NaN in a colour map.
const NAN_COLOUR: [u8; 3] = [255, 0, 255];
/// Colours of a line plot.
const PLOT_BACKGROUND: [u8; 3] = [255, 255, 255];
const PLOT_LINE: [u8; 3] = [31, 119, 180];

/// The colour map (viridis) at 0, 1/8, ..., 1; values in between are
/// interpolated linearly on 256 steps.
pub const VIRIDIS: [[u8; 3]; 9] = [
    [68, 1, 84],
    [71, 44, 122],
    [59, 81, 139],
    [44, 113, 142],
    [33, 144, 141],
    [39, 173, 129],
    [92, 200, 99],
    [170, 220, 50],
    [253, 231, 37],
];

/// The fixed-length texts of every preview.
const DESCRIPTION: TextField = TextField {
    keyword: "Description",
    len: 200,
};
const RANGE: TextField = TextField {
    keyword: "Range",
    len: 60,
};
const SAMPLED: TextField = TextField {
    keyword: "Sampled",
    len: 60,
};
const TEXTS: [TextField; 3] = [DESCRIPTION, RANGE, SAMPLED];

/// What the picture shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Picture {
    /// A line plot of `n` values.
    Plot { n: u64 },
    /// `h` x `w` values through the colour map.
    Map { h: u64, w: u64 },
    /// `h` x `w` pixels of `c` u1 channels.
    Rgb { h: u64, w: u64, c: u64 },
}

/// How one array's preview is made: known from its shape and dtype alone.
#[derive(Debug, Clone)]
pub struct PreviewPlan {
    picture: Picture,
    format: ScalarFormat,
    geometry: Geometry,
    dtype: String,
    width: u32,
    height: u32,
    channels: u8,
    /// Every `step`-th element of an image axis is shown.
    step: u64,
}

/// A value range (smallest and largest finite values seen).
#[derive(Debug, Clone, Copy)]
struct Range {
    min: f64,
    max: f64,
}

impl Range {
    fn new() -> Range {
        Range {
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }

    fn add(&mut self, v: f64) {
        if v.is_finite() {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
    }

    fn is_empty(&self) -> bool {
        self.min > self.max
    }

    /// Where `v` lies in the range, 0 to 1 (0.5 when the range is one value).
    fn position(&self, v: f64) -> f64 {
        if v == f64::INFINITY {
            1.0
        } else if v == f64::NEG_INFINITY || self.is_empty() {
            0.0
        } else if self.max > self.min {
            ((v - self.min) / (self.max - self.min)).clamp(0.0, 1.0)
        } else {
            0.5
        }
    }

    fn text(&self) -> String {
        if self.is_empty() {
            return "none".into();
        }
        let f8 = ScalarFormat {
            kind: ScalarKind::Float,
            size: 8,
            big_endian: false,
        };
        format!(
            "{} {}",
            f8.text(&self.min.to_le_bytes()),
            f8.text(&self.max.to_le_bytes())
        )
    }
}

/// The colour of position `t` (0 to 1) in the colour map.
pub fn colour(t: f64) -> [u8; 3] {
    let step = (t.clamp(0.0, 1.0) * 255.0).round() as usize;
    let at = step as f64 * 8.0 / 255.0;
    let i = (at.floor() as usize).min(7);
    let f = at - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    [0, 1, 2].map(|k| (a[k] as f64 + (b[k] as f64 - a[k] as f64) * f).round() as u8)
}

/// Distinct blocks holding elements along axis `d` of the whole extent.
fn blocks_along(g: &Geometry, d: usize) -> u64 {
    let (s, c, b) = (g.shape[d], g.chunkshape[d], g.blockshape[d]);
    if c == 0 || b == 0 {
        return 0;
    }
    (s / c) * c.div_ceil(b) + (s % c).div_ceil(b)
}

/// The block holding element `t` along axis `d`: its first element and length.
fn block_at(g: &Geometry, d: usize, t: u64) -> (u64, u64) {
    let (s, c, b) = (g.shape[d], g.chunkshape[d], g.blockshape[d]);
    let chunk = t / c;
    let blk = (t % c) / b;
    let start = chunk * c + blk * b;
    (start, b.min(c - blk * b).min(s - start))
}

/// Source positions for `out` pixels along one axis of extent `n`: every
/// `step`-th element, or in `tiles` bands each spread over one block.
fn axis_map(
    g: &Geometry,
    d: usize,
    n: u64,
    out: u64,
    step: u64,
    tiles: Option<u64>,
) -> (Vec<u64>, Vec<(u64, u64)>) {
    match tiles {
        None => (
            (0..out).map(|i| (i * step).min(n - 1)).collect(),
            vec![(0, n)],
        ),
        Some(t) => {
            let mut map = Vec::with_capacity(out as usize);
            let mut spans = Vec::new();
            for i in 0..t {
                let (o0, o1) = (i * out / t, (i + 1) * out / t);
                let centre = ((2 * i + 1) * n / (2 * t)).min(n - 1);
                let (start, len) = block_at(g, d, centre);
                spans.push((start, start + len));
                for o in o0..o1 {
                    map.push(start + (o - o0) * len / (o1 - o0));
                }
            }
            (map, spans)
        }
    }
}

impl PreviewPlan {
    /// The plan for `array`: `None` unless it is an N-d array (at least one
    /// axis, no empty one) of a simple numeric dtype.
    pub fn new(array: &Array) -> Option<PreviewPlan> {
        let Shape::Nd { geometry, .. } = array.shape() else {
            return None;
        };
        let dtype = presented_dtype(array);
        let format = ScalarFormat::parse(&dtype)?;
        let shape = &geometry.shape;
        let nd = shape.len();
        if nd == 0 || shape.contains(&0) || format.size as u64 != geometry.itemsize {
            return None;
        }
        let u1 = matches!(format.kind, ScalarKind::Int { signed: false }) && format.size == 1;
        let picture = if nd == 1 {
            Picture::Plot { n: shape[0] }
        } else if nd >= 3 && u1 && matches!(shape[nd - 1], 3 | 4) {
            Picture::Rgb {
                h: shape[nd - 3],
                w: shape[nd - 2],
                c: shape[nd - 1],
            }
        } else {
            Picture::Map {
                h: shape[nd - 2],
                w: shape[nd - 1],
            }
        };
        let (width, height, channels, step) = match picture {
            Picture::Plot { .. } => (PLOT_WIDTH, PLOT_HEIGHT, 3, 1),
            Picture::Map { h, w } | Picture::Rgb { h, w, .. } => {
                let step = h.max(w).div_ceil(MAX_SIDE);
                let c = if let Picture::Rgb { c, .. } = picture {
                    c as u8
                } else {
                    3
                };
                (w.div_ceil(step) as u32, h.div_ceil(step) as u32, c, step)
            }
        };
        Some(PreviewPlan {
            picture,
            format,
            geometry: geometry.clone(),
            dtype,
            width,
            height,
            channels,
            step,
        })
    }

    /// Size of the PNG.
    pub fn len(&self) -> u64 {
        png_len(self.width, self.height, self.channels, &TEXTS)
    }

    /// Whether the PNG is empty (never: it always has a header).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Width and height of the picture in pixels.
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// The first axis pictured (axes before it are at index 0).
    fn first_axis(&self) -> usize {
        let nd = self.geometry.shape.len();
        match self.picture {
            Picture::Plot { .. } => 0,
            Picture::Map { .. } => nd - 2,
            Picture::Rgb { .. } => nd - 3,
        }
    }

    /// Bytes of the blocks the whole picture needs decoded (saturating).
    fn full_cost(&self) -> u64 {
        let g = &self.geometry;
        let first = self.first_axis();
        let mut cost = g.itemsize;
        for d in 0..g.shape.len() {
            let extent = if d < first {
                g.blockshape[d].min(g.shape[d]).max(1)
            } else {
                g.shape[d]
            };
            cost = cost.saturating_mul(extent);
        }
        cost
    }

    /// Blocks one tile decodes: the blocks across the axes after the
    /// tiled ones (RGB channels), twice with DELTA (block 0 of its chunk).
    fn blocks_per_tile(&self, array: &Array) -> u64 {
        let g = &self.geometry;
        let mut n = 1;
        if let Picture::Rgb { c, .. } = self.picture {
            let d = g.shape.len() - 1;
            let mut seen = Vec::new();
            for t in 0..c {
                let b = block_at(g, d, t);
                if !seen.contains(&b) {
                    seen.push(b);
                }
            }
            n = seen.len() as u64;
        }
        if array.frame().filters.contains(&DELTA) {
            n *= 2;
        }
        n
    }

    /// The PNG, decoding through `planner` (sampled when the blocks needed
    /// exceed its cache or [`FULL_LIMIT`]).
    pub fn render(&self, array: &Array, planner: &Planner) -> Result<Vec<u8>, Error> {
        let limit = (planner.blocks().cache().budget() as u64).min(FULL_LIMIT);
        let sampled = self.full_cost() > limit;
        let tiles = sampled.then(|| (MAX_SAMPLED_BLOCKS / self.blocks_per_tile(array)).max(1));
        let fetch = |start: u64, len: u64| {
            let bytes = planner.read(array, &View::Data, start, len)?;
            if bytes.len() as u64 != len {
                return Err(Error::new(
                    array.name(),
                    Problem::OutOfRange(format!("bytes {start}..{} lie past the end", start + len)),
                ));
            }
            Ok(bytes)
        };
        let (pixels, range, tiles_used) = match self.picture {
            Picture::Plot { n } => self.plot(n, tiles, &fetch)?,
            Picture::Map { h, w } => self.image(h, w, 1, tiles, &fetch)?,
            Picture::Rgb { h, w, c } => self.image(h, w, c, tiles, &fetch)?,
        };
        let total_blocks: u64 = match self.picture {
            Picture::Plot { .. } => blocks_along(&self.geometry, 0),
            _ => {
                let a = self.first_axis();
                blocks_along(&self.geometry, a).saturating_mul(blocks_along(&self.geometry, a + 1))
            }
        };
        let what = match self.picture {
            Picture::Plot { .. } => "line plot, min/max per pixel column".to_string(),
            Picture::Map { .. } => format!(
                "axes -2,-1 every {} element(s), colour map viridis over Range, NaN magenta",
                self.step
            ),
            Picture::Rgb { .. } => format!("axes -3,-2 as RGB(A) every {} element(s)", self.step),
        };
        let description = format!(
            "blosc2fs preview of {}: shape {:?} dtype {}; {what}; other axes at index 0",
            array
                .name()
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            self.geometry.shape,
            self.dtype
        );
        let sampled_text = match tiles_used {
            Some(t) => format!(
                "yes: {} tiles of one block each, of {total_blocks} blocks",
                t
            ),
            None => "no".to_string(),
        };
        let range_text = range.text();
        Ok(encode(
            self.width,
            self.height,
            self.channels,
            &pixels,
            &[
                (DESCRIPTION, &description),
                (RANGE, &range_text),
                (SAMPLED, &sampled_text),
            ],
        ))
    }

    /// Call `each(index, value)` for the elements `[start, end)` (C order
    /// offsets in items), read in pieces of at most [`READ_PIECE`] bytes.
    fn for_each(
        &self,
        start: u64,
        end: u64,
        fetch: &dyn Fn(u64, u64) -> Result<Vec<u8>, Error>,
        each: &mut dyn FnMut(u64, &[u8]),
    ) -> Result<(), Error> {
        let is = self.geometry.itemsize;
        let per_read = (READ_PIECE / is).max(1);
        let mut at = start;
        while at < end {
            let n = per_read.min(end - at);
            let bytes = fetch(at * is, n * is)?;
            for (i, item) in bytes.chunks_exact(is as usize).enumerate() {
                each(at + i as u64, item);
            }
            at += n;
        }
        Ok(())
    }

    /// A line plot of the `n` values of a 1-D array.
    fn plot(
        &self,
        n: u64,
        tiles: Option<u64>,
        fetch: &dyn Fn(u64, u64) -> Result<Vec<u8>, Error>,
    ) -> Result<(Vec<u8>, Range, Option<u64>), Error> {
        let cols = PLOT_WIDTH as u64;
        // Each pixel column's element range.
        let mut spans: Vec<(u64, u64)> = Vec::with_capacity(cols as usize);
        let mut tiles_used = None;
        match tiles {
            None => {
                for x in 0..cols {
                    let s = x * n / cols;
                    spans.push((s, ((x + 1) * n / cols).max(s + 1).min(n)));
                }
            }
            Some(t) => {
                let t = t.min(blocks_along(&self.geometry, 0)).min(cols).max(1);
                tiles_used = Some(t);
                for i in 0..t {
                    let (x0, x1) = (i * cols / t, (i + 1) * cols / t);
                    let centre = ((2 * i + 1) * n / (2 * t)).min(n - 1);
                    let (start, len) = block_at(&self.geometry, 0, centre);
                    for x in x0..x1 {
                        let s = start + (x - x0) * len / (x1 - x0);
                        spans.push((
                            s,
                            (start + (x - x0 + 1) * len / (x1 - x0))
                                .max(s + 1)
                                .min(start + len),
                        ));
                    }
                }
            }
        }
        let mut envelope = vec![Range::new(); cols as usize];
        let mut range = Range::new();
        let format = self.format;
        for (x, &(s, e)) in spans.iter().enumerate() {
            self.for_each(s, e, fetch, &mut |_, item| {
                let v = format.value(item);
                envelope[x].add(v);
                range.add(v);
                if v.is_infinite() {
                    // Infinities are drawn at the plot's edge.
                    envelope[x].add(if v > 0.0 { f64::MAX } else { f64::MIN });
                }
            })?;
        }
        let (w, h) = (PLOT_WIDTH as usize, PLOT_HEIGHT as usize);
        let mut pixels: Vec<u8> = PLOT_BACKGROUND
            .iter()
            .copied()
            .cycle()
            .take(w * h * 3)
            .collect();
        let row_of = |v: f64| -> usize {
            let t = if v >= f64::MAX {
                1.0
            } else if v <= f64::MIN {
                0.0
            } else {
                range.position(v)
            };
            ((1.0 - t) * (h - 1) as f64).round() as usize
        };
        for (x, env) in envelope.iter().enumerate() {
            if env.is_empty() {
                continue;
            }
            let (top, bottom) = (row_of(env.max), row_of(env.min));
            for y in top..=bottom {
                pixels[(y * w + x) * 3..(y * w + x) * 3 + 3].copy_from_slice(&PLOT_LINE);
            }
        }
        Ok((pixels, range, tiles_used))
    }

    /// A picture of the `h` x `w` (x `c` channels) image axes.
    fn image(
        &self,
        h: u64,
        w: u64,
        c: u64,
        tiles: Option<u64>,
        fetch: &dyn Fn(u64, u64) -> Result<Vec<u8>, Error>,
    ) -> Result<(Vec<u8>, Range, Option<u64>), Error> {
        let g = &self.geometry;
        let a = self.first_axis();
        let (out_w, out_h) = (self.width as u64, self.height as u64);
        let grid = tiles.map(|t| {
            let (nby, nbx) = (
                blocks_along(g, a).min(out_h).max(1),
                blocks_along(g, a + 1).min(out_w).max(1),
            );
            let gy =
                (((t * out_h) as f64 / out_w as f64).sqrt().round() as u64).clamp(1, nby.min(t));
            let gx = (t / gy).clamp(1, nbx);
            let gy = (t / gx).clamp(1, nby);
            (gy, gx)
        });
        let (rows, _) = axis_map(g, a, h, out_h, self.step, grid.map(|(gy, _)| gy));
        let (cols, col_spans) = axis_map(g, a + 1, w, out_w, self.step, grid.map(|(_, gx)| gx));
        // Values of every pixel, channels together.
        let mut values = vec![0f64; (out_w * out_h * c) as usize];
        let mut range = Range::new();
        let format = self.format;
        for (y, &r) in rows.iter().enumerate() {
            let row_base = r * w;
            for &(s, e) in &col_spans {
                // Pixel columns whose element lies in this span, in order.
                let wanted: Vec<(usize, u64)> = cols
                    .iter()
                    .enumerate()
                    .filter(|(_, &col)| col >= s && col < e)
                    .map(|(x, &col)| (x, col))
                    .collect();
                if wanted.is_empty() {
                    continue;
                }
                let mut k = 0;
                let (first, last) = (wanted[0].1, wanted[wanted.len() - 1].1);
                self.for_each(
                    (row_base + first) * c,
                    (row_base + last + 1) * c,
                    fetch,
                    &mut |i, item| {
                        let col = i / c - row_base;
                        while k < wanted.len() && wanted[k].1 < col {
                            k += 1;
                        }
                        let mut j = k;
                        while j < wanted.len() && wanted[j].1 == col {
                            let v = format.value(item);
                            range.add(v);
                            values
                                [((y as u64 * out_w + wanted[j].0 as u64) * c + i % c) as usize] =
                                v;
                            j += 1;
                        }
                    },
                )?;
            }
        }
        let pixels: Vec<u8> = if let Picture::Rgb { .. } = self.picture {
            values.iter().map(|&v| v as u8).collect()
        } else {
            values
                .iter()
                .flat_map(|&v| {
                    if v.is_nan() {
                        NAN_COLOUR
                    } else {
                        colour(range.position(v))
                    }
                })
                .collect()
        };
        Ok((pixels, range, grid.map(|(gy, gx)| gy * gx)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_map_ends_and_anchors() {
        assert_eq!(colour(0.0), VIRIDIS[0]);
        assert_eq!(colour(1.0), VIRIDIS[8]);
        assert_eq!(colour(-3.0), VIRIDIS[0]);
        assert_eq!(
            colour(0.5),
            [33, 144, 141],
            "step 128 is just past anchor 4 (127.5)"
        );
    }

    fn geometry(shape: &[u64], chunks: &[u64], blocks: &[u64]) -> Geometry {
        Geometry::new(shape, chunks, blocks, 8).unwrap()
    }

    #[test]
    fn blocks_along_an_axis_and_the_block_of_an_element() {
        // 100 in chunks of 30 in blocks of 7: per chunk 7,7,7,7,2; last chunk 10 = 7,3.
        let g = geometry(&[100], &[30], &[7]);
        assert_eq!(blocks_along(&g, 0), 3 * 5 + 2);
        assert_eq!(block_at(&g, 0, 0), (0, 7));
        assert_eq!(block_at(&g, 0, 29), (28, 2));
        assert_eq!(block_at(&g, 0, 95), (90, 7));
        assert_eq!(block_at(&g, 0, 97), (97, 3));
    }

    #[test]
    fn sampled_axis_maps_stay_inside_their_blocks() {
        let g = geometry(&[1000, 5000], &[100, 1000], &[10, 100]);
        let (map, spans) = axis_map(&g, 1, 5000, 512, 10, Some(8));
        assert_eq!(map.len(), 512);
        assert_eq!(spans.len(), 8);
        for (i, &(s, e)) in spans.iter().enumerate() {
            assert_eq!(e - s, 100);
            for &m in &map[i * 64..(i + 1) * 64] {
                assert!(m >= s && m < e);
            }
        }
        let (map, spans) = axis_map(&g, 0, 1000, 100, 10, None);
        assert_eq!(map[..3], [0, 10, 20]);
        assert_eq!(spans, [(0, 1000)]);
    }
}
