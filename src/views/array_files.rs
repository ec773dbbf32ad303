//! The one table of the files an array folder presents ([`ARRAY_FILES`]):
//! for each fixed-name entry, which arrays get it, how big it is and what
//! opening it serves ([`Content`]). The namespace lists, looks up, sizes and
//! opens array entries only through this table.

use std::sync::Arc;

use crate::format::Array;
use crate::read::View;

use super::column_files::Bytes;
use super::names::{FileId, Folder, Kind};
use super::piece_file::PieceFile;
use super::presented::Presented;
use super::preview::PreviewPlan;
use super::selection::ViewSet;
use super::text::TextLayout;

/// What reading an opened presented file serves.
#[derive(Debug, Clone)]
pub enum Content {
    /// Bytes known at open (meta.json, .zarray).
    Static(Arc<Vec<u8>>),
    /// A view of an array, decoded on demand.
    Array {
        /// The array version the file was opened on.
        array: Arc<Array>,
        /// Which bytes of it the file shows.
        view: View,
    },
    /// The mount's statistics (filled in by the adapter at each read).
    Stats,
    /// `data.txt`: the array's values as text, rendered on demand.
    Text {
        /// The array version the file was opened on.
        array: Arc<Array>,
        /// Where each item's text lies.
        layout: Arc<TextLayout>,
    },
    /// `preview.png`, drawn at open (the filesystem keeps it per version).
    Preview {
        /// The array version the file was opened on.
        array: Arc<Array>,
        /// What to draw.
        plan: Arc<PreviewPlan>,
    },
    /// A CTable's `table.csv` or `table.arrow`, rendered a batch of rows
    /// at a time.
    Table(Arc<PieceFile>),
    /// A file shown as itself: its bytes as they are in the source.
    Plain(Arc<dyn crate::format::ByteSource>),
}

impl From<Bytes> for Content {
    fn from(bytes: Bytes) -> Content {
        match bytes {
            Bytes::Static(b) => Content::Static(b),
            Bytes::View { array, view } => Content::Array { array, view },
        }
    }
}

/// One row of [`ARRAY_FILES`]: a file (or folder) an array folder presents.
pub struct ArrayFile {
    /// Which entry.
    pub id: FileId,
    /// Its name.
    pub name: &'static str,
    /// Where it is presented.
    pub folder: Folder,
    /// File or directory.
    pub kind: Kind,
    /// Which arrays get it (for the documentation and the reader of this table).
    pub who: &'static str,
    /// How its size is known before a byte of it is read.
    pub sized_by: &'static str,
    /// Its size for an array version, or `None` when that version does not
    /// present it (directories: `Some(0)`).
    pub size: fn(&Presented) -> Option<u64>,
    /// What opening it serves (`None` for directories and where absent).
    pub open: fn(&Presented) -> Option<Content>,
    /// It carries the array's extended attributes (`user.blosc2.*`).
    pub xattrs: bool,
    /// Whether a listing shows it, for a file sized by a pass over its
    /// values (listed unless that pass was tried and failed, so a listing
    /// does not measure it); `None`: listed when it has a size.
    pub listed: Option<fn(&Presented) -> bool>,
}

impl std::fmt::Debug for ArrayFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArrayFile")
            .field("name", &self.name)
            .field("folder", &self.folder)
            .finish_non_exhaustive()
    }
}

