//! python-blosc2 stores (DictStore `.b2z`/`.b2d`, TreeStore, EmbedStore
//! `.b2e`, CTables) as folders: through `blosc2fs cat STORE KEY` and
//! `info --tree`, through the in-process filesystem, and through a real
//! mount (numpy `np.load(mmap_mode="r")` on a member's `data.npy`).
//!
//! Fixtures: `tests/fixtures/stores/`, written by
//! `scripts/gen/gen_store_fixtures.py` with python-blosc2 4.14.1; the expected
//! bytes in its `manifest.json` come from the numpy sources (table columns:
//! the source rows less the deleted ones), never from the code under test.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use blosc2fs::fs::{Filesystem, FsConfig, FsError, Kind};
use blosc2fs::read::planner::layout_budget;
use blosc2fs::read::{Blocks, Planner, Stats};
use common::inproc::{children, walk};
use common::mount::{run_python, serial_with_fuse, Mount};
use common::*;
use serde_json::Value as Json;

fn stores_dir() -> PathBuf {
    fixtures_dir().join("stores")
}

fn manifest() -> serde_json::Map<String, Json> {
    read_manifest(&stores_dir())["stores"]
        .as_object()
        .unwrap()
        .clone()
}

fn filesystem(source: &Path) -> Filesystem {
    let stats = Arc::new(Stats::default());
    let blocks = Arc::new(Blocks::new(8 << 20, layout_budget(8 << 20), stats));
    Filesystem::new(
        source,
        Arc::new(Planner::new(blocks, None, 0)),
        FsConfig::default(),
    )
    .unwrap()
}

fn names(fs: &Filesystem, path: &str) -> Vec<String> {
    let ino = walk(fs, path).unwrap_or_else(|e| panic!("{path}: {e}")).ino;
    children(fs, ino).into_iter().map(|(_, _, n)| n).collect()
}

fn read_path(fs: &Filesystem, path: &str) -> Result<Vec<u8>, FsError> {
    let attr = walk(fs, path)?;
    let opened = fs.open(attr.ino, false)?;
    let mut out = Vec::new();
    loop {
        let got = fs.read(opened.fh, out.len() as u64, 777)?;
        let done = got.len() < 777;
        out.extend_from_slice(&got);
        if done {
            break;
        }
    }
    fs.release(opened.fh);
    assert_eq!(out.len() as u64, attr.size, "{path}: size at stat time");
    Ok(out)
}

/// A key's presented folder path under the mount (keys here need no escape).
fn key_path(store: &str, key: &str) -> String {
    format!("{store}{key}")
}

#[test]
fn cat_streams_every_key_of_every_store() {
    let dir = stores_dir();
    for (name, entry) in manifest() {
        for (key, want) in entry["keys"].as_object().unwrap() {
            let out = Command::new(mount_binary())
                .arg("cat")
                .arg(dir.join(&name))
                .arg(key)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "cat {name} {key}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                out.stdout.len() as u64,
                want["size"].as_u64().unwrap(),
                "{name} {key}"
            );
            assert_eq!(
                sha256_hex(&out.stdout),
                want["sha256"].as_str().unwrap(),
                "{name} {key}"
            );
        }
    }
    let out = Command::new(mount_binary())
        .arg("cat")
        .arg(dir.join("tree.b2z"))
        .arg("/exp/nothing")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tree.b2z:/exp/nothing"),
        "the error names store and key: {err}"
    );
    let out = Command::new(mount_binary())
        .arg("cat")
        .arg(dir.join("tree.b2z"))
        .output()
        .unwrap();
    assert!(!out.status.success(), "a store needs a key");
}

