//! How a source's listing becomes a folder's entries: the one set of rules
//! every kind of folder follows (a local directory, a remote prefix), so
//! a name means the same thing wherever it is listed or looked up.
//!
//! The catalog classifies each entry first ([`Sort`]: a Blosc2 object, a
//! plain file, a folder); then, in this order:
//!
//! 1. **Names.** A name that cannot be a POSIX file name (empty, `.`, `..`,
//!    holding `/`, NUL or another control character, longer than 255
//!    bytes) is skipped, with a log line and a count in `.stats`
//!    (`listing.names_skipped`; [`skip_name`] is the hook for whoever meets
//!    such a name first, a remote listing included).
//! 2. **What is shown** ([`ListingRules`]): plain files unless
//!    `--blosc2-only`; with `--originals`, a Blosc2 *file* under its own
//!    name as its own bytes ([`Shows::Original`]), and its folder of views
//!    under its name plus [`VIEWS_SUFFIX`] ([`Shows::Views`]).
//! 3. **Collisions**, one rule: a file the mount adds to the folder itself
//!    (`.stats`, `zarr.json`, ...) keeps its name; a source *file* of that
//!    name is shown as the name plus [`RENAMED_SUFFIX`]
//!    (`listing.names_renamed`), a source folder of that name, or a file
//!    whose new name is taken too, is not shown (`listing.names_hidden`,
//!    logged). Between source entries of one name (a remote object `X`
//!    beside a prefix `X/`) the folder wins and the other is hidden and
//!    logged. A name the mount derives ([`VIEWS_SUFFIX`]) never takes a
//!    source entry's name: the source entry wins and the views folder is
//!    hidden and logged. No name is ever listed twice.
//!
//! [`arrange`] applies the rules to a whole listing (readdir), [`resolve`]
//! to one name (lookup), with the same answers.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::sync::atomic::{AtomicU64, Ordering};

/// The longest name a folder shows (bytes; POSIX `NAME_MAX` on Linux).
pub const MAX_NAME: usize = 255;

/// With `--originals`, a Blosc2 file's folder of views is named after it
/// with this appended (`x.b2nd` → `x.b2nd.d/`).
pub const VIEWS_SUFFIX: &str = ".d";

/// A source file named like a file the mount adds is shown under its
/// name with this appended (`zarr.json` → `zarr.json.source`).
pub const RENAMED_SUFFIX: &str = ".source";

/// What a folder shows of its source, as the mount flags ask.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListingRules {
    /// Only Blosc2 objects and folders, no plain files (`--blosc2-only`).
    pub blosc2_only: bool,
    /// Each Blosc2 file also as its own bytes, its views under a derived
    /// name (`--originals`).
    pub originals: bool,
}

/// What a source entry is, as the catalog classified it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sort {
    /// A folder (mirrored).
    Folder,
    /// A Blosc2 object (an array or a store), shown as a folder;
    /// `file`: it is one file (not a sparse frame's or store's directory),
    /// which `--originals` can also show as itself.
    Object {
        /// It is one regular file (or object).
        file: bool,
    },
    /// Any other regular file (or object), shown as itself.
    Plain,
}

impl Sort {
    /// Whether it is one file (which a rename can move aside).
    fn is_file(self) -> bool {
        matches!(self, Sort::Plain | Sort::Object { file: true })
    }
}

/// How a placed entry is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shows {
    /// As classified: a folder, a Blosc2 object's folder, a plain file.
    Classified,
    /// A Blosc2 file as its own bytes (`--originals`).
    Original,
    /// A Blosc2 file's folder of views, under its derived name (`--originals`).
    Views,
}

/// One entry of a folder: the name it is shown under, the source entry's
/// own name, how it is shown, and what the caller knows of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed<T> {
    /// The presented name.
    pub name: OsString,
    /// The source entry's name.
    pub source: OsString,
    /// How it is shown.
    pub shows: Shows,
    /// What it is.
    pub sort: Sort,
    /// The caller's own data about the entry.
    pub item: T,
}

static SKIPPED: AtomicU64 = AtomicU64::new(0);
static RENAMED: AtomicU64 = AtomicU64::new(0);
static HIDDEN: AtomicU64 = AtomicU64::new(0);

