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
//! - everyone the mount lets read the expression may read the operand too
//!   ([`grants_no_more`]): an expression cannot lend its readers another
//!   user's private file, with or without `allow_other`;
//! - it is an N-d array, or itself a saved expression that passes the same
//!   rules (a cycle is an error).
//!
//! Anything else leaves the expression with `meta.json` only, whose
//! `values` names the operand and the reason. The files an expression read
//! are recorded ([`Computed::deps`]) so a change to any of them shows as a
//! new version of the expression.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value as Json;

use crate::compute::{ComputedBlocks, OperandInfo, OperandRef, Program, Recipe};
use crate::format::{Array, Elsewhere};
use crate::read::Planner;
use crate::source::open_array;
use crate::source::store::{Store, StoreFormat};
use crate::views::presented_dtype;

use super::access::Access;
use super::listing::{resolve, Fence};
#[cfg(feature = "remote")]
use super::remote::RemoteObject;

/// Where an expression being computed lives.
enum Place<'a> {
    /// A local file, shown with `access`.
    Local {
        /// Its real path.
        path: &'a Path,
        /// Its owner and bits.
        access: Access,
    },
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
}

/// A file a computed array read, and its state then (device, inode, size,
/// mtime in nanoseconds): a different state now means new values.
pub type Dep = (PathBuf, (u64, u64, u64, i64));

/// An expression made computable.
pub struct Computed {
    /// The expression's array, its blocks produced from the operands.
    pub array: Array,
    /// The files read (operands, stores, nested expressions), in order.
    pub deps: Vec<Dep>,
}

/// The state of the file at `path` now, for [`Dep`]; `None` when it is gone.
pub fn dep_state(path: &Path) -> Option<(u64, u64, u64, i64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((
        m.dev(),
        m.ino(),
        m.len(),
        m.mtime()
            .saturating_mul(1_000_000_000)
            .saturating_add(m.mtime_nsec()),
    ))
}

impl Computer {
    /// Whether `array` is a saved expression this module may try to compute.
    pub fn wants(array: &Array) -> bool {
        matches!(array.values_elsewhere(), Some(Elsewhere::B2Object { kind }) if kind == "lazyexpr")
            || matches!(array.values_elsewhere(), Some(Elsewhere::LegacyLazyArray))
    }

    /// `array`, the saved expression at `path` (shown with `access`), with
    /// its values computed from its operands; or why it cannot be.
    pub fn compute(&self, array: Array, path: &Path, access: Access) -> Result<Computed, String> {
        let mut deps = Vec::new();
        let mut chain = vec![path.to_path_buf()];
        let array =
            self.compute_nested(array, &Place::Local { path, access }, &mut chain, &mut deps)?;
        Ok(Computed { array, deps })
    }

    /// `array`, the saved expression stored as `object` on a remote root,
    /// computed from operands under the same root (relative paths only: an
    /// absolute one names the writer's disk, and no other server is asked).
    #[cfg(feature = "remote")]
    pub fn compute_remote(&self, array: Array, object: &RemoteObject) -> Result<Array, String> {
        let mut chain = vec![PathBuf::from(object.key())];
        self.compute_nested(array, &Place::Remote(object), &mut chain, &mut Vec::new())
    }

