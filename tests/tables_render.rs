//! A table's two files of its own (issue 43), mounted for real and read by
//! the Python data stack: `table.csv` (what `CTable.to_pandas()` holds, as
//! CSV) and `table.arrow` (an Arrow IPC file of `CTable.to_arrow()`).
//!
//! The fixtures are `scripts/gen/gen_tables.py`'s, written by python-blosc2
//! 4.14.1 into a temporary folder (every column kind, deleted rows, nulls,
//! `.b2d`, `.b2z`, a TreeStore, a `.b2e` frame, built `from_pandas` and
//! `from_arrow`, an object column `to_arrow` refuses), plus a table of
//! 150,000 rows (three record batches, a range of deleted rows, a utf8, a
//! dictionary, a nullable float and a timestamp column whose one value
//! with milliseconds is in its last batch), each with python-blosc2's own
//! reads beside it. `scripts/check/check_table_files.py` then reads every
//! table's files through the mount with pandas, pyarrow and polars and
//! compares them with those reads (what it checks is in its docstring),
//! and reads both files at random offsets. The listing, `--views` and a
//! table with a damaged column (neither file, the log saying why) are
//! checked here.
//!
//! The tests skip (printing why) when pandas, pyarrow or polars is not
//! importable from the oracle's Python (scripts/setup_venv.sh installs
//! them).

mod common;

use common::mount::{serial_with_fuse, Mount};
use common::repo_root;
use common::tables::{damaged_copy, gen_tables, have_modules, names, python};

/// Whether the oracle's Python has the readers; prints why a test skips.
fn have_readers(test: &str) -> bool {
    have_modules(test, &["blosc2", "pandas", "pyarrow", "polars"])
}

/// The big table: written by python-blosc2 into `dir`, its expected reads
/// by gen_tables.py's own `table_expected`, and added to the manifest.
const BIG_TABLE: &str = r#"
import dataclasses, json, sys
from pathlib import Path
import blosc2
sys.path.insert(0, sys.argv[1])
import gen_tables

@dataclasses.dataclass
class Row:
    id: int = blosc2.field(blosc2.int64())
    name: str = blosc2.field(blosc2.utf8(nullable=True))
    cat: str = blosc2.field(blosc2.dictionary())
    x: float = blosc2.field(blosc2.float64(nullable=True))
    when: int = blosc2.field(blosc2.timestamp(unit="ms", nullable=True))

out = Path(sys.argv[2])
n = 150_000
t = blosc2.CTable(Row, urlpath=str(out / "big.b2d"), mode="w", expected_size=n)
t.extend([
    (
        i,
        None if i % 11 == 3 else f'r{i},"{i % 7}"',
        None if i % 13 == 5 else ["a", "b", "c"][i % 3],
        None if i % 17 == 2 else i / 8,
        None if i % 19 == 4 else 1_600_000_000_000 + 1000 * i + (500 if i == n - 2 else 0),
    )
    for i in range(n)
])
t.delete(list(range(70_000, 71_000)) + [0, 5, n - 1])
t.close()
table = gen_tables.table_expected(out / "big.b2d", "/", out / "big.b2d.expected")
manifest = json.loads((out / "manifest.json").read_text())
manifest["fixtures"]["big.b2d"] = {"kind": "ctable", "tables": [table]}
(out / "manifest.json").write_text(json.dumps(manifest))
"#;

/// The fixtures and their expected reads, in a temporary folder.
fn fixtures() -> tempfile::TempDir {
    let dir = gen_tables(&[]);
    let out = dir.path().to_str().unwrap();
    python(&[
        "-c",
        BIG_TABLE,
        repo_root().join("scripts/gen").to_str().unwrap(),
        out,
    ]);
    dir
}

