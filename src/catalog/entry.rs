//! One array as presented: its loaded version, revalidated against the
//! source, kept within the metadata budget.
//!
//! Each lookup stats the source; when its identity (device, inode, size,
//! mtime, permissions) changed, the tree makes the path a new node, so new
//! opens see the new content while open handles keep the version they got.
//! The version itself is held by the [`MetaCache`] and by open files only:
//! an entry whose version was dropped loads it again on its next use, from
//! the same source in the same state or not at all (see [`Versioned`]).

use std::sync::Arc;
use std::time::SystemTime;

use serde_json::json;

use crate::format::{Array, Version};
use crate::tables::{PartReader, TableBatches};
use crate::views::{json::json_bytes, meta_json, table_column::present_column, Presented};

use super::access::Access;
use super::array_indexes::{mark_sidecar, ArrayIndexes};
use super::computed::{Computed, Computer, Dep, NotComputed};
use super::index_sidecar::indexed_array;
use super::location::Origin;
use super::meta_cache::MetaCache;
use super::nnunet_plans::PlansMemo;
use super::versioned::{Reload, Versioned};

/// A table's logical column: the table's batches and the column's place.
#[derive(Debug, Clone)]
pub struct TableColumn {
    /// The table.
    pub batches: Arc<TableBatches>,
    /// The column's index among its columns.
    pub index: usize,
}

/// Told of every array an entry opens.
pub type Preload = Box<dyn Fn(&Arc<Array>) + Send + Sync>;

/// What entries do with each array they open.
pub struct Loading {
    /// Told of every array opened (the read layer preloads its layouts).
    pub preload: Preload,
    /// Turns saved expressions into computed arrays; without it they show
    /// `meta.json` only.
    pub computer: Option<Computer>,
    /// What tables read their parts through (the mount's block cache).
    pub table_reads: PartReader,
    /// nnU-Net plans read so far: the geometry of local arrays in its folders.
    pub plans: PlansMemo,
}

/// Shared by every entry of a tree.
pub type OnLoad = Arc<Loading>;

/// One loaded version of an array: what it presents, and the identity of
/// the source it was loaded from.
#[derive(Debug)]
pub struct Loaded {
    /// The version's number: distinct for every version of every array,
    /// the same when one version is loaded again after eviction.
    pub version: u64,
    /// Identity of the source when this version was loaded (for a sparse frame,
    /// of its `chunks.b2frame` index; for a store value, of its store); a
    /// different version now means the source changed.
    pub stamp: Version,
    /// Modification time of that file: the mtime of every presented entry of
    /// this version.
    pub mtime: SystemTime,
    /// Owner, group and mode of the source when this version was loaded: the
    /// permissions of every presented entry of this version (see [`Access`];
    /// a computed array's are narrowed by its operands' with `allow_other`).
    pub access: Access,
    /// What it presents (rendered by the views when loaded).
    pub presented: Presented,
    /// The load failed for a reason that may pass (a remote source that
    /// did not answer): the version is stale at once, so the next lookup
    /// tries again instead of keeping the error while the source is unchanged.
    pub failed_for_now: bool,
    /// An indexed NDArray's `indexes/` folder: its index sidecars.
    pub indexes: Option<Arc<ArrayIndexes>>,
}

impl Loaded {
    /// Bytes this version holds, roughly (what the metadata cache charges).
    fn weight(&self) -> usize {
        self.presented.weight() + self.indexes.as_ref().map_or(0, |i| i.weight())
    }
}

impl std::ops::Deref for Loaded {
    type Target = Presented;
    fn deref(&self) -> &Presented {
        &self.presented
    }
}

/// What identifies the state of an array's source: its version, its
/// permissions (a `chmod` or `chown` makes a new version, so no entry
/// keeps old bits) and its mtime.
type Stamp = (Version, Access, SystemTime);

/// An array node: where its bytes come from and the version it presents.
///
/// A node presents one version of its source: once loaded it does not
/// change (its inodes keep their sizes and bytes, so open handles never see
/// a mix), and the tree gives the path a new node when [`Self::is_stale`].
/// Only a mount root (a single-file source, whose inode cannot change)
/// reloads in place. Once a newer node presents the path, this one is
/// retired: it keeps its version only while open files hold it.
pub struct ArrayEntry {
    /// Where the array's bytes come from.
    pub origin: Origin,
    version: Versioned<Stamp, Loaded>,
    on_load: Option<OnLoad>,
    column: Option<TableColumn>,
    /// For an index sidecar found under its array's `indexes/`: that
    /// array's name.
    sidecar_of: Option<String>,
    /// For a computed array: the files its first load read, and their state
    /// then; a change to any makes the entry stale like a change to its own file.
    deps: parking_lot::Mutex<Option<Vec<Dep>>>,
}

impl std::fmt::Debug for ArrayEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArrayEntry")
            .field("origin", &self.origin.name())
            .finish_non_exhaustive()
    }
}

