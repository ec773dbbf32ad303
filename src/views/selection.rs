//! Which presented files a mount offers (`--views LIST`, `-o views=`).
//!
//! A user who wants a plain tree asks for `--views none` and gets `data`
//! and `meta.json` only: those two are always offered, since without them
//! an array folder says nothing. Every other presented file can be chosen
//! by its file name (`data.npy`) or a short name (`npy`); `all` (the
//! default) offers everything, `headers` the three imaging sidecars (and
//! `data.interleaved`, which `data.mhd` may point at and comes with it),
//! `zarr3` the whole Zarr v3 hierarchy (every `zarr.json` and the arrays'
//! chunk trees `c/`). The
//! names are separated by `,`, or by `:` or `+` (which survive inside a
//! comma-separated `-o` list: `-o ro,views=npy:headers`).

use std::fmt;

use super::names::FileId;

/// One optional view, by the name a user writes.
struct ViewName {
    /// Names accepted on the command line; the first is the canonical one.
    names: &'static [&'static str],
    /// The bit it sets in [`ViewSet`].
    bit: u32,
}

const TABLE_CSV_BIT: u32 = 1 << 31;
const TABLE_ARROW_BIT: u32 = 1 << 30;

const fn bit(id: FileId) -> u32 {
    1 << id as u32
}

/// The optional views and their names. `chunks` brings its `.zarray`.
const NAMES: [ViewName; 11] = [
    ViewName {
        names: &["npy", "data.npy"],
        bit: bit(FileId::Npy) | bit(FileId::ValidNpy),
    },
    ViewName {
        names: &["text", "txt", "data.txt"],
        bit: bit(FileId::Text),
    },
    ViewName {
        names: &["preview", "png", "preview.png"],
        bit: bit(FileId::Preview),
    },
    ViewName {
        names: &["chunks", "zarr"],
        bit: bit(FileId::ChunksDir) | bit(FileId::Zarray),
    },
    ViewName {
        names: &["items", "items.jsonl"],
        bit: bit(FileId::Items),
    },
    ViewName {
        names: &["nrrd", "nhdr", "data.nhdr"],
        bit: bit(FileId::Nrrd),
    },
    ViewName {
        names: &["metaimage", "mhd", "data.mhd"],
        bit: bit(FileId::MetaImage) | bit(FileId::Interleaved),
    },
    ViewName {
        names: &["envi", "hdr", "data.hdr"],
        bit: bit(FileId::Envi),
    },
    ViewName {
        names: &["table", "csv", "table.csv"],
        bit: TABLE_CSV_BIT,
    },
    ViewName {
        names: &["arrow", "feather", "table.arrow"],
        bit: TABLE_ARROW_BIT,
    },
    ViewName {
        names: &["zarr3", "v3", "zarr.json"],
        bit: bit(FileId::ZarrJson),
    },
];

/// The files that are always offered (a nullable column's `valid` comes
/// with its `data`: without it a null's stored fill reads as a value).
const ALWAYS: u32 = bit(FileId::MetaJson) | bit(FileId::Data) | bit(FileId::Valid);

/// A set of presented files a mount offers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ViewSet(u32);

/// A `--views` list that names no view.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown view {name:?} in --views (known: all, none, headers, {known})")]
pub struct UnknownView {
    /// The name given.
    pub name: String,
    /// The names that are accepted.
    pub known: String,
}

impl Default for ViewSet {
    fn default() -> ViewSet {
        ViewSet::ALL
    }
}

impl ViewSet {
    /// Every presented file.
    pub const ALL: ViewSet = ViewSet(u32::MAX);
    /// `data` and `meta.json` only.
    pub const PLAIN: ViewSet = ViewSet(ALWAYS);

    /// The set a list names (separated by `,`, `:` or `+`): view names,
    /// `all`, `none` or `headers`; empty items are ignored and an empty
    /// list is `none`.
    pub fn parse(list: &str) -> Result<ViewSet, UnknownView> {
        let mut bits = ALWAYS;
        for name in list
            .split([',', ':', '+'])
            .map(str::trim)
            .filter(|n| !n.is_empty())
        {
            bits |= match name {
                "all" => u32::MAX,
                "none" => 0,
                "headers" => {
                    bit(FileId::Nrrd)
                        | bit(FileId::MetaImage)
                        | bit(FileId::Interleaved)
                        | bit(FileId::Envi)
                }
                _ => {
                    let known = || {
                        NAMES
                            .iter()
                            .map(|v| v.names[0])
                            .collect::<Vec<_>>()
                            .join(", ")
                    };
                    NAMES
                        .iter()
                        .find(|v| v.names.contains(&name))
                        .ok_or_else(|| UnknownView {
                            name: name.to_string(),
                            known: known(),
                        })?
                        .bit
                }
            };
        }
        Ok(ViewSet(bits))
    }

    /// Whether the array-folder file `id` is offered.
    pub fn offers(&self, id: FileId) -> bool {
        self.0 & bit(id) != 0
    }

    /// Whether the Zarr v3 hierarchy is offered: `zarr.json` in every
    /// folder and array folder, and the arrays' hidden chunk trees `c/`.
    pub fn offers_zarr3(&self) -> bool {
        self.offers(FileId::ZarrJson)
    }

