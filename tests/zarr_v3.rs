//! The mount as a Zarr v3 hierarchy (issue 37), mounted for real and read
//! by the real readers: a corpus of python-blosc2 files
//! (scripts/gen/gen_zarr3_corpus.py: the committed fixtures of every codec,
//! filter, numeric dtype and rank, the committed stores, big-endian arrays,
//! vlmeta, saved dimension names, saved lazy expressions) is read through
//! zarr-python 3, xarray's datatree, tensorstore's zarr3 driver and a
//! 2-process Dask cluster by scripts/check/check_zarr_v3.py, exactly, from a
//! local tree and from an S3 prefix (moto). The shell view is checked too:
//! an array folder gains one entry, `c/` is reachable but not listed, and
//! `--views` without `zarr3` shows no `zarr.json`.
//!
//! A group's consolidated metadata (issue 45): each group of a small tree
//! lists every node below it with that node's own `zarr.json`; zarr-python
//! and xarray read the values and variables through it (xarray with a
//! read or so, not one per node); a tree over the bound has
//! none; an array added, removed or grown in the source changes it once the
//! attributes' time is out.
//!
//! The reader tests skip (printing why) when a reader is not importable
//! from the oracle's Python (scripts/setup_venv.sh installs them).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::mount::{run_python, serial_with_fuse, Mount};
use common::*;

/// Whether the oracle's Python has every reader; prints why a test skips.
fn have_readers(test: &str, extra: &[&str]) -> bool {
    let mut modules = vec!["zarr", "xarray", "tensorstore", "dask.distributed"];
    modules.extend_from_slice(extra);
    let code = format!(
        "import {}; import zarr; assert int(zarr.__version__.split('.')[0]) >= 3, zarr.__version__",
        modules.join(", ")
    );
    let out = Command::new(oracle_python())
        .args(["-c", &code])
        .output()
        .expect("run python");
    if !out.status.success() {
        eprintln!(
            "SKIP {test}: the Zarr v3 readers ({}, zarr>=3) are not importable from {} (run scripts/setup_venv.sh): {}",
            modules.join(", "),
            oracle_python().display(),
            String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("")
        );
    }
    out.status.success()
}

