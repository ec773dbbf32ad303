//! What a table's renderers (`table.csv`, `table.arrow`, a column's
//! `items.jsonl`) read: the table's logical columns as Arrow record batches
//! of its live rows, one batch per chunk of rows. The catalog, which knows
//! how a CTable is stored, implements [`TableSource`]; the views, below it,
//! only render batches.

use std::sync::Arc;

use arrow_schema::{ArrowError, SchemaRef};

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
