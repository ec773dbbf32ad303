//! The committed fixtures (written by scripts/gen_fixtures.py with
//! python-blosc2 4.14.1) decode to exactly the bytes of their numpy source.

mod common;

use blosc2fs::source::open_array;
use common::*;

fn check_dir(dir: &std::path::Path) -> usize {
    let manifest = read_manifest(dir);
    let mut failures = Vec::new();
    for (name, entry) in &manifest {
        let path = dir.join(entry["path"].as_str().unwrap());
        let array = match open_array(&path) {
            Ok(a) => a,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let meta = blosc2fs::tree::meta_json::render(&array);
        for key in ["itemsize", "nchunks", "storage"] {
            if meta[key] != entry[key] {
                failures.push(format!("{name}: {key} is {} not {}", meta[key], entry[key]));
            }
        }
        if meta["format"] != entry["kind"] {
            failures.push(format!("{name}: format is {} not {}", meta["format"], entry["kind"]));
        }
        if entry["kind"] != "frame" {
            for key in ["shape", "chunkshape", "blockshape", "dtype"] {
                if meta[key] != entry[key] {
                    failures.push(format!("{name}: {key} is {} not {}", meta[key], entry[key]));
                }
            }
        }
        if entry.get("codec").is_some() && meta["codec"] != entry["codec"] {
            failures.push(format!("{name}: codec is {} not {}", meta["codec"], entry["codec"]));
        }
        if let Some(vlmeta) = entry.get("vlmeta") {
            if &meta["vlmeta"] != vlmeta {
                failures.push(format!("{name}: vlmeta is {} not {}", meta["vlmeta"], vlmeta));
            }
        }
        match read_all(&array, 1 << 16) {
            Ok(bytes) => {
                if bytes.len() as u64 != entry["size"].as_u64().unwrap() || sha256_hex(&bytes) != entry["sha256"].as_str().unwrap() {
                    failures.push(format!("{name}: wrong data bytes ({} bytes)", bytes.len()));
                }
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
        if let Some(chunks) = entry.get("chunk_sha256").and_then(|v| v.as_array()) {
            for (c, sha) in chunks.iter().enumerate() {
                match array.decode_chunk(c as u64) {
                    Ok(bytes) if sha256_hex(&bytes) == sha.as_str().unwrap() => {}
                    Ok(_) => failures.push(format!("{name}: chunk {c} decodes to other bytes than C-Blosc2")),
                    Err(e) => failures.push(format!("{name}: chunk {c}: {e}")),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} problems in {} cases:\n{}", failures.len(), manifest.len(), failures.join("\n"));
    manifest.len()
}

#[test]
fn every_fixture_decodes_to_its_numpy_source() {
    let n = check_dir(&fixtures_dir());
    assert!(n >= 50, "only {n} fixtures");
}
