//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod fault_proxy;
pub mod inproc;
pub mod lake;
pub mod moto;
pub mod mount;
#[path = "../../src/test_rng.rs"]
pub mod rng;
pub mod tables;

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `$BLOSC2FS_CONFORMANCE`, else `../shared/conformance/c-blosc2` beside the
/// checkout, else `/work/shared/conformance/c-blosc2`; panics if none exists.
pub fn conformance_dir() -> PathBuf {
    let candidates = [
        std::env::var_os("BLOSC2FS_CONFORMANCE").map(PathBuf::from),
        Some(repo_root().join("../shared/conformance/c-blosc2")),
        Some(PathBuf::from("/work/shared/conformance/c-blosc2")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|p| p.join("manifest.json").is_file())
        .expect("C-Blosc2 conformance files not found: set BLOSC2FS_CONFORMANCE or place them in ../shared/conformance/c-blosc2")
}

pub fn fixtures_dir() -> PathBuf {
    repo_root().join("tests/fixtures")
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn read_manifest(dir: &Path) -> serde_json::Map<String, serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("manifest.json"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    match serde_json::from_str(&text).expect("manifest is JSON") {
        serde_json::Value::Object(map) => map,
        _ => panic!("manifest is not an object"),
    }
}

/// Open manifest entry `name` (`entry`) of fixture folder `dir` and check
/// the layout its meta.json gives (shape, chunk and block shapes, codec)
/// against the manifest, pushing what differs onto `failures`: the array
/// and its meta.json, or `None` (a failure pushed) when it does not open.
pub fn open_fixture(
    dir: &Path,
    name: &str,
    entry: &serde_json::Value,
    failures: &mut Vec<String>,
) -> Option<(blosc2fs::format::Array, serde_json::Value)> {
    let path = dir.join(entry["path"].as_str().unwrap());
    let array = match blosc2fs::source::open_array(&path) {
        Ok(a) => a,
        Err(e) => {
            failures.push(format!("{name}: open: {e}"));
            return None;
        }
    };
    let meta = blosc2fs::views::meta_json::render(&array);
    for key in ["shape", "chunkshape", "blockshape", "codec"] {
        if meta[key] != entry[key] {
            failures.push(format!("{name}: {key} is {} not {}", meta[key], entry[key]));
        }
    }
    Some((array, meta))
}

/// Every file under `root` but a mount's `.stats` (its counters change
/// from one read to the next), read whole, by path relative to `root`.
pub fn read_tree(root: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = e.unwrap().path();
            if path.file_name().is_some_and(|n| n == ".stats") {
                continue;
            }
            if path.is_dir() {
                todo.push(path);
            } else {
                let bytes =
                    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                out.insert(path.strip_prefix(root).unwrap().to_path_buf(), bytes);
            }
        }
    }
    out
}

/// The array's C-order bytes, read in windows of `step` bytes.
pub fn read_all(
    array: &blosc2fs::format::Array,
    step: u64,
) -> Result<Vec<u8>, blosc2fs::format::Problem> {
    let total = array.data_len();
    let mut out = vec![0u8; total as usize];
    let mut pos = 0u64;
    while pos < total {
        let n = step.min(total - pos);
        blosc2fs::read::read_uncached(
            array,
            blosc2fs::format::Region::Data,
            pos,
            &mut out[pos as usize..(pos + n) as usize],
        )?;
        pos += n;
    }
    Ok(out)
}

/// The oracle's Python: `$BLOSC2FS_PYTHON`, the repo's `.venv`, or one made
/// by `scripts/setup_venv.sh`.
pub fn oracle_python() -> PathBuf {
    if let Some(p) = std::env::var_os("BLOSC2FS_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = repo_root().join(".venv/bin/python");
    if venv.exists() {
        return venv;
    }
    let out = std::process::Command::new(repo_root().join("scripts/setup_venv.sh"))
        .output()
        .expect("run scripts/setup_venv.sh");
    assert!(
        out.status.success(),
        "scripts/setup_venv.sh failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("bin/python")
}

/// The saved lazy expressions of `scripts/gen/gen_expressions.py`, written
/// now by `python` (python-blosc2 4.14.1) into `dir`: the arrays under
/// `dir/src`, python-blosc2's own values under `dir/expected`, the cases in
/// `dir/manifest.json`. Panics with the script's stderr when it fails.
pub fn gen_expressions(python: &Path, dir: &Path) {
    let out = std::process::Command::new(python)
        .arg(repo_root().join("scripts/gen/gen_expressions.py"))
        .arg(dir)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", python.display()));
    assert!(
        out.status.success(),
        "gen_expressions.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One value of the committed store fixtures, as a mount presents it.
pub struct StoreValue {
    /// `STORE/KEY`, e.g. `dict.b2z/dir/x`: what a failure names.
    pub label: String,
    /// The value's `data` file under the folder holding the stores.
    pub data: PathBuf,
    /// Its expected sha256 (tests/fixtures/stores/manifest.json).
    pub sha256: String,
}

/// Every value of the store fixtures named in `stores` (all of them when
/// `stores` is empty), with its `data` file under `root`, the folder that
/// presents `tests/fixtures/stores` (a mount of it, or of a copy).
pub fn store_values(root: &Path, stores: &[&str]) -> Vec<StoreValue> {
    let manifest = read_manifest(&fixtures_dir().join("stores"));
    let all = manifest["stores"]
        .as_object()
        .expect("stores in the manifest");
    let mut out = Vec::new();
    for (store, entry) in all {
        if !stores.is_empty() && !stores.contains(&store.as_str()) {
            continue;
        }
        for (key, info) in entry["keys"].as_object().expect("keys of a store") {
            out.push(StoreValue {
                label: format!("{store}{key}"),
                data: root
                    .join(store)
                    .join(key.trim_start_matches('/'))
                    .join("data"),
                sha256: info["sha256"]
                    .as_str()
                    .expect("sha256 of a key")
                    .to_string(),
            });
        }
    }
    out
}

/// A random test's seed and case count: `SEED_VAR` and `CASES_VAR` from the
/// environment (to replay a run), else a seed from the clock and
/// `default_cases`. Prints how to replay the run.
pub fn seed_and_cases(
    what: &str,
    seed_var: &str,
    cases_var: &str,
    default_cases: u64,
) -> (u64, u64) {
    let seed: u64 = std::env::var(seed_var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64 % 1_000_000)
                .unwrap_or(1)
        });
    let cases: u64 = std::env::var(cases_var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default_cases);
    eprintln!("{what} seed {seed}, {cases} cases ({seed_var}={seed} to replay)");
    (seed, cases)
}
