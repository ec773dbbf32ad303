//! NumPy dtype strings, the one reading of them: what a b2nd metalayer, a
//! served description or an operand says its items are.
//!
//! python-blosc2 writes `dtype.str` for a plain dtype (`<f8`, `|b1`, `>i4`,
//! `<U8`, `|S5`, `|V16`, `<M8[ns]`) and `str(dtype)` for a structured one:
//! Python literals, a list of fields `[('a', '<i4'), ('b', [('x', '<f4')]),
//! ('c', '<f8', (2, 3))]` (titled fields as `(('title', 'a'), '<i4')`), a
//! dict `{'names': [...], 'formats': [...], 'offsets': [...], 'itemsize':
//! n}` when fields have gaps or are aligned, and a subarray `('<i4', (2,))`.
//! Every layer that needs to know what the items are (the format's item
//! sizes, the views' text and headers, compute's operand types) builds its
//! own types from the [`NumpyDtype`] read here, so the grammar lives in one
//! place. Any input gives an answer or a [`DtypeError`], never a panic;
//! nesting is bounded ([`MAX_DEPTH`]) and sizes are NumPy's (below 2^31).
//!
//! `model.rs` holds the types, `parse.rs` the entry point; `scalar.rs` reads
//! the plain strings, `literal.rs` the Python literals and `record.rs` turns
//! those into records with their fields' offsets.

mod literal;
mod model;
mod parse;
mod record;
mod scalar;

pub use model::{
    ByteOrder, DtypeError, Field, ItemKind, NumpyDtype, Record, RecordForm, Scalar, Subarray,
    TimeBase, TimeUnit, MAX_DEPTH, MAX_ITEMSIZE,
};

#[cfg(test)]
mod tests;