#[test]
fn info_tree_shows_keys_groups_tables_and_homes() {
    let dir = stores_dir();
    let out = Command::new(mount_binary())
        .args(["info", "--tree"])
        .arg(dir.join("tree.b2z"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "(b2z b2tree, 4 keys)",
        "  exp/",
        "    run1/",
        "      temps  member, <f8 [500]",
        "      tiny  embedded, <i8 [5]",
        "      delta  member, <i4 [40, 100]",
        "  top  embedded, <f4 [6, 7]",
    ] {
        assert!(text.contains(line), "{line:?} missing from:\n{text}");
    }
    let out = Command::new(mount_binary())
        .args(["info", "--tree"])
        .arg(dir.join("table.b2z"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("  tbl/  ctable, 16 rows"), "{text}");
    let out = Command::new(mount_binary())
        .args(["info", "--tree"])
        .arg(dir.join("table.b2d"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("6 keys, ctable of 16 rows)") && text.contains("  a  file, <i4 [19]"),
        "{text}"
    );
    let out = Command::new(mount_binary())
        .arg("info")
        .arg(dir.join("tree.b2z"))
        .output()
        .unwrap();
    let meta: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(meta["class"], "b2tree");
    assert_eq!(meta["vlmeta"]["author"], "blosc2fs tests");
}

fn mount_binary() -> PathBuf {
    common::mount::binary()
}

#[test]
fn stores_are_folders_of_their_keys() {
    let fs = filesystem(&stores_dir());
    let root = names(&fs, "");
    for name in [
        "dict.b2z",
        "dict.b2d",
        "tree.b2z",
        "values.b2e",
        "table.b2d",
        "table.b2z",
    ] {
        assert!(root.contains(&name.to_string()), "{name} in {root:?}");
    }
    // Keys as paths; internal files (embed.b2e, __vlmeta__, _cols, _valid_rows) not shown.
    assert_eq!(
        names(&fs, "dict.b2d"),
        ["meta.json", "zarr.json", "big", "dir", "small"]
    );
    assert_eq!(
        names(&fs, "dict.b2z/dir"),
        ["meta.json", "zarr.json", "emb", "x"]
    );
    assert_eq!(
        names(&fs, "tree.b2z"),
        ["meta.json", "zarr.json", "exp", "top"]
    );
    assert_eq!(
        names(&fs, "tree.b2z/exp/run1/temps"),
        [
            "meta.json",
            "data",
            "data.npy",
            "data.txt",
            "preview.png",
            "chunks",
            "data.nhdr",
            "zarr.json"
        ]
    );
    // The table's logical columns, and its index sidecars (the summary
    // indexes python-blosc2's close() builds) under indexes/.
    assert_eq!(
        names(&fs, "table.b2d"),
        [
            "meta.json",
            "zarr.json",
            "table.csv",
            "table.arrow",
            "a",
            "b",
            "indexes"
        ]
    );
    assert_eq!(
        names(&fs, "table.b2z"),
        ["meta.json", "zarr.json", "other", "tbl"]
    );
    assert_eq!(
        names(&fs, "table.b2z/tbl"),
        [
            "meta.json",
            "zarr.json",
            "table.csv",
            "table.arrow",
            "a",
            "b"
        ]
    );
    assert_eq!(
        names(&fs, "table.b2z/tbl/a"),
        ["meta.json", "data", "data.npy", "data.nhdr", "zarr.json"],
        "a column has no chunks/ (its chunks hold deleted rows); a number column without nulls is a Zarr v3 array of one chunk, its data"
    );
    assert_eq!(walk(&fs, "tree.b2z/exp").unwrap().kind, Kind::Dir);

    for (name, entry) in manifest() {
        for (key, want) in entry["keys"].as_object().unwrap() {
            let base = key_path(&name, key);
            let data = read_path(&fs, &format!("{base}/data")).unwrap();
            assert_eq!(
                sha256_hex(&data),
                want["sha256"].as_str().unwrap(),
                "{base}/data"
            );
            let npy = read_path(&fs, &format!("{base}/data.npy")).unwrap();
            assert!(npy.ends_with(&data), "{base}/data.npy ends with the data");
            let meta: Json =
                serde_json::from_slice(&read_path(&fs, &format!("{base}/meta.json")).unwrap())
                    .unwrap();
            assert_eq!(meta["dtype"], want["dtype"], "{base}");
            assert_eq!(meta["shape"], want["shape"], "{base}");
        }
        for (root, table) in entry["tables"].as_object().into_iter().flatten() {
            let base = format!("{name}{root}");
            let meta: Json =
                serde_json::from_slice(&read_path(&fs, &format!("{base}/meta.json")).unwrap())
                    .unwrap();
            assert_eq!(meta["kind"], "ctable");
            assert_eq!(meta["rows"], table["rows"], "{base}");
            assert_eq!(meta["schema"], table["schema"], "{base}");
            for (col, want) in table["columns"].as_object().unwrap() {
                let data = read_path(&fs, &format!("{base}/{col}/data")).unwrap();
                assert_eq!(
                    data.len() as u64,
                    want["size"].as_u64().unwrap(),
                    "{base}/{col}"
                );
                assert_eq!(
                    sha256_hex(&data),
                    want["sha256"].as_str().unwrap(),
                    "{base}/{col}: valid rows only, in order"
                );
                let npy = read_path(&fs, &format!("{base}/{col}/data.npy")).unwrap();
                assert!(npy.ends_with(&data));
                let cmeta: Json = serde_json::from_slice(
                    &read_path(&fs, &format!("{base}/{col}/meta.json")).unwrap(),
                )
                .unwrap();
                assert_eq!(cmeta["rows_shown"], table["rows"]);
            }
        }
    }
    // Store and group metadata.
    let meta: Json =
        serde_json::from_slice(&read_path(&fs, "tree.b2z/meta.json").unwrap()).unwrap();
    assert_eq!(meta["kind"], "store");
    assert_eq!(meta["format"], "b2z");
    assert_eq!(meta["class"], "b2tree");
    assert_eq!(
        meta["vlmeta"],
        serde_json::json!({"author": "blosc2fs tests", "n": 3})
    );
    assert_eq!(
        meta["keys"],
        serde_json::json!([
            "/exp/run1/temps",
            "/exp/run1/tiny",
            "/exp/run2/delta",
            "/top"
        ])
    );
    let group: Json =
        serde_json::from_slice(&read_path(&fs, "tree.b2z/exp/meta.json").unwrap()).unwrap();
    assert_eq!(
        group["vlmeta"],
        serde_json::json!({"note": "experiment group"})
    );
    let tmeta: Json =
        serde_json::from_slice(&read_path(&fs, "table.b2z/meta.json").unwrap()).unwrap();
    assert_eq!(tmeta["objects"]["/tbl"]["kind"], "ctable");
    assert_eq!(
        walk(&fs, "tree.b2z/nothing").unwrap_err().errno(),
        libc::ENOENT
    );
    assert_eq!(
        walk(&fs, "tree.b2z/exp/__vlmeta__").unwrap_err().errno(),
        libc::ENOENT
    );
}

#[test]
fn store_replaced_while_open_new_opens_see_new_version_open_handles_keep_theirs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = stores_dir();
    let target = tmp.path().join("s.b2z");
    std::fs::copy(dir.join("dict.b2z"), &target).unwrap();
    let fs = filesystem(tmp.path());
    let want = &manifest()["dict.b2z"]["keys"]["/big"];
    let attr = walk(&fs, "s.b2z/big/data").unwrap();
    let old = fs.open(attr.ino, false).unwrap();
    // Replace the store (atomic rename, as python-blosc2's to_b2z does).
    let staged = tmp.path().join("staged");
    std::fs::copy(dir.join("tree.b2z"), &staged).unwrap();
    std::fs::rename(&staged, &target).unwrap();
    let mut bytes = Vec::new();
    loop {
        let got = fs.read(old.fh, bytes.len() as u64, 1000).unwrap();
        if got.is_empty() {
            break;
        }
        bytes.extend_from_slice(&got);
    }
    assert_eq!(
        sha256_hex(&bytes),
        want["sha256"].as_str().unwrap(),
        "the open handle keeps its version"
    );
    fs.release(old.fh);
    assert_eq!(
        walk(&fs, "s.b2z/big").unwrap_err().errno(),
        libc::ENOENT,
        "new lookups see the new store"
    );
    let top = read_path(&fs, "s.b2z/top/data").unwrap();
    assert_eq!(
        sha256_hex(&top),
        manifest()["tree.b2z"]["keys"]["/top"]["sha256"]
            .as_str()
            .unwrap()
    );
}

#[test]
fn a_store_can_be_the_mount_root() {
    let fs = filesystem(&stores_dir().join("tree.b2z"));
    assert_eq!(
        names(&fs, ""),
        [".stats", "meta.json", "zarr.json", "exp", "top"]
    );
    let data = read_path(&fs, "exp/run2/delta/data").unwrap();
    assert_eq!(
        sha256_hex(&data),
        manifest()["tree.b2z"]["keys"]["/exp/run2/delta"]["sha256"]
            .as_str()
            .unwrap()
    );
}

#[test]
fn mounted_stores_read_exactly_and_numpy_maps_data_npy() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let m = Mount::start(&stores_dir(), &[]);
    let stores = manifest();
    for v in store_values(m.path(), &[]) {
        let data = std::fs::read(&v.data).unwrap();
        assert_eq!(sha256_hex(&data), v.sha256, "{}", v.label);
    }
    let code = r#"
import hashlib, sys
import numpy as np
for path in sys.argv[1:]:
    a = np.load(path, mmap_mode="r")
    print(a.dtype.str, list(a.shape), hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest())
"#;
    let paths = [
        ("dict.b2z", "/dir/x", None),
        ("tree.b2z", "/exp/run1/tiny", None),
        ("table.b2z", "/tbl", Some("a")),
        ("table.b2d", "", Some("b")),
    ];
    let args: Vec<String> = paths
        .iter()
        .map(|(s, k, col)| {
            let base = m.path().join(key_path(s, k));
            let base = if let Some(c) = col {
                base.join(c)
            } else {
                base
            };
            base.join("data.npy").to_string_lossy().into_owned()
        })
        .collect();
    let out = run_python(code, &args.iter().map(String::as_str).collect::<Vec<_>>());
    let lines: Vec<&str> = out.lines().collect();
    for ((s, k, col), line) in paths.iter().zip(&lines) {
        let want = match col {
            None => &stores[*s]["keys"][*k],
            Some(c) => &stores[*s]["tables"][*k]["columns"][*c],
        };
        let expect = format!(
            "{} {} {}",
            want["dtype"].as_str().unwrap(),
            serde_json::to_string(&want["shape"])
                .unwrap()
                .replace(",", ", "),
            want["sha256"].as_str().unwrap()
        );
        assert_eq!(*line, expect, "{s}{k} {col:?}");
    }
}

fn check_items(read: &dyn Fn(&str) -> Vec<u8>) {
    let items = read_manifest(&stores_dir())["items"].clone();
    for path in [
        "objects.b2f",
        "batches.b2b",
        "objects.b2z/objs",
        "objects.b2z/batches",
    ] {
        let text = read(&format!("{path}/items.jsonl"));
        let got: Vec<Json> = String::from_utf8(text)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(Json::Array(got), items[path], "{path}/items.jsonl");
    }
}

#[test]
fn object_and_batch_arrays_show_items_as_json_lines() {
    let fs = filesystem(&stores_dir());
    assert_eq!(
        names(&fs, "objects.b2f"),
        ["meta.json", "data", "data.npy", "chunks", "items.jsonl"]
    );
    check_items(&|p| read_path(&fs, p).unwrap());
    assert_eq!(
        walk(&fs, "dict.b2z/big/items.jsonl").unwrap_err().errno(),
        libc::ENOENT,
        "plain arrays have no items"
    );
}

#[test]
fn mounted_items_read_as_json_lines() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let m = Mount::start(&stores_dir(), &[]);
    check_items(&|p| std::fs::read(m.path().join(p)).unwrap());
}

