//! The one table of the files a folder presents of its own, beside its
//! children ([`FOLDER_FILES`]): the mount's `.stats`, a store folder's
//! `meta.json`, a folder's `zarr.json`, a table's `table.csv` and
//! `table.arrow`. As
//! [`ARRAY_FILES`](super::ARRAY_FILES) does for array folders, it says for
//! each which folders hold it, whether the mount offers it, how big it is
//! and what opening it serves; the namespace lists, looks up, sizes and
//! opens a folder's own files only through it.

use std::sync::Arc;

use super::array_files::Content;
use super::piece_file::PieceFile;
use super::selection::ViewSet;

/// The files a folder can hold of its own (rows of [`FOLDER_FILES`], in
/// that order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FolderFileId {
    /// `.stats`: the mount's counters.
    Stats,
    /// `meta.json`: a store's, group's or table's description.
    MetaJson,
    /// `zarr.json`: the Zarr v3 group a folder is.
    ZarrJson,
    /// `table.csv`: a CTable's rows as CSV.
    TableCsv,
    /// `table.arrow`: a CTable as an Arrow IPC file.
    TableArrow,
}

/// What one folder has of the files of [`FOLDER_FILES`]. Each is asked for
/// only when that file is wanted, so a folder's source is read only for the
/// files that come from it.
pub trait FolderHolds {
    /// It is the mount's root folder (which alone holds `.stats`, whatever
    /// it presents).
    fn is_mount_root(&self) -> bool;
    /// Its `meta.json` (a store's root, a group's or a table's folder).
    fn meta_json(&self) -> Option<Arc<Vec<u8>>>;
    /// Its `zarr.json`, a Zarr v3 group (a mirrored folder, a store's
    /// folders), with its subtree's consolidated metadata where it has it.
    fn zarr_json(&self) -> Option<Arc<Vec<u8>>>;
    /// Whether it has a `zarr.json`, known without rendering it (the
    /// consolidated metadata walks the folder's subtree).
    fn holds_zarr_json(&self) -> bool {
        self.zarr_json().is_some()
    }
    /// Its `table.csv` (a table folder whose columns it can show).
    fn table_csv(&self) -> Option<Arc<PieceFile>>;
    /// Its `table.arrow` (a table folder).
    fn table_arrow(&self) -> Option<Arc<PieceFile>>;
}

/// One row of [`FOLDER_FILES`]: a file a folder presents of its own.
pub struct FolderFile {
    /// Which file.
    pub id: FolderFileId,
    /// Its name.
    pub name: &'static str,
    /// Which folders hold it (for the documentation and the reader of this table).
    pub who: &'static str,
    /// How its size is known before a byte of it is read.
    pub sized_by: &'static str,
    /// Whether a mount offering these views offers it (`--views`).
    pub offered: fn(&ViewSet) -> bool,
    /// It tells of the mount, not of its source: the mounting user's,
    /// readable by all, dated now, and sized by the filesystem, which
    /// renders it (the size here is 0).
    pub of_mount: bool,
    /// Whether a folder holds it, as listing asks: known without rendering
    /// it, so listing a folder never walks what lies below it.
    pub listed: fn(&dyn FolderHolds) -> bool,
    /// Its size in a folder, or `None` when that folder does not hold it.
    pub size: fn(&dyn FolderHolds) -> Option<u64>,
    /// What opening it serves (`None` where it is absent).
    pub open: fn(&dyn FolderHolds) -> Option<Content>,
}

impl std::fmt::Debug for FolderFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FolderFile")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// The files a folder presents of its own, in listing order (before its
/// children).
pub const FOLDER_FILES: [FolderFile; 5] = [
    FolderFile {
        id: FolderFileId::Stats,
        name: ".stats",
        who: "the mount's root folder, whatever it presents (a folder, a store, an array)",
        sized_by: "the filesystem, which renders the document afresh to measure it",
        offered: |_| true,
        of_mount: true,
        listed: |h| h.is_mount_root(),
        size: |h| h.is_mount_root().then_some(0),
        open: |h| h.is_mount_root().then_some(Content::Stats),
    },
    FolderFile {
        id: FolderFileId::MetaJson,
        name: "meta.json",
        who: "a store's root folder (also one that cannot be read: it says why), its groups and tables",
        sized_by: "rendered when the store is loaded (a table's when it is first asked)",
        offered: |_| true,
        of_mount: false,
        listed: |h| h.meta_json().is_some(),
        size: |h| Some(h.meta_json()?.len() as u64),
        open: |h| Some(Content::Static(h.meta_json()?)),
    },
    FolderFile {
        id: FolderFileId::ZarrJson,
        name: "zarr.json",
        who: "every mirrored folder, and a store's folders that could be read",
        sized_by: "rendered from the folder's name, or when the store is loaded; the consolidated \
                   metadata of a small subtree rendered at each getattr and open, by a walk of it",
        offered: ViewSet::offers_zarr3,
        of_mount: false,
        listed: |h| h.holds_zarr_json(),
        size: |h| Some(h.zarr_json()?.len() as u64),
        open: |h| Some(Content::Static(h.zarr_json()?)),
    },
    FolderFile {
        id: FolderFileId::TableCsv,
        name: "table.csv",
        who: "a table's folder with a column CSV can show (every column but those to_arrow cannot give)",
        sized_by: "a measuring pass when first sized: every batch of rows rendered once, its length kept",
        offered: ViewSet::offers_table_csv,
        of_mount: false,
        listed: |h| h.table_csv().is_some_and(|f| !f.failed()),
        size: |h| h.table_csv()?.len(),
        open: |h| Some(Content::Table(h.table_csv()?)),
    },
    FolderFile {
        id: FolderFileId::TableArrow,
        name: "table.arrow",
        who: "every table's folder (the columns to_arrow can give)",
        sized_by: "a measuring pass when first sized: arrow-ipc's file writer over every batch, counting bytes",
        offered: ViewSet::offers_table_arrow,
        of_mount: false,
        listed: |h| h.table_arrow().is_some_and(|f| !f.failed()),
        size: |h| h.table_arrow()?.len(),
        open: |h| Some(Content::Table(h.table_arrow()?)),
    },
];