/// The `listing` counters of `.stats` (process-wide: a daemon serves one mount).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ListingCounts {
    /// Names skipped as no POSIX name (`names_skipped`).
    pub skipped: u64,
    /// Source files shown under [`RENAMED_SUFFIX`] names (`names_renamed`).
    pub renamed: u64,
    /// Entries not shown because their name was taken (`names_hidden`).
    pub hidden: u64,
}

/// What the listing rules have done so far.
pub fn counts() -> ListingCounts {
    ListingCounts {
        skipped: SKIPPED.load(Ordering::Relaxed),
        renamed: RENAMED.load(Ordering::Relaxed),
        hidden: HIDDEN.load(Ordering::Relaxed),
    }
}

/// Why `name` cannot be shown as a file name, or `None` when it can.
pub fn bad_name(name: &[u8]) -> Option<&'static str> {
    if name.is_empty() {
        Some("an empty name")
    } else if name == b"." || name == b".." {
        Some("a name of the folder itself or its parent")
    } else if name.contains(&b'/') {
        Some("a name holding '/'")
    } else if name.iter().any(|&b| b < 0x20 || b == 0x7f) {
        Some("a name holding a control character")
    } else if name.len() > MAX_NAME {
        Some("a name longer than 255 bytes")
    } else {
        None
    }
}

/// Skip `name` in the listing of `folder` (as named in messages): a log
/// line and one more `listing.names_skipped`. The hook for whoever meets
/// a bad name first (a remote listing counts its own here).
pub fn skip_name(folder: &str, name: &[u8], why: &str) {
    SKIPPED.fetch_add(1, Ordering::Relaxed);
    log::warn!(
        "{folder}: entry {:?} not shown ({why})",
        String::from_utf8_lossy(name)
    );
}

fn hide(folder: &str, name: &OsStr, why: &str) {
    HIDDEN.fetch_add(1, Ordering::Relaxed);
    log::warn!("{folder}: {:?} not shown: {why}", name);
}

fn with_suffix(name: &OsStr, suffix: &str) -> OsString {
    let mut out = name.to_os_string();
    out.push(suffix);
    out
}

fn strip_suffix<'a>(name: &'a OsStr, suffix: &str) -> Option<&'a OsStr> {
    name.as_bytes()
        .strip_suffix(suffix.as_bytes())
        .map(OsStr::from_bytes)
}

/// How entry `sort` is shown under its own name.
fn own_shows(sort: Sort, rules: ListingRules) -> Shows {
    match sort {
        Sort::Object { file: true } if rules.originals => Shows::Original,
        _ => Shows::Classified,
    }
}

