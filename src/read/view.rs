//! What a presented file asks of an array: which byte view it shows (the
//! C-order data, a `.npy`, one chunk, some rows after a prefix), which
//! region of the array that is, and how long the presented file is.

use std::sync::Arc;

use crate::format::{Array, PResult, Region};

use super::interleave::Interleave;

/// Which byte view of an array a presented file shows.
#[derive(Debug, Clone)]
pub enum View {
    /// The C-order bytes (`data`).
    Data,
    /// A `.npy` header followed by the C-order bytes (`data.npy`).
    Npy(Arc<Vec<u8>>),
    /// One chunk over its chunkshape (`chunks/<coords>`).
    Chunk(u64),
    /// Some rows of the C-order bytes, in order, after a prefix (a table
    /// column's valid rows).
    Rows(Arc<RowSelection>),
    /// The C-order bytes with the channel axis moved last
    /// (`data.interleaved`).
    Interleaved(Arc<Interleave>),
}

/// Which rows of an array a [`View::Rows`] shows: runs of consecutive rows
/// (first stored row, count) of `row_bytes` bytes each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowSelection {
    runs: Vec<(u64, u64)>,
    /// Presented row index where each run starts.
    starts: Vec<u64>,
    count: u64,
    row_bytes: u64,
    prefix: Arc<Vec<u8>>,
}

impl RowSelection {
    /// Rows in `runs` (sorted, not overlapping), each `row_bytes` long,
    /// presented after `prefix`.
    pub fn new(runs: Vec<(u64, u64)>, row_bytes: u64, prefix: Arc<Vec<u8>>) -> RowSelection {
        let mut starts = Vec::with_capacity(runs.len());
        let mut count = 0u64;
        for &(_, n) in &runs {
            starts.push(count);
            count += n;
        }
        RowSelection {
            runs,
            starts,
            count,
            row_bytes,
            prefix,
        }
    }

    /// Rows shown.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Bytes of the rows shown (the prefix not included).
    pub fn body_len(&self) -> u64 {
        self.count.saturating_mul(self.row_bytes)
    }

    /// Where presented body byte `at` lies in the array's data, and how many
    /// bytes from there on are contiguous in both.
    pub(super) fn locate(&self, at: u64) -> Option<(u64, u64)> {
        if self.row_bytes == 0 || at >= self.body_len() {
            return None;
        }
        let row = at / self.row_bytes;
        let k = self.starts.partition_point(|&s| s <= row).checked_sub(1)?;
        let (first, n) = self.runs[k];
        let run_end = (self.starts[k] + n) * self.row_bytes;
        let src = (first + (row - self.starts[k])) * self.row_bytes + at % self.row_bytes;
        Some((src, run_end - at))
    }
}

impl View {
    pub(super) fn region(&self) -> Region {
        match self {
            View::Data | View::Npy(_) | View::Rows(_) | View::Interleaved(_) => Region::Data,
            View::Chunk(c) => Region::Chunk(*c),
        }
    }

    pub(super) fn prefix(&self) -> &[u8] {
        match self {
            View::Npy(header) => header,
            View::Rows(rows) => &rows.prefix,
            _ => &[],
        }
    }

    /// Whether its bytes are pieces of its region in order (a prefix
    /// aside), so a read is answered from those pieces; false for views
    /// that pick or rearrange bytes (rows, interleaved channels).
    pub(super) fn in_order(&self) -> bool {
        !matches!(self, View::Rows(_) | View::Interleaved(_))
    }

    /// Size of the presented file.
    pub fn len(&self, array: &Array) -> PResult<u64> {
        if let View::Rows(rows) = self {
            return Ok(rows.prefix.len() as u64 + rows.body_len());
        }
        Ok(self.prefix().len() as u64 + array.region_len(self.region())?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::testing::{fixture, read_in_steps, sha256_hex};
    use crate::read::Planner;

    #[test]
    fn data_npy_and_chunk_views_are_assembled_from_pieces() {
        // 33 x 21 float64 in 12 x 8 chunks of 5 x 3 blocks: edge chunks and blocks.
        let (array, entry) = fixture("dtype_le_f8");
        let planner = Planner::standalone(1 << 20);
        let data = planner.read(&array, &View::Data, 0, u64::MAX).unwrap();
        assert_eq!(
            sha256_hex(&data),
            entry["sha256"].as_str().unwrap(),
            "data against numpy's bytes"
        );

        // Odd windows put back together give the same bytes.
        assert!(read_in_steps(&planner, &array, &[7, 4093, 1, 513]) == data);

        // A prefix view splices its header before the data.
        let npy = View::Npy(Arc::new(b"HEADER".to_vec()));
        assert_eq!(npy.len(&array).unwrap(), 6 + data.len() as u64);
        assert_eq!(
            planner.read(&array, &npy, 0, 10).unwrap(),
            [b"HEADER".as_slice(), &data[..4]].concat()
        );
        assert_eq!(
            planner.read(&array, &npy, 4, 4).unwrap(),
            [b"ER".as_slice(), &data[..2]].concat()
        );
        assert_eq!(
            planner.read(&array, &npy, 6 + 100, 3).unwrap(),
            &data[100..103]
        );

        // Chunk 8 (grid 2, 2): rows 24..33 of 24..36, cols 16..21 of 16..24, zeros beyond.
        let chunk = planner.read(&array, &View::Chunk(8), 0, u64::MAX).unwrap();
        assert_eq!(chunk.len(), 12 * 8 * 8);
        let mut want = vec![0u8; 12 * 8 * 8];
        for r in 0..12 {
            for c in 0..8 {
                let (row, col) = (24 + r, 16 + c);
                if row < 33 && col < 21 {
                    let src = (row * 21 + col) * 8;
                    want[(r * 8 + c) * 8..(r * 8 + c + 1) * 8].copy_from_slice(&data[src..src + 8]);
                }
            }
        }
        assert!(chunk == want, "edge chunk view");
        assert!(
            planner.read(&array, &View::Chunk(9), 0, 8).is_err(),
            "no chunk 9"
        );

        // Rows 1, 3..5 and 32 of the 33 rows of 21 items, after a prefix.
        let row = 21 * 8;
        let rows = View::Rows(Arc::new(RowSelection::new(
            vec![(1, 1), (3, 2), (32, 1)],
            row as u64,
            Arc::new(b"H".to_vec()),
        )));
        let want = [
            b"H".as_slice(),
            &data[row..2 * row],
            &data[3 * row..5 * row],
            &data[32 * row..],
        ]
        .concat();
        assert_eq!(rows.len(&array).unwrap(), want.len() as u64);
        assert!(planner.read(&array, &rows, 0, u64::MAX).unwrap() == want);
        for (start, n) in [
            (0u64, 1u64),
            (1, 170),
            (100, 400),
            (want.len() as u64 - 3, 10),
        ] {
            let end = (start + n).min(want.len() as u64);
            assert!(
                planner.read(&array, &rows, start, n).unwrap()
                    == want[start as usize..end as usize],
                "rows {start}+{n}"
            );
        }
    }
}
