//! NDCELL (filter id 32): a block stored cell by cell.
//!
//! C-Blosc2's NDCELL filter cuts a block (shape: the b2nd metalayer's
//! blockshape) into hypercubic cells of edge `meta` (the filter's meta byte),
//! clipped where the block ends, and stores the cells one after the other in
//! row-major cell order, each cell's items in row-major order. Undoing it
//! puts every cell back in place; the bytes themselves are not changed.
//!
//! C-Blosc2 refuses (and so do we) a meta of 0, a block shape that does not
//! give the block's length, more than 8 dimensions, and a `meta^ndim` larger
//! than the number of items in the block (even though the cells would be
//! clipped).
//!
//! NDMEAN ([`super::ndmean`]) stores its cells the same way; both use
//! [`uncell`].

/// Why a cell filter (NDCELL, NDMEAN) could not be undone.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CellError {
    /// The filter needs the array's block shape: 1 to 8 dimensions.
    #[error("{filter} needs a b2nd block shape of 1 to 8 dimensions, the array has {ndim}")]
    NoBlockShape {
        /// The filter's name.
        filter: &'static str,
        /// Dimensions of the block shape given (0 for a plain frame).
        ndim: usize,
    },
    /// The cell edge (the filter's meta byte) is not one the filter accepts.
    #[error("{filter} cell edge (filter meta) {meta} is invalid")]
    BadCellEdge {
        /// The filter's name.
        filter: &'static str,
        /// The meta byte.
        meta: u8,
    },
    /// The typesize is not one the filter accepts.
    #[error("{filter} cannot work with typesize {typesize}")]
    BadTypesize {
        /// The filter's name.
        filter: &'static str,
        /// The chunk's typesize.
        typesize: usize,
    },
    /// The block length differs from blockshape × typesize (or a dimension is 0).
    #[error("{filter}: block of {len} bytes, but block shape {blockshape:?} × typesize {typesize} differs")]
    BlockSize {
        /// The filter's name.
        filter: &'static str,
        /// The block's length in bytes.
        len: usize,
        /// The block shape.
        blockshape: Vec<u64>,
        /// The chunk's typesize.
        typesize: usize,
    },
    /// A cell holds more items than the block.
    #[error("{filter}: cells of edge {meta} in {ndim} dimensions hold more than the block's {items} items")]
    CellTooLarge {
        /// The filter's name.
        filter: &'static str,
        /// The cell edge.
        meta: u8,
        /// Dimensions.
        ndim: usize,
        /// Items in the block.
        items: usize,
    },
    /// NDMEAN with a first block dimension shorter than the cell edge and a
    /// later one longer: C-Blosc2 lays such cells out inconsistently and
    /// refuses to decode them.
    #[error("ndmean: cell edge {meta} with block shape {blockshape:?} is a layout C-Blosc2 cannot decode")]
    InconsistentGrid {
        /// The cell edge.
        meta: u8,
        /// The block shape.
        blockshape: Vec<u64>,
    },
    /// Source and destination lengths differ.
    #[error("cell filter buffers differ in length: source {src} bytes, destination {dst} bytes")]
    LengthMismatch {
        /// Source length.
        src: usize,
        /// Destination length.
        dst: usize,
    },
}

const NAME: &str = "ndcell";

/// Most dimensions a b2nd array (and so a cell filter) has.
pub const MAX_DIM: usize = 8;

/// Undo NDCELL: `src` holds the block cell by cell, `dst` (same length)
/// receives it in block order. `meta` is the filter's meta byte (cell edge),
/// `blockshape` the array's block shape, `typesize` the chunk's.
pub fn undo_ndcell(
    meta: u8,
    blockshape: &[u64],
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
) -> Result<(), CellError> {
    let shape = check_block(NAME, blockshape, typesize, src, dst)?;
    if meta == 0 {
        return Err(CellError::BadCellEdge { filter: NAME, meta });
    }
    let items = src.len() / typesize;
    // meta^ndim > items is refused, whatever the clipping.
    let mut cell_items = 1usize;
    for _ in 0..shape.len() {
        cell_items = cell_items.saturating_mul(meta as usize);
    }
    if cell_items > items {
        return Err(CellError::CellTooLarge {
            filter: NAME,
            meta,
            ndim: shape.len(),
            items,
        });
    }
    let cells: Vec<usize> = shape.iter().map(|&b| b.min(meta as usize)).collect();
    uncell(&shape, &cells, typesize, src, dst);
    Ok(())
}

