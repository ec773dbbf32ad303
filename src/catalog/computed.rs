//! Saved expressions become computed arrays, when their operands are what
//! the mount already shows.
//!
//! python-blosc2 refuses to resolve a saved expression's operands by
//! default, because a file can point anywhere. The mount resolves them, but
//! only inside its own source tree: this module is where that decision is
//! made, when the expression is loaded, never inside the evaluator.
//!
//! An operand is read only if
//! - its path (relative to the expression's folder, or absolute) resolves,
//!   symlinks followed one component at a time and never into the mount
//!   itself ([`resolve`]), to a file inside the mounted source root;
//! - it is an N-d array, or itself a saved expression that passes the same
//!   rules (a cycle is an error).
//!
//! Who may read the values: without `allow_other` only the mounting user
//! reads the mount at all (the kernel refuses everyone else), and could
//! read every file the daemon read, so the expression's own access is
//! shown, whatever the operands' modes. With `allow_other` the computed
//! array takes what the expression file, every file it reads and the
//! folders on the way to them (below the expression's own) allow together
//! ([`Access::narrowed_by`]), so an expression never lends its readers a
//! file they may not read; when that leaves no reader but root, it is not
//! computed.
//!
//! Anything else leaves the expression with `meta.json` only, whose
//! `values` names the operand and the reason. The files an expression read
//! are recorded with their owners and modes ([`Computed::deps`], and
//! [`NotComputed::deps`] up to a refusal) so a change to any of them shows
//! as a new version of the expression.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value as Json;

use crate::compute::{ComputedBlocks, OperandInfo, OperandRef, Program, Recipe};
use crate::format::{Array, Elsewhere};
use crate::read::Planner;
use crate::source::open_array;
use crate::source::store::{Store, StoreFormat};

use super::access::Access;
use super::local_dir::{resolve, Fence};
#[cfg(feature = "remote")]
use super::remote::RemoteObject;

/// Where an expression being computed lives.
enum Place<'a> {
    /// A local file, at its real path.
    Local(&'a Path),
    /// An object of the mounted remote root.
    #[cfg(feature = "remote")]
    Remote(&'a RemoteObject),
}

/// Most saved expressions one expression may reach through its operands.
const MAX_NESTING: usize = 16;

/// What the tree needs to turn saved expressions into computed arrays.
pub struct Computer {
    /// The mounted source root, canonical: operands must lie inside it.
    pub root: PathBuf,
    /// What is never touched (the mount itself).
    pub fence: Arc<Fence>,
    /// Reads the operands' boxes through the mount's block cache.
    pub planner: Arc<Planner>,
    /// Users other than the mounting one may read the mount (`-o
    /// allow_other`): computed arrays then take the access all their files
    /// allow together, and are refused when it leaves no reader.
    pub allow_other: bool,
}

/// A file a computed array read (or, with `allow_other`, a folder on the
/// way to one), and its state then: a different state now means new
/// values, or new readers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dep {
    path: PathBuf,
    /// A folder passed through: only its identity and access count (files
    /// written beside an operand change nothing).
    folder: bool,
    /// Device, inode, size and mtime in nanoseconds (a folder's: device
    /// and inode).
    identity: (u64, u64, u64, i64),
    /// Owner, group and mode ([`Access::of_path`]; a folder's own).
    access: Access,
}

impl Dep {
    /// The file (or `folder`) at `path` as it is now; `None` when it is gone.
    fn now(path: &Path, folder: bool) -> Option<Dep> {
        let m = std::fs::metadata(path).ok()?;
        let (identity, access) = if folder {
            ((m.dev(), m.ino(), 0, 0), Access::of(&m))
        } else {
            let mtime = m
                .mtime()
                .saturating_mul(1_000_000_000)
                .saturating_add(m.mtime_nsec());
            (
                (m.dev(), m.ino(), m.len(), mtime),
                Access::of_path(path).ok()?,
            )
        };
        Some(Dep {
            path: path.to_path_buf(),
            folder,
            identity,
            access,
        })
    }

    /// Whether it is gone or no longer in the state recorded.
    pub fn changed(&self) -> bool {
        Dep::now(&self.path, self.folder).as_ref() != Some(self)
    }
}

/// An expression made computable.
pub struct Computed {
    /// The expression's array, its blocks produced from the operands.
    pub array: Array,
    /// The files read (operands, stores, nested expressions), in order.
    pub deps: Vec<Dep>,
    /// The owner, group and mode its presented entries take (see [`Computer`]).
    pub access: Access,
}

