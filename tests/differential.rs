//! Differential test: random shapes, chunk/block shapes, dtypes, codecs and
//! filters written by python-blosc2 4.14.1 now, compared with the numpy
//! source data. The seed is random per run (printed) unless
//! BLOSC2FS_DIFF_SEED is set; BLOSC2FS_DIFF_CASES sets the count.

mod common;

use std::process::Command;

use blosc2fs::source::open_array;
use common::mount::python;
use common::*;

#[test]
fn random_arrays_match_numpy() {
    let (seed, cases) = seed_and_cases(
        "differential",
        "BLOSC2FS_DIFF_SEED",
        "BLOSC2FS_DIFF_CASES",
        150,
    );
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new(python())
        .arg(repo_root().join("scripts/gen/gen_fixtures.py"))
        .args(["--random", &cases.to_string(), "--seed", &seed.to_string()])
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(status.success(), "gen_fixtures.py failed");
    let manifest = read_manifest(dir.path());
    // The generator drops the rare cases C-Blosc2 itself cannot write or read back.
    assert!(
        manifest.len() as u64 * 100 >= cases * 95,
        "only {} of {cases} cases written",
        manifest.len()
    );
    let mut failures = Vec::new();
    for (name, entry) in &manifest {
        let path = dir.path().join(entry["path"].as_str().unwrap());
        let result = open_array(&path).map_err(|e| e.to_string()).and_then(|a| {
            let bytes = read_all(&a, 4099).map_err(|e| e.to_string())?;
            Ok((blosc2fs::views::meta_json::render(&a), bytes))
        });
        match result {
            Ok((meta, bytes)) => {
                if sha256_hex(&bytes) != entry["sha256"].as_str().unwrap()
                    || bytes.len() as u64 != entry["size"].as_u64().unwrap()
                {
                    failures.push(format!("{name}: wrong bytes; case {entry}"));
                }
                if entry["kind"] != "frame" && meta["shape"] != entry["shape"] {
                    failures.push(format!(
                        "{name}: shape {} vs {}",
                        meta["shape"], entry["shape"]
                    ));
                }
            }
            Err(e) => failures.push(format!("{name}: {e}; case {entry}")),
        }
    }
    assert!(
        failures.is_empty(),
        "seed {seed}: {} of {} failed:\n{}",
        failures.len(),
        manifest.len(),
        failures.join("\n")
    );
}