/// `table.csv` of each CTable: the header names the columns, each line is
/// one valid row, and the values parsed back give exactly the bytes of the
/// columns' valid rows (sha256 from the numpy source in the manifest). A
/// read at any offset gives the same bytes as that slice of the whole file.
/// (tests/tables_render.rs checks every kind of column against pandas.)
#[test]
fn table_csv_holds_the_valid_rows_exactly() {
    let fs = filesystem(&stores_dir());
    let stores = manifest();
    for (store, root, folder) in [
        ("table.b2d", "", "table.b2d"),
        ("table.b2z", "/tbl", "table.b2z/tbl"),
    ] {
        let table = &stores[store]["tables"][root];
        let path = format!("{folder}/table.csv");
        let text = read_path(&fs, &path).unwrap();
        let text = String::from_utf8(text).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("a,b"), "{path}: header");
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for line in lines {
            let fields: Vec<&str> = line.split(',').collect();
            assert_eq!(fields.len(), 2, "{path}: {line:?}");
            // As pandas writes them: no padding, floats with a `.`.
            assert!(fields.iter().all(|f| f.trim() == *f), "{path}: {line:?}");
            assert!(fields[1].contains(['.', 'e']), "{path}: {line:?}");
            a.extend_from_slice(&fields[0].parse::<i32>().unwrap().to_le_bytes());
            b.extend_from_slice(&fields[1].parse::<f64>().unwrap().to_le_bytes());
        }
        assert_eq!(
            a.len() as u64 / 4,
            table["rows"].as_u64().unwrap(),
            "{path}: rows"
        );
        assert_eq!(
            sha256_hex(&a),
            table["columns"]["a"]["sha256"].as_str().unwrap(),
            "{path}: column a"
        );
        assert_eq!(
            sha256_hex(&b),
            table["columns"]["b"]["sha256"].as_str().unwrap(),
            "{path}: column b"
        );
        // Odd windows at odd offsets.
        let whole = text.as_bytes();
        let opened = fs.open(walk(&fs, &path).unwrap().ino, false).unwrap();
        for (offset, size) in [
            (0u64, 1u32),
            (2, 5),
            (3, 40),
            (17, 33),
            (whole.len() as u64 - 7, 100),
            (whole.len() as u64, 10),
        ] {
            let got = fs.read(opened.fh, offset, size).unwrap();
            let start = (offset as usize).min(whole.len());
            let end = (start + size as usize).min(whole.len());
            assert_eq!(got, &whole[start..end], "{path}: {size} bytes at {offset}");
        }
        fs.release(opened.fh);
        let meta: Json =
            serde_json::from_slice(&read_path(&fs, &format!("{folder}/meta.json")).unwrap())
                .unwrap();
        assert_eq!(meta["arrow_left_out"], serde_json::json!({}), "{meta}");
    }
}