/// Why an expression is not computed, and the files read up to there (a
/// change to any of them, a `chmod` included, may change the answer).
#[derive(Debug)]
pub struct NotComputed {
    /// The reason, for `meta.json`'s `why_not_computed`.
    pub why: String,
    /// The files read, in order.
    pub deps: Vec<Dep>,
}

impl NotComputed {
    /// Not computed for `why`, with no file read.
    pub fn because(why: impl Into<String>) -> NotComputed {
        NotComputed {
            why: why.into(),
            deps: Vec::new(),
        }
    }
}

/// What one computation has read so far: the files, and the access they
/// leave the computed array.
struct Trail {
    deps: Vec<Dep>,
    access: Access,
    /// The real folder of the expression presented: the folders above it
    /// gate its readers already.
    home: PathBuf,
}

impl Computer {
    /// Whether `array` is a saved expression this module may try to compute.
    pub fn wants(array: &Array) -> bool {
        matches!(array.values_elsewhere(), Some(Elsewhere::B2Object { kind }) if kind == "lazyexpr")
            || matches!(array.values_elsewhere(), Some(Elsewhere::LegacyLazyArray))
    }

    /// `array`, the saved expression at `path` (its own access `access`),
    /// with its values computed from its operands and the access they
    /// leave it; or why it cannot be.
    pub fn compute(
        &self,
        array: Array,
        path: &Path,
        access: Access,
    ) -> Result<Computed, NotComputed> {
        let folder = path.parent().unwrap_or(Path::new("/"));
        let mut trail = Trail {
            deps: Vec::new(),
            access,
            home: resolve(folder, &self.fence).unwrap_or_else(|| folder.to_path_buf()),
        };
        let mut chain = vec![path.to_path_buf()];
        match self.compute_nested(array, &Place::Local(path), &mut chain, &mut trail) {
            Ok(array) => Ok(Computed {
                array,
                deps: trail.deps,
                access: trail.access,
            }),
            Err(why) => Err(NotComputed {
                why,
                deps: trail.deps,
            }),
        }
    }

    /// `array`, the saved expression stored as `object` on a remote root,
    /// computed from operands under the same root (relative paths only: an
    /// absolute one names the writer's disk, and no other server is asked).
    #[cfg(feature = "remote")]
    pub fn compute_remote(&self, array: Array, object: &RemoteObject) -> Result<Array, String> {
        let mut chain = vec![PathBuf::from(object.key())];
        // Remote entries are all the mounting user's, readable by all: no
        // file's owner or mode narrows them.
        let mut trail = Trail {
            deps: Vec::new(),
            access: Access::DENY,
            home: PathBuf::new(),
        };
        self.compute_nested(array, &Place::Remote(object), &mut chain, &mut trail)
    }