impl ArrayEntry {
    /// An entry for the array at `origin`, its versions kept by `cache`;
    /// `on_load` is told of every array opened for it (the read layer
    /// preloads its layouts).
    pub fn new(
        origin: Origin,
        in_place: bool,
        on_load: Option<OnLoad>,
        cache: &Arc<MetaCache>,
    ) -> ArrayEntry {
        ArrayEntry {
            origin,
            version: Versioned::new(cache.clone(), in_place),
            on_load,
            column: None,
            sidecar_of: None,
            deps: Default::default(),
        }
    }

    /// An entry for an index sidecar of the array named `of`, found under
    /// that array's `indexes/`.
    pub fn sidecar(
        origin: Origin,
        of: String,
        on_load: Option<OnLoad>,
        cache: &Arc<MetaCache>,
    ) -> ArrayEntry {
        ArrayEntry {
            sidecar_of: Some(of),
            ..ArrayEntry::new(origin, false, on_load, cache)
        }
    }

    /// An entry for a table's logical column (its values over the live
    /// rows, as [`present_column`] renders them).
    pub fn column(
        origin: Origin,
        column: TableColumn,
        on_load: Option<OnLoad>,
        cache: &Arc<MetaCache>,
    ) -> ArrayEntry {
        ArrayEntry {
            column: Some(column),
            ..ArrayEntry::new(origin, false, on_load, cache)
        }
    }

    /// A newer node presents this path now: let go of this version (open
    /// files keep it alive as long as they need it).
    pub fn retire(&self) {
        self.version.retire();
    }

    /// The source's state now.
    fn stat(&self) -> std::io::Result<Stamp> {
        let (version, mtime) = self.origin.version()?;
        Ok((version, self.origin.access()?, mtime))
    }

    /// Whether the source changed (or vanished) since this entry loaded it.
    pub fn is_stale(&self) -> bool {
        self.version.is_stale(|| self.stat())
            || self
                .version
                .held()
                .is_some_and(|loaded| loaded.failed_for_now)
            || self.deps_changed(self.deps.lock().as_deref())
    }

    /// Whether any of `deps` is not in the state recorded.
    fn deps_changed(&self, deps: Option<&[Dep]>) -> bool {
        deps.unwrap_or_default().iter().any(Dep::changed)
    }

    /// The version this entry presents (loaded on first use, and again
    /// after the metadata cache let go of it). An error when the source is
    /// gone, when it changed while no version was held (ESTALE: the tree
    /// presents the path as a new node), or when the entry was retired and
    /// no open file holds its version any more.
    pub fn current(&self) -> std::io::Result<Arc<Loaded>> {
        let load = |(stamp, access, mtime): &Stamp, why: Reload, number: u64| {
            if why == Reload::Changed {
                log::info!("{} changed; reopening", self.origin.name().display());
            }
            let loaded = load(
                &self.origin,
                number,
                stamp.clone(),
                *access,
                *mtime,
                self.on_load.as_ref(),
                Part {
                    column: self.column.as_ref(),
                    sidecar_of: self.sidecar_of.as_deref(),
                },
            );
            self.settle_deps(loaded)
        };
        Ok(self
            .version
            .current(|| self.stat(), load, |loaded| loaded.weight())?
            .0)
    }
}

impl ArrayEntry {
    /// Record the files a computed version read, the first time; a later
    /// load (after eviction) that read them in another state presents no
    /// values, so a version never mixes old and new operands.
    fn settle_deps(&self, (mut loaded, deps): (Loaded, Option<Vec<Dep>>)) -> Loaded {
        let Some(deps) = deps else { return loaded };
        let mut recorded = self.deps.lock();
        match recorded.as_ref() {
            None => *recorded = Some(deps),
            Some(first) if *first == deps => {}
            Some(_) => {
                log::info!(
                    "{}: an operand changed since it was looked up",
                    self.origin.name().display()
                );
                let doc = json!({ "file": self.origin.name().display().to_string(), "error": "an operand changed since this folder was looked up: look it up again" });
                loaded.presented = Presented::meta_only(&doc);
            }
        }
        loaded
    }
}

/// An index sidecar of the array named `of` is no Zarr array, and its
/// `meta.json` says whose sidecar it is.
fn present_sidecar(presented: &mut Presented, of: &str) {
    presented.zarr3 = None;
    let mut doc: serde_json::Value =
        serde_json::from_slice(&presented.meta_json).unwrap_or_else(|_| json!({}));
    mark_sidecar(&mut doc, of);
    presented.meta_json = Arc::new(json_bytes(&doc));
}

