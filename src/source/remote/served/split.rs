//! Which regions a served chunk is asked for. A region comes back as a
//! frame the server builds, which is decoded and held whole, so its size
//! is what one request makes the daemon allocate: a chunk whose bytes fit
//! the region limit is one region (one request), and a larger one (an
//! HDF5 chunk may hold gigabytes) is cut into boxes of whole blocks, each
//! within the limit (at least one block), so the memory regions take
//! follows the cache budget and not the dataset's chunking.
//!
//! The cut is the coarsest that fits: one block along the first axes, a
//! run of blocks along the next, the chunk's whole extent along the rest
//! (rows of blocks, or single blocks when one row is too large). Every
//! block of the chunk then lies in exactly one region.

/// How one chunk (its extent clipped to the array) is cut into regions:
/// one block along the axes before `axis`, `run` blocks along `axis`, the
/// whole extent after it. Coordinates are relative to the chunk's origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Split {
    extent: Vec<u64>,
    blockshape: Vec<u64>,
    axis: usize,
    run: u64,
}

impl Split {
    /// The cut of a chunk of `extent` items (clipped to the array) in
    /// blocks of `blockshape`, items of `itemsize` bytes, regions of at
    /// most `limit` bytes (or one block, when a block is larger).
    pub(crate) fn of(extent: &[u64], blockshape: &[u64], itemsize: u64, limit: u64) -> Split {
        let blockshape: Vec<u64> = blockshape.iter().map(|&b| b.max(1)).collect();
        let mut split = Split {
            extent: extent.to_vec(),
            blockshape,
            axis: 0,
            run: u64::MAX,
        };
        let n = extent.len();
        let total = extent.iter().product::<u64>().saturating_mul(itemsize);
        if n == 0 || total <= limit {
            return split;
        }
        for axis in 0..n {
            // Bytes of one block along the axes up to `axis`, whole after it.
            let unit = (0..n)
                .map(|i| {
                    if i <= axis {
                        split.blockshape[i].min(extent[i])
                    } else {
                        extent[i]
                    }
                })
                .product::<u64>()
                .saturating_mul(itemsize)
                .max(1);
            if unit <= limit || axis == n - 1 {
                split.axis = axis;
                split.run = (limit / unit).max(1);
                return split;
            }
        }
        split
    }

    /// Blocks of the chunk along axis `i` (counted over its extent).
    fn blocks(&self, i: usize) -> u64 {
        self.extent[i].div_ceil(self.blockshape[i])
    }

    /// The grid of regions: one per block along the axes before `axis`,
    /// one per run along `axis`.
    fn grid(&self) -> Vec<u64> {
        if self.extent.is_empty() {
            return Vec::new();
        }
        let mut grid: Vec<u64> = (0..self.axis).map(|i| self.blocks(i)).collect();
        grid.push(self.blocks(self.axis).div_ceil(self.run).max(1));
        grid
    }

    /// How many regions the chunk is asked for in.
    #[cfg(test)]
    pub(crate) fn count(&self) -> u64 {
        self.grid().iter().product()
    }

    /// Origin and extent (relative to the chunk) of region `r`.
    pub(crate) fn region(&self, r: u64) -> (Vec<u64>, Vec<u64>) {
        let coords = crate::format::grid_coords(r, &self.grid());
        let mut origin = vec![0; self.extent.len()];
        let mut extent = self.extent.clone();
        for (i, &c) in coords.iter().enumerate() {
            let step = if i == self.axis {
                self.blockshape[i].saturating_mul(self.run)
            } else {
                self.blockshape[i]
            };
            origin[i] = c.saturating_mul(step).min(self.extent[i]);
            extent[i] = step.min(self.extent[i] - origin[i]);
        }
        (origin, extent)
    }

