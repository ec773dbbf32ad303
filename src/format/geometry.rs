//! N-d geometry: which chunk, block and offset serve a byte range of the
//! array's C-order bytes.
//!
//! A b2nd chunk holds the blocks of its chunk (chunkshape rounded up to whole
//! blocks) in C order, each block's items in C order. Edge chunks and blocks
//! are padded. [`Geometry::pieces`] turns a byte range of the C-order array
//! (or of one chunk's C-order view, for `chunks/` files) into the list of
//! copies that fill it.

use super::error::{PResult, Problem};
use super::meta::MAX_DIM;

/// Where the bytes of one piece come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PieceSource {
    /// Padding beyond the array edge: zeros.
    Zeros,
    /// `offset` bytes into decoded block `block` of chunk `chunk`.
    ///
    /// `chunk` is the chunk number (C order over the chunk grid for an N-d
    /// array) and `block` the block number within that chunk.
    Block {
        /// The chunk.
        chunk: u64,
        /// The block within the chunk.
        block: u64,
        /// Byte offset within the decoded block.
        offset: u64,
    },
    /// `offset` bytes into the decoded chunk `chunk`, whose block size is
    /// known only from its layout (plain frames): split it into blocks
    /// with `Array::block_pieces`.
    ChunkBytes {
        /// The chunk.
        chunk: u64,
        /// Byte offset within the decoded chunk.
        offset: u64,
    },
}

/// One contiguous copy: `len` bytes to `out_offset` of the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    /// Where the copy goes: byte offset from the start of the requested range.
    /// The pieces of one request come in order and cover it without gaps
    /// (up to the end of the data).
    pub out_offset: u64,
    /// Number of bytes to copy.
    pub len: u64,
    /// Where those bytes come from.
    pub source: PieceSource,
}

/// Shapes of an array and its chunk and block grids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Geometry {
    /// Extent of the array along each dimension, in items (empty for 0-d).
    pub shape: Vec<u64>,
    /// Extent of a chunk along each dimension, in items; chunks at the array's
    /// edge are padded to it.
    pub chunkshape: Vec<u64>,
    /// Extent of a block along each dimension, in items.
    pub blockshape: Vec<u64>,
    /// Size of one item in bytes.
    pub itemsize: u64,
    /// chunkshape rounded up to whole blocks.
    pub extchunkshape: Vec<u64>,
    /// Number of chunks along each dimension.
    pub chunk_grid: Vec<u64>,
    /// Number of blocks along each dimension of a chunk.
    pub block_grid: Vec<u64>,
}

fn product(v: &[u64]) -> u64 {
    v.iter().product()
}

/// Coordinates of C-order linear index `i` in a grid of `dims`.
pub fn grid_coords(mut i: u64, dims: &[u64]) -> Vec<u64> {
    let mut coords = vec![0; dims.len()];
    for d in (0..dims.len()).rev() {
        let n = dims[d].max(1);
        coords[d] = i % n;
        i /= n;
    }
    coords
}

/// C-order linear index of `idx` in a grid of `dims`.
pub fn linear(idx: &[u64], dims: &[u64]) -> u64 {
    idx.iter().zip(dims).fold(0, |acc, (&i, &d)| acc * d + i)
}