/// The files an array folder presents, in listing order.
pub const ARRAY_FILES: [ArrayFile; 15] = [
    ArrayFile {
        id: FileId::MetaJson,
        name: "meta.json",
        folder: Folder::Array,
        kind: Kind::File,
        who: "every array, also one that cannot be read or whose values live elsewhere (it says why)",
        sized_by: "rendered when the array is loaded",
        size: |p| Some(p.meta_json.len() as u64),
        open: |p| Some(Content::Static(p.meta_json.clone())),
        xattrs: false,
        listed: None,
    },
    ArrayFile {
        id: FileId::Data,
        name: "data",
        folder: Folder::Array,
        kind: Kind::File,
        who: "arrays with values of their own; a table column shows its valid rows only",
        sized_by: "the array's shape and typesize (a column: its valid rows)",
        size: |p| Some(p.data_file(false)?.0),
        open: |p| Some(p.data_file(false)?.1.into()),
        xattrs: true,
        listed: None,
    },
    ArrayFile {
        id: FileId::Npy,
        name: "data.npy",
        folder: Folder::Array,
        kind: Kind::File,
        who: "as data",
        sized_by: "the .npy header rendered at load, plus data's size",
        size: |p| Some(p.data_file(true)?.0),
        open: |p| Some(p.data_file(true)?.1.into()),
        xattrs: true,
        listed: None,
    },
    ArrayFile {
        id: FileId::Text,
        name: "data.txt",
        folder: Folder::Array,
        kind: Kind::File,
        who: "whole arrays (not table columns), 0-d too, of any dtype but nested records: numbers, strings (quoted), datetimes, records of those",
        sized_by: "one fixed width per value, from the dtype alone",
        size: |p| Some(TextLayout::of_array(p.whole_array()?)?.len()),
        open: |p| {
            let array = p.whole_array()?.clone();
            let layout = Arc::new(TextLayout::of_array(&array)?);
            Some(Content::Text { array, layout })
        },
        xattrs: false,
        listed: None,
    },
    ArrayFile {
        id: FileId::Preview,
        name: "preview.png",
        folder: Folder::Array,
        kind: Kind::File,
        who: "whole arrays (not table columns) of a numeric dtype with at least one axis",
        sized_by: "the picture's dimensions and text fields, from the shape (stored deflate)",
        size: |p| Some(PreviewPlan::new(p.whole_array()?)?.len()),
        open: |p| {
            let array = p.whole_array()?.clone();
            let plan = Arc::new(PreviewPlan::new(&array)?);
            Some(Content::Preview { array, plan })
        },
        xattrs: false,
        listed: None,
    },
    ArrayFile {
        id: FileId::ChunksDir,
        name: "chunks",
        folder: Folder::Array,
        kind: Kind::Dir,
        who: "whole arrays (not table columns)",
        sized_by: "a folder",
        size: |p| p.whole_array().map(|_| 0),
        open: |_| None,
        xattrs: false,
        listed: None,
    },
    ArrayFile {
        id: FileId::Items,
        name: "items.jsonl",
        folder: Folder::Array,
        kind: Kind::File,
        who: "ObjectArray, BatchArray and ListArray; table columns of text, words, lists, structs, bytes or objects",
        sized_by: "a measuring pass when first sized: every chunk (a column: every batch of rows) rendered once, its length kept",
        size: |p| p.items.as_ref()?.len(),
        open: |p| Some(Content::Table(p.items.clone()?)),
        xattrs: false,
        listed: Some(|p| p.items.as_ref().is_some_and(|f| !f.failed())),
    },
    ArrayFile {
        id: FileId::Zarray,
        name: ".zarray",
        folder: Folder::Chunks,
        kind: Kind::File,
        who: "arrays with chunks of one shape and a dtype zarr v2 knows",
        sized_by: "rendered when the array is loaded",
        size: |p| Some(p.zarray.as_ref()?.len() as u64),
        open: |p| Some(Content::Static(p.zarray.clone()?)),
        xattrs: false,
        listed: None,
    },
    ArrayFile {
        id: FileId::Nrrd,
        name: "data.nhdr",
        folder: Folder::Array,
        kind: Kind::File,
        who: "as data, of an integer, float32/64 or bool dtype, rank at least 1, no empty axis",
        sized_by: "rendered when the array is loaded",
        size: |p| Some(p.sidecars.nrrd.as_ref()?.len() as u64),
        open: |p| Some(Content::Static(p.sidecars.nrrd.clone()?)),
        xattrs: false,
        listed: None,
    },
    ArrayFile {
        id: FileId::MetaImage,
        name: "data.mhd",
        folder: Folder::Array,
        kind: Kind::File,
        who: "as data.nhdr, an image of 2 to 4 dimensions (a channel axis as components where MetaIO can)",
        sized_by: "rendered when the array is loaded",
        size: |p| Some(p.sidecars.metaimage.as_ref()?.len() as u64),
        open: |p| Some(Content::Static(p.sidecars.metaimage.clone()?)),
        xattrs: false,
        listed: None,
    },
    ArrayFile {
        id: FileId::Envi,
        name: "data.hdr",
        folder: Folder::Array,
        kind: Kind::File,
        who: "as data, of rank 2 or 3 (channels first, middle or last) and a dtype ENVI has a code for (u1 i2 u2 i4 u4 i8 u8 f4 f8 c8 c16)",
        sized_by: "rendered when the array is loaded",
        size: |p| Some(p.sidecars.envi.as_ref()?.len() as u64),
        open: |p| Some(Content::Static(p.sidecars.envi.clone()?)),
        xattrs: false,
        listed: None,
    },
    ArrayFile {
        id: FileId::ZarrJson,
        name: "zarr.json",
        folder: Folder::Array,
        kind: Kind::File,
        who: "whole arrays (not table columns) of a Zarr v3 core dtype with chunks of one full shape; its chunk keys c/<i>/<j>... are served by lookup only",
        sized_by: "rendered when the array is loaded",
        size: |p| Some(p.zarr3.as_ref()?.len() as u64),
        open: |p| Some(Content::Static(p.zarr3.clone()?)),
        xattrs: false,
        listed: None,
    },
    ArrayFile {
        id: FileId::Valid,
        name: "valid",
        folder: Folder::Array,
        kind: Kind::File,
        who: "a nullable table column with data: one byte per row shown, 1 = a value, 0 = null",
        sized_by: "one byte per live row",
        size: |p| Some(p.column.valid.as_ref()?.file(false).0),
        open: |p| Some(p.column.valid.as_ref()?.file(false).1.into()),
        xattrs: false,
        listed: None,
    },
    ArrayFile {
        id: FileId::ValidNpy,
        name: "valid.npy",
        folder: Folder::Array,
        kind: Kind::File,
        who: "as valid",
        sized_by: "the .npy header rendered at load, plus valid's size",
        size: |p| Some(p.column.valid.as_ref()?.file(true).0),
        open: |p| Some(p.column.valid.as_ref()?.file(true).1.into()),
        xattrs: false,
        listed: None,
    },
    ArrayFile {
        id: FileId::Interleaved,
        name: "data.interleaved",
        folder: Folder::Array,
        kind: Kind::File,
        who: "whole arrays whose data.mhd it serves: several channels on an axis other than the last (nnU-Net's channel-first volumes)",
        sized_by: "data's size (the same bytes, the channel axis moved last)",
        size: |p| Some(p.interleaved_file()?.0),
        open: |p| Some(p.interleaved_file()?.1.into()),
        xattrs: false,
        listed: None,
    },
];

