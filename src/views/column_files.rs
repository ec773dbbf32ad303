//! What a table column's folder presents besides an array's files: the
//! values of a column no single stored array holds (a computed column's,
//! rendered when loaded) and, for a nullable column, `valid` and
//! `valid.npy` beside `data` (one byte per row shown: 1 = a value, 0 =
//! null), read from the column's null mask or rendered from its sentinel.

use std::sync::Arc;

use crate::format::Array;
use crate::read::{RowSelection, View};

/// Where a presented file's bytes come from (the table of array files
/// makes it the [`Content`](super::Content) an open serves).
#[derive(Debug, Clone)]
pub enum Bytes {
    /// Rendered, held in memory.
    Static(Arc<Vec<u8>>),
    /// A view of an array, decoded on demand.
    View {
        /// The array.
        array: Arc<Array>,
        /// Which bytes of it.
        view: View,
    },
}

/// Where a nullable column's `valid` bytes come from.
#[derive(Debug, Clone)]
pub enum ValidBytes {
    /// The live rows of its `.notnull` mask (a bool array, one byte a row).
    Mask {
        /// The mask.
        mask: Arc<Array>,
        /// `valid` and `valid.npy` (after its header).
        views: [Arc<RowSelection>; 2],
    },
    /// Rendered: `valid` and `valid.npy`.
    Rendered([Arc<Vec<u8>>; 2]),
}

impl ValidBytes {
    /// Size and content of `valid` (or, `npy`, `valid.npy`).
    pub fn file(&self, npy: bool) -> (u64, Bytes) {
        match self {
            ValidBytes::Mask { mask, views } => {
                let view = View::Rows(views[usize::from(npy)].clone());
                let len = view.len(mask).unwrap_or(0);
                (
                    len,
                    Bytes::View {
                        array: mask.clone(),
                        view,
                    },
                )
            }
            ValidBytes::Rendered(bytes) => {
                let b = bytes[usize::from(npy)].clone();
                (b.len() as u64, Bytes::Static(b))
            }
        }
    }

    /// Bytes it holds in memory.
    pub fn weight(&self) -> usize {
        match self {
            ValidBytes::Mask { .. } => 64,
            ValidBytes::Rendered(b) => b[0].len() + b[1].len(),
        }
    }
}

/// A column's files beyond the array's.
#[derive(Debug, Clone, Default)]
pub struct ColumnFiles {
    /// `data` and `data.npy`, rendered (a computed column's values), when
    /// they are not a view of a stored array.
    pub data: Option<[Arc<Vec<u8>>; 2]>,
    /// `valid` and `valid.npy`, for a nullable column with `data`.
    pub valid: Option<ValidBytes>,
    /// The column's `zarr.json` describes one chunk, `c/0`, that is `data`.
    pub zarr_one_chunk: bool,
}

impl ColumnFiles {
    /// Bytes it holds in memory.
    pub fn weight(&self) -> usize {
        self.data.as_ref().map_or(0, |d| d[0].len() + d[1].len())
            + self.valid.as_ref().map_or(0, ValidBytes::weight)
    }
}
