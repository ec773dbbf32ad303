//! Every entry of a source is shown, mounted for real: files that are not
//! Blosc2 appear as themselves (same name, bytes, size, mtime, read-only),
//! `--blosc2-only` keeps the old view, `--originals` shows each Blosc2 file
//! as its own bytes with its views under `NAME.d/`, and names the mount adds
//! itself (`.stats`, `zarr.json`) never appear twice. Expected bytes are the
//! source files themselves; array values come from numpy.

mod common;

use std::collections::{BTreeMap, HashSet};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use common::mount::{python, run_python, serial_with_fuse, Mount};
use common::*;

/// A dataset folder as nnU-Net leaves it, in miniature: arrays written by
/// python-blosc2 beside `.json`, `.pkl` and `.nii.gz`-like binary files, a
/// folder holding only plain files, and files named like the mount's own.
/// Returns the source folder.
fn dataset() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    run_python(
        r#"
import sys, os, json, pickle, gzip
import numpy as np, blosc2
root = sys.argv[1]
os.makedirs(f"{root}/cfg", exist_ok=True)
os.makedirs(f"{root}/gt_segmentations/deeper", exist_ok=True)
a = np.arange(2 * 16 * 24, dtype=np.float32).reshape(2, 16, 24)
blosc2.asarray(a, urlpath=f"{root}/cfg/case_000.b2nd", mode="w", chunks=(1, 16, 24), blocks=(1, 8, 24))
np.save(f"{root}/case_000.npy", a)
s = (np.arange(16 * 24, dtype=np.int16) % 3 - 1).reshape(16, 24)
blosc2.asarray(s, urlpath=f"{root}/cfg/case_000_seg.b2nd", mode="w")
np.save(f"{root}/case_000_seg.npy", s)
with open(f"{root}/cfg/case_000.pkl", "wb") as f:
    pickle.dump({"spacing": [3.0, 0.625, 0.625], "bbox": [[0, 2], [0, 16], [0, 24]]}, f)
json.dump({"name": "Prostate", "labels": {"background": 0}}, open(f"{root}/dataset.json", "w"))
rng = np.random.default_rng(7)
for i in range(2):
    with gzip.open(f"{root}/gt_segmentations/case_{i:03d}.nii.gz", "wb") as f:
        f.write(rng.integers(0, 255, 5000, dtype=np.uint8).tobytes())
open(f"{root}/gt_segmentations/deeper/empty.txt", "wb").close()
# Named like files the mount adds itself.
open(f"{root}/zarr.json", "w").write('{"a source file": "named zarr.json"}\n')
open(f"{root}/.stats", "w").write("a source file named .stats\n")
open(f"{root}/cfg/meta.json", "w").write('{"plain": true}\n')
"#,
        &[dir.path().to_str().unwrap()],
    );
    dir
}

/// Every regular file under `root` (relative path → bytes), but the `.npy`
/// files the test keeps beside (they are checked as files all the same).
fn source_files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    read_tree(root)
}

/// The names of folder `dir`, in readdir order; panics on a name listed twice.
fn names(dir: &Path) -> Vec<String> {
    let names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let mut seen = HashSet::new();
    for n in &names {
        assert!(seen.insert(n), "{n} listed twice in {}", dir.display());
    }
    names
}

/// Where a source file is shown: the root's own `.stats` and `zarr.json`
/// move aside as `NAME.source`.
fn shown_as(rel: &Path) -> PathBuf {
    match rel.to_str().unwrap() {
        ".stats" | "zarr.json" => PathBuf::from(format!("{}.source", rel.display())),
        _ => rel.to_path_buf(),
    }
}

/// Every plain file of `src` is shown byte-exact at the mount `mnt`, with
/// its size, mtime (local: to the nanosecond) and read bits, never writable.
fn every_plain_file_is_itself(src: &Path, mnt: &Path, local: bool) {
    let files = source_files(src);
    let mut checked = 0;
    for (rel, bytes) in &files {
        if rel.extension().is_some_and(|e| e == "b2nd") {
            continue;
        }
        let shown = mnt.join(shown_as(rel));
        let got = std::fs::read(&shown).unwrap_or_else(|e| panic!("{}: {e}", shown.display()));
        assert!(got == *bytes, "{}: bytes differ", rel.display());
        let meta = std::fs::metadata(&shown).unwrap();
        let source = std::fs::metadata(src.join(rel)).unwrap();
        assert!(meta.is_file(), "{}", rel.display());
        assert_eq!(meta.len(), bytes.len() as u64, "{}", rel.display());
        assert_eq!(meta.permissions().mode() & 0o222, 0, "read-only");
        if local {
            assert_eq!(meta.modified().unwrap(), source.modified().unwrap());
            assert_eq!(
                meta.permissions().mode() & 0o444,
                source.permissions().mode() & 0o444,
                "{}",
                rel.display()
            );
            assert_eq!(meta.uid(), source.uid());
        }
        assert!(std::fs::OpenOptions::new()
            .write(true)
            .open(&shown)
            .is_err());
        checked += 1;
    }
    assert!(checked >= 9, "{checked} plain files checked");
}