/// The row of `id` (the table lists the ids in declaration order).
pub fn array_file(id: FileId) -> &'static ArrayFile {
    &ARRAY_FILES[id as usize]
}

/// The row named `name` in `folder`, when `presented` has it and `views`
/// offers it.
pub fn find_array_file(
    folder: Folder,
    name: &str,
    presented: &Presented,
    views: ViewSet,
) -> Option<&'static ArrayFile> {
    ARRAY_FILES.iter().find(|f| {
        f.folder == folder && f.name == name && views.offers(f.id) && (f.size)(presented).is_some()
    })
}

/// The rows of `folder` that `presented` has and `views` offers, in listing order.
pub fn array_files_in(
    folder: Folder,
    presented: &Presented,
    views: ViewSet,
) -> impl Iterator<Item = &'static ArrayFile> + '_ {
    ARRAY_FILES
        .iter()
        .filter(move |f| f.folder == folder && views.offers(f.id) && listed(f, presented))
}

/// Whether a listing of `presented` shows `file` (without measuring it).
fn listed(file: &ArrayFile, presented: &Presented) -> bool {
    match file.listed {
        Some(listed) => listed(presented),
        None => (file.size)(presented).is_some(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::read::RowMap;
    use crate::views::testing::fixture;

    fn names(folder: Folder, presented: &Presented) -> Vec<&'static str> {
        array_files_in(folder, presented, ViewSet::ALL)
            .map(|f| f.name)
            .collect()
    }

    #[test]
    fn the_table_lists_each_id_once_in_declaration_order() {
        for (i, f) in ARRAY_FILES.iter().enumerate() {
            assert_eq!(f.id as usize, i, "{}", f.name);
            assert_eq!(array_file(f.id).name, f.name);
            assert!(!f.who.is_empty() && !f.sized_by.is_empty(), "{}", f.name);
            let same_name = ARRAY_FILES
                .iter()
                .filter(|g| g.folder == f.folder && g.name == f.name)
                .count();
            assert_eq!(same_name, 1, "{}", f.name);
        }
    }

    /// dtype_le_f8.b2nd: a (33, 21) float64 array in 9 chunks.
    #[test]
    fn a_numeric_array_presents_every_whole_array_file() {
        let p = Presented::of_array(fixture("dtype_le_f8.b2nd"), None);
        let all = [
            "meta.json",
            "data",
            "data.npy",
            "data.txt",
            "preview.png",
            "chunks",
            "data.nhdr",
            "data.mhd",
            "data.hdr",
            "zarr.json",
        ];
        assert_eq!(names(Folder::Array, &p), all);
        assert_eq!(names(Folder::Chunks, &p), [".zarray"]);
        let plain: Vec<_> = array_files_in(Folder::Array, &p, ViewSet::PLAIN)
            .map(|f| f.name)
            .collect();
        assert_eq!(plain, ["meta.json", "data"]);
        assert!(array_files_in(Folder::Chunks, &p, ViewSet::PLAIN)
            .next()
            .is_none());
        assert!(find_array_file(Folder::Array, "data.npy", &p, ViewSet::PLAIN).is_none());
        let size = |id| (array_file(id).size)(&p);
        assert_eq!(size(FileId::Data), Some(33 * 21 * 8));
        // NumPy's own header for (33, 21) '<f8' is 128 bytes.
        assert_eq!(size(FileId::Npy), Some(128 + 33 * 21 * 8));
        assert_eq!(size(FileId::ChunksDir), Some(0));
        assert_eq!(size(FileId::Items), None);
        assert!(matches!(
            (array_file(FileId::Data).open)(&p),
            Some(Content::Array {
                view: View::Data,
                ..
            })
        ));
        assert!(matches!(
            (array_file(FileId::Text).open)(&p),
            Some(Content::Text { .. })
        ));
        assert!(matches!(
            (array_file(FileId::Preview).open)(&p),
            Some(Content::Preview { .. })
        ));
        assert!((array_file(FileId::ChunksDir).open)(&p).is_none());
        assert_eq!(
            find_array_file(Folder::Array, "data.npy", &p, ViewSet::ALL).map(|f| f.id),
            Some(FileId::Npy)
        );
        assert!(find_array_file(Folder::Array, ".zarray", &p, ViewSet::ALL).is_none());
        assert!(find_array_file(Folder::Chunks, "data", &p, ViewSet::ALL).is_none());
        let xattr_files: Vec<_> = ARRAY_FILES
            .iter()
            .filter(|f| f.xattrs)
            .map(|f| f.name)
            .collect();
        assert_eq!(xattr_files, ["data", "data.npy"]);
    }

    #[test]
    fn a_version_without_values_presents_meta_json_only() {
        let p = Presented::meta_only(&json!({"file": "x.b2nd", "error": "truncated"}));
        assert_eq!(names(Folder::Array, &p), ["meta.json"]);
        assert!(names(Folder::Chunks, &p).is_empty());
        assert_eq!(
            &*p.meta_json,
            b"{\n  \"file\": \"x.b2nd\",\n  \"error\": \"truncated\"\n}\n"
        );
        assert!((array_file(FileId::Data).open)(&p).is_none());
    }

    /// A table column shows its valid rows only: data is those rows, and
    /// there are no whole-array views.
    #[test]
    fn a_column_presents_its_valid_rows_only() {
        let rows = RowMap {
            runs: vec![(0, 2), (5, 1)],
            count: 3,
        };
        let p = Presented::of_array(fixture("dtype_le_i2.b2nd"), Some(&rows));
        // The headers describe the rows shown.
        assert_eq!(
            names(Folder::Array, &p),
            [
                "meta.json",
                "data",
                "data.npy",
                "data.nhdr",
                "data.mhd",
                "data.hdr"
            ]
        );
        let hdr = String::from_utf8(p.sidecars.envi.as_deref().unwrap().clone()).unwrap();
        assert!(
            hdr.contains("samples = 21\nlines = 3\nbands = 1\n"),
            "{hdr}"
        );
        assert_eq!((array_file(FileId::Data).size)(&p), Some(3 * 21 * 2));
        assert!(matches!(
            (array_file(FileId::Data).open)(&p),
            Some(Content::Array {
                view: View::Rows(_),
                ..
            })
        ));
        let meta: serde_json::Value = serde_json::from_slice(&p.meta_json).unwrap();
        assert_eq!(
            (meta["rows_shown"].as_u64(), meta["rows_stored"].as_u64()),
            (Some(3), Some(33))
        );
        assert!(p.npy_header.starts_with(b"\x93NUMPY\x01\x00"));
        assert!(String::from_utf8_lossy(&p.npy_header).contains("'shape': (3, 21)"));
    }

    /// A string dtype has data and text but no picture or imaging headers;
    /// a plain frame of equal chunks still gets a `.zarray`.
    #[test]
    fn strings_and_plain_frames() {
        let p = Presented::of_array(fixture("dtype_S7.b2nd"), None);
        assert_eq!(
            names(Folder::Array, &p),
            ["meta.json", "data", "data.npy", "data.txt", "chunks"]
        );
        let p = Presented::of_array(fixture("frame_f32.b2frame"), None);
        assert!(names(Folder::Array, &p).starts_with(&["meta.json", "data", "data.npy"]));
        assert_eq!(p.chunk_grid, [3]);
    }
}
