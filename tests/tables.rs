//! Tables and variable-length containers as python-blosc2 4.x writes them
//! (issue 43): a table is its logical columns, each read equal to
//! python-blosc2's own read of it; no storage part poses as a column;
//! deleted rows never come back; nulls never read as values.
//!
//! The fixtures are `scripts/gen/gen_tables.py`'s, written by python-blosc2
//! 4.14.1 into a temporary folder with its reads beside them (every column
//! kind with deleted rows and nulls, `.b2d`, `.b2z`, a TreeStore, a `.b2e`
//! frame, `from_pandas`, `from_arrow`, sentinel nulls, spare capacity,
//! indexes; ListArray, BatchArray and ObjectArray containers).
//!
//! - mounted for real, `scripts/check/check_tables.py` compares every
//!   column folder (`items.jsonl`, `data`/`data.npy`, `valid`/`valid.npy`,
//!   `meta.json`'s null policy), every container's `items.jsonl` and
//!   `xarray.open_datatree` of the mount with those reads;
//! - here: no storage part is listed anywhere in a table, the table's
//!   logical columns as Arrow record batches (the `TableSource` that
//!   `table.csv` and `table.arrow` are rendered from) equal `to_arrow()`
//!   field by field and value by value, and `blosc2fs info` prints a
//!   table's schema.
//!
//! The tests skip (printing why) when xarray, pandas or pyarrow is not
//! importable from the oracle's Python (scripts/setup_venv.sh installs them).

mod common;

use std::path::Path;
use std::process::Command;

use serde_json::Value as Json;

use blosc2fs::catalog::store::LoadedStore;
use blosc2fs::source::store::{Store, StoreFormat};
use blosc2fs::tables::type_names::type_name;
use blosc2fs::views::arrow_json::value_json;

use common::mount::{binary, serial_with_fuse, Mount};
use common::tables::{gen_tables, have_modules, names as listing};
use common::{oracle_python, repo_root};

/// Whether the oracle's Python has what the checks need; prints why not.
fn have_python(test: &str) -> bool {
    have_modules(
        test,
        &["blosc2", "numpy", "pandas", "pyarrow", "xarray", "zarr"],
    )
}

/// The fixtures and their expected reads, in a temporary folder.
fn fixtures() -> tempfile::TempDir {
    gen_tables(&[])
}

