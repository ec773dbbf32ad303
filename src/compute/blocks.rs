//! A computed array's blocks, made on demand: the producer the format layer
//! asks for each block of a saved expression ([`BlockProducer`]).
//!
//! For block `b` of chunk `c` of the result's own grid (the saved file's
//! chunkshape and blockshape), it reads the box of each operand that block
//! needs ([`Program::operand_region`]) through the planner, so operand
//! blocks are decoded once into the mount's block cache whatever their own
//! grids, evaluates the program over them, and lays the result out as a
//! decoded block is laid out. The block cache above then keeps the computed
//! block like any other.

use std::sync::Arc;

use crate::format::{Array, BlockProducer, Geometry, PResult, Problem};
use crate::read::Planner;

use super::program::Program;

/// The blocks of a computed array.
pub struct ComputedBlocks {
    program: Program,
    /// The operands, in [`Program::operands`] order.
    operands: Vec<Arc<Array>>,
    /// The result's grid.
    geometry: Geometry,
    planner: Arc<Planner>,
}

impl std::fmt::Debug for ComputedBlocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComputedBlocks")
            .field("operands", &self.program.operands())
            .field("shape", &self.geometry.shape)
            .finish_non_exhaustive()
    }
}

/// Most items evaluated at once: a block larger than this (a file may
/// declare blocks of up to 512 MiB) is evaluated in tiles, so the working
/// columns stay a few MiB whatever the block.
const TILE_ITEMS: u64 = 1 << 18;

/// Boxes (offset, shape) tiling `extent` in C order, each of at most
/// `limit` items (or one item along every axis but the last, when even a
/// row is longer: then the row is cut).
fn tiles(extent: &[u64], limit: u64) -> Vec<(Vec<u64>, Vec<u64>)> {
    let n = extent.len();
    if n == 0 || extent.iter().product::<u64>() <= limit {
        return vec![(vec![0; n], extent.to_vec())];
    }
    // The outermost axis whose inner product fits: cut along it, one index
    // at a time on the axes before it.
    let k = (0..n)
        .find(|&k| extent[k + 1..].iter().product::<u64>() <= limit)
        .unwrap_or(n - 1);
    let inner: u64 = extent[k + 1..].iter().product();
    let step = (limit / inner.max(1)).max(1);
    let mut out = Vec::new();
    let outer: u64 = extent[..k].iter().product();
    for i in 0..outer {
        let mut offset = crate::format::grid_coords(i, &extent[..k]);
        offset.resize(n, 0);
        let mut at = 0;
        while at < extent[k] {
            let len = step.min(extent[k] - at);
            offset[k] = at;
            let mut shape = vec![1; k];
            shape.push(len);
            shape.extend_from_slice(&extent[k + 1..]);
            out.push((offset.clone(), shape));
            at += len;
        }
    }
    out
}

impl ComputedBlocks {
    /// The blocks of `program`'s result over `geometry`, reading `operands`
    /// (in [`Program::operands`] order) through `planner`.
    pub fn new(
        program: Program,
        operands: Vec<Arc<Array>>,
        geometry: Geometry,
        planner: Arc<Planner>,
    ) -> Result<ComputedBlocks, String> {
        if operands.len() != program.operands().len() {
            return Err(format!(
                "{} operands given, the expression reads {}",
                operands.len(),
                program.operands().len()
            ));
        }
        if geometry.shape != program.shape()
            || geometry.itemsize != program.dtype().itemsize() as u64
        {
            return Err(format!(
                "a grid of shape {:?} and items of {} bytes for a result of shape {:?} and {}",
                geometry.shape,
                geometry.itemsize,
                program.shape(),
                program.dtype().numpy_str()
            ));
        }
        Ok(ComputedBlocks {
            program,
            operands,
            geometry,
            planner,
        })
    }
}

impl ComputedBlocks {
    /// The result over `[start, start + shape)` into `out`, from the
    /// operands' boxes read through the planner.
    fn evaluate(&self, start: &[u64], shape: &[u64], out: &mut [u8]) -> PResult<()> {
        let mut inputs = Vec::with_capacity(self.operands.len());
        for (i, operand) in self.operands.iter().enumerate() {
            let (ostart, oshape) = self.program.operand_region(i, start, shape);
            let mut bytes = Vec::new();
            self.planner
                .read_box_into(operand, &ostart, &oshape, &mut bytes)
                .map_err(|p| {
                    Problem::Computed(format!(
                        "operand {} ({}): {p}",
                        self.program.operands()[i],
                        operand.name().display()
                    ))
                })?;
            inputs.push(bytes);
        }
        let inputs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        self.program
            .evaluate(start, shape, &inputs, out)
            .map_err(|e| Problem::Computed(e.to_string()))
    }
}

