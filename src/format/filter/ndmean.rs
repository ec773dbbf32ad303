//! NDMEAN (filter id 33): a block stored cell by cell, each cell's items
//! replaced by their mean.
//!
//! The lossy part happens when writing: C-Blosc2's forward function stores,
//! for every cell (edge `meta`, clipped per dimension to the block shape),
//! the cell's mean (float32 or float64 arithmetic) once per item, cell after
//! cell. Decoding only puts the cells back in block order, exactly as NDCELL
//! does ([`super::ndcell::uncell`]); the stored values are already the means.
//!
//! Where C-Blosc2's decoder differs from NDCELL's, we follow it:
//! * the meta byte is read as a signed byte: 1..=127 only;
//! * the typesize is read as a signed byte: 1..=127 only;
//! * each cell dimension is `min(meta, blockshape[d])` (no `meta^ndim` check);
//! * it places cells using the *first* dimension's cell edge for every
//!   dimension. That only matters when the first block dimension is shorter
//!   than `meta` and a later one longer; C-Blosc2 then fails its own final
//!   check, so such blocks are refused here too
//!   ([`CellError::InconsistentGrid`]).

use super::ndcell::{check_block, uncell, CellError};

const NAME: &str = "ndmean";

/// Undo NDMEAN: `src` holds the block cell by cell, `dst` (same length)
/// receives it in block order. `meta` is the filter's meta byte (cell edge),
/// `blockshape` the array's block shape, `typesize` the chunk's.
pub fn undo_ndmean(
    meta: u8,
    blockshape: &[u64],
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
) -> Result<(), CellError> {
    let shape = check_block(NAME, blockshape, typesize, src, dst)?;
    if meta == 0 || meta > 127 {
        return Err(CellError::BadCellEdge { filter: NAME, meta });
    }
    if typesize > 127 {
        return Err(CellError::BadTypesize {
            filter: NAME,
            typesize,
        });
    }
    let edge = meta as usize;
    if shape[0] < edge && shape[1..].iter().any(|&b| b > edge) {
        return Err(CellError::InconsistentGrid {
            meta,
            blockshape: blockshape.to_vec(),
        });
    }
    let cells: Vec<usize> = shape.iter().map(|&b| b.min(edge)).collect();
    uncell(&shape, &cells, typesize, src, dst);
    Ok(())
}