    /// The region holding the block at `at` (relative to the chunk, a
    /// multiple of the blockshape); `None` when the block lies wholly
    /// outside the extent (past the array's edge: nothing to ask for).
    pub(crate) fn region_of(&self, at: &[u64]) -> Option<u64> {
        if at.iter().zip(&self.extent).any(|(a, e)| a >= e) {
            return None;
        }
        if self.extent.is_empty() {
            return Some(0);
        }
        let grid = self.grid();
        let coords: Vec<u64> = (0..grid.len())
            .map(|i| {
                let step = if i == self.axis {
                    self.blockshape[i].saturating_mul(self.run)
                } else {
                    self.blockshape[i]
                };
                at[i] / step
            })
            .collect();
        Some(crate::format::linear(&coords, &grid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk within the limit is one region, whatever its edge.
    #[test]
    fn a_chunk_within_the_limit_is_one_region() {
        let s = Split::of(&[10, 7], &[4, 4], 8, 560);
        assert_eq!(s.count(), 1);
        assert_eq!(s.region(0), (vec![0, 0], vec![10, 7]));
        assert_eq!(s.region_of(&[8, 4]), Some(0));
        let scalar = Split::of(&[], &[], 8, 1);
        assert_eq!((scalar.count(), scalar.region(0)), (1, (vec![], vec![])));
        assert_eq!(scalar.region_of(&[]), Some(0));
    }

    /// 100x100 float64 (80,000 bytes) in 10x10 blocks, 20,000-byte regions:
    /// rows of two block rows (16,000 bytes), five of them.
    #[test]
    fn a_large_chunk_becomes_rows_of_blocks() {
        let s = Split::of(&[100, 100], &[10, 10], 8, 20_000);
        assert_eq!(s.count(), 5);
        assert_eq!(s.region(0), (vec![0, 0], vec![20, 100]));
        assert_eq!(s.region(4), (vec![80, 0], vec![20, 100]));
        assert_eq!(s.region_of(&[90, 50]), Some(4));
        assert_eq!(s.region_of(&[20, 0]), Some(1));
    }

    /// When one row of blocks is too large, runs of blocks along the next
    /// axis; when one block is, single blocks.
    #[test]
    fn rows_too_large_become_runs_of_blocks_then_blocks() {
        // A row of blocks is 8,000 bytes; 2,000 allow runs of 2 blocks (1,600).
        let s = Split::of(&[100, 100], &[10, 10], 8, 2_000);
        assert_eq!(s.count(), 10 * 5);
        assert_eq!(s.region(0), (vec![0, 0], vec![10, 20]));
        assert_eq!(s.region(7), (vec![10, 40], vec![10, 20]));
        assert_eq!(s.region_of(&[10, 50]), Some(7));
        // A block is 800 bytes: a 100-byte limit still asks for whole blocks.
        let s = Split::of(&[100, 100], &[10, 10], 8, 100);
        assert_eq!(s.count(), 100);
        assert_eq!(s.region(11), (vec![10, 10], vec![10, 10]));
        // 3-d: a plane of blocks too large, a row of blocks fits.
        let s = Split::of(&[4, 64, 64], &[2, 8, 8], 4, 2 * 8 * 64 * 4 * 3);
        assert_eq!(s.count(), 2 * 3);
        assert_eq!(s.region(2), (vec![0, 48, 0], vec![2, 16, 64]));
        assert_eq!(s.region_of(&[2, 56, 8]), Some(5));
    }

    /// A chunk clipped at the array's edge: regions clipped to its extent,
    /// blocks past the extent in none.
    #[test]
    fn edge_chunks_clip_their_regions() {
        // Chunk of 10 along axis 0 clipped to 9; blocks of 4 (origins 0, 4, 8).
        let s = Split::of(&[9, 6], &[4, 6], 1, 30);
        assert_eq!(s.count(), 3);
        assert_eq!(s.region(2), (vec![8, 0], vec![1, 6]));
        assert_eq!(s.region_of(&[8, 0]), Some(2));
        assert_eq!(Split::of(&[3], &[4], 1, 1).region_of(&[4]), None);
    }

    /// For many shapes and limits: the regions tile the extent without
    /// overlap, each block lies wholly (within the extent) in the region
    /// `region_of` names, and no region is larger than the limit or one
    /// block, whichever is larger.
    #[test]
    fn regions_tile_the_chunk_and_hold_whole_blocks() {
        let mut rng = crate::test_rng::Rng::new(0x2545_f491_4f6c_dd1d);
        let mut next = |n: u64| rng.below(n);
        for _ in 0..400 {
            let ndim = 1 + next(3) as usize;
            let blockshape: Vec<u64> = (0..ndim).map(|_| 1 + next(6)).collect();
            let extent: Vec<u64> = (0..ndim).map(|_| 1 + next(30)).collect();
            let itemsize = 1 + next(8);
            let limit = 1 + next(4000);
            let s = Split::of(&extent, &blockshape, itemsize, limit);
            let block_bytes = blockshape.iter().product::<u64>() * itemsize;
            let items: u64 = extent.iter().product();
            let mut covered = vec![0u8; items as usize];
            for r in 0..s.count() {
                let (o, e) = s.region(r);
                let bytes = e.iter().product::<u64>() * itemsize;
                assert!(
                    bytes <= limit.max(block_bytes),
                    "{s:?}: region {r} of {bytes} bytes"
                );
                let n: u64 = e.iter().product();
                for k in 0..n {
                    let c = crate::format::grid_coords(k, &e);
                    let at: Vec<u64> = c.iter().zip(&o).map(|(c, o)| c + o).collect();
                    covered[crate::format::linear(&at, &extent) as usize] += 1;
                }
            }
            assert!(covered.iter().all(|&c| c == 1), "{s:?}: not a tiling");
            let grid: Vec<u64> = extent
                .iter()
                .zip(&blockshape)
                .map(|(e, b)| e.div_ceil(*b))
                .collect();
            for b in 0..grid.iter().product::<u64>() {
                let at: Vec<u64> = crate::format::grid_coords(b, &grid)
                    .iter()
                    .zip(&blockshape)
                    .map(|(c, b)| c * b)
                    .collect();
                let r = s.region_of(&at).expect("a block inside the extent");
                let (o, e) = s.region(r);
                for i in 0..ndim {
                    let end = (at[i] + blockshape[i]).min(extent[i]);
                    assert!(
                        o[i] <= at[i] && end <= o[i] + e[i],
                        "{s:?}: block at {at:?} not inside region {r} ({o:?}, {e:?})"
                    );
                }
            }
        }
    }
}
