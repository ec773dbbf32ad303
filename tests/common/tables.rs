//! What the table suites (tests/tables.rs, tables_render.rs, table_items.rs)
//! share: whether the oracle's Python can write and read tables, the
//! fixtures scripts/gen/gen_tables.py writes with python-blosc2, a copy of
//! a table with one stored column damaged, and sorted folder listings.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{oracle_python, repo_root};

/// Whether the oracle's Python imports every module of `modules`; prints
/// why `test` skips when it does not.
pub fn have_modules(test: &str, modules: &[&str]) -> bool {
    let out = Command::new(oracle_python())
        .args(["-c", &format!("import {}", modules.join(", "))])
        .output()
        .expect("run python");
    if !out.status.success() {
        eprintln!(
            "SKIP {test}: one of {} is not importable from {} (run scripts/setup_venv.sh): {}",
            modules.join(", "),
            oracle_python().display(),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
    }
    out.status.success()
}

/// Run the oracle's Python with `args`; its stdout. Panics with its output
/// when it fails.
pub fn python(args: &[&str]) -> String {
    let out = Command::new(oracle_python())
        .args(args)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "python {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A temporary folder holding what `gen_tables.py [flags] DIR` writes: the
/// fixtures and python-blosc2's own reads of them.
pub fn gen_tables(flags: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let script = repo_root().join("scripts/gen/gen_tables.py");
    let mut args = vec![script.to_str().unwrap()];
    args.extend_from_slice(flags);
    args.push(dir.path().to_str().unwrap());
    python(&args);
    dir
}

/// A copy of the table folder `table` at `to` whose stored part `part`
/// (a path under it) has `len` bytes flipped in its middle, where only
/// decoding finds them. Returns the damaged file.
pub fn damaged_copy(table: &Path, to: &Path, part: &str, len: usize) -> PathBuf {
    copy_dir(table, to);
    let file = to.join(part);
    let mut bytes = std::fs::read(&file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle..middle + len]
        .iter_mut()
        .for_each(|b| *b ^= 0xff);
    std::fs::write(&file, bytes).unwrap();
    file
}

/// Copy the folder `from` to `to`, recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// The names in folder `dir`, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
