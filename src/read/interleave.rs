//! An array's bytes with its channel axis moved last (`data.interleaved`):
//! what MetaImage (`ElementNumberOfChannels`) and other readers of
//! interleaved components want, where the array keeps its channels as
//! planes (nnU-Net's `(C, X, Y, Z)`).
//!
//! Nothing is rearranged ahead of time and no whole array is held: a read
//! of output bytes `[start, end)` covers a run of voxels; each channel's
//! plane holds those voxels as one contiguous stretch of `data`, read
//! through the normal path (planner, block cache), and the stretches are
//! woven into the output item by item. A step covers at most
//! [`STEP_BYTES`] of source bytes, so a read holds one step of scratch
//! besides its output, whatever its size.
//!
//! The arithmetic: an array of shape `(A..., C, B...)` with `outer` =
//! ∏A, `inner` = ∏B and items of `item` bytes holds item (a, c, q) at
//! `((a·C + c)·inner + q)·item` in `data`; moved last, at
//! `((a·inner + q)·C + c)·item`. Voxel `g = a·inner + q` is the `C` items
//! of one position.

use crate::format::{Array, PResult, Problem, Region};

use super::assemble::{fill_with, Misses};
use super::blocks::Blocks;

/// The most source bytes one step of a fill reads into scratch.
pub const STEP_BYTES: u64 = 1 << 20;

/// How an array's bytes are laid out around its channel axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interleave {
    /// Positions before the channel axis (the product of those axes).
    outer: u64,
    /// Channels.
    channels: u64,
    /// Positions after the channel axis (the product of those axes).
    inner: u64,
    /// Bytes per item.
    item: u64,
}

impl Interleave {
    /// The layout of an array of `shape` whose axis `channel_axis` holds
    /// channels, items of `item` bytes; `None` when the axis is out of
    /// range, an axis is empty, the item has no bytes, or the byte count
    /// does not fit in 64 bits.
    pub fn new(shape: &[u64], channel_axis: usize, item: u64) -> Option<Interleave> {
        let channels = *shape.get(channel_axis)?;
        let product = |axes: &[u64]| {
            axes.iter()
                .try_fold(1u64, |n, &a| n.checked_mul(a))
                .filter(|n| *n > 0)
        };
        let il = Interleave {
            outer: product(&shape[..channel_axis])?,
            channels,
            inner: product(&shape[channel_axis + 1..])?,
            item,
        };
        (channels > 0 && item > 0 && il.checked_len().is_some()).then_some(il)
    }

    fn checked_len(&self) -> Option<u64> {
        self.outer
            .checked_mul(self.channels)?
            .checked_mul(self.inner)?
            .checked_mul(self.item)
    }

    /// Bytes in all (the same as the array's data).
    pub fn len(&self) -> u64 {
        self.outer * self.channels * self.inner * self.item
    }

    /// Whether it holds no bytes (never, as built by [`Interleave::new`]).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The steps covering output bytes `[start, end)` (cut at the end):
    /// runs of voxels `(first voxel, count)` inside one slab (one `a`),
    /// each reading at most `step_bytes` of source bytes (at least one voxel).
    fn steps(&self, start: u64, end: u64, step_bytes: u64) -> impl Iterator<Item = (u64, u64)> {
        let end = end.min(self.len());
        let voxel = self.channels * self.item;
        let last = end.div_ceil(voxel);
        let per_step = (step_bytes / voxel).max(1);
        let inner = self.inner;
        let mut g = if start < end { start / voxel } else { last };
        std::iter::from_fn(move || {
            if g >= last {
                return None;
            }
            let q = g % inner;
            let n = (inner - q).min(per_step).min(last - g);
            let step = (g, n);
            g += n;
            Some(step)
        })
    }

    /// Where channel `c` of voxels `[g, g + n)` (one slab) lies in `data`:
    /// byte offset and length.
    fn source_run(&self, g: u64, n: u64, c: u64) -> (u64, u64) {
        let (a, q) = (g / self.inner, g % self.inner);
        (
            ((a * self.channels + c) * self.inner + q) * self.item,
            n * self.item,
        )
    }