/// The entries of a folder (`folder` names it in messages) whose source
/// lists `entries` (name, sort, the caller's data) and which holds the
/// files `own` of its own: what is shown, under which names, sorted by
/// name. See the module's rules.
pub fn arrange<T: Clone>(
    folder: &str,
    entries: Vec<(OsString, Sort, T)>,
    own: &[&str],
    rules: ListingRules,
) -> Vec<Placed<T>> {
    let mut kept: Vec<(OsString, Sort, T)> = Vec::with_capacity(entries.len());
    for (name, sort, item) in entries {
        if let Some(why) = bad_name(name.as_bytes()) {
            skip_name(folder, name.as_bytes(), why);
            continue;
        }
        if sort == Sort::Plain && rules.blosc2_only {
            continue;
        }
        kept.push((name, sort, item));
    }
    // Folders first: between source entries of one name, the folder wins.
    kept.sort_by(|a, b| (a.1 != Sort::Folder, &a.0).cmp(&(b.1 != Sort::Folder, &b.0)));
    let source_names: HashSet<OsString> = kept.iter().map(|e| e.0.clone()).collect();
    let folders: HashSet<OsString> = kept
        .iter()
        .filter(|e| e.1 == Sort::Folder)
        .map(|e| e.0.clone())
        .collect();
    let own: HashSet<&OsStr> = own.iter().map(|n| OsStr::new(*n)).collect();
    let mut taken: HashSet<OsString> = own.iter().map(|n| n.to_os_string()).collect();
    let mut out = Vec::with_capacity(kept.len());
    let mut views = Vec::new();
    for (name, sort, item) in kept {
        let placed_name = if sort != Sort::Folder && folders.contains(&name) {
            hide(folder, &name, "a folder of the same name is shown");
            continue;
        } else if !taken.contains(&name) {
            name.clone()
        } else if own.contains(name.as_os_str()) && sort.is_file() {
            let renamed = with_suffix(&name, RENAMED_SUFFIX);
            if bad_name(renamed.as_bytes()).is_some()
                || source_names.contains(&renamed)
                || taken.contains(&renamed)
            {
                hide(
                    folder,
                    &name,
                    "the mount has a file of that name, and its other name is taken",
                );
                continue;
            }
            RENAMED.fetch_add(1, Ordering::Relaxed);
            log::info!(
                "{folder}: {:?} shown as {:?} (the mount has a file of that name)",
                name,
                renamed
            );
            renamed
        } else if own.contains(name.as_os_str()) {
            hide(folder, &name, "the mount has a file of that name");
            continue;
        } else {
            hide(folder, &name, "a folder of the same name is shown");
            continue;
        };
        taken.insert(placed_name.clone());
        let shows = own_shows(sort, rules);
        if shows == Shows::Original {
            views.push((name.clone(), sort, item.clone()));
        }
        out.push(Placed {
            name: placed_name,
            source: name,
            shows,
            sort,
            item,
        });
    }
    for (name, sort, item) in views {
        let derived = with_suffix(&name, VIEWS_SUFFIX);
        if bad_name(derived.as_bytes()).is_some()
            || source_names.contains(&derived)
            || taken.contains(&derived)
        {
            hide(
                folder,
                &derived,
                "the folder of views of a Blosc2 file: the name is taken",
            );
            continue;
        }
        taken.insert(derived.clone());
        out.push(Placed {
            name: derived,
            source: name,
            shows: Shows::Views,
            sort,
            item,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// What `name` names in a folder (as [`arrange`] would list it) that holds
/// the files of its own `holds_own` says, where `probe` classifies a
/// source entry by its name (`None`: no such entry, or not shown). A name
/// the folder holds of its own is the caller's (never a source entry's).
pub fn resolve<T>(
    name: &OsStr,
    holds_own: impl Fn(&OsStr) -> bool,
    mut probe: impl FnMut(&OsStr) -> Option<(Sort, T)>,
    rules: ListingRules,
) -> Option<Placed<T>> {
    if bad_name(name.as_bytes()).is_some() || holds_own(name) {
        return None;
    }
    let shown = |sort: Sort| !(sort == Sort::Plain && rules.blosc2_only);
    if let Some((sort, item)) = probe(name) {
        return shown(sort).then(|| Placed {
            name: name.to_os_string(),
            source: name.to_os_string(),
            shows: own_shows(sort, rules),
            sort,
            item,
        });
    }
    if let Some(base) = strip_suffix(name, RENAMED_SUFFIX).filter(|b| holds_own(b)) {
        let (sort, item) = probe(base)?;
        return (shown(sort) && sort.is_file()).then(|| Placed {
            name: name.to_os_string(),
            source: base.to_os_string(),
            shows: own_shows(sort, rules),
            sort,
            item,
        });
    }
    if rules.originals {
        let base = strip_suffix(name, VIEWS_SUFFIX)?;
        if bad_name(base.as_bytes()).is_some() {
            return None;
        }
        let (sort, item) = probe(base)?;
        return (sort == Sort::Object { file: true }).then(|| Placed {
            name: name.to_os_string(),
            source: base.to_os_string(),
            shows: Shows::Views,
            sort,
            item,
        });
    }
    None
}

/// `bytes` as a name (for callers holding raw bytes).
pub fn name_of(bytes: Vec<u8>) -> OsString {
    OsString::from_vec(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(placed: &[Placed<()>]) -> Vec<(String, Shows)> {
        placed
            .iter()
            .map(|p| (p.name.to_string_lossy().into_owned(), p.shows))
            .collect()
    }

    fn listing(items: &[(&str, Sort)]) -> Vec<(OsString, Sort, ())> {
        items
            .iter()
            .map(|(n, s)| (OsString::from(n), *s, ()))
            .collect()
    }

    const FILE: Sort = Sort::Object { file: true };

    #[test]
    fn bad_names_are_named() {
        for bad in [
            &b""[..],
            b".",
            b"..",
            b"a/b",
            b"a\0b",
            b"a\nb",
            b"\t",
            b"x\x7f",
        ] {
            assert!(bad_name(bad).is_some(), "{bad:?}");
        }
        assert!(bad_name(&[b'a'; 256]).is_some());
        assert!(bad_name(&[b'a'; 255]).is_none());
        assert!(bad_name("é ü.json".as_bytes()).is_none());
        assert!(bad_name(b"...").is_none());
    }

    #[test]
    fn plain_files_and_flags() {
        let items = listing(&[
            ("a.b2nd", FILE),
            ("case.pkl", Sort::Plain),
            ("sparse.b2nd", Sort::Object { file: false }),
            ("sub", Sort::Folder),
            ("bad\nname", Sort::Plain),
        ]);
        let shown = arrange("f", items.clone(), &["zarr.json"], ListingRules::default());
        assert_eq!(
            names(&shown),
            [
                ("a.b2nd".into(), Shows::Classified),
                ("case.pkl".into(), Shows::Classified),
                ("sparse.b2nd".into(), Shows::Classified),
                ("sub".into(), Shows::Classified),
            ]
        );
        let only = ListingRules {
            blosc2_only: true,
            originals: false,
        };
        let shown = arrange("f", items.clone(), &[], only);
        assert_eq!(shown.len(), 3, "no plain file");
        let originals = ListingRules {
            blosc2_only: false,
            originals: true,
        };
        let shown = arrange("f", items, &[], originals);
        assert_eq!(
            names(&shown),
            [
                ("a.b2nd".into(), Shows::Original),
                ("a.b2nd.d".into(), Shows::Views),
                ("case.pkl".into(), Shows::Classified),
                ("sparse.b2nd".into(), Shows::Classified),
                ("sub".into(), Shows::Classified),
            ]
        );
        assert_eq!(shown[1].source, "a.b2nd");
    }

    #[test]
    fn collisions_follow_one_rule_and_no_name_is_listed_twice() {
        let originals = ListingRules {
            blosc2_only: false,
            originals: true,
        };
        let items = listing(&[
            ("zarr.json", Sort::Plain),
            (".stats", FILE),
            ("meta.json", Sort::Plain),
            ("x.b2nd", FILE),
            ("x.b2nd", Sort::Folder),
            ("y.b2nd", FILE),
            ("y.b2nd.d", Sort::Folder),
            ("z", Sort::Plain),
            ("zarr.json", Sort::Folder),
        ]);
        let own = [".stats", "zarr.json"];
        let shown = arrange("f", items, &own, originals);
        let expected: Vec<(String, Shows)> = [
            (".stats.d", Shows::Views),
            (".stats.source", Shows::Original),
            ("meta.json", Shows::Classified),
            ("x.b2nd", Shows::Classified),
            ("y.b2nd", Shows::Original),
            ("y.b2nd.d", Shows::Classified),
            ("z", Shows::Classified),
        ]
        .into_iter()
        .map(|(n, s)| (n.to_string(), s))
        .collect();
        assert_eq!(names(&shown), expected);
        assert_eq!(shown[3].sort, Sort::Folder, "the folder x.b2nd wins");
        assert_eq!(shown[5].sort, Sort::Folder, "the source's y.b2nd.d wins");
        let mut unique = HashSet::new();
        assert!(shown.iter().all(|p| unique.insert(p.name.clone())));
    }

    #[test]
    fn lookup_agrees_with_the_listing() {
        let originals = ListingRules {
            blosc2_only: false,
            originals: true,
        };
        let source = [
            ("zarr.json", Sort::Plain),
            ("a.b2nd", FILE),
            ("p", Sort::Plain),
        ];
        let own = |n: &OsStr| n == "zarr.json" || n == ".stats";
        let probe = |n: &OsStr| source.iter().find(|(s, _)| n == *s).map(|(_, k)| (*k, ()));
        let look = |n: &str, rules| resolve(OsStr::new(n), own, probe, rules).map(|p| p.shows);
        assert_eq!(look("zarr.json", originals), None, "the mount's own");
        assert_eq!(look("zarr.json.source", originals), Some(Shows::Classified));
        assert_eq!(look("a.b2nd", originals), Some(Shows::Original));
        assert_eq!(look("a.b2nd.d", originals), Some(Shows::Views));
        assert_eq!(look("p.d", originals), None);
        assert_eq!(look("a.b2nd.d", ListingRules::default()), None);
        assert_eq!(
            look("a.b2nd", ListingRules::default()),
            Some(Shows::Classified)
        );
        let only = ListingRules {
            blosc2_only: true,
            originals: false,
        };
        assert_eq!(look("p", only), None);
        assert_eq!(look("p.source", originals), None);
        assert_eq!(look("x\ny", originals), None);
    }
}
