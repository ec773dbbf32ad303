//! Geometry from nnU-Net v2's plans, for the arrays of its folders, so that
//! a preprocessed case opens in a viewer with its real spacing and its
//! channels as components.
//!
//! The rules are nnU-Net 2.8.1's own (`nnunetv2/utilities/plans_handling/
//! plans_handler.py`, `preprocessing/preprocessors/default_preprocessor.py`,
//! `training/dataloading/nnunet_dataset.py`, `training/nnUNetTrainer/
//! nnUNetTrainer.py`):
//!
//! - A preprocessed folder `nnUNet_preprocessed/DatasetX/<data_identifier>/`
//!   is named by the `data_identifier` of a configuration of a plans file
//!   `<plans_identifier>.json` (`nnUNetPlans.json`, ...) one level up.
//!   Its `CASE.b2nd` (float32) and `CASE_seg.b2nd` (one channel) are
//!   channel first, `(C, x, y, z)`, and the configuration's `spacing` is in
//!   that (transposed) axis order. A configuration inherits the keys it
//!   lacks from `inherits_from`, transitively.
//! - A 2d configuration's spacing has 2 entries for arrays of 3 spatial
//!   axes: nnU-Net keeps each case's slice spacing (in its `.pkl`, which is
//!   not read here), so that axis is left at 1, as without plans.
//! - A cascade's `nnUNet_results/DatasetX/<trainer>__<plans>__<conf>/
//!   predicted_next_stage/<next conf>/CASE.b2nd` is a segmentation of 3
//!   axes (no channel axis) at the spacing of `<next conf>` in the
//!   `plans.json` the trainer saved in `<trainer>__<plans>__<conf>/`.
//!
//! Nothing else guesses: a folder no plans name gives nothing. Plans that
//! are not JSON, or name one folder with two spacings, or whose spacing
//! does not fit an array's shape, are ignored with one log line (a
//! malformed file once per version of it). Parsed plans and the JSON files
//! of a folder are remembered by file and folder identity, so a folder of
//! many cases reads its plans once.
//!
//! The same rules hold for a local source and a remote one ([`PlansFiles`]:
//! files and folders by path, or objects and prefixes by key, their
//! identity from the listings the tree keeps anyway; a remote plans file
//! is read through the disk cache's remote tier when there is one).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use parking_lot::Mutex;
use serde_json::Value as Json;

use crate::views::imaging::Geometry;

/// The folder of a cascade's segmentations for the next stage.
const NEXT_STAGE: &str = "predicted_next_stage";

/// The plans file a trainer saves in its output folder.
const TRAINER_PLANS: &str = "plans.json";

/// JSON files of a dataset folder that are never plans.
const NOT_PLANS: [&str; 3] = [
    "dataset.json",
    "dataset_fingerprint.json",
    "splits_final.json",
];

/// Plans files larger than this are not read (real ones are tens of KiB).
pub const MAX_PLANS_BYTES: u64 = 4 << 20;

/// At most this many JSON files of one folder are read as candidate plans.
pub const MAX_CANDIDATES: usize = 32;

/// Entries remembered before the memo starts afresh.
const MAX_REMEMBERED: usize = 4096;

/// One configuration of a plans file, its inheritance resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Configuration {
    /// Its name (`3d_fullres`, `2d`, ...).
    pub name: String,
    /// The folder its preprocessed data is written to.
    pub data_identifier: Option<String>,
    /// Its target spacing, in the preprocessed axis order.
    pub spacing: Option<Vec<f64>>,
}

/// What a JSON file is, read as plans.
#[derive(Debug, Clone, PartialEq)]
pub enum Plans {
    /// JSON, but no `configurations` object: some other file.
    NotPlans,
    /// Plans, with their configurations.
    Plans(Vec<Configuration>),
    /// Not readable as plans (why; logged once when read).
    Bad(String),
}