    /// The stretches of `data` that output bytes `[start, start + len)`
    /// need, one per channel per slab touched (for announcing reads ahead).
    pub fn source_runs(&self, start: u64, len: u64) -> Vec<(u64, u64)> {
        let end = start.saturating_add(len);
        self.steps(start, end, u64::MAX)
            .flat_map(|(g, n)| (0..self.channels).map(move |c| self.source_run(g, n, c)))
            .collect()
    }

    /// Fill `out` with output bytes `[start, start + out.len())`, reading
    /// `data` through `read(offset, buffer)`, at most `step_bytes` of it at
    /// a time. `out` must lie within [`Interleave::len`].
    pub fn fill<E>(
        &self,
        start: u64,
        out: &mut [u8],
        step_bytes: u64,
        mut read: impl FnMut(u64, &mut [u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let end = start + out.len() as u64;
        let item = self.item as usize;
        let mut scratch = Vec::new();
        for (g, n) in self.steps(start, end, step_bytes) {
            let plane = (n * self.item) as usize;
            scratch.resize(plane * self.channels as usize, 0);
            for (c, part) in scratch.chunks_exact_mut(plane).enumerate() {
                let (offset, _) = self.source_run(g, n, c as u64);
                read(offset, part)?;
            }
            for k in 0..n {
                for c in 0..self.channels {
                    // Output bytes of item (voxel g + k, channel c), cut to the read.
                    let at = ((g + k) * self.channels + c) * self.item;
                    let (lo, hi) = (at.max(start), (at + self.item).min(end));
                    if lo >= hi {
                        continue;
                    }
                    let from = (c as usize) * plane + (k as usize) * item + (lo - at) as usize;
                    out[(lo - start) as usize..(hi - start) as usize]
                        .copy_from_slice(&scratch[from..from + (hi - lo) as usize]);
                }
            }
        }
        Ok(())
    }
}

/// Fill `out` with bytes `[start, start + out.len())` of `array`'s data
/// with its channel axis moved last, laid out as `il`.
pub(super) fn fill_interleaved(
    blocks: &Blocks,
    array: &Array,
    il: &Interleave,
    start: u64,
    out: &mut [u8],
    misses: Misses,
) -> PResult<()> {
    if il.len() != array.data_len() {
        return Err(Problem::OutOfRange(format!(
            "an interleaved view of {} bytes over data of {}",
            il.len(),
            array.data_len()
        )));
    }
    il.fill(start, out, STEP_BYTES, |offset, part| {
        fill_with(blocks, array, Region::Data, offset, part, misses)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source array of `shape` with distinct bytes everywhere: item `i`
    /// (C order) holds `item` bytes `(i * 7 + b * 3 + 1) % 251`.
    fn source(shape: &[u64], item: usize) -> Vec<u8> {
        let n: u64 = shape.iter().product();
        (0..n as usize)
            .flat_map(|i| (0..item).map(move |b| ((i * 7 + b * 3 + 1) % 251) as u8))
            .collect()
    }

    /// `src` with axis `axis` moved last, by walking every index of the
    /// result (the naive definition, no shared arithmetic).
    fn moved_last(src: &[u8], shape: &[usize], axis: usize, item: usize) -> Vec<u8> {
        let rank = shape.len();
        let mut order: Vec<usize> = (0..rank).filter(|a| *a != axis).collect();
        order.push(axis);
        let out_shape: Vec<usize> = order.iter().map(|a| shape[*a]).collect();
        let total: usize = shape.iter().product();
        let mut out = Vec::with_capacity(total * item);
        for flat in 0..total {
            // Index in the result, C order.
            let mut rest = flat;
            let mut idx = vec![0usize; rank];
            for d in (0..rank).rev() {
                idx[d] = rest % out_shape[d];
                rest /= out_shape[d];
            }
            // The same element's index in the source.
            let mut src_idx = vec![0usize; rank];
            for (d, a) in order.iter().enumerate() {
                src_idx[*a] = idx[d];
            }
            let src_flat = src_idx
                .iter()
                .zip(shape)
                .fold(0usize, |acc, (i, n)| acc * n + i);
            out.extend_from_slice(&src[src_flat * item..(src_flat + 1) * item]);
        }
        out
    }

    fn read_all(il: &Interleave, src: &[u8], start: u64, len: usize, step: u64) -> Vec<u8> {
        let mut out = vec![0xEEu8; len];
        il.fill(start, &mut out, step, |offset, part: &mut [u8]| {
            let o = offset as usize;
            part.copy_from_slice(&src[o..o + part.len()]);
            Ok::<(), ()>(())
        })
        .unwrap();
        out
    }

    #[test]
    fn every_axis_item_size_and_odd_range_matches_the_naive_transpose() {
        let shapes: [&[usize]; 4] = [&[2, 3, 4, 5], &[3, 7], &[4, 3, 5], &[1, 2, 9]];
        for shape in shapes {
            for axis in 0..shape.len() {
                for item in [1usize, 2, 4, 8] {
                    let shape_u: Vec<u64> = shape.iter().map(|n| *n as u64).collect();
                    let src = source(&shape_u, item);
                    let want = moved_last(&src, shape, axis, item);
                    let il = Interleave::new(&shape_u, axis, item as u64).unwrap();
                    assert_eq!(il.len() as usize, src.len());
                    let len = want.len();
                    // Whole, in small steps, and odd ranges straddling items
                    // and voxels (start and end inside an item).
                    for step in [1u64, 5, 64, u64::MAX] {
                        assert_eq!(
                            read_all(&il, &src, 0, len, step),
                            want,
                            "{shape:?} axis {axis} item {item} step {step}"
                        );
                    }
                    let ranges = [
                        (0, 1),
                        (1, 1),
                        (3, 7),
                        (len - 1, 1),
                        (len / 3 + 1, len / 3),
                        (item * 3 + 1, item * 5 + 2),
                        (len / 2, len - len / 2),
                    ];
                    for (s, n) in ranges {
                        let n = n.min(len - s);
                        for step in [1u64, 13, u64::MAX] {
                            assert_eq!(
                                read_all(&il, &src, s as u64, n, step),
                                want[s..s + n],
                                "{shape:?} axis {axis} item {item} range {s}+{n} step {step}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn hand_built_two_channel_planes() {
        // Two channels of three u16 voxels: planes [1 2 3] and [10 20 30].
        let src: Vec<u8> = [1u16, 2, 3, 10, 20, 30]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let il = Interleave::new(&[2, 3], 0, 2).unwrap();
        let want: Vec<u8> = [1u16, 10, 2, 20, 3, 30]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(read_all(&il, &src, 0, 12, u64::MAX), want);
        // Bytes 3..8: the high byte of 10, then 2, 20 and the low byte of 3.
        assert_eq!(read_all(&il, &src, 3, 5, 2), [0, 2, 0, 20, 0]);
    }

    #[test]
    fn the_runs_a_read_needs_are_one_per_channel_per_slab() {
        // (2, 3, 4) with channels in the middle: slabs of 4 voxels.
        let il = Interleave::new(&[2, 3, 4], 1, 4).unwrap();
        // Output voxels 2..6 (bytes 24..72 of 12-byte voxels): slab 0 q 2..4, slab 1 q 0..2.
        assert_eq!(
            il.source_runs(24, 48),
            [(8, 8), (24, 8), (40, 8), (48, 8), (64, 8), (80, 8)]
        );
        assert!(il.source_runs(96, 10).is_empty(), "past the end");
        assert!(Interleave::new(&[2, 0, 3], 0, 4).is_none());
        assert!(Interleave::new(&[2, 3], 2, 4).is_none());
        assert!(Interleave::new(&[u64::MAX, 3], 0, 4).is_none());
    }

    #[test]
    fn a_fixture_read_through_the_planner_is_its_data_transposed() {
        use crate::read::testing::fixture;
        use crate::read::{Planner, View};
        use std::sync::Arc;
        // 33 x 21 float64: the first axis taken as 33 channels.
        let (array, _) = fixture("dtype_le_f8");
        let planner = Planner::standalone(1 << 20);
        let data = planner.read(&array, &View::Data, 0, u64::MAX).unwrap();
        let want = moved_last(&data, &[33, 21], 0, 8);
        let view = View::Interleaved(Arc::new(Interleave::new(&[33, 21], 0, 8).unwrap()));
        assert_eq!(view.len(&array).unwrap(), data.len() as u64);
        assert!(planner.read(&array, &view, 0, u64::MAX).unwrap() == want);
        for (s, n) in [(5u64, 3u64), (260, 1000), (4900, 644)] {
            assert!(
                planner.read(&array, &view, s, n).unwrap() == want[s as usize..(s + n) as usize],
                "{s}+{n}"
            );
        }
    }
}