/// Checks shared by NDCELL and NDMEAN: 1 to 8 dimensions, none 0, whose
/// product times `typesize` is the block length. Returns the shape as usize.
pub(super) fn check_block(
    filter: &'static str,
    blockshape: &[u64],
    typesize: usize,
    src: &[u8],
    dst: &[u8],
) -> Result<Vec<usize>, CellError> {
    if src.len() != dst.len() {
        return Err(CellError::LengthMismatch {
            src: src.len(),
            dst: dst.len(),
        });
    }
    if blockshape.is_empty() || blockshape.len() > MAX_DIM {
        return Err(CellError::NoBlockShape {
            filter,
            ndim: blockshape.len(),
        });
    }
    if typesize == 0 {
        return Err(CellError::BadTypesize { filter, typesize });
    }
    let size_error = || CellError::BlockSize {
        filter,
        len: src.len(),
        blockshape: blockshape.to_vec(),
        typesize,
    };
    let mut bytes = typesize as u64;
    for &b in blockshape {
        bytes = bytes
            .checked_mul(b)
            .filter(|&n| n > 0 && n <= src.len() as u64)
            .ok_or_else(size_error)?;
    }
    if bytes != src.len() as u64 {
        return Err(size_error());
    }
    Ok(blockshape.iter().map(|&b| b as usize).collect())
}

/// Put a block stored cell by cell back in block order. `shape` is the block
/// shape, `cells` the cell shape (each `1..=shape[d]`), items of `typesize`
/// bytes; `src` and `dst` hold exactly the block (checked by the callers).
///
/// Cells come in row-major cell order, each clipped to the block, and
/// within a cell the rows (runs along the last dimension) come in row-major
/// order.
pub(super) fn uncell(
    shape: &[usize],
    cells: &[usize],
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
) {
    let n = shape.len();
    // Cells spanning every dimension but the first are contiguous slabs in
    // block order: nothing moves.
    if cells[1..] == shape[1..] {
        dst.copy_from_slice(src);
        return;
    }
    let mut stride = [0usize; MAX_DIM];
    let mut s = typesize;
    for d in (0..n).rev() {
        stride[d] = s;
        s *= shape[d];
    }
    let grid: Vec<usize> = shape
        .iter()
        .zip(cells)
        .map(|(&b, &c)| b.div_ceil(c))
        .collect();
    let mut cell_at = [0usize; MAX_DIM]; // the cell's index in the grid
    let mut pad = [0usize; MAX_DIM]; // the cell's clipped shape
    let mut row_at = [0usize; MAX_DIM];
    let mut pos = 0usize;
    'cells: loop {
        let mut origin = 0usize;
        for d in 0..n {
            origin += cell_at[d] * cells[d] * stride[d];
            pad[d] = if cell_at[d] + 1 == grid[d] {
                shape[d] - cell_at[d] * cells[d]
            } else {
                cells[d]
            };
        }
        let run = pad[n - 1] * typesize;
        // Rows of this cell: odometer over dims 0..n-1.
        row_at[..n].fill(0);
        let mut at = origin;
        'rows: loop {
            dst[at..at + run].copy_from_slice(&src[pos..pos + run]);
            pos += run;
            let mut d = n - 1;
            loop {
                if d == 0 {
                    break 'rows;
                }
                d -= 1;
                row_at[d] += 1;
                at += stride[d];
                if row_at[d] < pad[d] {
                    break;
                }
                at -= row_at[d] * stride[d];
                row_at[d] = 0;
            }
        }
        // Next cell: odometer over the grid.
        let mut d = n;
        loop {
            if d == 0 {
                break 'cells;
            }
            d -= 1;
            cell_at[d] += 1;
            if cell_at[d] < grid[d] {
                break;
            }
            cell_at[d] = 0;
        }
    }
}

#[cfg(test)]
#[path = "ndcell_tests.rs"]
mod tests;