/// The configurations of a plans document (`NotPlans` when it has no
/// `configurations` object).
pub fn parse_plans(doc: &Json) -> Plans {
    let Some(confs) = doc.get("configurations").and_then(Json::as_object) else {
        return Plans::NotPlans;
    };
    let mut out = Vec::new();
    for name in confs.keys() {
        let resolve = |key: &str| -> Result<Option<&Json>, String> {
            let mut at = name.as_str();
            for _ in 0..=confs.len() {
                let conf = confs
                    .get(at)
                    .and_then(Json::as_object)
                    .ok_or_else(|| format!("configuration {at:?} is missing or not an object"))?;
                if let Some(v) = conf.get(key) {
                    return Ok(Some(v));
                }
                match conf.get("inherits_from") {
                    Some(Json::String(parent)) => at = parent,
                    Some(_) => return Err(format!("{at:?}: inherits_from is not a name")),
                    None => return Ok(None),
                }
            }
            Err(format!(
                "configuration {name:?}: inherits_from goes round in a circle"
            ))
        };
        let data_identifier = match resolve("data_identifier") {
            Ok(v) => v.and_then(Json::as_str).map(str::to_string),
            Err(why) => return Plans::Bad(why),
        };
        let spacing = match resolve("spacing") {
            Ok(None) => None,
            Ok(Some(v)) => {
                let list: Option<Vec<f64>> = v.as_array().and_then(|l| {
                    l.iter()
                        .map(|x| x.as_f64().filter(|x| x.is_finite() && *x > 0.0))
                        .collect()
                });
                match list {
                    Some(l) if !l.is_empty() => Some(l),
                    _ => {
                        return Plans::Bad(format!(
                            "configuration {name:?}: spacing {v} is not a list of positive numbers"
                        ))
                    }
                }
            }
            Err(why) => return Plans::Bad(why),
        };
        out.push(Configuration {
            name: name.clone(),
            data_identifier,
            spacing,
        });
    }
    Plans::Plans(out)
}

/// The geometry of an array of `shape` in a preprocessed folder named
/// `folder`, by the configurations of the plans beside it; `Err` (why)
/// when they name the folder but do not fit, `Ok(None)` when none names it.
pub fn preprocessed(
    folder: &str,
    plans: &[&Configuration],
    shape: &[u64],
) -> Result<Option<Geometry>, String> {
    let mut spacings: Vec<&Vec<f64>> = plans
        .iter()
        .filter(|c| c.data_identifier.as_deref() == Some(folder))
        .filter_map(|c| c.spacing.as_ref())
        .collect();
    spacings.dedup();
    spacings.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    spacings.dedup();
    let spacing = match spacings[..] {
        [] => return Ok(None),
        [one] => one,
        _ => {
            return Err(format!(
                "the plans give the folder {folder:?} {} spacings",
                spacings.len()
            ))
        }
    };
    // Channel first, then the spatial axes; a 2d configuration's spacing
    // leaves the first spatial axis (the slices) out.
    let spatial = shape.len().saturating_sub(1);
    let spacing = if spacing.len() == spatial {
        spacing.clone()
    } else if spacing.len() + 1 == spatial && spacing.len() == 2 {
        [&[1.0][..], spacing].concat()
    } else {
        return Err(format!(
            "shape {shape:?} is not channel first with {} spatial axes as the plans' spacing {spacing:?} says",
            spacing.len()
        ));
    };
    Ok(Some(Geometry {
        channel_axis: Some(0),
        spacing: Some(spacing),
        ..Geometry::default()
    }))
}

/// The geometry of a next-stage segmentation of `shape` for the
/// configuration `next`; `Err` (why) when the plans do not fit it.
pub fn next_stage(
    next: &str,
    plans: &[Configuration],
    shape: &[u64],
) -> Result<Option<Geometry>, String> {
    let Some(spacing) = plans
        .iter()
        .find(|c| c.name == next)
        .and_then(|c| c.spacing.as_ref())
    else {
        return Ok(None);
    };
    if spacing.len() != shape.len() {
        return Err(format!(
            "shape {shape:?} does not have the {} axes of {next:?}'s spacing {spacing:?}",
            spacing.len()
        ));
    }
    Ok(Some(Geometry {
        spacing: Some(spacing.clone()),
        ..Geometry::default()
    }))
}

/// What identifies a file's or folder's state: locally inode, size and
/// mtime; remotely size, modification time and ETag (a folder: what its
/// listing says of its JSON files).
pub type Stamp = (u64, u64, Option<SystemTime>, Option<String>);

