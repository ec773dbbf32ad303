//! Which rows of a table's columns are valid: the row map a CTable's
//! `_valid_rows` mask gives, shared by every column of the table, and the
//! bytes per row of a column. The planner's [`super::RowSelection`] is the
//! same map turned into byte ranges of one column.

use crate::format::{Array, Shape};

/// Which bytes of a column are its valid rows: runs of consecutive valid
/// rows (first stored row, count), in row order.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RowMap {
    /// (first stored row, number of rows) of each run.
    pub runs: Vec<(u64, u64)>,
    /// Rows in all runs.
    pub count: u64,
}

impl RowMap {
    /// The same map limited to the first `rows` stored rows.
    pub fn clipped(&self, rows: u64) -> RowMap {
        let mut out = RowMap::default();
        for &(start, n) in &self.runs {
            if start >= rows {
                break;
            }
            let n = n.min(rows - start);
            out.runs.push((start, n));
            out.count += n;
        }
        out
    }
}

/// The bytes per row of an array whose first dimension is rows.
pub fn row_bytes(array: &Array) -> Option<u64> {
    match array.shape() {
        Shape::Nd { geometry, .. } => {
            let rows = *geometry.shape.first()?;
            (rows > 0).then(|| array.data_len() / rows)
        }
        Shape::Plain { .. } => Some(array.frame().typesize as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_map_clips() {
        let m = RowMap {
            runs: vec![(0, 1), (2, 3), (7, 12)],
            count: 16,
        };
        assert_eq!(
            m.clipped(4),
            RowMap {
                runs: vec![(0, 1), (2, 2)],
                count: 3
            }
        );
        assert_eq!(
            m.clipped(100),
            RowMap {
                runs: vec![(0, 1), (2, 3), (7, 12)],
                count: 16
            }
        );
        assert_eq!(m.clipped(0), RowMap::default());
    }
}