    fn compute_nested(
        &self,
        array: Array,
        place: &Place,
        chain: &mut Vec<PathBuf>,
        deps: &mut Vec<Dep>,
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
                Place::Local { path, access } => self.operand(
                    reference,
                    path.parent().unwrap_or(Path::new("/")),
                    *access,
                    chain,
                    deps,
                ),
                #[cfg(feature = "remote")]
                Place::Remote(object) => self.remote_operand(reference, object, chain, deps),
            }
            .map_err(|why| format!("operand {name:?}: {why}"))?;
            let geometry = operand.geometry().ok_or_else(|| {
                format!("operand {name:?}: not an N-d array (a plain frame has no shape)")
            })?;
            infos.push((
                name.clone(),
                OperandInfo {
                    dtype_str: presented_dtype(&operand),
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
        let saved = presented_dtype(&array);
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
        access: Access,
        chain: &mut Vec<PathBuf>,
        deps: &mut Vec<Dep>,
    ) -> Result<Array, String> {
        match reference {
            OperandRef::UrlPath(p) => {
                let path = self.confined(folder, p, access, deps)?;
                let array = open_array(&path).map_err(|e| e.problem.to_string())?;
                let place = || {
                    Ok(Place::Local {
                        path: &path,
                        access: Access::of_path(&path).map_err(|e| e.to_string())?,
                    })
                };
                self.resolved(array, p, path.clone(), place, chain, deps)
            }
            OperandRef::DictStoreKey { urlpath, key } => {
                let path = self.confined(folder, urlpath, access, deps)?;
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
        deps: &mut Vec<Dep>,
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
            || Ok(Place::Remote(&sibling)),
            chain,
            deps,
        )
    }

    /// `array`, operand `p` found at `key`: computed in turn when it is
    /// itself a saved expression (in `place`), else as stored when it holds
    /// values. A key already on `chain` is a cycle.
    fn resolved<'p>(
        &self,
        array: Array,
        p: &str,
        key: PathBuf,
        place: impl FnOnce() -> Result<Place<'p>, String>,
        chain: &mut Vec<PathBuf>,
        deps: &mut Vec<Dep>,
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
        let place = place()?;
        chain.push(key);
        let computed = self.compute_nested(array, &place, chain, deps);
        chain.pop();
        computed.map_err(|why| format!("{p} is an expression that cannot be computed: {why}"))
    }

    /// The real path of `reference` (relative to `folder`), when it lies in
    /// the mounted source, past no fence, and readable by everyone who may
    /// read the expression; its state is added to `deps`.
    fn confined(
        &self,
        folder: &Path,
        reference: &str,
        access: Access,
        deps: &mut Vec<Dep>,
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
        let operand_access = Access::of_path(&path).map_err(|e| format!("{reference}: {e}"))?;
        if !grants_no_more(access, operand_access) {
            return Err(format!("{reference} is readable by fewer users than the expression; its values are not lent to them"));
        }
        let state = dep_state(&path).ok_or_else(|| format!("{reference} vanished"))?;
        deps.push((path.clone(), state));
        Ok(path)
    }
}

/// For `blosc2fs cat` and `info` of a saved expression outside any mount:
/// `array` (opened from `path`) computed from operands inside its own
/// folder, read through `planner`; or why not.
pub fn compute_alone(array: Array, path: &Path, planner: Arc<Planner>) -> Result<Array, String> {
    let path = std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let root = path.parent().unwrap_or(Path::new("/")).to_path_buf();
    let access = Access::of_path(&path).map_err(|e| e.to_string())?;
    let computer = Computer {
        root,
        fence: Arc::default(),
        planner,
    };
    Ok(computer.compute(array, &path, access)?.array)
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

/// Whether every user the expression's `expr` bits let read may read the
/// operand with `operand` bits too: for each class the expression lets
/// read (owner, group, other), the operand lets the same class read, with
/// the same owner (group), or lets everyone read.
pub fn grants_no_more(expr: Access, operand: Access) -> bool {
    let other = operand.mode & 0o004 != 0;
    let owner_ok =
        expr.mode & 0o400 == 0 || other || (operand.uid == expr.uid && operand.mode & 0o400 != 0);
    let group_ok =
        expr.mode & 0o040 == 0 || other || (operand.gid == expr.gid && operand.mode & 0o040 != 0);
    let other_ok = expr.mode & 0o004 == 0 || other;
    owner_ok && group_ok && other_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(uid: u32, gid: u32, mode: u32) -> Access {
        Access { uid, gid, mode }
    }

    #[test]
    fn an_operand_must_be_readable_by_whoever_reads_the_expression() {
        // Same owner, same bits.
        assert!(grants_no_more(a(1, 1, 0o644), a(1, 1, 0o644)));
        // The expression is world-readable, the operand private: refused.
        assert!(!grants_no_more(a(1, 1, 0o644), a(1, 1, 0o600)));
        // Group-readable expression, operand readable by the same group only.
        assert!(grants_no_more(a(1, 5, 0o640), a(1, 5, 0o440)));
        assert!(
            !grants_no_more(a(1, 5, 0o640), a(1, 6, 0o640)),
            "another group"
        );
        assert!(
            !grants_no_more(a(1, 5, 0o640), a(2, 5, 0o640)),
            "user 1 need not be in group 5"
        );
        // Private expression, operand of another owner readable only by it.
        assert!(!grants_no_more(a(1, 1, 0o600), a(2, 2, 0o600)));
        assert!(
            !grants_no_more(a(1, 5, 0o600), a(2, 5, 0o640)),
            "the owner need not be in the group"
        );
        assert!(
            grants_no_more(a(1, 1, 0o600), a(2, 2, 0o604)),
            "world-readable operand"
        );
        // An expression nobody may read lends nothing.
        assert!(grants_no_more(a(1, 1, 0o000), a(2, 2, 0o000)));
    }
}