/// An indexed array's `meta.json` lists its indexes and their folders.
fn present_indexed(presented: &mut Presented, indexes: &ArrayIndexes, array: &Array) {
    let mut doc: serde_json::Value =
        serde_json::from_slice(&presented.meta_json).unwrap_or_else(|_| json!({}));
    indexes.mark_indexed(&mut doc, array);
    presented.meta_json = Arc::new(json_bytes(&doc));
}

/// What part of something else an array is, when it is.
#[derive(Clone, Copy)]
struct Part<'a> {
    /// A table's logical column.
    column: Option<&'a TableColumn>,
    /// An index sidecar of the array of this name, found under its `indexes/`.
    sidecar_of: Option<&'a str>,
}

/// Load one version of the array at `origin`, and for a computed array
/// the files it read.
fn load(
    origin: &Origin,
    number: u64,
    stamp: Version,
    mut access: Access,
    mtime: SystemTime,
    on_load: Option<&OnLoad>,
    part: Part,
) -> (Loaded, Option<Vec<Dep>>) {
    if let Some(column) = part.column {
        let presented = present_column(&column.batches, column.index);
        if let (Some(array), Some(on_load)) = (&presented.array, on_load) {
            (on_load.preload)(array);
        }
        let loaded = Loaded {
            version: number,
            stamp,
            access,
            mtime,
            presented,
            failed_for_now: false,
            indexes: None,
        };
        return (loaded, None);
    }
    let mut deps = None;
    let mut indexes = None;
    let mut failed_for_now = false;
    let computer = on_load.and_then(|l| l.computer.as_ref());
    let presented = match (origin.open(), computer) {
        (Ok(array), Some(computer)) if Computer::wants(&array) => {
            let mut doc = meta_json::render(&array);
            let result = match origin {
                Origin::Local(path) => computer.compute(array, path, access),
                #[cfg(feature = "remote")]
                Origin::Remote(object) => computer.compute_remote(array, object).map(|array| Computed { array, deps: Vec::new(), access }).map_err(NotComputed::because),
                _ => Err(NotComputed::because("saved expressions inside stores are not computed (their operands' paths are relative to no folder)")),
            };
            match result {
                Ok(Computed {
                    array,
                    deps: read,
                    access: shown,
                }) => {
                    deps = Some(read);
                    access = shown;
                    let array = Arc::new(array);
                    if let Some(on_load) = on_load {
                        (on_load.preload)(&array);
                    }
                    Presented::of_array(array, None)
                }
                Err(NotComputed { why, deps: read }) => {
                    // A refusal may change with what it read (a chmod).
                    deps = Some(read);
                    log::info!("{}: not computed: {why}", origin.name().display());
                    meta_json::mark_not_computed(&mut doc, &why);
                    Presented::meta_only(&doc)
                }
            }
        }
        (Ok(array), _) => match array.values_elsewhere() {
            // Only meta.json: the file's chunks hold no values, and zeros
            // served as data would be made up. (Values a server builds on
            // request, an HDF5 leaf's, are produced: read as they come.)
            Some(why) if !array.is_produced() => {
                log::info!("{}: values live elsewhere: {why}", origin.name().display());
                Presented::meta_only(&meta_json::render(&array))
            }
            _ => {
                let array = Arc::new(array);
                if let Some(on_load) = on_load {
                    (on_load.preload)(&array);
                }
                let outside = match (origin, on_load, array.shape()) {
                    (Origin::Local(path), Some(l), crate::format::Shape::Nd { geometry, .. }) => {
                        l.plans.geometry(path, &geometry.shape)
                    }
                    #[cfg(feature = "remote")]
                    (Origin::Remote(o), Some(l), crate::format::Shape::Nd { geometry, .. }) => {
                        o.plans_geometry(&l.plans, &geometry.shape)
                    }
                    _ => None,
                };
                let mut presented =
                    Presented::of_placed_array(array.clone(), None, outside.as_ref());
                // A sidecar found beside its array (a mount of the sidecar
                // alone) is one too.
                let sidecar_of = part
                    .sidecar_of
                    .map(str::to_string)
                    .or_else(|| match origin {
                        Origin::Local(path) => indexed_array(path)
                            .and_then(|p| Some(p.file_name()?.to_string_lossy().into_owned())),
                        _ => None,
                    });
                if let Some(of) = sidecar_of {
                    present_sidecar(&mut presented, &of);
                } else if let Some(found) = ArrayIndexes::find(origin, &array) {
                    present_indexed(&mut presented, &found, &array);
                    indexes = Some(Arc::new(found));
                }
                presented
            }
        },
        (Err(e), _) => {
            log::warn!("{e}");
            failed_for_now =
                origin.is_remote() && matches!(e.problem, crate::format::Problem::Io(_));
            Presented::meta_only(
                &json!({ "file": origin.name().display().to_string(), "error": e.problem.to_string() }),
            )
        }
    };
    (
        Loaded {
            version: number,
            stamp,
            access,
            mtime,
            presented,
            failed_for_now,
            indexes,
        },
        deps,
    )
}
