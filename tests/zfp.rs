//! ZFP (codecs 33-35) decodes to exactly C-Blosc2's bytes.
//!
//! The expected bytes are C-Blosc2's own decode, recorded by
//! scripts/gen/gen_zfp_fixtures.py while writing each file (ZFP is lossy, so
//! the numpy source is no oracle): the whole array in C order, and each
//! chunk as `SChunk.decompress_chunk` returns it. Two tests: the committed
//! fixtures in tests/fixtures/zfp, and random cases written now (seed
//! printed; BLOSC2FS_ZFP_SEED replays one, BLOSC2FS_ZFP_CASES sets the count).

mod common;

use std::path::Path;
use std::process::Command;

use common::mount::python;
use common::*;

/// Check every case of `dir`'s manifest; returns the failures.
fn check_dir(dir: &Path) -> (usize, Vec<String>) {
    let manifest = read_manifest(dir);
    let mut failures = Vec::new();
    for (name, entry) in &manifest {
        let Some((array, _)) = open_fixture(dir, name, entry, &mut failures) else {
            continue;
        };
        match read_all(&array, 1 << 16) {
            Ok(bytes) => {
                if bytes.len() as u64 != entry["size"].as_u64().unwrap()
                    || sha256_hex(&bytes) != entry["sha256"].as_str().unwrap()
                {
                    failures.push(format!(
                        "{name}: data differs from C-Blosc2's decode; case {entry}"
                    ));
                }
            }
            Err(e) => failures.push(format!("{name}: read: {e}; case {entry}")),
        }
        for (c, sha) in entry["chunk_sha256"].as_array().unwrap().iter().enumerate() {
            match array.decode_chunk(c as u64) {
                Ok(bytes) if sha256_hex(&bytes) == sha.as_str().unwrap() => {}
                Ok(_) => failures.push(format!("{name}: chunk {c} differs from C-Blosc2's decode")),
                Err(e) => failures.push(format!("{name}: chunk {c}: {e}")),
            }
        }
    }
    (manifest.len(), failures)
}

#[test]
fn committed_zfp_fixtures_decode_exactly() {
    let dir = fixtures_dir().join("zfp");
    let (n, failures) = check_dir(&dir);
    assert!(n >= 40, "only {n} ZFP fixtures");
    assert!(
        failures.is_empty(),
        "{} of {n} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn random_zfp_arrays_match_c_blosc2() {
    let (seed, cases) = seed_and_cases(
        "zfp differential",
        "BLOSC2FS_ZFP_SEED",
        "BLOSC2FS_ZFP_CASES",
        60,
    );
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new(python())
        .arg(repo_root().join("scripts/gen/gen_zfp_fixtures.py"))
        .args(["--random", &cases.to_string(), "--seed", &seed.to_string()])
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(status.success(), "gen_zfp_fixtures.py failed");
    let (n, failures) = check_dir(dir.path());
    // The generator skips the cases C-Blosc2 itself refuses to write (or crashes on).
    assert!(
        n as u64 * 100 >= cases * 70,
        "only {n} of {cases} cases written"
    );
    assert!(
        failures.is_empty(),
        "seed {seed}: {} of {n} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