/// The corpus, built in a temporary folder: (folder, its `src` tree, the
/// expectations).
fn corpus() -> (tempfile::TempDir, PathBuf, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(oracle_python())
        .arg(repo_root().join("scripts/gen/gen_zarr3_corpus.py"))
        .arg(dir.path())
        .arg(fixtures_dir())
        .output()
        .expect("run gen_zarr3_corpus.py");
    assert!(
        out.status.success(),
        "gen_zarr3_corpus.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("expected.json")).unwrap()).unwrap();
    let src = dir.path().join("src");
    (dir, src, expected)
}

/// Run scripts/check/check_zarr_v3.py on `mnt` with `expected`; its counts.
fn check(mnt: &Path, expected: &serde_json::Value, dir: &Path) -> serde_json::Value {
    let path = dir.join("expected-here.json");
    fs::write(&path, serde_json::to_vec(expected).unwrap()).unwrap();
    let out = Command::new(oracle_python())
        .arg(repo_root().join("scripts/check/check_zarr_v3.py"))
        .arg(mnt)
        .arg(&path)
        .env("PYTHONWARNINGS", "ignore")
        .output()
        .expect("run check_zarr_v3.py");
    assert!(
        out.status.success(),
        "check_zarr_v3.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap()
}

/// Every reader reached every expected array.
fn assert_all_read(counts: &serde_json::Value, expected: &serde_json::Value) {
    let n = expected["arrays"].as_object().unwrap().len() as u64;
    for reader in ["expected", "zarr", "xarray", "tensorstore", "dask"] {
        assert_eq!(counts[reader].as_u64(), Some(n), "{reader}: {counts}");
    }
}

#[test]
fn a_local_tree_reads_exactly_through_every_v3_reader() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    if !have_readers("a_local_tree_reads_exactly_through_every_v3_reader", &[]) {
        return;
    }
    let (dir, src, expected) = corpus();
    let arrays = expected["arrays"].as_object().unwrap();
    // The corpus covers what it says: every core dtype (both byte orders
    // where they have one), ranks 0 to 8, computed arrays, store values.
    let dtypes: BTreeSet<&str> = arrays
        .values()
        .map(|e| e["dtype"].as_str().unwrap())
        .collect();
    for d in [
        "|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8", "<c8",
        "<c16", ">i2", ">i4", ">u4", ">f4", ">f8", ">c16",
    ] {
        assert!(dtypes.contains(d), "the corpus has no {d} array");
    }
    let ranks: BTreeSet<usize> = arrays
        .values()
        .map(|e| e["shape"].as_array().unwrap().len())
        .collect();
    assert!(
        (0..=6).all(|r| ranks.contains(&r)) && ranks.contains(&8),
        "{ranks:?}"
    );
    assert!(arrays.keys().any(|k| k.starts_with("computed/sum_ab")));
    assert!(arrays
        .keys()
        .any(|k| k.starts_with("stores/tree.b2z/exp/run2/delta")));
    let m = Mount::start(&src, &[]);
    let counts = check(m.path(), &expected, dir.path());
    assert_all_read(&counts, &expected);
    assert_eq!(
        counts["not_v3"].as_u64(),
        Some(expected["not_v3"].as_array().unwrap().len() as u64)
    );
    assert!(counts["not_v3"].as_u64().unwrap() >= 5, "{counts}");
}

fn names(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// Every path under `dir` (not following symlinks), relative.
fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) {
    for name in names(dir) {
        let path = dir.join(&name);
        let rel = format!("{rel}{name}");
        if fs::symlink_metadata(&path).unwrap().is_dir() {
            walk(&path, &format!("{rel}/"), out);
        }
        out.push(rel);
    }
}

const EVERY_VIEW_BUT_ZARR3: &str = "npy,text,preview,chunks,items,nrrd,metaimage,envi,table";

#[test]
fn an_array_folder_gains_only_zarr_json_and_its_chunk_keys_are_hidden() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let fixtures = fixtures_dir();
    let m = Mount::start(&fixtures, &["--views", "all"]);
    let f8 = m.path().join("dtype_le_f8.b2nd");
    let before = [
        "chunks",
        "data",
        "data.hdr",
        "data.mhd",
        "data.nhdr",
        "data.npy",
        "data.txt",
        "meta.json",
        "preview.png",
    ];
    let mut after: Vec<&str> = before.to_vec();
    after.push("zarr.json");
    after.sort();
    assert_eq!(names(&f8), after, "ls gains exactly zarr.json");
    // The chunk tree is there by name only.
    assert!(!names(&f8).contains(&"c".to_string()));
    assert!(fs::metadata(f8.join("c")).unwrap().is_dir());
    assert_eq!(names(&f8.join("c")), ["0", "1", "2"]);
    assert_eq!(names(&f8.join("c/1")), ["0", "1", "2"]);
    // (33, 21) in (12, 8) chunks: a grid of 3 x 3, every chunk file full.
    for (i, j) in [(0, 0), (1, 2), (2, 1)] {
        let v3 = f8.join(format!("c/{i}/{j}"));
        let meta = fs::metadata(&v3).unwrap();
        assert!(meta.is_file());
        assert_eq!(meta.len(), 12 * 8 * 8);
        assert_eq!(
            fs::read(&v3).unwrap(),
            fs::read(f8.join(format!("chunks/{i}.{j}"))).unwrap(),
            "c/{i}/{j}"
        );
    }
    for missing in ["c/3", "c/0/3", "c/01/0", "c/0/0/0", "c/x"] {
        assert!(fs::metadata(f8.join(missing)).is_err(), "{missing}");
    }
    let doc: serde_json::Value =
        serde_json::from_slice(&fs::read(f8.join("zarr.json")).unwrap()).unwrap();
    assert_eq!(doc["node_type"], "array");
    assert_eq!(doc["shape"], serde_json::json!([33, 21]));
    assert_eq!(doc["data_type"], "float64");
    assert_eq!(
        doc["chunk_grid"]["configuration"]["chunk_shape"],
        serde_json::json!([12, 8])
    );
    assert_eq!(
        doc["dimension_names"],
        serde_json::json!(["dtype_le_f8.b2nd_dim0", "dtype_le_f8.b2nd_dim1"])
    );
    // Big-endian: the bytes codec says so.
    let be: serde_json::Value =
        serde_json::from_slice(&fs::read(m.path().join("dtype_be_i4.b2nd/zarr.json")).unwrap())
            .unwrap();
    assert_eq!(
        be["codecs"],
        serde_json::json!([{"name": "bytes", "configuration": {"endian": "big"}}])
    );
    // A 0-d array's one chunk is the file `c`.
    let scalar = m.path().join("shape_0d_f8.b2nd");
    assert!(fs::metadata(scalar.join("c")).unwrap().is_file());
    assert_eq!(
        fs::read(scalar.join("c")).unwrap(),
        fs::read(scalar.join("chunks/0")).unwrap()
    );
    // Strings and records are left out, and meta.json says why.
    for name in ["dtype_S7.b2nd", "dtype_U5.b2nd", "dtype_struct.b2nd"] {
        let dir = m.path().join(name);
        assert!(!names(&dir).contains(&"zarr.json".to_string()), "{name}");
        assert!(fs::metadata(dir.join("c")).is_err(), "{name}");
        let meta: serde_json::Value =
            serde_json::from_slice(&fs::read(dir.join("meta.json")).unwrap()).unwrap();
        assert_eq!(meta["zarr"]["v3"], false, "{name}");
        assert!(
            meta["zarr"]["reason"]
                .as_str()
                .unwrap()
                .starts_with("Zarr v3 has no core data type for dtype"),
            "{name}: {}",
            meta["zarr"]
        );
    }
    // Folders are groups: the mount root, a store, its nested group.
    let group = |p: &Path| -> serde_json::Value {
        serde_json::from_slice(&fs::read(p.join("zarr.json")).unwrap()).unwrap()
    };
    assert_eq!(
        without_consolidated(&group(m.path())),
        serde_json::json!({"zarr_format": 3, "node_type": "group",
                           "attributes": {"blosc2fs": {"kind": "folder", "name": "fixtures"}}})
    );
    // The fixtures are few: the root carries them all (issue 45).
    assert!(has_consolidated(m.path()));
    let tree = m.path().join("stores/tree.b2z");
    assert_eq!(
        group(&tree)["attributes"],
        serde_json::json!({"author": "blosc2fs tests", "n": 3,
                           "blosc2fs": {"kind": "store", "format": "b2z", "class": "b2tree"}})
    );
    assert_eq!(
        group(&tree.join("exp"))["attributes"]["note"],
        "experiment group"
    );
    assert_eq!(
        group(&m.path().join("stores/table.b2d"))["attributes"]["blosc2fs"]["columns"],
        serde_json::json!(["a", "b"])
    );
    drop(m);

    // Without zarr3 in --views (also through -o views=) there is no
    // zarr.json anywhere and no chunk tree.
    for args in [
        vec!["--views", EVERY_VIEW_BUT_ZARR3],
        vec!["-o", "views=npy:chunks"],
    ] {
        let m = Mount::start(&fixtures, &args);
        let f8 = m.path().join("dtype_le_f8.b2nd");
        if args[0] == "--views" {
            assert_eq!(names(&f8), before, "{args:?}");
        }
        assert!(fs::metadata(f8.join("c")).is_err(), "{args:?}");
        assert!(
            fs::metadata(m.path().join("zarr.json")).is_err(),
            "{args:?}"
        );
        let mut all = Vec::new();
        walk(m.path(), "", &mut all);
        assert!(all.len() > 500, "{}", all.len());
        let zarr_json: Vec<_> = all.iter().filter(|p| p.ends_with("zarr.json")).collect();
        assert!(zarr_json.is_empty(), "{args:?}: {zarr_json:?}");
    }
    // With it, `find` sees one zarr.json per folder and per v3 array, and no
    // chunk key.
    let m = Mount::start(&fixtures, &[]);
    let mut all = Vec::new();
    walk(m.path(), "", &mut all);
    assert!(all
        .iter()
        .any(|p| p == "stores/tree.b2z/exp/run1/zarr.json"));
    let listed: BTreeSet<&str> = all.iter().map(String::as_str).collect();
    let mut arrays = 0;
    for p in all.iter().filter(|p| p.ends_with("zarr.json")) {
        let doc: serde_json::Value =
            serde_json::from_slice(&fs::read(m.path().join(p)).unwrap()).unwrap();
        if doc["node_type"] == "array" {
            arrays += 1;
            let folder = p.trim_end_matches("zarr.json");
            assert!(
                !listed.contains(format!("{folder}c").as_str()),
                "{folder}c was listed"
            );
            assert!(
                fs::metadata(m.path().join(format!("{folder}c"))).is_ok(),
                "{folder}c"
            );
        }
    }
    assert!(arrays > 150, "{arrays} v3 arrays");
}