#[test]
fn plain_files_are_shown_as_themselves() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let src = dataset();
    let mount = Mount::start(src.path(), &[]);
    let mnt = mount.path();
    every_plain_file_is_itself(src.path(), mnt, true);

    // The root: the mount's own files, then each source entry once.
    let root = names(mnt);
    for name in [
        ".stats",
        "zarr.json",
        ".stats.source",
        "zarr.json.source",
        "dataset.json",
        "case_000.npy",
        "cfg",
        "gt_segmentations",
    ] {
        assert!(root.iter().any(|n| n == name), "{name} not in {root:?}");
    }
    assert_eq!(
        std::fs::read(mnt.join(".stats.source")).unwrap(),
        b"a source file named .stats\n"
    );
    let mut gt = names(&mnt.join("gt_segmentations"));
    gt.sort();
    assert_eq!(
        gt,
        ["case_000.nii.gz", "case_001.nii.gz", "deeper", "zarr.json"]
    );
    // Arrays are still folders of views; meta.json beside them is a file.
    let cfg = names(&mnt.join("cfg"));
    let mut sorted = cfg.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [
            "case_000.b2nd",
            "case_000.pkl",
            "case_000_seg.b2nd",
            "meta.json",
            "zarr.json"
        ]
    );
    assert!(mnt.join("cfg/case_000.b2nd").is_dir());
    let npy = std::fs::read(src.path().join("case_000.npy")).unwrap();
    assert_eq!(
        std::fs::read(mnt.join("cfg/case_000.b2nd/data.npy")).unwrap(),
        npy
    );
    // The mount's own .stats is the mount's; the source's is beside it.
    let stats = mount.stats();
    assert!(stats["listing"]["names_renamed"].as_u64().unwrap() >= 2);
    assert!(stats["listing"]["plain_opens"].as_u64().unwrap() >= 9);
    eprintln!(
        "plain file opens: {} (by passthrough: {})",
        stats["listing"]["plain_opens"], stats["listing"]["plain_passthrough_opens"]
    );
    // Plain files are no Zarr nodes: the group's consolidated metadata
    // names arrays and folders only.
    let group: serde_json::Value =
        serde_json::from_slice(&std::fs::read(mnt.join("zarr.json")).unwrap()).unwrap();
    let text = group.to_string();
    assert!(!text.contains("dataset.json") && !text.contains("case_000.pkl"));
    // np.memmap of a plain file reads its bytes.
    let out = run_python(
        r#"
import sys, numpy as np
m = np.memmap(sys.argv[1], dtype=np.uint8, mode="r")
print(bytes(m[:]) == open(sys.argv[2], "rb").read(), len(m))
"#,
        &[
            mnt.join("case_000.npy").to_str().unwrap(),
            src.path().join("case_000.npy").to_str().unwrap(),
        ],
    );
    assert_eq!(out.trim(), format!("True {}", npy.len()));
    drop(mount);

    // --blosc2-only: today's view, arrays and folders only.
    let only = Mount::start(src.path(), &["--blosc2-only"]);
    let root = names(only.path());
    let mut sorted = root.clone();
    sorted.sort();
    assert_eq!(sorted, [".stats", "cfg", "gt_segmentations", "zarr.json"]);
    let mut gt = names(&only.path().join("gt_segmentations"));
    gt.sort();
    assert_eq!(
        gt,
        ["deeper", "zarr.json"],
        "a folder of plain files lists its folders only"
    );
    assert!(!only.path().join("dataset.json").exists());
    assert!(!only.path().join("zarr.json.source").exists());
}

