//! The presented files: one renderer per file, the one table of the files
//! an array folder presents ([`array_files`]) and the one of the files a
//! folder presents of its own ([`folder_files`]).
//!
//! A renderer is a function of an array's metadata (and, for the files
//! whose bytes come from the values, of the bytes the read layer hands it);
//! it knows nothing of inodes, folders or FUSE. The namespace
//! ([`crate::tree`]) asks the tables which names an array folder (or a
//! folder, of its own) holds, how big each is and what opening it serves.
//! Adding a presented file is one renderer file here and one row of a table.
//!
//! - [`meta_json`] (+ [`redact`]): `meta.json`;
//! - [`npy`]: the `.npy` header of `data.npy`;
//! - [`zarr`]: `chunks/.zarray` and the chunk file names;
//! - [`zarr3`]: an array folder's `zarr.json` (a Zarr v3 array node) and
//!   its chunk keys `c/<i>/<j>`; [`zarr3_group`]: a folder's `zarr.json`
//!   (a v3 group);
//! - [`text`]: `data.txt`, the values as text (each value as [`scalar`]
//!   writes it);
//! - [`preview`] (+ [`png`]): `preview.png`;
//! - [`nrrd`], [`metaimage`], [`envi`] (+ [`imaging`]): the sidecar
//!   headers `data.nhdr`, `data.mhd` and `data.hdr` that point at `data`;
//! - [`items`]: `items.jsonl`, the items as JSON lines (a BatchArray's
//!   batches read by [`crate::tables::batch_array`]);
//! - [`table_csv`] (+ [`csv_cells`]): a CTable folder's `table.csv`,
//!   [`table_arrow`]: its `table.arrow`, [`column_jsonl`]: a column's
//!   `items.jsonl`, all rendered a batch of rows at a time by
//!   [`piece_file`] from what [`crate::tables`] reads;
//!   [`arrow_json`]: one Arrow value as JSON;
//! - [`table_meta`]: a table's `meta.json` and its columns' descriptions,
//!   [`table_column`]: what a column folder shows, [`column_zarr`]: a
//!   column as a Zarr v3 array;
//! - [`presented`]: what one array version renders when it is loaded
//!   (+ [`column_files`]: a table column's rendered values and `valid`);
//! - [`selection`]: which of these files a mount offers (`--views`);
//! - [`array_files`]: the table itself, and [`names`]: what its entries are;
//! - [`folder_files`]: the table of a folder's own files (`.stats`,
//!   `meta.json`, `zarr.json`, `table.csv`).

pub mod array_files;
pub mod arrow_json;
pub mod column_files;
pub mod column_jsonl;
pub mod column_zarr;
pub mod csv_cells;
pub mod dtype;
pub mod envi;
pub mod folder_files;
pub mod imaging;
pub mod items;
pub mod json;
pub mod meta_json;
pub mod metaimage;
pub mod names;
pub mod npy;
pub mod nrrd;
pub mod piece_file;
pub mod png;
pub mod presented;
pub mod preview;
pub mod redact;
pub mod scalar;
pub mod selection;
pub mod table_arrow;
pub mod table_column;
pub mod table_csv;
pub mod table_meta;
pub mod text;
pub mod zarr;
pub mod zarr3;
pub mod zarr3_group;

pub use array_files::{
    array_file, array_files_in, find_array_file, ArrayFile, Content, ARRAY_FILES,
};
pub use dtype::{presented_dtype, presented_shape};
pub use folder_files::{
    find_folder_file, folder_file, folder_files_in, FolderFile, FolderFileId, FolderHolds,
    FOLDER_FILES,
};
pub use names::{FileId, Folder, Kind};
pub use presented::Presented;
pub use selection::ViewSet;

/// Fixtures for the views' unit tests: arrays python-blosc2 wrote
/// (`tests/fixtures`, see its manifest).
#[cfg(test)]
pub(crate) mod testing {
    use std::path::PathBuf;
    use std::sync::Arc;

    use crate::format::Array;

    /// The fixture file `name` (relative to `tests/fixtures`), opened.
    pub fn fixture(name: &str) -> Arc<Array> {
        let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "fixtures", name]
            .iter()
            .collect();
        Arc::new(crate::source::open_array(&path).unwrap_or_else(|e| panic!("{name}: {e}")))
    }
}