// ------------------------------------------------- consolidated metadata

/// Every node document of the Zarr v3 hierarchy under `mnt` (not the root's),
/// read from each folder's own `zarr.json`, by path relative to `mnt`.
fn own_documents(mnt: &Path) -> BTreeMap<String, serde_json::Value> {
    let mut all = Vec::new();
    walk(mnt, "", &mut all);
    all.iter()
        .filter_map(|p| p.strip_suffix("/zarr.json"))
        .map(|folder| {
            let doc = fs::read(mnt.join(folder).join("zarr.json")).unwrap();
            (folder.to_string(), serde_json::from_slice(&doc).unwrap())
        })
        .collect()
}

/// The group document `doc` without its `consolidated_metadata`.
fn without_consolidated(doc: &serde_json::Value) -> serde_json::Value {
    let mut doc = doc.clone();
    doc.as_object_mut().unwrap().remove("consolidated_metadata");
    doc
}

/// The flat members of the consolidated metadata in the `zarr.json` of
/// `folder` (panics when it has none).
fn consolidated(folder: &Path) -> serde_json::Map<String, serde_json::Value> {
    let doc: serde_json::Value =
        serde_json::from_slice(&fs::read(folder.join("zarr.json")).unwrap()).unwrap();
    let inline = &doc["consolidated_metadata"];
    assert_eq!(inline["kind"], "inline", "{}", folder.display());
    assert_eq!(inline["must_understand"], false);
    inline["metadata"].as_object().unwrap().clone()
}