impl Geometry {
    /// Build the geometry; shapes must already be validated (see `meta`).
    pub fn new(
        shape: &[u64],
        chunkshape: &[u64],
        blockshape: &[u64],
        itemsize: u64,
    ) -> PResult<Geometry> {
        if shape.len() != chunkshape.len() || shape.len() != blockshape.len() {
            return Err(Problem::corrupt(
                "geometry",
                "shape, chunkshape and blockshape differ in length",
            ));
        }
        if shape.len() > MAX_DIM {
            return Err(Problem::corrupt(
                "geometry",
                format!("{} dimensions (at most {MAX_DIM})", shape.len()),
            ));
        }
        let extchunkshape: Vec<u64> = chunkshape
            .iter()
            .zip(blockshape)
            .map(|(&c, &b)| if b == 0 { c } else { c.div_ceil(b) * b })
            .collect();
        let chunk_grid = shape
            .iter()
            .zip(chunkshape)
            .map(|(&s, &c)| if c == 0 { 0 } else { s.div_ceil(c) })
            .collect();
        let block_grid = extchunkshape
            .iter()
            .zip(blockshape)
            .map(|(&e, &b)| e.checked_div(b).unwrap_or(0))
            .collect();
        let g = Geometry {
            shape: shape.to_vec(),
            chunkshape: chunkshape.to_vec(),
            blockshape: blockshape.to_vec(),
            itemsize,
            extchunkshape,
            chunk_grid,
            block_grid,
        };
        shape
            .iter()
            .try_fold(itemsize, |acc, &d| acc.checked_mul(d))
            .filter(|&bytes| bytes <= i64::MAX as u64)
            .ok_or_else(|| Problem::corrupt("geometry", "array size overflows"))?;
        g.extchunkshape
            .iter()
            .try_fold(itemsize, |acc, &d| acc.checked_mul(d))
            .filter(|&bytes| bytes <= i32::MAX as u64)
            .ok_or_else(|| Problem::corrupt("geometry", "a chunk would exceed 2 GiB"))?;
        Ok(g)
    }

