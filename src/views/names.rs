//! The names of presented entries: what an entry is ([`Kind`]), which
//! fixed-name file of an array folder it is ([`FileId`]) and which folder
//! of the array holds it ([`Folder`]). Plain values, shared by the table of
//! array files and by `--views`.

/// What a presented entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A directory.
    Dir,
    /// A regular file.
    File,
    /// A symbolic link (a folder's link to itself or a folder above it).
    Symlink,
}

/// The fixed-name entries an array folder can hold (rows of [`ARRAY_FILES`](super::array_files::ARRAY_FILES)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileId {
    /// `meta.json`.
    MetaJson,
    /// `data`: the values' bytes in C order.
    Data,
    /// `data.npy`: an `.npy` header, then the data.
    Npy,
    /// `data.txt`: the values as fixed-width text.
    Text,
    /// `preview.png`: a picture of the values.
    Preview,
    /// `chunks/`: one file per chunk.
    ChunksDir,
    /// `items.jsonl`: the items of an ObjectArray or BatchArray.
    Items,
    /// `chunks/.zarray`: the zarr v2 document that makes `chunks/` an array.
    Zarray,
    /// `data.nhdr`: a detached NRRD header pointing at `data`.
    Nrrd,
    /// `data.mhd`: a MetaImage header pointing at `data`.
    MetaImage,
    /// `data.hdr`: an ENVI header for `data`.
    Envi,
    /// `zarr.json`: the Zarr v3 metadata that makes the array folder a v3
    /// array node (a folder's `zarr.json`, a v3 group, is this id too).
    ZarrJson,
    /// `valid`: beside a nullable table column's `data`, one byte per row
    /// shown, 1 where the row holds a value and 0 where it is null.
    Valid,
    /// `valid.npy`: an `.npy` header, then `valid`.
    ValidNpy,
    /// `data.interleaved`: `data` with its channel axis moved last, which
    /// `data.mhd` points at for channels kept as planes.
    Interleaved,
}

/// The folder a row of [`ARRAY_FILES`](super::array_files::ARRAY_FILES) is presented in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Folder {
    /// The array's own folder.
    Array,
    /// Its `chunks/` folder (beside the chunk files).
    Chunks,
}