#[test]
fn every_table_reads_through_pandas_pyarrow_and_polars_as_python_blosc2_reads_it() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    if !have_readers("every_table_reads_through_pandas_pyarrow_and_polars") {
        return;
    }
    let dir = fixtures();
    // A damaged copy of a table: bytes of a column's chunk flipped.
    let pandas = dir.path().join("pandas.b2d");
    damaged_copy(&pandas, &dir.path().join("damaged.b2d"), "_cols/g.b2nd", 40);
    let mount = Mount::start(dir.path(), &[]);
    let root = mount.path();
    // Every table folder holds both files (the store's tables too).
    for folder in [
        "kinds.b2d",
        "objcol.b2d",
        "tree.b2z/grp/tbl",
        "frame.b2e",
        "big.b2d",
    ] {
        let listed = names(&root.join(folder));
        for file in ["table.arrow", "table.csv"] {
            assert!(listed.iter().any(|n| n == file), "{folder}: {listed:?}");
        }
    }
    let report = python(&[
        repo_root()
            .join("scripts/check/check_table_files.py")
            .to_str()
            .unwrap(),
        root.to_str().unwrap(),
        dir.path().to_str().unwrap(),
    ]);
    let counts: serde_json::Value = serde_json::from_str(report.trim()).expect("one JSON line");
    // gen_tables.py's 14 tables (two in TreeStores) and the big one.
    assert_eq!(counts["tables"], 15, "{counts}");
    assert!(
        counts["csv_cells"].as_u64().unwrap() > 5 * 148_000,
        "{counts}"
    );
    // The big table is three record batches of at most 65,536 rows.
    let batches = python(&[
        "-c",
        "import sys, pyarrow.ipc as i; r = i.open_file(sys.argv[1]); \
         print([r.get_batch(k).num_rows for k in range(r.num_record_batches)])",
        root.join("big.b2d/table.arrow").to_str().unwrap(),
    ]);
    assert_eq!(batches.trim(), "[65534, 64536, 18927]");
    // An object and a complex column: left out of both files, and
    // meta.json says why.
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("objcol.b2d/meta.json")).unwrap()).unwrap();
    let left_out = meta["arrow_left_out"].as_object().expect("arrow_left_out");
    assert_eq!(left_out.keys().collect::<Vec<_>>(), ["obj", "z"], "{meta}");
    let header = std::fs::read_to_string(root.join("objcol.b2d/table.csv")).unwrap();
    assert_eq!(header.lines().next(), Some("k"));
    // The damaged table: neither file can be sized or opened, the next
    // listing leaves them out, the log names the file and the problem,
    // and the mount reads on.
    for file in ["table.csv", "table.arrow"] {
        let e = std::fs::metadata(root.join("damaged.b2d").join(file)).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound, "{file}");
        let log = mount.log_text();
        assert!(
            log.lines()
                .any(|l| l.contains("damaged.b2d") && l.contains(file) && l.contains("_cols/g")),
            "{file}: {log}"
        );
    }
    let listed = names(&root.join("damaged.b2d"));
    assert!(
        !listed.iter().any(|n| n.starts_with("table.")),
        "{listed:?}"
    );
    assert!(std::fs::read(root.join("pandas.b2d/table.arrow")).is_ok());
}

#[test]
fn views_offer_the_table_files_by_name() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    if !have_readers("views_offer_the_table_files_by_name") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    python(&[
        repo_root()
            .join("scripts/gen/gen_tables.py")
            .to_str()
            .unwrap(),
        dir.path().to_str().unwrap(),
    ]);
    for (views, want) in [
        ("none", vec![]),
        ("csv", vec!["table.csv"]),
        ("arrow", vec!["table.arrow"]),
        ("table.csv,table.arrow", vec!["table.arrow", "table.csv"]),
    ] {
        let mount = Mount::start(dir.path(), &["--views", views]);
        let listed = names(&mount.path().join("pandas.b2d"));
        let files: Vec<&str> = listed
            .iter()
            .map(String::as_str)
            .filter(|n| n.starts_with("table."))
            .collect();
        assert_eq!(files, want, "--views {views}");
        for file in ["table.csv", "table.arrow"] {
            let path = mount.path().join("pandas.b2d").join(file);
            assert_eq!(
                path.exists(),
                want.contains(&file),
                "--views {views}: {file}"
            );
        }
    }
}