    /// Number of dimensions (0 for a scalar array).
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Number of items in the array: the product of `shape` (1 for 0-d, 0 when
    /// any dimension is empty).
    pub fn nitems(&self) -> u64 {
        product(&self.shape)
    }

    /// Bytes of the array in C order.
    pub fn nbytes(&self) -> u64 {
        self.nitems() * self.itemsize
    }

    /// Number of chunks: the product of the chunk grid (0 when any dimension is
    /// empty).
    pub fn nchunks(&self) -> u64 {
        product(&self.chunk_grid)
    }

    /// Decoded bytes of one (padded) chunk as stored.
    pub fn chunk_nbytes(&self) -> u64 {
        product(&self.extchunkshape).saturating_mul(self.itemsize)
    }

    /// Bytes of one chunk over its chunkshape (the `chunks/` file size).
    pub fn chunk_view_nbytes(&self) -> u64 {
        product(&self.chunkshape) * self.itemsize
    }

    /// Decoded bytes of one block (blockshape times itemsize); blocks at a
    /// chunk's edge are padded to it.
    pub fn block_nbytes(&self) -> u64 {
        product(&self.blockshape) * self.itemsize
    }

    /// Chunk-grid coordinates of linear chunk `c`.
    pub fn chunk_coords(&self, c: u64) -> Vec<u64> {
        grid_coords(c, &self.chunk_grid)
    }

    /// Pieces serving bytes `[start, start + len)` of the array in C order.
    pub fn pieces(&self, start: u64, len: u64) -> Vec<Piece> {
        let item_box = ItemBox {
            origin: vec![0; self.ndim()],
            extent: self.shape.clone(),
        };
        self.box_bytes_pieces(&item_box, start, len)
    }

    /// Pieces serving bytes of chunk `c` seen over its full chunkshape in C
    /// order (padding beyond the array edge reads as zeros).
    pub fn chunk_view_pieces(&self, c: u64, start: u64, len: u64) -> Vec<Piece> {
        let coords = self.chunk_coords(c);
        let origin = coords
            .iter()
            .zip(&self.chunkshape)
            .map(|(&i, &c)| i * c)
            .collect();
        let item_box = ItemBox {
            origin,
            extent: self.chunkshape.clone(),
        };
        self.box_bytes_pieces(&item_box, start, len)
    }

    /// Pieces serving the box `[origin, origin + extent)` of the array,
    /// its items in C order over the box (items outside the array: zeros);
    /// `origin` and `extent` have one entry per dimension.
    pub fn box_pieces(&self, origin: &[u64], extent: &[u64]) -> Vec<Piece> {
        let item_box = ItemBox {
            origin: origin.to_vec(),
            extent: extent.to_vec(),
        };
        self.box_bytes_pieces(&item_box, 0, product(extent).saturating_mul(self.itemsize))
    }

    /// Where block `b` of chunk `c` starts, in array coordinates; it spans
    /// the blockshape from there (its items beyond the array edge are padding).
    pub fn block_origin(&self, c: u64, b: u64) -> Vec<u64> {
        let chunk = grid_coords(c, &self.chunk_grid);
        let block = grid_coords(b, &self.block_grid);
        (0..self.ndim())
            .map(|d| chunk[d] * self.chunkshape[d] + block[d] * self.blockshape[d])
            .collect()
    }

    fn box_bytes_pieces(&self, item_box: &ItemBox, start: u64, len: u64) -> Vec<Piece> {
        let itemsize = self.itemsize;
        let box_items = product(&item_box.extent);
        let box_bytes = box_items * itemsize;
        let end = start.saturating_add(len).min(box_bytes);
        let mut pieces = Vec::new();
        if start >= end || itemsize == 0 {
            return pieces;
        }
        let n = self.ndim();
        // Fixed-size index buffers: at most MAX_DIM dimensions, no allocation per piece.
        let mut v = [0u64; MAX_DIM];
        let mut global = [0u64; MAX_DIM];
        let mut chunk_idx = [0u64; MAX_DIM];
        let mut block_idx = [0u64; MAX_DIM];
        let mut in_block = [0u64; MAX_DIM];
        let mut pos = start;
        while pos < end {
            let item = pos / itemsize;
            let within_item = pos % itemsize;
            // Multi-index of `item` within the box.
            let mut rest = item;
            for d in (0..n).rev() {
                v[d] = rest % item_box.extent[d];
                rest /= item_box.extent[d];
                global[d] = v[d] + item_box.origin[d];
            }
            let row_left = if n == 0 {
                1
            } else {
                item_box.extent[n - 1] - v[n - 1]
            };
            let outside = (0..n).any(|d| global[d] >= self.shape[d]);
            let (run_items, source) = if outside {
                (row_left, PieceSource::Zeros)
            } else if n == 0 {
                (
                    1,
                    PieceSource::Block {
                        chunk: 0,
                        block: 0,
                        offset: within_item,
                    },
                )
            } else {
                for d in 0..n {
                    let within_chunk = global[d] % self.chunkshape[d];
                    chunk_idx[d] = global[d] / self.chunkshape[d];
                    block_idx[d] = within_chunk / self.blockshape[d];
                    in_block[d] = within_chunk % self.blockshape[d];
                }
                let last = n - 1;
                let within_chunk_last = global[last] % self.chunkshape[last];
                let run = row_left
                    .min(self.blockshape[last] - in_block[last])
                    .min(self.chunkshape[last] - within_chunk_last)
                    .min(self.shape[last] - global[last]);
                let offset = linear(&in_block[..n], &self.blockshape) * itemsize + within_item;
                (
                    run,
                    PieceSource::Block {
                        chunk: linear(&chunk_idx[..n], &self.chunk_grid),
                        block: linear(&block_idx[..n], &self.block_grid),
                        offset,
                    },
                )
            };
            let run_end = ((item + run_items) * itemsize).min(end);
            let piece = Piece {
                out_offset: pos - start,
                len: run_end - pos,
                source,
            };
            // Runs that continue each other in the block too (rows of a
            // block as wide as the array) are one copy.
            match pieces.last_mut() {
                Some(prev) if continues(prev, &piece) => prev.len += piece.len,
                _ => pieces.push(piece),
            }
            pos = run_end;
        }
        pieces
    }
}

/// Whether `next` starts where `prev` ends, in the output and in the source.
fn continues(prev: &Piece, next: &Piece) -> bool {
    if prev.out_offset + prev.len != next.out_offset {
        return false;
    }
    match (prev.source, next.source) {
        (PieceSource::Zeros, PieceSource::Zeros) => true,
        (
            PieceSource::Block {
                chunk: c1,
                block: b1,
                offset: o1,
            },
            PieceSource::Block {
                chunk: c2,
                block: b2,
                offset: o2,
            },
        ) => c1 == c2 && b1 == b2 && o1 + prev.len == o2,
        _ => false,
    }
}

/// A box of the array's items, `[origin, origin + extent)` per dimension,
/// whose bytes in C order a list of pieces serves.
struct ItemBox {
    origin: Vec<u64>,
    extent: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A box's pieces hold its items in C order: the same bytes as cutting
    /// the box out of the C-order array, zeros past the edge; block origins
    /// step by the blockshape inside a chunk.
    #[test]
    fn boxes_and_block_origins() {
        let g = Geometry::new(&[5, 7], &[3, 4], &[2, 3], 1).unwrap();
        // A box from (1, 2) of 3 x 6 runs past the last column (7): 1 item of zeros per row.
        let pieces = g.box_pieces(&[1, 2], &[3, 6]);
        let total: u64 = pieces.iter().map(|p| p.len).sum();
        assert_eq!(total, 18);
        let zeros: Vec<u64> = pieces
            .iter()
            .filter(|p| p.source == PieceSource::Zeros)
            .map(|p| p.out_offset)
            .collect();
        assert_eq!(zeros, [5, 11, 17]);
        // Each row's first item: (1, 2) is chunk (0, 0), block (0, 0) + (1, 2).
        assert_eq!(
            pieces[0],
            Piece {
                out_offset: 0,
                len: 1,
                source: PieceSource::Block {
                    chunk: 0,
                    block: 0,
                    offset: 3 + 2
                }
            }
        );
        // Blocks per chunk: ceil(3/2) x ceil(4/3) = 2 x 2; chunk 3 is grid (1, 1).
        assert_eq!(g.block_origin(0, 0), [0, 0]);
        assert_eq!(g.block_origin(0, 3), [2, 3]);
        assert_eq!(g.block_origin(3, 1), [3, 7]);
    }