/// The row of `id`.
pub fn folder_file(id: FolderFileId) -> &'static FolderFile {
    &FOLDER_FILES[id as usize]
}

/// The row named `name`, when `views` offers it (whether a folder holds
/// it, its `size` says: a folder is read only once the name is known to be
/// one of these).
pub fn find_folder_file(name: &str, views: ViewSet) -> Option<&'static FolderFile> {
    FOLDER_FILES
        .iter()
        .find(|f| f.name == name && (f.offered)(&views))
}

/// The rows `views` offers and the folder `holds` has, in listing order
/// (none is rendered to know it).
pub fn folder_files_in(
    holds: &dyn FolderHolds,
    views: ViewSet,
) -> impl Iterator<Item = &'static FolderFile> + '_ {
    FOLDER_FILES
        .iter()
        .filter(move |f| (f.offered)(&views) && (f.listed)(holds))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder holding what its fields say.
    #[derive(Default)]
    struct Holds {
        root: bool,
        meta: Option<Arc<Vec<u8>>>,
        zarr: Option<Arc<Vec<u8>>>,
    }

    impl FolderHolds for Holds {
        fn is_mount_root(&self) -> bool {
            self.root
        }
        fn meta_json(&self) -> Option<Arc<Vec<u8>>> {
            self.meta.clone()
        }
        fn zarr_json(&self) -> Option<Arc<Vec<u8>>> {
            self.zarr.clone()
        }
        fn table_csv(&self) -> Option<Arc<PieceFile>> {
            None
        }
        fn table_arrow(&self) -> Option<Arc<PieceFile>> {
            None
        }
    }

    fn names(holds: &Holds, views: ViewSet) -> Vec<&'static str> {
        folder_files_in(holds, views).map(|f| f.name).collect()
    }

    #[test]
    fn the_table_lists_each_id_once_in_declaration_order() {
        for (i, f) in FOLDER_FILES.iter().enumerate() {
            assert_eq!(f.id as usize, i, "{}", f.name);
            assert_eq!(folder_file(f.id).name, f.name);
            assert!(!f.who.is_empty() && !f.sized_by.is_empty(), "{}", f.name);
            assert_eq!(
                FOLDER_FILES.iter().filter(|g| g.name == f.name).count(),
                1,
                "{}",
                f.name
            );
        }
        let of_mount: Vec<_> = FOLDER_FILES
            .iter()
            .filter(|f| f.of_mount)
            .map(|f| f.name)
            .collect();
        assert_eq!(of_mount, [".stats"]);
    }

    #[test]
    fn a_folder_lists_what_it_holds_and_the_mount_offers() {
        let bytes = Arc::new(b"{}\n".to_vec());
        let store_root = Holds {
            root: true,
            meta: Some(bytes.clone()),
            zarr: Some(bytes.clone()),
        };
        assert_eq!(
            names(&store_root, ViewSet::ALL),
            [".stats", "meta.json", "zarr.json"]
        );
        assert_eq!(names(&store_root, ViewSet::PLAIN), [".stats", "meta.json"]);
        let mirrored = Holds {
            zarr: Some(bytes),
            ..Holds::default()
        };
        assert_eq!(names(&mirrored, ViewSet::ALL), ["zarr.json"]);
        assert!(find_folder_file("zarr.json", ViewSet::PLAIN).is_none());
        assert!(find_folder_file("data", ViewSet::ALL).is_none());
        let stats = find_folder_file(".stats", ViewSet::PLAIN).unwrap();
        assert_eq!(stats.id, FolderFileId::Stats);
        assert_eq!((stats.size)(&mirrored), None, "only the mount root has it");
        assert_eq!(
            (stats.size)(&store_root),
            Some(0),
            "the filesystem sizes it"
        );
        assert_eq!(
            (folder_file(FolderFileId::MetaJson).size)(&store_root),
            Some(3)
        );
        assert!(matches!(
            (folder_file(FolderFileId::Stats).open)(&store_root),
            Some(Content::Stats)
        ));
        assert!((folder_file(FolderFileId::TableCsv).open)(&store_root).is_none());
        // Listing knows what sizing knows, without rendering.
        for holds in [&store_root, &mirrored, &Holds::default()] {
            for f in &FOLDER_FILES {
                assert_eq!((f.listed)(holds), (f.size)(holds).is_some(), "{}", f.name);
            }
        }
    }
}
