//! python-blosc2's containers read as rows and columns: a CTable as its
//! logical columns (docs/tables-format.md), and the batches of a
//! BatchArray. Below the views, which render these as files, and above
//! compute/, source/ and read/, whose shared block cache every part of a
//! table is read through.
//!
//! - [`schema`]: a table's `_meta` schema, read;
//! - [`model`]: the columns and the storage parts each claims, opened;
//! - [`column_values`]: a column's values over some rows (msgpack rows
//!   through [`build`]);
//! - [`record_batches`]: the table as Arrow record batches of its live rows;
//! - [`batch_array`]: a BatchArray's batches (msgpack or Arrow IPC);
//! - [`seam`]: what the renderers read ([`TableSource`], [`ColumnSource`],
//!   [`ColumnBatch`]) and why a batch could not be given ([`TableError`]);
//! - [`type_names`]: a column's kind and Arrow type as python-blosc2 and
//!   pyarrow name them;
//! - [`schema_text`]: the schema as text for `blosc2fs info`.

pub mod batch_array;
mod build;
pub mod column_values;
pub mod model;
pub mod record_batches;
pub mod schema;
pub mod schema_text;
pub mod seam;
pub mod type_names;

pub use model::{Column, Parts, TableModel};
pub use record_batches::TableBatches;
pub use seam::{
    piece_starts, ColumnBatch, ColumnSource, SharedTableSource, TableError, TableSource,
};