    /// Build the stored chunks of an array the slow, obvious way (one item at a
    /// time) and check that pieces reassemble the C-order bytes exactly.
    fn check(shape: &[u64], chunkshape: &[u64], blockshape: &[u64], itemsize: u64) {
        let g = Geometry::new(shape, chunkshape, blockshape, itemsize).unwrap();
        let n = shape.len();
        let nitems = g.nitems();
        // Stored chunks: value of item = its C-order index + 1 (as bytes), padding = 0xEE.
        let mut chunks = vec![vec![0xEEu8; g.chunk_nbytes() as usize]; g.nchunks() as usize];
        let mut expected = Vec::new();
        for item in 0..nitems {
            let mut idx = vec![0u64; n];
            let mut rest = item;
            for d in (0..n).rev() {
                idx[d] = rest % shape[d];
                rest /= shape[d];
            }
            let cidx: Vec<u64> = (0..n).map(|d| idx[d] / chunkshape[d]).collect();
            let within: Vec<u64> = (0..n).map(|d| idx[d] % chunkshape[d]).collect();
            let bidx: Vec<u64> = (0..n).map(|d| within[d] / blockshape[d]).collect();
            let inb: Vec<u64> = (0..n).map(|d| within[d] % blockshape[d]).collect();
            let c = linear(&cidx, &g.chunk_grid) as usize;
            let b = linear(&bidx, &g.block_grid);
            let off = (b * g.block_nbytes() + linear(&inb, blockshape) * itemsize) as usize;
            let bytes: Vec<u8> = (0..itemsize).map(|k| ((item + 1) * 7 + k) as u8).collect();
            chunks[c][off..off + itemsize as usize].copy_from_slice(&bytes);
            expected.extend_from_slice(&bytes);
        }
        let total = g.nbytes();
        for (start, len) in [
            (0, total),
            (1, total.saturating_sub(2)),
            (total / 3, total / 2 + 1),
            (itemsize + 1, 3),
        ] {
            let mut out = vec![0u8; len.min(total.saturating_sub(start)) as usize];
            for p in g.pieces(start, len) {
                let dst = &mut out[p.out_offset as usize..(p.out_offset + p.len) as usize];
                match p.source {
                    PieceSource::Zeros | PieceSource::ChunkBytes { .. } => {
                        panic!("{:?} from an N-d geometry", p.source)
                    }
                    PieceSource::Block {
                        chunk,
                        block,
                        offset,
                    } => {
                        let at = (block * g.block_nbytes() + offset) as usize;
                        dst.copy_from_slice(&chunks[chunk as usize][at..at + p.len as usize]);
                    }
                }
            }
            let s = start.min(total) as usize;
            assert_eq!(
                out,
                &expected[s..s + out.len()],
                "shape {shape:?} range {start}+{len}"
            );
        }
    }

