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

use super::Program;

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
        f.debug_struct("ComputedBlocks").field("operands", &self.program.operands()).field("shape", &self.geometry.shape).finish_non_exhaustive()
    }
}

impl ComputedBlocks {
    /// The blocks of `program`'s result over `geometry`, reading `operands`
    /// (in [`Program::operands`] order) through `planner`.
    pub fn new(program: Program, operands: Vec<Arc<Array>>, geometry: Geometry, planner: Arc<Planner>) -> Result<ComputedBlocks, String> {
        if operands.len() != program.operands().len() {
            return Err(format!("{} operands given, the expression reads {}", operands.len(), program.operands().len()));
        }
        if geometry.shape != program.shape() || geometry.itemsize != program.dtype().itemsize() as u64 {
            return Err(format!("a grid of shape {:?} and items of {} bytes for a result of shape {:?} and {}", geometry.shape, geometry.itemsize, program.shape(), program.dtype().numpy_str()));
        }
        Ok(ComputedBlocks { program, operands, geometry, planner })
    }
}

impl BlockProducer for ComputedBlocks {
    fn produce_block(&self, chunk: u64, block: u64, out: &mut [u8]) -> PResult<()> {
        let g = &self.geometry;
        let origin = g.block_origin(chunk, block);
        // The part of the block inside the array; the rest is padding.
        let extent: Vec<u64> = (0..g.ndim()).map(|d| g.blockshape[d].min(g.shape[d].saturating_sub(origin[d]))).collect();
        let whole = extent == g.blockshape;
        if !whole {
            out.fill(0);
        }
        if extent.contains(&0) {
            return Ok(());
        }
        let mut inputs = Vec::with_capacity(self.operands.len());
        for (i, operand) in self.operands.iter().enumerate() {
            let (start, shape) = self.program.operand_region(i, &origin, &extent);
            let mut bytes = Vec::new();
            self.planner.read_box_into(operand, &start, &shape, &mut bytes).map_err(|p| Problem::Computed(format!("operand {} ({}): {p}", self.program.operands()[i], operand.name().display())))?;
            inputs.push(bytes);
        }
        let inputs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        let fail = |e: super::ComputeError| Problem::Computed(e.to_string());
        if whole {
            return self.program.evaluate(&origin, &extent, &inputs, out).map_err(fail);
        }
        // An edge block: evaluate its inside, then lay the rows out over the full blockshape.
        let itemsize = g.itemsize as usize;
        let n: u64 = extent.iter().product();
        let mut part = vec![0u8; n as usize * itemsize];
        self.program.evaluate(&origin, &extent, &inputs, &mut part).map_err(fail)?;
        let nd = g.ndim();
        let row = extent[nd - 1] as usize * itemsize;
        let rows = (n / extent[nd - 1]) as usize;
        let mut idx = vec![0u64; nd];
        for r in 0..rows {
            // Row r's position in the full block: C order over blockshape.
            let mut rest = r as u64;
            for d in (0..nd - 1).rev() {
                idx[d] = rest % extent[d];
                rest /= extent[d];
            }
            let at = crate::format::linear(&idx, &g.blockshape) as usize * itemsize;
            out[at..at + row].copy_from_slice(&part[r * row..(r + 1) * row]);
        }
        Ok(())
    }

    fn held_bytes(&self) -> usize {
        self.operands.iter().map(|a| a.held_bytes()).sum::<usize>() + 4096
    }
}