    /// Whether a table folder's `table.csv` is offered.
    pub fn offers_table_csv(&self) -> bool {
        self.0 & TABLE_CSV_BIT != 0
    }

    /// Whether a table folder's `table.arrow` is offered.
    pub fn offers_table_arrow(&self) -> bool {
        self.0 & TABLE_ARROW_BIT != 0
    }
}

impl fmt::Debug for ViewSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ViewSet({self})")
    }
}

/// The canonical list that parses back to the same set.
impl fmt::Display for ViewSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == ViewSet::ALL {
            return f.write_str("all");
        }
        let names: Vec<&str> = NAMES
            .iter()
            .filter(|v| self.0 & v.bit == v.bit)
            .map(|v| v.names[0])
            .collect();
        f.write_str(if names.is_empty() { "none" } else { "" })?;
        f.write_str(&names.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::array_files::ARRAY_FILES;

    #[test]
    fn data_and_meta_json_are_always_offered() {
        for list in ["none", "", "npy", "all", ",,"] {
            let set = ViewSet::parse(list).unwrap();
            assert!(
                set.offers(FileId::Data) && set.offers(FileId::MetaJson),
                "{list:?}"
            );
        }
        let plain = ViewSet::parse("none").unwrap();
        assert_eq!(plain, ViewSet::PLAIN);
        assert!(ARRAY_FILES
            .iter()
            .filter(|f| plain.offers(f.id))
            .map(|f| f.name)
            .eq(["meta.json", "data", "valid"]));
        assert!(!plain.offers_table_csv());
        assert!(!plain.offers_table_arrow());
    }

    #[test]
    fn names_short_and_long_choose_their_files() {
        let set = ViewSet::parse("npy, data.txt,nrrd").unwrap();
        let offered: Vec<_> = ARRAY_FILES
            .iter()
            .filter(|f| set.offers(f.id))
            .map(|f| f.name)
            .collect();
        assert_eq!(
            offered,
            [
                "meta.json",
                "data",
                "data.npy",
                "data.txt",
                "data.nhdr",
                "valid",
                "valid.npy"
            ]
        );
        let set = ViewSet::parse("headers+chunks").unwrap();
        let offered: Vec<_> = ARRAY_FILES
            .iter()
            .filter(|f| set.offers(f.id))
            .map(|f| f.name)
            .collect();
        assert_eq!(
            offered,
            [
                "meta.json",
                "data",
                "chunks",
                ".zarray",
                "data.nhdr",
                "data.mhd",
                "data.hdr",
                "valid",
                "data.interleaved"
            ]
        );
        // data.mhd brings the file it may point at.
        let mhd = ViewSet::parse("mhd").unwrap();
        assert!(mhd.offers(FileId::Interleaved) && !mhd.offers(FileId::Nrrd));
        assert!(!ViewSet::parse("nrrd").unwrap().offers(FileId::Interleaved));
        assert!(ViewSet::parse("csv").unwrap().offers_table_csv());
        assert!(!ViewSet::parse("csv").unwrap().offers_table_arrow());
        assert!(ViewSet::parse("arrow").unwrap().offers_table_arrow());
        assert!(ViewSet::parse("table.arrow").unwrap().offers_table_arrow());
        // zarr3 (or v3, zarr.json) is the whole Zarr v3 hierarchy; all has it,
        // headers and chunks (the v2 array) do not.
        for name in ["zarr3", "v3", "zarr.json", "all"] {
            assert!(ViewSet::parse(name).unwrap().offers_zarr3(), "{name}");
        }
        for list in ["none", "headers", "chunks,zarr", "npy:text"] {
            assert!(!ViewSet::parse(list).unwrap().offers_zarr3(), "{list}");
        }
        assert_eq!(
            ViewSet::parse("npy+zarr3").unwrap().to_string(),
            "npy,zarr3"
        );
        assert_eq!(
            ViewSet::parse("npy:text").unwrap(),
            ViewSet::parse("npy,text").unwrap()
        );
        assert_eq!(ViewSet::parse("all").unwrap(), ViewSet::ALL);
        assert!(ARRAY_FILES.iter().all(|f| ViewSet::ALL.offers(f.id)));
    }

    #[test]
    fn every_optional_file_has_a_name_and_lists_print_back() {
        for f in ARRAY_FILES.iter().filter(|f| !ViewSet::PLAIN.offers(f.id)) {
            assert!(
                NAMES.iter().any(|v| v.bit & bit(f.id) != 0),
                "{} has no --views name",
                f.name
            );
        }
        for list in ["none", "all", "npy,text", "chunks,envi,table"] {
            let set = ViewSet::parse(list).unwrap();
            assert_eq!(ViewSet::parse(&set.to_string()).unwrap(), set, "{list}");
        }
        assert_eq!(ViewSet::parse("txt,npy").unwrap().to_string(), "npy,text");
    }

    #[test]
    fn an_unknown_name_is_an_error_that_lists_the_known_ones() {
        let e = ViewSet::parse("npy,tiff").unwrap_err();
        assert_eq!(e.name, "tiff");
        assert_eq!(
            e.to_string(),
            "unknown view \"tiff\" in --views (known: all, none, headers, npy, text, preview, chunks, items, nrrd, metaimage, envi, table, arrow, zarr3)"
        );
    }
}