fn read_json(path: &Path) -> Json {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every (fixture, table key) of the manifest.
fn tables(dir: &Path) -> Vec<(String, String)> {
    let manifest = read_json(&dir.join("manifest.json"));
    let mut out = Vec::new();
    for (name, entry) in manifest["fixtures"].as_object().unwrap() {
        for table in entry["tables"].as_array().into_iter().flatten() {
            out.push((name.clone(), table["key"].as_str().unwrap().to_string()));
        }
    }
    out
}

fn expected_dir(dir: &Path, name: &str, key: &str) -> std::path::PathBuf {
    let key = key.trim_matches('/');
    let base = dir.join(format!("{name}.expected"));
    if key.is_empty() {
        base
    } else {
        base.join(key)
    }
}

#[test]
fn every_column_and_container_reads_as_python_blosc2_reads_it() {
    let Some(_serial) = serial_with_fuse() else {
        eprintln!("SKIP: no FUSE");
        return;
    };
    if !have_python("every_column_and_container_reads_as_python_blosc2_reads_it") {
        return;
    }
    let dir = fixtures();
    let mount = Mount::start(dir.path(), &[]);
    let out = Command::new(oracle_python())
        .arg(repo_root().join("scripts/check/check_tables.py"))
        .arg(mount.path())
        .arg(dir.path())
        .output()
        .expect("run check_tables.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "check_tables.py found problems:\n{stdout}\n{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        mount.log_text()
    );
    assert!(stdout.contains("14 tables, 7 containers"), "{stdout}");

    // No storage part is listed anywhere under a table folder, and the
    // index sidecars sit under indexes/ without a zarr.json.
    for (name, key) in tables(dir.path()) {
        let table = mount.path().join(name.clone() + &key).join("");
        let table = if key == "/" {
            mount.path().join(&name)
        } else {
            table
        };
        for entry in walk_dir(&table) {
            let rel = entry
                .strip_prefix(&table)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let last = rel.rsplit('/').next().unwrap_or("");
            if rel.starts_with("indexes") {
                // indexes/ and its folders are no Zarr groups (the sidecar
                // arrays in them keep theirs, which no Zarr walk reaches).
                assert!(
                    !(last == "zarr.json" && rel.matches('/').count() <= 2),
                    "{name}{key}: {rel}"
                );
                continue;
            }
            for part in [
                ".utf8",
                ".notnull",
                "_dict",
                "_cols",
                "_valid_rows",
                "_meta",
            ] {
                assert!(
                    !last.ends_with(part) && !last.starts_with("_"),
                    "{name}{key}: {rel}"
                );
            }
        }
    }
    let indexes = mount.path().join("indexed.b2d/indexes");
    let mut listed: Vec<String> = std::fs::read_dir(&indexes)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    listed.sort();
    assert_eq!(listed, ["a", "meta.json", "s"], "{}", indexes.display());
    assert!(indexes.join("a/full.values/data").exists());
}

fn walk_dir(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        out.push(path.clone());
        if path.is_dir() && path.file_name().is_some_and(|n| n != "c") {
            out.extend(walk_dir(&path));
        }
    }
    out
}

/// `doc` with python-blosc2's packed tuples (`["__tuple__", item, ...]`)
/// as the lists Python reads them as.
fn untuple(doc: &Json) -> Json {
    match doc {
        Json::Array(items) if items.first().is_some_and(|t| t == "__tuple__") => {
            Json::Array(items[1..].iter().map(untuple).collect())
        }
        Json::Array(items) => Json::Array(items.iter().map(untuple).collect()),
        Json::Object(map) => {
            Json::Object(map.iter().map(|(k, v)| (k.clone(), untuple(v))).collect())
        }
        other => other.clone(),
    }
}

/// The sidecar files python-blosc2 wrote in `dir` for the array `<stem>.b2nd`,
/// as their folders are named (without `<stem>.__index__.` and `.b2nd`).
fn sidecar_folders(dir: &Path, stem: &str) -> Vec<String> {
    let prefix = format!("{stem}.__index__.");
    let folders: Vec<String> = listing(dir)
        .into_iter()
        .filter_map(|n| Some(n.strip_prefix(&prefix)?.strip_suffix(".b2nd")?.to_string()))
        .collect();
    assert!(
        !folders.is_empty(),
        "no sidecar of {stem} in {}",
        dir.display()
    );
    folders
}

/// Python run in `dir` by the oracle's interpreter; panics if it fails.
fn python_in(dir: &Path, code: &str) {
    let out = Command::new(oracle_python())
        .current_dir(dir)
        .args(["-c", code])
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{code}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The index sidecars of an indexed NDArray (python-blosc2's `create_index`)
/// are not listed beside it, and looking their names up there finds
/// nothing; the array's folder has `indexes/` instead, listing exactly the
/// sidecars python-blosc2 wrote (named without `<stem>.__index__.`), each
/// an array folder whose `data` is python-blosc2's read of that sidecar and
/// which has no `zarr.json` (nor has `indexes/`), beside `meta.json` with
/// the array's `blosc2_indexes` vlmeta. The same for an NDArray indexed
/// inside a TreeStore (`.b2d` and `.b2z`), where the sidecars are values
/// beside it. A file only named like a sidecar stays an array, and an index
/// made while mounted moves its sidecars under the array at the next listing.
#[test]
fn an_indexed_ndarrays_sidecars_are_under_its_indexes_folder() {
    let Some(_serial) = serial_with_fuse() else {
        eprintln!("SKIP: no FUSE");
        return;
    };
    if !have_python("an_indexed_ndarrays_sidecars_are_under_its_indexes_folder") {
        return;
    }
    let dir = fixtures();
    let src = dir.path();
    // Named like sidecars, but no array's vlmeta names them.
    let values = "ndindex.__index__.bucket.values.b2nd";
    std::fs::copy(src.join(values), src.join("ndindex.__index__.bogus.b2nd")).unwrap();
    std::fs::copy(
        src.join(values),
        src.join("orphan.__index__.bucket.values.b2nd"),
    )
    .unwrap();
    // A sparse frame (a folder) indexed: its sidecars are files beside it.
    python_in(
        src,
        "import blosc2, numpy as np\n\
         a = blosc2.asarray(np.arange(50, dtype=np.int16), urlpath='sparse.b2nd', mode='w', contiguous=False)\n\
         a.create_index()",
    );
    let sparse_sidecars = sidecar_folders(src, "sparse");
    let mount = Mount::start(src, &["--attr-timeout", "0.2"]);
    let mnt = mount.path();
    let mut want = sparse_sidecars.clone();
    want.push("meta.json".into());
    want.sort();
    assert_eq!(listing(&mnt.join("sparse.b2nd/indexes")), want);

    let top = listing(mnt);
    for fake in [
        "ndindex.__index__.bogus.b2nd",
        "orphan.__index__.bucket.values.b2nd",
    ] {
        assert!(top.iter().any(|n| n == fake), "{fake} not listed: {top:?}");
        assert!(mnt.join(fake).join("data").is_file(), "{fake}");
    }
    for entry in walk_dir(mnt) {
        let rel = entry
            .strip_prefix(mnt)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        // The fixture's own expected bytes (`*.expected/`) are plain files,
        // shown as themselves: not sidecars.
        if rel.contains(".__index__.") && !rel.contains(".expected/") {
            assert!(
                rel.starts_with("ndindex.__index__.bogus.b2nd")
                    || rel.starts_with("orphan.__index__."),
                "a sidecar listed outside indexes/: {rel}"
            );
        }
    }

    // (array folder, where its sidecars lie, expected reads, sidecar names
    // as python-blosc2 gives them, the prefix and suffix the folder drops)
    let manifest = read_json(&src.join("manifest.json"));
    let mut cases = Vec::new();
    let exp = src.join("ndindex.b2nd.expected");
    let names: Vec<String> = read_json(&exp.join("index.json"))["sidecars"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    cases.push((
        mnt.join("ndindex.b2nd"),
        mnt.to_path_buf(),
        exp,
        names,
        "ndindex.__index__.",
        ".b2nd",
    ));
    for store in ["ndindex_tree.b2d", "ndindex_tree.b2z"] {
        assert_eq!(manifest["fixtures"][store]["kind"], "ndarray-index-store");
        let exp = src.join(format!("{store}.expected"));
        let index = read_json(&exp.join("index.json"));
        assert_eq!(index["indexed"], "/grp/a");
        let names: Vec<String> = index["sidecars"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_str().unwrap().rsplit('/').next().unwrap().to_string())
            .collect();
        let grp = mnt.join(store).join("grp");
        assert_eq!(
            listing(&grp),
            ["a", "c", "meta.json", "zarr.json"],
            "{store}/grp"
        );
        assert_eq!(
            listing(&mnt.join(store)),
            ["b", "grp", "meta.json", "zarr.json"]
        );
        // The group's consolidated metadata: its arrays, no sidecar, no indexes/.
        let zarr = read_json(&grp.join("zarr.json"));
        let nodes: Vec<&String> = zarr["consolidated_metadata"]["metadata"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(nodes, ["a", "c"], "{store}/grp/zarr.json");
        // `info --tree` shows the sidecars under their array, not beside it.
        let out = Command::new(binary())
            .args(["info", "--tree"])
            .arg(src.join(store))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}");
        let lines: Vec<&str> = text.lines().map(str::trim_start).collect();
        let at = lines.iter().position(|l| l.starts_with("a  ")).unwrap();
        assert_eq!(lines[at + 1], "indexes/", "{text}");
        let mut shown: Vec<String> = lines[at + 2..at + 2 + names.len()]
            .iter()
            .map(|l| l.split("  ").next().unwrap().to_string())
            .collect();
        shown.sort();
        let mut want: Vec<String> = names
            .iter()
            .map(|n| n.trim_start_matches("a.__index__.").to_string())
            .collect();
        want.sort();
        assert_eq!(shown, want, "{text}");
        assert!(!text.contains(".__index__."), "{text}");
        cases.push((grp.join("a"), grp, exp, names, "a.__index__.", ""));
    }
    assert!(
        cases.iter().all(|c| c.3.len() == 7),
        "bucket indexes write 7 sidecars"
    );
    for (array, parent, exp, names, prefix, suffix) in &cases {
        let index = read_json(&exp.join("index.json"));
        let folders: Vec<String> = names
            .iter()
            .map(|n| {
                n.strip_prefix(prefix)
                    .unwrap()
                    .strip_suffix(suffix)
                    .unwrap()
                    .to_string()
            })
            .collect();
        for name in names {
            let err = std::fs::metadata(parent.join(name)).unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::NotFound, "{name}");
        }
        assert!(
            listing(array).contains(&"indexes".to_string()),
            "{}",
            array.display()
        );
        let indexes = array.join("indexes");
        let mut want = folders.clone();
        want.push("meta.json".into());
        want.sort();
        assert_eq!(listing(&indexes), want, "{}", indexes.display());
        let meta = read_json(&indexes.join("meta.json"));
        // As the mount shows vlmeta: tuples as python-blosc2 packs them.
        assert_eq!(untuple(&meta["blosc2_indexes"]), index["blosc2_indexes"]);
        assert_eq!(meta["kind"], "indexes");
        for (folder, name) in folders.iter().zip(names) {
            let side = indexes.join(folder);
            let want = std::fs::read(exp.join("sidecars").join(format!("{name}.bin"))).unwrap();
            assert_eq!(
                std::fs::read(side.join("data")).unwrap(),
                want,
                "{}",
                side.display()
            );
            assert!(!side.join("zarr.json").exists(), "{}", side.display());
            assert!(read_json(&side.join("meta.json"))["index_sidecar_of"].is_string());
        }
        assert!(walk_dir(&indexes)
            .iter()
            .all(|p| p.file_name().unwrap() != "zarr.json"));
        // The array's own meta.json names its index and the sidecar folders.
        let own = read_json(&array.join("meta.json"));
        let kind = &index["blosc2_indexes"]["indexes"]["__self__"]["kind"];
        assert_eq!(own["indexes"][0]["name"], "__self__");
        assert_eq!(&own["indexes"][0]["kind"], kind);
        let listed: Vec<String> = folders.iter().map(|f| format!("indexes/{f}")).collect();
        assert_eq!(own["indexes"][0]["sidecars"], serde_json::json!(listed));
        assert_eq!(read_json(&array.join("zarr.json"))["node_type"], "array");
    }

    // An index made while mounted: its sidecars move under the array.
    python_in(
        src,
        "import blosc2, numpy as np\n\
         blosc2.asarray(np.arange(40, dtype=np.int32), urlpath='late.b2nd', mode='w')",
    );
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(listing(mnt).contains(&"late.b2nd".to_string()));
    assert!(!mnt.join("late.b2nd/indexes").exists());
    python_in(
        src,
        "import blosc2\nblosc2.open('late.b2nd', mode='a').create_index()",
    );
    let written = sidecar_folders(src, "late");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let top = listing(mnt);
    assert!(
        !top.iter().any(|n| n.starts_with("late.__index__.")),
        "{top:?}"
    );
    let mut want = written.clone();
    want.push("meta.json".into());
    want.sort();
    assert_eq!(listing(&mnt.join("late.b2nd/indexes")), want);
}

/// The batches a table's files are rendered from: the schema of
/// `to_arrow()` (names, pyarrow's type names, in order; object and complex
/// columns left out, as `to_arrow` refuses them) and its values, batch by
/// batch, as JSON by the mount's rules.
#[test]
fn a_tables_record_batches_are_to_arrow() {
    if !have_python("a_tables_record_batches_are_to_arrow") {
        return;
    }
    let dir = fixtures();
    for (name, key) in tables(dir.path()) {
        let path = dir.path().join(&name);
        let format = StoreFormat::of_path(&path).unwrap();
        let store = LoadedStore::new(
            Store::open(&path, format).unwrap(),
            std::time::SystemTime::UNIX_EPOCH,
            1,
        );
        let root = if key == "/" { "" } else { key.as_str() };
        let info = store.table(root);
        let info = info
            .as_ref()
            .as_ref()
            .unwrap_or_else(|e| panic!("{name}{key}: {e}"));
        let source = info.source();
        let exp = expected_dir(dir.path(), &name, &key);
        let schema = read_json(&exp.join("schema.json"));
        if schema["arrow"].get("error").is_some() {
            // to_arrow refuses the table: the source leaves those columns out.
            let left: Vec<&str> = source.left_out().iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(left, ["obj", "z"], "{name}{key}");
            continue;
        }
        assert!(
            source.left_out().is_empty(),
            "{name}{key}: {:?}",
            source.left_out()
        );
        let fields: Vec<(String, String)> = source
            .schema()
            .fields()
            .iter()
            .map(|f| (f.name().clone(), type_name(f.data_type())))
            .collect();
        let want: Vec<(String, String)> = schema["arrow"]["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["name"].as_str().unwrap().to_string(),
                    f["type"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(fields, want, "{name}{key}: schema");
        let total: u64 = source.batch_rows().iter().sum();
        assert_eq!(
            total,
            schema["nrows"].as_u64().unwrap(),
            "{name}{key}: rows"
        );
        let arrow = read_json(&exp.join("arrow.json"));
        for (c, (field, _)) in fields.iter().enumerate() {
            let mut got = Vec::new();
            for b in 0..source.batch_rows().len() {
                let batch = source
                    .batch(b)
                    .unwrap_or_else(|e| panic!("{name}{key}: {e}"));
                assert_eq!(batch.num_rows() as u64, source.batch_rows()[b]);
                let column = batch.column(c);
                got.extend((0..column.len()).map(|r| value_json(column.as_ref(), r)));
            }
            assert_eq!(
                Json::Array(got),
                arrow["values"][field],
                "{name}{key}: column {field}"
            );
        }
    }
}

/// `blosc2fs info` of a table prints its schema: columns in order with
/// kinds, Arrow types and nullability, live and deleted rows, indexes; of
/// a table inside a store, given its key.
#[test]
fn info_prints_a_tables_schema() {
    if !have_python("info_prints_a_tables_schema") {
        return;
    }
    let dir = fixtures();
    let info = |args: &[&str]| {
        let out = Command::new(binary())
            .arg("info")
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "info {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let kinds = dir.path().join("kinds.b2d");
    for path in [kinds.clone(), dir.path().join("kinds.b2z")] {
        let text = info(&[path.to_str().unwrap()]);
        let schema = read_json(&dir.path().join("kinds.b2d.expected/schema.json"));
        assert!(
            text.starts_with("ctable /: 16 rows (3 deleted, 19 physical), 21 columns\n"),
            "{text}"
        );
        let lines: Vec<&str> = text.lines().collect();
        // A header, then one line per column in to_pandas order.
        let names: Vec<&str> = lines[2..23]
            .iter()
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        let want: Vec<&str> = schema["col_names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert_eq!(names, want, "{text}");
        for (column, words) in [
            ("name", "utf8 large_string not null"),
            ("n_i32", "int32 int32 nullable (mask)"),
            (
                "cat",
                "dictionary dictionary<values=string, indices=int32, ordered=0> nullable (code)",
            ),
            ("tags", "list list<item: int64> nullable (native)"),
            ("twice", "computed int64 not null = (o0 * 2) over i64"),
        ] {
            let line = lines
                .iter()
                .find(|l| l.split_whitespace().next() == Some(column))
                .unwrap();
            let got: Vec<&str> = line.split_whitespace().skip(1).collect();
            assert_eq!(got.join(" "), words, "{text}");
        }
        assert!(
            text.contains("\nindexes: i64 (summary), u8 (summary)"),
            "{text}"
        );
    }
    let text = info(&[dir.path().join("tree.b2z").to_str().unwrap(), "/grp/tbl"]);
    assert!(
        text.starts_with("ctable /grp/tbl: 4 rows (0 deleted, 4 physical), 3 columns"),
        "{text}"
    );
    let text = info(&[dir.path().join("objcol.b2d").to_str().unwrap()]);
    assert!(text.contains("not in table.arrow: obj: "), "{text}");
    let text = info(&[dir.path().join("indexed.b2d").to_str().unwrap()]);
    assert!(text.contains("indexes: a (full), s (full)"), "{text}");
}
