//! A table column's `items.jsonl` over more rows than one record batch
//! (issue 43), mounted for real: the file is rendered a batch of rows at a
//! time, and must equal what python-blosc2 reads, byte for byte.
//!
//! The fixture is `scripts/gen/gen_tables.py --long`'s: a table of 150,000
//! rows (three batches of at most 65,536 physical rows) with deleted rows
//! in each batch and across a batch boundary, and a nullable utf8, a
//! dictionary, a nullable fixed-width string and a nullable list column; beside it each
//! column's values as `CTable.to_arrow()` reads them, one compact JSON
//! line a live row (`long.b2d.expected/items/<column>.jsonl`). Checked:
//! reads at offsets in the middle of the file and across a batch boundary
//! (on a fresh mount, so the daemon renders those pieces alone), the whole
//! file line by line, its size, and a copy of the table with a damaged
//! column (its `items.jsonl` is not presented, the log names the file and
//! the part, the other columns read on).
//!
//! Skips (printing why) when python-blosc2 and pyarrow are not importable
//! from the oracle's Python (scripts/setup_venv.sh installs them).

mod common;

use std::os::unix::fs::FileExt;
use std::path::Path;

use common::mount::{serial_with_fuse, Mount};
use common::tables::{damaged_copy, gen_tables, have_modules, names};

/// The columns the fixture has an expected `items.jsonl` of.
const COLUMNS: [&str; 4] = ["name", "cat", "code", "tags"];

/// Live rows of the first batch: 65,536 physical rows less row 0 and rows
/// 65,000..65,535 (gen_tables.py's LONG_DELETED).
const FIRST_BATCH_ROWS: usize = 65_536 - 1 - 536;

fn expected(dir: &Path, column: &str) -> Vec<u8> {
    let path = dir.join(format!("long.b2d.expected/items/{column}.jsonl"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Where line `n` (from 0) of `text` starts.
fn line_start(text: &[u8], n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    text.iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .nth(n - 1)
        .map(|(i, _)| i + 1)
        .expect("that many lines")
}

/// Bytes `[offset, offset + len)` of `path`, read by one positioned read
/// after another until that many came (or the end).
fn pread(path: &Path, offset: usize, len: usize) -> Vec<u8> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = vec![0u8; len];
    let mut got = 0;
    while got < len {
        let n = file
            .read_at(&mut out[got..], (offset + got) as u64)
            .unwrap_or_else(|e| panic!("{} at {}: {e}", path.display(), offset + got));
        if n == 0 {
            break;
        }
        got += n;
    }
    out.truncate(got);
    out
}

/// The first line where `got` and `want` differ, for a message.
fn first_difference(got: &[u8], want: &[u8]) -> String {
    let lines = got.split(|&b| b == b'\n').zip(want.split(|&b| b == b'\n'));
    for (i, (g, w)) in lines.enumerate() {
        if g != w {
            return format!(
                "line {i}: got {} want {}",
                String::from_utf8_lossy(g),
                String::from_utf8_lossy(w)
            );
        }
    }
    format!("{} bytes, want {}", got.len(), want.len())
}

#[test]
fn a_long_columns_items_equal_python_blosc2s_reads_byte_for_byte() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let test = "a_long_columns_items_equal_python_blosc2s_reads_byte_for_byte";
    if !have_modules(test, &["blosc2", "pyarrow"]) {
        return;
    }
    let dir = gen_tables(&["--long"]);
    // A copy whose fixed-width string column has bytes flipped in the
    // middle of a chunk (only decoding it finds that out).
    let long = dir.path().join("long.b2d");
    damaged_copy(
        &long,
        &dir.path().join("damaged.b2d"),
        "_cols/code.b2nd",
        64,
    );

    let mount = Mount::start(dir.path(), &[]);
    let table = mount.path().join("long.b2d");
    // Positioned reads first, on a fresh mount: in the middle of the file,
    // and across the end of the first batch.
    for column in COLUMNS {
        let want = expected(dir.path(), column);
        let file = table.join(column).join("items.jsonl");
        let middle = want.len() / 2 + 7;
        assert_eq!(
            pread(&file, middle, 10_000),
            &want[middle..middle + 10_000],
            "{column}: 10,000 bytes at {middle}"
        );
        let boundary = line_start(&want, FIRST_BATCH_ROWS - 3);
        let end = line_start(&want, FIRST_BATCH_ROWS + 3);
        assert_eq!(
            pread(&file, boundary, end - boundary),
            &want[boundary..end],
            "{column}: the lines around the first batch's end"
        );
    }
    // The whole files, and their sizes.
    for column in COLUMNS {
        let want = expected(dir.path(), column);
        let file = table.join(column).join("items.jsonl");
        let got = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(got == want, "{column}: {}", first_difference(&got, &want));
        assert_eq!(
            std::fs::metadata(&file).unwrap().len(),
            want.len() as u64,
            "{column}"
        );
        let meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(table.join(column).join("meta.json")).unwrap())
                .unwrap();
        let about = meta.get("column").unwrap_or(&meta);
        assert_eq!(about["rows"], 148_979, "{column}: {meta}");
        assert!(about.get("items_error").is_none(), "{column}: {meta}");
        // 150,000 physical rows: three batches of at most 65,536.
        assert_eq!(about["items"]["batches"], 3, "{column}: {meta}");
    }
    // The damaged column: no items.jsonl (its size cannot be measured,
    // and the listing leaves it out once that failed), the log names the
    // file and the part, and the table's other columns read on.
    let broken = mount.path().join("damaged.b2d/code/items.jsonl");
    let e = std::fs::metadata(&broken).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound, "{e}");
    let log = mount.log_text();
    assert!(
        log.lines().any(|l| l.contains("damaged.b2d")
            && l.contains("code/items.jsonl")
            && l.contains("_cols/code")),
        "{log}"
    );
    let listed = names(&mount.path().join("damaged.b2d/code"));
    assert!(!listed.iter().any(|n| n == "items.jsonl"), "{listed:?}");
    assert_eq!(
        std::fs::read(mount.path().join("damaged.b2d/name/items.jsonl")).unwrap(),
        expected(dir.path(), "name")
    );
}