    #[test]
    fn reassembles_many_shapes() {
        check(&[10], &[4], &[3], 1);
        check(&[10], &[10], &[10], 8);
        check(&[7, 5], &[3, 2], &[2, 2], 4);
        check(&[5, 6, 7], &[2, 3, 4], &[1, 2, 3], 2);
        check(&[3, 4, 2, 3, 2], &[2, 3, 2, 2, 1], &[1, 2, 1, 2, 1], 3);
        check(&[4, 1, 9], &[4, 1, 9], &[2, 1, 4], 5);
        check(&[1], &[1], &[1], 300);
    }

    #[test]
    fn rejects_sizes_that_overflow() {
        assert!(Geometry::new(&[1 << 40, 1 << 20], &[1, 1], &[1, 1], 16).is_err());
        assert!(
            Geometry::new(&[10], &[1 << 30], &[1], 8).is_err(),
            "a 8 GiB chunk"
        );
    }

    #[test]
    fn zero_d_and_empty() {
        let g = Geometry::new(&[], &[], &[], 8).unwrap();
        assert_eq!(g.nbytes(), 8);
        assert_eq!(g.nchunks(), 1);
        assert_eq!(
            g.pieces(2, 100),
            vec![Piece {
                out_offset: 0,
                len: 6,
                source: PieceSource::Block {
                    chunk: 0,
                    block: 0,
                    offset: 2
                }
            }]
        );
        let e = Geometry::new(&[3, 0, 4], &[2, 0, 2], &[1, 0, 1], 4).unwrap();
        assert_eq!(e.nbytes(), 0);
        assert_eq!(e.nchunks(), 0);
        assert!(e.pieces(0, 10).is_empty());
    }

    #[test]
    fn chunk_view_pads_with_zeros() {
        // 5x3 array, chunks 2x2: chunk (2, 1) covers row 4 col 2 only.
        let g = Geometry::new(&[5, 3], &[2, 2], &[1, 1], 1).unwrap();
        assert_eq!(g.chunk_grid, vec![3, 2]);
        let pieces = g.chunk_view_pieces(5, 0, 4);
        assert_eq!(
            pieces,
            vec![
                Piece {
                    out_offset: 0,
                    len: 1,
                    source: PieceSource::Block {
                        chunk: 5,
                        block: 0,
                        offset: 0
                    }
                },
                // Row 0's padding and all of row 1: one run of zeros.
                Piece {
                    out_offset: 1,
                    len: 3,
                    source: PieceSource::Zeros
                },
            ]
        );
    }

    #[test]
    fn rows_of_a_full_width_block_are_one_piece() {
        // 4x8 bytes, one chunk, blocks of 2 full rows: two pieces of 16 bytes.
        let g = Geometry::new(&[4, 8], &[4, 8], &[2, 8], 1).unwrap();
        assert_eq!(
            g.pieces(0, 32),
            vec![
                Piece {
                    out_offset: 0,
                    len: 16,
                    source: PieceSource::Block {
                        chunk: 0,
                        block: 0,
                        offset: 0
                    }
                },
                Piece {
                    out_offset: 16,
                    len: 16,
                    source: PieceSource::Block {
                        chunk: 0,
                        block: 1,
                        offset: 0
                    }
                },
            ]
        );
        // Blocks narrower than the array: row runs alternate between blocks.
        let g = Geometry::new(&[2, 8], &[2, 8], &[2, 4], 1).unwrap();
        let blocks: Vec<(u64, u64)> = g
            .pieces(0, 16)
            .iter()
            .map(|p| match p.source {
                PieceSource::Block { block, offset, .. } => (block, offset),
                _ => (99, 99),
            })
            .collect();
        assert_eq!(blocks, vec![(0, 0), (1, 0), (0, 4), (1, 4)]);
    }
}