/// Whether the `zarr.json` of `folder` carries consolidated metadata.
fn has_consolidated(folder: &Path) -> bool {
    let doc: serde_json::Value =
        serde_json::from_slice(&fs::read(folder.join("zarr.json")).unwrap()).unwrap();
    doc.get("consolidated_metadata").is_some()
}

/// `members` (consolidated below `base`, "" for the mount root) are exactly
/// the nodes of `own` below `base`, each its own document (a group's without
/// its own consolidated metadata, which zarr-python lists flat instead).
fn assert_members_are_own(
    members: &serde_json::Map<String, serde_json::Value>,
    own: &BTreeMap<String, serde_json::Value>,
    base: &str,
) {
    let below: BTreeMap<String, &serde_json::Value> = own
        .iter()
        .filter_map(|(path, doc)| {
            let rel = if base.is_empty() {
                Some(path.as_str())
            } else {
                path.strip_prefix(base)?.strip_prefix('/')
            };
            Some((rel?.to_string(), doc))
        })
        .collect();
    assert_eq!(
        members.keys().cloned().collect::<BTreeSet<_>>(),
        below.keys().cloned().collect::<BTreeSet<_>>(),
        "the members below {base:?}"
    );
    let empty = serde_json::json!({"kind": "inline", "must_understand": false, "metadata": {}});
    for (rel, entry) in members {
        let doc = below[rel];
        if doc["node_type"] == "group" {
            assert_eq!(entry["consolidated_metadata"], empty, "{base}/{rel}");
            assert_eq!(
                without_consolidated(entry),
                without_consolidated(doc),
                "{base}/{rel}"
            );
        } else {
            assert_eq!(entry, doc, "{base}/{rel}");
        }
    }
}

/// The reads of the hierarchy through the consolidated metadata: zarr-python
/// (each array's values, as sha256 of their little-endian bytes) and xarray's
/// datatree (its variables, and how many reads the mount answered for it).
const CONSOLIDATED_READS: &str = r#"
import hashlib, json, os, sys, warnings
warnings.simplefilter("ignore")
import numpy as np, xarray as xr, zarr
mnt = sys.argv[1]
def reads():
    with open(os.path.join(mnt, ".stats"), "rb") as f:
        return json.loads(f.read())["reads"]
r0 = reads()
tree = xr.open_datatree(mnt, engine="zarr", consolidated=True)
variables = sorted(f"{n.path.strip('/')}/{v}".lstrip("/") for n in tree.subtree for v in n.ds.data_vars)
r1 = reads()
root = zarr.open_group(mnt, mode="r", use_consolidated=True)
assert root.metadata.consolidated_metadata is not None
values = {}
for path, node in root.members(max_depth=None):
    if isinstance(node, zarr.Array):
        a = np.asarray(node[...])
        le = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))
        values[path] = hashlib.sha256(le.tobytes()).hexdigest()