impl BlockProducer for ComputedBlocks {
    fn produce_block(&self, chunk: u64, block: u64, out: &mut [u8]) -> PResult<()> {
        let g = &self.geometry;
        let origin = g.block_origin(chunk, block);
        // The part of the block inside the array; the rest is padding.
        let extent: Vec<u64> = (0..g.ndim())
            .map(|d| g.blockshape[d].min(g.shape[d].saturating_sub(origin[d])))
            .collect();
        let whole = extent == g.blockshape;
        if !whole {
            out.fill(0);
        }
        if extent.contains(&0) {
            return Ok(());
        }
        let tiles = tiles(&extent, TILE_ITEMS);
        if whole && tiles.len() == 1 {
            return self.evaluate(&origin, &extent, out);
        }
        // An edge block, or one too large to evaluate at once: evaluate it
        // tile by tile, and lay each tile's rows out over the full blockshape.
        let itemsize = g.itemsize as usize;
        let nd = g.ndim();
        let mut part = Vec::new();
        let mut idx = vec![0u64; nd];
        for (offset, shape) in tiles {
            let start: Vec<u64> = origin.iter().zip(&offset).map(|(o, t)| o + t).collect();
            let n: u64 = shape.iter().product();
            part.clear();
            part.resize(n as usize * itemsize, 0);
            self.evaluate(&start, &shape, &mut part)?;
            let row = shape[nd - 1] as usize * itemsize;
            for (r, bytes) in part.chunks(row).enumerate() {
                // Row r of the tile: its place in the block, C order over the blockshape.
                let mut rest = r as u64;
                for d in (0..nd - 1).rev() {
                    idx[d] = offset[d] + rest % shape[d];
                    rest /= shape[d];
                }
                idx[nd - 1] = offset[nd - 1];
                let at = crate::format::linear(&idx, &g.blockshape) as usize * itemsize;
                out[at..at + row].copy_from_slice(bytes);
            }
        }
        Ok(())
    }

    fn held_bytes(&self) -> usize {
        self.operands.iter().map(|a| a.held_bytes()).sum::<usize>() + 4096
    }

    /// Every operand's version, and this build (an evaluation fixed in a
    /// later build may give other bytes for the same recipe).
    fn version_identity(&self) -> Option<String> {
        let mut text = format!("blosc2fs {} evaluation", env!("CARGO_PKG_VERSION"));
        for operand in &self.operands {
            text.push('\n');
            text.push_str(&operand.version_identity()?);
        }
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tiles cover the extent exactly once, in C order, each within the limit.
    #[test]
    fn tiles_cover_the_block_once_within_the_limit() {
        for (extent, limit) in [
            (vec![10u64, 7, 5], 40u64),
            (vec![3, 100], 7),
            (vec![4, 4], 1000),
            (vec![1000], 64),
            (vec![2, 3, 300], 100),
        ] {
            let tiles = tiles(&extent, limit);
            let mut seen = vec![0u8; extent.iter().product::<u64>() as usize];
            let mut last = None;
            for (offset, shape) in &tiles {
                let n: u64 = shape.iter().product();
                assert!(
                    n <= limit.max(1) || shape.iter().rev().skip(1).all(|&d| d == 1),
                    "{extent:?}: {shape:?}"
                );
                let first = crate::format::linear(offset, &extent);
                assert!(last.is_none_or(|l| first > l), "C order");
                last = Some(first);
                for i in 0..n {
                    let within = crate::format::grid_coords(i, shape);
                    let at: Vec<u64> = within.iter().zip(offset).map(|(w, o)| w + o).collect();
                    seen[crate::format::linear(&at, &extent) as usize] += 1;
                }
            }
            assert!(seen.iter().all(|&c| c == 1), "{extent:?} / {limit}");
        }
        assert_eq!(tiles(&[], 4), vec![(vec![], vec![])]);
    }
}