    fn compute_nested(
        &self,
        array: Array,
        place: &Place,
        chain: &mut Vec<PathBuf>,
        trail: &mut Trail,
    ) -> Result<Array, String> {
        // A legacy LazyArray says in its metalayer whether it is an expression (0) or a UDF (1).
        if array
            .frame()
            .metalayer("LazyArray")
            .is_some_and(|m| m != [0u8])
        {
            return Err("not evaluated: a LazyArray of a user-defined function (Python source); blosc2fs evaluates expressions, not code".into());
        }
        let vlmeta = Json::Object(array.frame().vlmeta.iter().cloned().collect());
        let recipe = Recipe::from_vlmeta(&vlmeta).map_err(|e| e.to_string())?;
        let mut operands = Vec::with_capacity(recipe.operands.len());
        let mut infos = Vec::with_capacity(recipe.operands.len());
        for (name, reference) in &recipe.operands {
            if chain.len() >= MAX_NESTING {
                return Err(format!("more than {MAX_NESTING} nested expressions"));
            }
            let operand = match place {
                Place::Local(path) => self.operand(
                    reference,
                    path.parent().unwrap_or(Path::new("/")),
                    chain,
                    trail,
                ),
                #[cfg(feature = "remote")]
                Place::Remote(object) => self.remote_operand(reference, object, chain, trail),
            }
            .map_err(|why| format!("operand {name:?}: {why}"))?;
            let geometry = operand.geometry().ok_or_else(|| {
                format!("operand {name:?}: not an N-d array (a plain frame has no shape)")
            })?;
            infos.push((
                name.clone(),
                OperandInfo {
                    dtype_str: operand.item_dtype(),
                    shape: geometry.shape.clone(),
                },
            ));
            operands.push((name.clone(), Arc::new(operand)));
        }
        let program = Program::compile(&recipe.expression, &infos)
            .map_err(|e| format!("expression {}: {e}", shortened(&recipe.expression)))?;
        let geometry = array
            .geometry()
            .ok_or("the saved expression has no b2nd shape")?
            .clone();
        let saved = array.item_dtype();
        if program.shape() != geometry.shape.as_slice() {
            return Err(format!(
                "the expression's shape {:?} differs from the saved shape {:?}",
                program.shape(),
                geometry.shape
            ));
        }
        if program.dtype().numpy_str() != saved {
            return Err(format!(
                "the expression's dtype {} differs from the saved dtype {saved}",
                program.dtype().numpy_str()
            ));
        }
        // The operands in the order the program reads them.
        let used: Vec<Arc<Array>> = program
            .operands()
            .iter()
            .map(|n| {
                operands
                    .iter()
                    .find(|(name, _)| name == n)
                    .map(|(_, a)| a.clone())
                    .ok_or_else(|| format!("operand {n:?} is not in the recipe"))
            })
            .collect::<Result<_, _>>()?;
        let blocks = ComputedBlocks::new(program, used, geometry, self.planner.clone())?;
        Ok(array.produced_by(Arc::new(blocks)))
    }

    /// Open the operand `reference` names (relative to `folder`), if the
    /// rules let it be read.
    fn operand(
        &self,
        reference: &OperandRef,
        folder: &Path,
        chain: &mut Vec<PathBuf>,
        trail: &mut Trail,
    ) -> Result<Array, String> {
        match reference {
            OperandRef::UrlPath(p) => {
                let path = self.confined(folder, p, trail)?;
                let array = open_array(&path).map_err(|e| e.problem.to_string())?;
                self.resolved(array, p, path.clone(), Place::Local(&path), chain, trail)
            }
            OperandRef::DictStoreKey { urlpath, key } => {
                let path = self.confined(folder, urlpath, trail)?;
                let format = StoreFormat::of_path(&path)
                    .ok_or_else(|| format!("{urlpath} is not a .b2z, .b2d or .b2e store"))?;
                let store = Store::open(&path, format).map_err(|e| e.problem.to_string())?;
                let array = store
                    .open_value(key.trim_start_matches('/'))
                    .or_else(|_| store.open_value(key))
                    .map_err(|e| format!("{key} in {urlpath}: {}", e.problem))?;
                holds_values(array, &format!("{key} in {urlpath}"))
            }
            OperandRef::C2Array { path, .. } => Err(format!(
                "{path} lives on a Caterva2 server; blosc2fs reads no Caterva2 operands yet"
            )),
        }
    }

    /// Open the operand `reference` names, relative to the remote `object`.
    #[cfg(feature = "remote")]
    fn remote_operand(
        &self,
        reference: &OperandRef,
        object: &RemoteObject,
        chain: &mut Vec<PathBuf>,
        trail: &mut Trail,
    ) -> Result<Array, String> {
        let (p, sibling) = match reference {
            OperandRef::UrlPath(p) => (p, object.sibling(p).ok_or_else(|| format!("{p} is not a relative path under the mounted root; no other place is asked"))?),
            OperandRef::C2Array { path, urlbase } => (path, object.caterva2_dataset(path, urlbase.as_deref())?),
            OperandRef::DictStoreKey { .. } => return Err("only operands by relative path or Caterva2 dataset are read on a remote source".into()),
        };
        let array = sibling.open().map_err(|e| e.problem.to_string())?;
        self.resolved(
            array,
            p,
            PathBuf::from(sibling.key()),
            Place::Remote(&sibling),
            chain,
            trail,
        )
    }