print(json.dumps({"values": values, "variables": variables, "reads_consolidated": r1 - r0}))
"#;

/// A small tree: lake arrays in three folders, an empty folder, an array v3
/// cannot describe, a store of nested groups. Returns each v3 array's path
/// and the sha256 of its values (numpy's bytes, or python-blosc2's manifest).
fn small_tree(src: &Path) -> BTreeMap<String, String> {
    let mut want = BTreeMap::new();
    let t = common::lake::templates();
    for (rel, name) in common::lake::lake_in(src, 9, 3) {
        want.insert(rel, sha256_hex(&t.raw(name)));
    }
    fs::create_dir_all(src.join("d01/empty")).unwrap();
    fs::copy(
        fixtures_dir().join("dtype_S7.b2nd"),
        src.join("d02/strings.b2nd"),
    )
    .unwrap();
    fs::copy(
        fixtures_dir().join("stores/tree.b2z"),
        src.join("d00/tree.b2z"),
    )
    .unwrap();
    let manifest = read_manifest(&fixtures_dir().join("stores"));
    for (key, info) in manifest["stores"]["tree.b2z"]["keys"].as_object().unwrap() {
        want.insert(
            format!("d00/tree.b2z{key}"),
            info["sha256"].as_str().unwrap().to_string(),
        );
    }
    want
}

#[test]
fn a_group_carries_its_subtree_as_consolidated_metadata() {
    let test = "a_group_carries_its_subtree_as_consolidated_metadata";
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    if !have_readers(test, &[]) {
        return;
    }
    let src = tempfile::tempdir().unwrap();
    let want = small_tree(src.path());
    let m = Mount::start(src.path(), &[]);
    // Readers first, on a fresh mount (nothing of the tree in the kernel's
    // page cache yet).
    let out = run_python(CONSOLIDATED_READS, &[m.path().to_str().unwrap()]);
    let got: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    let values: BTreeMap<String, String> = serde_json::from_value(got["values"].clone()).unwrap();
    assert_eq!(
        values, want,
        "zarr-python's values through the consolidated metadata"
    );
    let variables: BTreeSet<String> = serde_json::from_value(got["variables"].clone()).unwrap();
    assert_eq!(
        variables,
        want.keys().cloned().collect(),
        "xarray's variables"
    );

    let own = own_documents(m.path());
    // xarray read one document, not one per node (which `consolidated=True`
    // asks: it fails where the root has none). A folder's document is read
    // with direct I/O, so the reader's closing end-of-file read reaches the
    // daemon too: two opens of the root's document are at most 4 reads.
    let with = got["reads_consolidated"].as_u64().unwrap();
    assert!(
        with <= 4 && own.len() > 15,
        "{with} reads for {} nodes",
        own.len()
    );

    // The root lists every node below it with its own document; so do the
    // groups below, a store's groups too, and an empty group lists none.
    assert!(own.len() > want.len() + 5, "{:?}", own.keys());
    assert!(!own.contains_key("d02/strings.b2nd"));
    assert_members_are_own(&consolidated(m.path()), &own, "");
    for group in [
        "d00",
        "d01",
        "d00/tree.b2z",
        "d00/tree.b2z/exp",
        "d01/empty",
    ] {
        assert_members_are_own(&consolidated(&m.path().join(group)), &own, group);
    }
    assert!(consolidated(&m.path().join("d01/empty")).is_empty());
    // The array v3 cannot describe is left out, and its meta.json says why.
    let meta: serde_json::Value =
        serde_json::from_slice(&fs::read(m.path().join("d02/strings.b2nd/meta.json")).unwrap())
            .unwrap();
    assert_eq!(meta["zarr"]["v3"], false);
}

#[test]
fn a_tree_over_the_bound_has_no_consolidated_metadata() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    // 10,100 arrays in 101 folders: over the bound of 10,000 nodes at the
    // root, each folder well within it.
    let src = tempfile::tempdir().unwrap();
    common::lake::lake_in(src.path(), 10_100, 100);
    let m = Mount::start(src.path(), &[]);
    assert!(!has_consolidated(m.path()));
    let root: serde_json::Value =
        serde_json::from_slice(&fs::read(m.path().join("zarr.json")).unwrap()).unwrap();
    assert_eq!(root["node_type"], "group");
    assert_eq!(consolidated(&m.path().join("d07")).len(), 100);
}