#[test]
fn originals_show_blosc2_files_as_themselves_with_their_views_beside() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let src = dataset();
    // A source folder named like a views folder: the source's wins.
    std::fs::create_dir(src.path().join("cfg/case_000_seg.b2nd.d")).unwrap();
    std::fs::write(src.path().join("cfg/case_000_seg.b2nd.d/x"), b"mine").unwrap();
    let mount = Mount::start(src.path(), &["-o", "originals"]);
    let mnt = mount.path();
    every_plain_file_is_itself(src.path(), mnt, true);
    let cfg = names(&mnt.join("cfg"));
    let mut sorted = cfg.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [
            "case_000.b2nd",
            "case_000.b2nd.d",
            "case_000.pkl",
            "case_000_seg.b2nd",
            "case_000_seg.b2nd.d",
            "meta.json",
            "zarr.json"
        ]
    );
    for name in ["case_000.b2nd", "case_000_seg.b2nd"] {
        let shown = std::fs::read(mnt.join("cfg").join(name)).unwrap();
        let source = std::fs::read(src.path().join("cfg").join(name)).unwrap();
        assert!(shown == source, "{name}: the file's own bytes");
    }
    assert_eq!(
        std::fs::read(mnt.join("cfg/case_000_seg.b2nd.d/x")).unwrap(),
        b"mine"
    );
    assert!(mount.log_text().contains("case_000_seg.b2nd.d\" not shown"));
    // The views folder: every view as before.
    let npy = std::fs::read(src.path().join("case_000.npy")).unwrap();
    assert_eq!(
        std::fs::read(mnt.join("cfg/case_000.b2nd.d/data.npy")).unwrap(),
        npy
    );
    assert!(mnt.join("cfg/case_000.b2nd.d/meta.json").is_file());
    // python-blosc2 opens the shown file, also memory-mapped.
    let out = run_python(
        r#"
import sys, numpy as np, blosc2
a = np.load(sys.argv[2])
print(np.array_equal(blosc2.open(sys.argv[1])[:], a),
      np.array_equal(blosc2.open(sys.argv[1], mmap_mode="r")[:], a))
"#,
        &[
            mnt.join("cfg/case_000.b2nd").to_str().unwrap(),
            src.path().join("case_000.npy").to_str().unwrap(),
        ],
    );
    assert_eq!(out.trim(), "True True");
    let _ = python();
}

#[cfg(feature = "remote")]
#[test]
fn plain_files_from_s3_are_shown_as_themselves() {
    use common::moto::{env_refs, Moto};
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let Some(moto) = Moto::start("plain_files_from_s3") else {
        return;
    };
    let src = dataset();
    moto.upload_dir("plain", src.path(), &[]);
    let env = moto.env();
    let mount = Mount::start_with_env(Path::new("s3://plain/"), &[], &env_refs(&env));
    let mnt = mount.path();
    every_plain_file_is_itself(src.path(), mnt, false);
    let root = names(mnt);
    assert!(root.iter().any(|n| n == ".stats.source"), "{root:?}");
    assert!(root.iter().any(|n| n == "zarr.json.source"), "{root:?}");
    let npy = std::fs::read(src.path().join("case_000.npy")).unwrap();
    assert_eq!(
        std::fs::read(mnt.join("cfg/case_000.b2nd/data.npy")).unwrap(),
        npy
    );
    drop(mount);
    // --originals from S3: the object's own bytes, and python-blosc2 opens it.
    let mount = Mount::start_with_env(
        Path::new("s3://plain/"),
        &["--originals", "--blosc2-only"],
        &env_refs(&env),
    );
    let mnt = mount.path();
    assert!(!mnt.join("dataset.json").exists());
    let shown = std::fs::read(mnt.join("cfg/case_000.b2nd")).unwrap();
    assert!(shown == std::fs::read(src.path().join("cfg/case_000.b2nd")).unwrap());
    let out = run_python(
        r#"
import sys, numpy as np, blosc2
print(np.array_equal(blosc2.open(sys.argv[1], mmap_mode="r")[:], np.load(sys.argv[2])))
"#,
        &[
            mnt.join("cfg/case_000.b2nd").to_str().unwrap(),
            src.path().join("case_000.npy").to_str().unwrap(),
        ],
    );
    assert_eq!(out.trim(), "True");
    assert_eq!(
        std::fs::read(mnt.join("cfg/case_000.b2nd.d/data.npy")).unwrap(),
        npy
    );
}