    /// `array`, operand `p` found at `key`: computed in turn when it is
    /// itself a saved expression (in `place`), else as stored when it holds
    /// values. A key already on `chain` is a cycle.
    fn resolved(
        &self,
        array: Array,
        p: &str,
        key: PathBuf,
        place: Place,
        chain: &mut Vec<PathBuf>,
        trail: &mut Trail,
    ) -> Result<Array, String> {
        if chain.contains(&key) {
            return Err(format!(
                "{p} refers back to itself (a cycle through {} expressions)",
                chain.len()
            ));
        }
        if !Self::wants(&array) {
            return holds_values(array, p);
        }
        chain.push(key);
        let computed = self.compute_nested(array, &place, chain, trail);
        chain.pop();
        computed.map_err(|why| format!("{p} is an expression that cannot be computed: {why}"))
    }

    /// The real path of `reference` (relative to `folder`), when it lies in
    /// the mounted source, past no fence, and (with `allow_other`) leaves
    /// the computed array some reader: what the file allows and what the
    /// folders on the way to it (those not above the expression) let
    /// through, see [`Access::narrowed_by`]. Its state, and theirs, is
    /// added to `trail`.
    fn confined(
        &self,
        folder: &Path,
        reference: &str,
        trail: &mut Trail,
    ) -> Result<PathBuf, String> {
        let joined = folder.join(reference);
        let path = resolve(&joined, &self.fence).ok_or_else(|| {
            format!(
                "{reference} does not resolve (missing, a symlink loop, or into the mount itself)"
            )
        })?;
        if !path.starts_with(&self.root) {
            return Err(format!("{reference} lies outside the mounted source; only operands the mount shows are read"));
        }
        let vanished = || format!("{reference} vanished");
        let file = Dep::now(&path, false).ok_or_else(vanished)?;
        let access = file.access;
        // Recorded first: a refusal below may change with it.
        trail.deps.push(file);
        if self.allow_other {
            narrow(trail, access, || format!("{reference} ({access})"))?;
            let home = trail.home.clone();
            let on_the_way = path
                .ancestors()
                .skip(1)
                .take_while(|d| d.starts_with(&self.root) && !home.starts_with(d));
            for dir in on_the_way {
                let gate = Dep::now(dir, true).ok_or_else(vanished)?;
                let access = gate.access;
                trail.deps.push(gate);
                let name = || {
                    let shown = dir.strip_prefix(&self.root).unwrap_or(dir).display();
                    format!("the folder {shown} holding {reference} ({access})")
                };
                narrow(trail, access.search_as_read(), name)?;
            }
        }
        Ok(path)
    }
}

/// `trail`'s access narrowed by `other` (what `what` names allows);
/// refused when that leaves no reader but root where there was one.
fn narrow(trail: &mut Trail, other: Access, what: impl FnOnce() -> String) -> Result<(), String> {
    let narrowed = trail.access.narrowed_by(other);
    if trail.access.readable() && !narrowed.readable() {
        return Err(format!("no reader left: {} and the expression's other files let no user but root read them all (with allow_other, a computed array is shown only to users who may read every file it reads)", what()));
    }
    trail.access = narrowed;
    Ok(())
}

/// For `blosc2fs cat` and `info` of a saved expression outside any mount:
/// `array` (opened from `path`) computed from operands inside its own
/// folder, read through `planner`; or why not. The caller reads only what
/// it may open itself, as the mounting user does without `allow_other`.
pub fn compute_alone(array: Array, path: &Path, planner: Arc<Planner>) -> Result<Array, String> {
    let path = std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let root = path.parent().unwrap_or(Path::new("/")).to_path_buf();
    let access = Access::of_path(&path).map_err(|e| e.to_string())?;
    let computer = Computer {
        root,
        fence: Arc::default(),
        planner,
        allow_other: false,
    };
    match computer.compute(array, &path, access) {
        Ok(computed) => Ok(computed.array),
        Err(not) => Err(not.why),
    }
}

/// `array`, an operand named `what`, when it holds values of its own.
fn holds_values(array: Array, what: &str) -> Result<Array, String> {
    match array.values_elsewhere() {
        Some(why) => Err(format!("{what} holds no values ({why})")),
        None => Ok(array),
    }
}

/// `text` quoted, its middle cut when it is long (the recipe in meta.json
/// holds it whole).
fn shortened(text: &str) -> String {
    const KEEP: usize = 60;
    if text.chars().count() <= 2 * KEEP {
        return format!("{text:?}");
    }
    let head: String = text.chars().take(KEEP).collect();
    let tail: String = text
        .chars()
        .rev()
        .take(KEEP)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!(
        "{:?} … {:?} ({} characters)",
        head,
        tail,
        text.chars().count()
    )
}
