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
use blosc2fs::views::arrow_json::{type_name, value_json};

use common::mount::{binary, serial_with_fuse, Mount};
use common::{oracle_python, repo_root};

/// Whether the oracle's Python has what the checks need; prints why not.
fn have_python(test: &str) -> bool {
    let out = Command::new(oracle_python())
        .args(["-c", "import blosc2, numpy, pandas, pyarrow, xarray, zarr"])
        .output()
        .expect("run python");
    if !out.status.success() {
        eprintln!(
            "SKIP {test}: blosc2, pandas, pyarrow or xarray is not importable from {} (run scripts/setup_venv.sh): {}",
            oracle_python().display(),
            String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("")
        );
    }
    out.status.success()
}

/// The fixtures and their expected reads, in a temporary folder.
fn fixtures() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(oracle_python())
        .arg(repo_root().join("scripts/gen/gen_tables.py"))
        .arg(dir.path())
        .output()
        .expect("run gen_tables.py");
    assert!(
        out.status.success(),
        "gen_tables.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
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