/// Where plans are read from: the files of a local source by path, or the
/// objects of a remote root by key (written as a relative path).
pub trait PlansFiles {
    /// Whether `folder` is inside the mounted source.
    fn shown(&self, folder: &Path) -> bool;
    /// The state of file or folder `path`; `None` when it is not there.
    fn stamp(&self, path: &Path) -> Option<Stamp>;
    /// Whether `path` is there as something other than a file.
    fn not_a_file(&self, path: &Path) -> bool;
    /// The files of `folder` whose names end in `.json` (at most a few
    /// more than [`MAX_CANDIDATES`]).
    fn json_files(&self, folder: &Path) -> Option<Vec<PathBuf>>;
    /// The bytes of file `path` (at most [`MAX_PLANS_BYTES`] are asked for).
    fn read(&self, path: &Path) -> Option<Vec<u8>>;
}

/// The files of a local source folder (canonical).
struct LocalFiles<'a>(&'a Path);

impl PlansFiles for LocalFiles<'_> {
    fn shown(&self, folder: &Path) -> bool {
        std::fs::canonicalize(folder).is_ok_and(|real| real.starts_with(self.0))
    }

    fn stamp(&self, path: &Path) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some((m.ino(), m.len(), m.modified().ok(), None))
    }

    fn not_a_file(&self, path: &Path) -> bool {
        std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_file())
    }

    fn json_files(&self, folder: &Path) -> Option<Vec<PathBuf>> {
        let mut list = Vec::new();
        for entry in std::fs::read_dir(folder).ok()?.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if name.ends_with(".json")
                && !NOT_PLANS.contains(&name)
                && entry.file_type().is_ok_and(|t| t.is_file())
            {
                list.push(entry.path());
                if list.len() == MAX_CANDIDATES {
                    break;
                }
            }
        }
        Some(list)
    }

    fn read(&self, path: &Path) -> Option<Vec<u8>> {
        std::fs::read(path).ok()
    }
}

/// The JSON files of a folder that may be plans.
type Candidates = Arc<Vec<PathBuf>>;

/// Plans files read and folders listed so far, by identity: shared by
/// every entry of a tree.
///
/// Plans are looked for only inside `root`, the mount's source folder: a
/// file never makes the mount read what it does not show (a mounted case
/// folder or single array takes no geometry from the folders above it).
#[derive(Debug, Default)]
pub struct PlansMemo {
    root: Option<PathBuf>,
    files: Mutex<HashMap<PathBuf, (Stamp, Arc<Plans>)>>,
    folders: Mutex<HashMap<PathBuf, (Stamp, Candidates)>>,
}

impl PlansMemo {
    /// A memo that reads plans only under `root` (canonical); the default
    /// memo reads none.
    pub fn within(root: PathBuf) -> PlansMemo {
        PlansMemo {
            root: Some(root),
            ..PlansMemo::default()
        }
    }

    /// The geometry nnU-Net's plans give the local array at `path` of
    /// `shape`, if any (see the module docs); a mismatch is logged and
    /// gives none.
    pub fn geometry(&self, path: &Path, shape: &[u64]) -> Option<Geometry> {
        let root = self.root.as_deref()?;
        self.geometry_in(&LocalFiles(root), path, shape, &path.display())
    }

    /// The geometry nnU-Net's plans in `files` give the array at `path` of
    /// `shape` (named `name` in the log), as [`Self::geometry`].
    pub fn geometry_in(
        &self,
        files: &dyn PlansFiles,
        path: &Path,
        shape: &[u64],
        name: &dyn std::fmt::Display,
    ) -> Option<Geometry> {
        let folder = path.parent()?;
        let folder_name = folder.file_name()?.to_str()?;
        let up = folder.parent()?;
        let found = if up.file_name() == Some(OsStr::new(NEXT_STAGE)) {
            let trainer = up.parent()?;
            if !files.shown(trainer) {
                return None;
            }
            let plans_file = trainer.join(TRAINER_PLANS);
            if files.not_a_file(&plans_file) {
                return None;
            }
            match &*self.plans(files, &plans_file)? {
                Plans::Plans(confs) => next_stage(folder_name, confs, shape),
                _ => Ok(None),
            }
        } else {
            if !files.shown(up) {
                return None;
            }
            let candidates = self.candidates(files, up)?;
            let read: Vec<Arc<Plans>> = candidates
                .iter()
                .filter_map(|f| self.plans(files, f))
                .collect();
            let confs: Vec<&Configuration> = read
                .iter()
                .filter_map(|p| match &**p {
                    Plans::Plans(c) => Some(c),
                    _ => None,
                })
                .flatten()
                .collect();
            preprocessed(folder_name, &confs, shape)
        };
        match found {
            Ok(g) => g,
            Err(why) => {
                log::info!("{name}: nnU-Net plans ignored: {why}");
                None
            }
        }
    }

