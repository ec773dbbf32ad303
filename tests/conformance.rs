//! Every file from C-Blosc2's own repository decodes to the bytes C-Blosc2
//! produces (sha256 in `../shared/conformance/c-blosc2/manifest.json`).

mod common;

use blosc2fs::format::chunk::decode_chunk;
use blosc2fs::format::Array;
use common::*;

#[test]
fn every_conformance_file_decodes_exactly() {
    let dir = conformance_dir();
    let manifest = read_manifest(&dir);
    assert!(manifest.len() >= 30, "manifest has {} entries", manifest.len());
    let mut failures = Vec::new();
    for (name, entry) in &manifest {
        let path = dir.join(name);
        let kind = entry["kind"].as_str().unwrap();
        let bytes = match kind {
            "chunk" => decode_chunk(&std::fs::read(&path).unwrap()).map_err(|e| e.to_string()),
            _ => Array::open(&path)
                .map_err(|e| e.to_string())
                .and_then(|a| read_all(&a, 1 << 20).map_err(|e| e.to_string())),
        };
        match bytes {
            Ok(bytes) => {
                if bytes.len() as u64 != entry["size"].as_u64().unwrap() || sha256_hex(&bytes) != entry["sha256"].as_str().unwrap() {
                    failures.push(format!("{name}: wrong bytes ({} bytes)", bytes.len()));
                }
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{} of {} failed:\n{}", failures.len(), manifest.len(), failures.join("\n"));
}

#[test]
fn conformance_metadata_matches_manifest() {
    let dir = conformance_dir();
    for (name, entry) in &read_manifest(&dir) {
        let kind = entry["kind"].as_str().unwrap();
        if kind == "chunk" {
            continue;
        }
        let array = Array::open(&dir.join(name)).unwrap_or_else(|e| panic!("{e}"));
        let meta = array.meta_json();
        assert_eq!(meta["nchunks"], entry["nchunks"], "{name}");
        if kind == "b2nd" {
            assert_eq!(meta["format"], "b2nd", "{name}");
            assert_eq!(meta["shape"], entry["shape"], "{name}");
            assert_eq!(meta["chunkshape"], entry["chunkshape"], "{name}");
            assert_eq!(meta["blockshape"], entry["blockshape"], "{name}");
            assert_eq!(meta["dtype"], entry["dtype"], "{name}");
        } else {
            assert_eq!(meta["format"], "frame", "{name}");
            assert_eq!(meta["itemsize"], entry["typesize"], "{name}");
        }
    }
}

#[test]
fn c_api_dtype_disagreement_is_reported() {
    let array = Array::open(&conformance_dir().join("example_day_month_temp.b2nd")).unwrap();
    let meta = array.meta_json();
    assert_eq!(meta["dtype"], "|u1");
    assert_eq!(meta["itemsize"], 4);
    assert_eq!(meta["dtype_itemsize"], 1);
    assert!(meta["note"].as_str().unwrap().contains("typesize is 4"));
    // The layout follows the typesize: 400 x 3 items of 4 bytes.
    assert_eq!(array.data_len(), 400 * 3 * 4);
}
