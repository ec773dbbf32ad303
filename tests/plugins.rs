//! Plugin codecs 36-40 (JPEG 2000, HTJ2K, OpenZL) read exactly as python-blosc2 reads them.
//!
//! The fixtures in tests/fixtures/plugins were written by the plugins
//! themselves (scripts/gen/gen_plugin_fixtures.py, in venvs of their own), and
//! the manifest holds python-blosc2's decode of each: the whole array in C
//! order and each chunk as `SChunk.decompress_chunk` returns it. Codecs
//! blosc2fs decodes must match those bytes; the others must be refused with
//! the plugin named, never served as made-up bytes.

mod common;

use blosc2fs::format::codec_support;
use blosc2fs::source::open_array;
use common::*;

#[test]
fn plugin_fixtures_read_exactly_or_are_refused() {
    let dir = fixtures_dir().join("plugins");
    let manifest = read_manifest(&dir);
    assert!(
        manifest.len() >= 20,
        "only {} plugin fixtures",
        manifest.len()
    );
    let mut failures = Vec::new();
    let mut decoded = 0;
    for (name, entry) in &manifest {
        let path = dir.join(entry["path"].as_str().unwrap());
        let array = match open_array(&path) {
            Ok(a) => a,
            Err(e) => {
                failures.push(format!("{name}: open: {e}"));
                continue;
            }
        };
        let meta = blosc2fs::views::meta_json::render(&array);
        for key in ["shape", "chunkshape", "blockshape", "codec"] {
            if meta[key] != entry[key] {
                failures.push(format!("{name}: {key} is {} not {}", meta[key], entry[key]));
            }
        }
        let id = entry["codec_id"].as_u64().unwrap() as u8;
        let support = codec_support(id);
        if meta["decodable"] != support.decoded() {
            failures.push(format!(
                "{name}: meta.json decodable is {}",
                meta["decodable"]
            ));
        }
        if !support.decoded() {
            match read_all(&array, 1 << 16) {
                // Chunks the codec could not shrink are stored raw and need no codec.
                Ok(bytes) if sha256_hex(&bytes) == entry["sha256"].as_str().unwrap() => {}
                Ok(_) => failures.push(format!("{name}: read although codec {id} is refused")),
                Err(e) if e.to_string().contains("blosc2-") => {}
                Err(e) => failures.push(format!("{name}: refusal does not name the plugin: {e}")),
            }
            continue;
        }
        decoded += 1;
        match read_all(&array, 1 << 16) {
            Ok(bytes) => {
                if bytes.len() as u64 != entry["size"].as_u64().unwrap()
                    || sha256_hex(&bytes) != entry["sha256"].as_str().unwrap()
                {
                    failures.push(format!("{name}: data differs from python-blosc2's read"));
                }
            }
            Err(e) => failures.push(format!("{name}: read: {e}")),
        }
        for (c, sha) in entry["chunk_sha256"].as_array().unwrap().iter().enumerate() {
            match array.decode_chunk(c as u64) {
                Ok(bytes) if sha256_hex(&bytes) == sha.as_str().unwrap() => {}
                Ok(_) => failures.push(format!("{name}: chunk {c} differs from python-blosc2's")),
                Err(e) => failures.push(format!("{name}: chunk {c}: {e}")),
            }
        }
    }
    assert!(decoded >= 13, "only {decoded} fixtures of decoded codecs");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
