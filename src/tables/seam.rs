//! What a table's renderers (`table.csv`, `table.arrow`, a column's
//! `items.jsonl`) read: the table's logical columns as Arrow record batches
//! of its live rows, one batch per chunk of rows ([`TableSource`]), or one
//! column batch by batch ([`ColumnSource`]). This folder, which knows how a
//! CTable is stored, implements them; the views, above it, only render
//! batches.

use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_schema::{ArrowError, SchemaRef};
use serde_json::Value as Json;

use crate::format::Problem;

/// A table's logical columns, as record batches of live rows (one per chunk of rows).
pub trait TableSource: Send + Sync {
    /// The schema `CTable.to_arrow()` gives (field order, types, nullability, struct nesting).
    fn schema(&self) -> SchemaRef;
    /// How many batches (chunks of live rows) and the live rows of each.
    fn batch_rows(&self) -> &[u64];
    /// Batch i: the live rows of that chunk, every logical column decoded (utf8 as
    /// strings, dictionary as DictionaryArray, nulls as validity, lists/structs nested).
    fn batch(&self, i: usize) -> Result<arrow_array::RecordBatch, TableError>;
    /// Columns that cannot be given (a computed column not evaluated, an object
    /// column) with why: shown in meta.json, left out of schema().
    fn left_out(&self) -> &[(String, String)];
}

/// A shared table source, as the catalog hands it to the views.
pub type SharedTableSource = Arc<dyn TableSource>;

/// Why a batch of a table could not be given.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    /// A storage part of the table (a column's values, offsets, mask,
    /// dictionary, the valid-rows mask) could not be read or decoded.
    #[error("{part}: {problem}")]
    Part {
        /// The storage key of the part (`_cols/name.utf8`).
        part: String,
        /// What went wrong reading it.
        problem: Problem,
    },
    /// The stored values contradict the table's schema or each other
    /// (offsets going backwards, a dictionary code past the dictionary,
    /// a column shorter than the valid-rows mask).
    #[error("column {column}: {detail}")]
    Invalid {
        /// The logical column.
        column: String,
        /// What is wrong.
        detail: String,
    },
    /// Arrow refused the arrays built for a column.
    #[error("column {column}: {source}")]
    Arrow {
        /// The logical column.
        column: String,
        /// Arrow's error.
        source: ArrowError,
    },
    /// A batch number past the table's batches.
    #[error("batch {index} asked of a table of {count} batches")]
    NoSuchBatch {
        /// The batch asked for.
        index: usize,
        /// How many there are.
        count: usize,
    },
}

/// A column's values over some rows (one batch of its live rows).
#[derive(Debug)]
pub enum ColumnBatch {
    /// As Arrow (every column `to_arrow` can give).
    Arrow(ArrayRef),
    /// As JSON (an object column, which has no Arrow type).
    Json(Vec<Json>),
}

/// A column's values, batch by batch.
pub trait ColumnSource: Send + Sync {
    /// How many batches the table has.
    fn batch_count(&self) -> usize;
    /// The column's values over the live rows of batch `b`.
    fn batch(&self, b: usize) -> Result<ColumnBatch, TableError>;
}

/// Where each piece of `lengths` starts when laid end to end, and where
/// the last ends (one more entry than pieces): a file's pieces, a
/// BatchArray's batches.
pub fn piece_starts(lengths: &[u64]) -> Vec<u64> {
    std::iter::once(0)
        .chain(lengths.iter().scan(0u64, |at, n| {
            *at = n.saturating_add(*at);
            Some(*at)
        }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piece_starts_lay_pieces_end_to_end() {
        assert_eq!(piece_starts(&[]), [0]);
        assert_eq!(piece_starts(&[3, 0, 5]), [0, 3, 3, 8]);
        assert_eq!(piece_starts(&[u64::MAX, 1]), [0, u64::MAX, u64::MAX]);
    }
}