    /// The JSON files of `folder` that may be plans.
    fn candidates(&self, files: &dyn PlansFiles, folder: &Path) -> Option<Candidates> {
        let now = files.stamp(folder)?;
        if let Some((was, list)) = self.folders.lock().get(folder) {
            if *was == now {
                return Some(list.clone());
            }
        }
        let mut list = files.json_files(folder)?;
        list.retain(|p| {
            p.file_name()
                .and_then(OsStr::to_str)
                .is_some_and(|n| !NOT_PLANS.contains(&n))
        });
        list.sort();
        list.truncate(MAX_CANDIDATES);
        let list = Arc::new(list);
        let mut folders = self.folders.lock();
        if folders.len() >= MAX_REMEMBERED {
            folders.clear();
        }
        folders.insert(folder.to_path_buf(), (now, list.clone()));
        Some(list)
    }

    /// The plans in `file`, read once per version of it; `None` when it
    /// cannot be read at all.
    fn plans(&self, files: &dyn PlansFiles, file: &Path) -> Option<Arc<Plans>> {
        let now = files.stamp(file)?;
        if let Some((was, plans)) = self.files.lock().get(file) {
            if *was == now {
                return Some(plans.clone());
            }
        }
        let plans = if now.1 > MAX_PLANS_BYTES {
            Plans::NotPlans
        } else {
            let bytes = files.read(file)?;
            match serde_json::from_slice::<Json>(&bytes) {
                Ok(doc) => parse_plans(&doc),
                Err(e) => Plans::Bad(format!("not JSON: {e}")),
            }
        };
        if let Plans::Bad(why) = &plans {
            log::info!("{}: not used as nnU-Net plans: {why}", file.display());
        }
        let plans = Arc::new(plans);
        let mut files = self.files.lock();
        if files.len() >= MAX_REMEMBERED {
            files.clear();
        }
        files.insert(file.to_path_buf(), (now, plans.clone()));
        Some(plans)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Plans shaped as nnU-Net 2.8.1's planner writes them (the keys that
    /// matter here): a 2d, a 3d_lowres, a 3d_fullres and a cascade that
    /// inherits 3d_fullres's folder and spacing.
    fn plans_doc() -> Json {
        json!({
            "dataset_name": "Dataset001_Prostate",
            "plans_name": "nnUNetPlans",
            "configurations": {
                "2d": {"data_identifier": "nnUNetPlans_2d", "spacing": [0.625, 0.625]},
                "3d_lowres": {"data_identifier": "nnUNetPlans_3d_lowres", "spacing": [3.0, 1.25, 1.25],
                              "next_stage": "3d_cascade_fullres"},
                "3d_fullres": {"data_identifier": "nnUNetPlans_3d_fullres", "spacing": [3.0, 0.625, 0.625]},
                "3d_cascade_fullres": {"inherits_from": "3d_fullres", "previous_stage": "3d_lowres"}
            }
        })
    }

    fn confs() -> Vec<Configuration> {
        match parse_plans(&plans_doc()) {
            Plans::Plans(c) => c,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn inheritance_is_resolved_key_by_key() {
        let c = confs();
        let cascade = c.iter().find(|c| c.name == "3d_cascade_fullres").unwrap();
        assert_eq!(
            cascade.data_identifier.as_deref(),
            Some("nnUNetPlans_3d_fullres")
        );
        assert_eq!(cascade.spacing, Some(vec![3.0, 0.625, 0.625]));
        assert_eq!(parse_plans(&json!({"name": "x"})), Plans::NotPlans);
    }

    #[test]
    fn bad_plans_say_why() {
        for doc in [
            json!({"configurations": {"a": {"inherits_from": "b"}, "b": {"inherits_from": "a"}}}),
            json!({"configurations": {"a": {"inherits_from": "missing"}}}),
            json!({"configurations": {"a": {"spacing": [1, 0, 1]}}}),
            json!({"configurations": {"a": {"spacing": "1 1 1"}}}),
            json!({"configurations": {"a": 3}}),
        ] {
            assert!(matches!(parse_plans(&doc), Plans::Bad(_)), "{doc}");
        }
    }

    #[test]
    fn a_preprocessed_case_is_channel_first_at_the_configurations_spacing() {
        let c = confs();
        let all: Vec<&Configuration> = c.iter().collect();
        let g = preprocessed("nnUNetPlans_3d_fullres", &all, &[2, 20, 64, 64])
            .unwrap()
            .unwrap();
        assert_eq!(g.channel_axis, Some(0));
        assert_eq!(g.spacing, Some(vec![3.0, 0.625, 0.625]));
        // A segmentation has one channel.
        assert!(
            preprocessed("nnUNetPlans_3d_fullres", &all, &[1, 20, 64, 64])
                .unwrap()
                .is_some()
        );
        // 2d: the slice axis stays at 1.
        let g = preprocessed("nnUNetPlans_2d", &all, &[2, 20, 64, 64])
            .unwrap()
            .unwrap();
        assert_eq!(g.spacing, Some(vec![1.0, 0.625, 0.625]));
        // A folder no configuration names; a shape that does not fit.
        assert_eq!(
            preprocessed("gt_segmentations", &all, &[20, 64, 64]),
            Ok(None)
        );
        assert!(preprocessed("nnUNetPlans_3d_fullres", &all, &[20, 64, 64]).is_err());
        assert!(preprocessed("nnUNetPlans_3d_fullres", &all, &[2, 3, 20, 64, 64]).is_err());
    }

    #[test]
    fn two_spacings_for_one_folder_are_refused() {
        let mut doc = plans_doc();
        doc["configurations"]["odd"] =
            json!({"data_identifier": "nnUNetPlans_3d_fullres", "spacing": [1, 1, 1]});
        let Plans::Plans(c) = parse_plans(&doc) else {
            panic!()
        };
        let all: Vec<&Configuration> = c.iter().collect();
        assert!(preprocessed("nnUNetPlans_3d_fullres", &all, &[1, 2, 3, 4]).is_err());
    }

    #[test]
    fn a_next_stage_segmentation_takes_that_stages_spacing() {
        let c = confs();
        let g = next_stage("3d_cascade_fullres", &c, &[20, 64, 64])
            .unwrap()
            .unwrap();
        assert_eq!(
            (g.channel_axis, g.spacing),
            (None, Some(vec![3.0, 0.625, 0.625]))
        );
        assert!(next_stage("3d_cascade_fullres", &c, &[1, 20, 64, 64]).is_err());
        assert_eq!(next_stage("nope", &c, &[20, 64, 64]), Ok(None));
    }

    #[test]
    fn the_memo_finds_plans_one_level_up_and_follows_changes() {
        let dir = tempfile::tempdir().unwrap();
        let dataset = dir.path().join("Dataset001_Prostate");
        let pre = dataset.join("nnUNetPlans_3d_fullres");
        std::fs::create_dir_all(&pre).unwrap();
        std::fs::write(dataset.join("dataset.json"), b"{not json").unwrap();
        let plans = dataset.join("nnUNetPlans.json");
        std::fs::write(&plans, plans_doc().to_string()).unwrap();
        let memo = PlansMemo::within(std::fs::canonicalize(dir.path()).unwrap());
        let case = pre.join("prostate_00.b2nd");
        // Plans above the source are never read: a mount of the case folder
        // alone, or the default memo, takes no geometry from them.
        let inside = PlansMemo::within(std::fs::canonicalize(&pre).unwrap());
        assert!(inside.geometry(&case, &[2, 20, 64, 64]).is_none());
        assert!(PlansMemo::default()
            .geometry(&case, &[2, 20, 64, 64])
            .is_none());
        let g = memo.geometry(&case, &[2, 20, 64, 64]).unwrap();
        assert_eq!(g.spacing, Some(vec![3.0, 0.625, 0.625]));
        assert!(memo.geometry(&case, &[20, 64, 64]).is_none());
        // Malformed plans: nothing, and no failure.
        std::fs::write(&plans, b"{\"configurations\": ").unwrap();
        assert!(memo.geometry(&case, &[2, 20, 64, 64]).is_none());
        // Next-stage segmentations, by the trainer's plans.json.
        let trainer = dir.path().join("nnUNetTrainer__nnUNetPlans__3d_lowres");
        let next = trainer.join(NEXT_STAGE).join("3d_cascade_fullres");
        std::fs::create_dir_all(&next).unwrap();
        std::fs::write(trainer.join(TRAINER_PLANS), plans_doc().to_string()).unwrap();
        let g = memo
            .geometry(&next.join("prostate_00.b2nd"), &[20, 64, 64])
            .unwrap();
        assert_eq!(g.spacing, Some(vec![3.0, 0.625, 0.625]));
    }

    /// Keys in memory, as a remote root's objects are: `(key, etag, bytes)`.
    struct Keys(
        Vec<(&'static str, &'static str, Vec<u8>)>,
        std::cell::Cell<usize>,
    );

    impl PlansFiles for Keys {
        fn shown(&self, _: &Path) -> bool {
            true
        }
        fn stamp(&self, path: &Path) -> Option<Stamp> {
            let key = path.to_str()?;
            if let Some((_, etag, b)) = self.0.iter().find(|(k, _, _)| *k == key) {
                return Some((0, b.len() as u64, None, Some(etag.to_string())));
            }
            let listed: String = self
                .json_files(path)?
                .iter()
                .map(|p| format!("{p:?}"))
                .collect();
            Some((1, 0, None, Some(listed)))
        }
        fn not_a_file(&self, path: &Path) -> bool {
            let key = format!("{}/", path.to_str().unwrap_or(""));
            self.0.iter().any(|(k, _, _)| k.starts_with(&key))
        }
        fn json_files(&self, folder: &Path) -> Option<Vec<PathBuf>> {
            let folder = folder.to_str()?;
            Some(
                self.0
                    .iter()
                    .filter(|(k, _, _)| {
                        let (parent, name) = k.rsplit_once('/').unwrap_or(("", k));
                        parent == folder && name.ends_with(".json")
                    })
                    .map(|(k, _, _)| PathBuf::from(k))
                    .collect(),
            )
        }
        fn read(&self, path: &Path) -> Option<Vec<u8>> {
            self.1.set(self.1.get() + 1);
            let key = path.to_str()?;
            self.0
                .iter()
                .find(|(k, _, _)| *k == key)
                .map(|(_, _, b)| b.clone())
        }
    }

    /// The rules over keys (a remote root): the plans one level up, read
    /// once per ETag, the root itself as the level up, a trainer's plans.
    #[test]
    fn keys_of_a_remote_root_follow_the_same_rules() {
        let plans = plans_doc().to_string().into_bytes();
        let keys = Keys(
            vec![
                ("D1/nnUNetPlans.json", "e1", plans.clone()),
                ("D1/dataset.json", "e2", b"{}".to_vec()),
                ("D1/nnUNetPlans_3d_fullres/c.b2nd", "e3", Vec::new()),
                ("nnUNetPlans.json", "e4", plans.clone()),
                ("T/plans.json", "e5", plans),
            ],
            std::cell::Cell::new(0),
        );
        let memo = PlansMemo::default();
        let name = &"test";
        let case = Path::new("D1/nnUNetPlans_3d_fullres/c.b2nd");
        for _ in 0..3 {
            let g = memo
                .geometry_in(&keys, case, &[2, 20, 64, 64], name)
                .unwrap();
            assert_eq!(g.channel_axis, Some(0));
            assert_eq!(g.spacing, Some(vec![3.0, 0.625, 0.625]));
        }
        assert_eq!(keys.1.get(), 1, "the plans read once");
        // The root as the level up; a case at the root has no folder name.
        let top = Path::new("nnUNetPlans_2d/c.b2nd");
        let g = memo.geometry_in(&keys, top, &[1, 9, 64, 64], name).unwrap();
        assert_eq!(g.spacing, Some(vec![1.0, 0.625, 0.625]));
        assert!(memo
            .geometry_in(&keys, Path::new("c.b2nd"), &[1, 9, 64, 64], name)
            .is_none());
        let next = Path::new("T/predicted_next_stage/3d_cascade_fullres/c.b2nd");
        let g = memo.geometry_in(&keys, next, &[20, 64, 64], name).unwrap();
        assert_eq!(g.spacing, Some(vec![3.0, 0.625, 0.625]));
        assert!(memo
            .geometry_in(&keys, next, &[2, 20, 64, 64], name)
            .is_none());
    }
}