#[test]
fn the_consolidated_metadata_follows_the_source() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let src = tempfile::tempdir().unwrap();
    let t = common::lake::templates();
    common::lake::lake_in(src.path(), 6, 3);
    // Attributes kept 0.1 s: after that the kernel asks again.
    let m = Mount::start(src.path(), &["--attr-timeout", "0.1"]);
    let settle = || std::thread::sleep(std::time::Duration::from_millis(300));
    let root = m.path();
    let before = consolidated(root);
    assert!(before.contains_key("d00/a0000.b2nd") && !before.contains_key("d01/new.b2nd"));

    // A new array.
    t.copy("f8", &src.path().join("d01/new.b2nd"));
    settle();
    let members = consolidated(root);
    assert_eq!(members.len(), before.len() + 1);
    let own: serde_json::Value =
        serde_json::from_slice(&fs::read(root.join("d01/new.b2nd/zarr.json")).unwrap()).unwrap();
    assert_eq!(members["d01/new.b2nd"], own);
    assert_eq!(consolidated(&root.join("d01"))["new.b2nd"], own);

    // A removed array.
    fs::remove_file(src.path().join("d00/a0000.b2nd")).unwrap();
    settle();
    let members = consolidated(root);
    assert!(!members.contains_key("d00/a0000.b2nd"));
    assert_eq!(members.len(), before.len());

    // A grown array (resized in place: its folder is unchanged).
    let grow = r#"
import sys, numpy as np, blosc2
a = blosc2.open(sys.argv[1], mode="a")
a.resize((12345,))
a[1000:] = np.arange(11345, dtype=a.dtype)
"#;
    let grown = src.path().join("d00/a0001.b2nd");
    assert_eq!(before["d00/a0001.b2nd"]["shape"], serde_json::json!([1000]));
    run_python(grow, &[grown.to_str().unwrap()]);
    settle();
    assert_eq!(
        consolidated(root)["d00/a0001.b2nd"]["shape"],
        serde_json::json!([12345])
    );
    assert_members_are_own(&consolidated(root), &own_documents(root), "");

    // A folder closed to others: the root, which others may read, says
    // nothing of it (nor of anything else); the folder itself still does.
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(src.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let closed = src.path().join("d01");
    fs::set_permissions(&closed, fs::Permissions::from_mode(0o700)).unwrap();
    settle();
    assert!(!has_consolidated(root));
    assert_eq!(consolidated(&root.join("d01")).len(), 4);
    fs::set_permissions(&closed, fs::Permissions::from_mode(0o755)).unwrap();
    settle();
    assert_eq!(consolidated(root).len(), before.len());
}

// ---------------------------------------------------------------- S3 (moto)

/// The same corpus from an S3 prefix (a moto server).
#[cfg(feature = "remote")]
mod s3 {
    use super::*;
    use common::moto::{env_refs, Moto};

    #[test]
    fn an_s3_prefix_reads_exactly_through_every_v3_reader() {
        let test = "an_s3_prefix_reads_exactly_through_every_v3_reader";
        let Some(_guard) = serial_with_fuse() else {
            return;
        };
        if !have_readers(test, &["moto", "boto3"]) {
            return;
        }
        let Some(moto) = Moto::start(test) else {
            return;
        };
        let (dir, src, mut expected) = corpus();
        // Saved expressions name their operands by local path: they are the
        // local test's. Everything else goes to the bucket.
        expected["arrays"]
            .as_object_mut()
            .unwrap()
            .retain(|k, _| !k.starts_with("computed/"));
        moto.upload_dir("zarr3", &src, &["computed/"]);
        let env = moto.env();
        let env = env_refs(&env);
        let m = Mount::start_with_env(Path::new("s3://zarr3/"), &[], &env);
        assert!(names(m.path()).contains(&"zarr.json".to_string()));
        let counts = check(m.path(), &expected, dir.path());
        assert_all_read(&counts, &expected);
        assert!(counts["expected"].as_u64().unwrap() > 150, "{counts}");
    }
}
