//! The committed fixtures (written by scripts/gen/gen_fixtures.py with
//! python-blosc2 4.14.1) decode to exactly the bytes of their numpy source.

mod common;

use blosc2fs::format::chunk::Codec;
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
        let meta = blosc2fs::views::meta_json::render(&array);
        for key in ["itemsize", "nchunks", "storage"] {
            if meta[key] != entry[key] {
                failures.push(format!("{name}: {key} is {} not {}", meta[key], entry[key]));
            }
        }
        if meta["format"] != entry["kind"] {
            failures.push(format!(
                "{name}: format is {} not {}",
                meta["format"], entry["kind"]
            ));
        }
        if entry["kind"] != "frame" {
            for key in ["shape", "chunkshape", "blockshape", "dtype"] {
                if meta[key] != entry[key] {
                    failures.push(format!("{name}: {key} is {} not {}", meta[key], entry[key]));
                }
            }
        }
        if entry.get("codec").is_some() && meta["codec"] != entry["codec"] {
            failures.push(format!(
                "{name}: codec is {} not {}",
                meta["codec"], entry["codec"]
            ));
        }
        if let Some(vlmeta) = entry.get("vlmeta") {
            if &meta["vlmeta"] != vlmeta {
                failures.push(format!(
                    "{name}: vlmeta is {} not {}",
                    meta["vlmeta"], vlmeta
                ));
            }
        }
        match read_all(&array, 1 << 16) {
            Ok(bytes) => {
                if bytes.len() as u64 != entry["size"].as_u64().unwrap()
                    || sha256_hex(&bytes) != entry["sha256"].as_str().unwrap()
                {
                    failures.push(format!("{name}: wrong data bytes ({} bytes)", bytes.len()));
                }
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
        if let Some(chunks) = entry.get("chunk_sha256").and_then(|v| v.as_array()) {
            for (c, sha) in chunks.iter().enumerate() {
                match array.decode_chunk(c as u64) {
                    Ok(bytes) if sha256_hex(&bytes) == sha.as_str().unwrap() => {}
                    Ok(_) => failures.push(format!(
                        "{name}: chunk {c} decodes to other bytes than C-Blosc2"
                    )),
                    Err(e) => failures.push(format!("{name}: chunk {c}: {e}")),
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} problems in {} cases:\n{}",
        failures.len(),
        manifest.len(),
        failures.join("\n")
    );
    manifest.len()
}

#[test]
fn every_fixture_decodes_to_its_numpy_source() {
    let n = check_dir(&fixtures_dir());
    assert!(n >= 50, "only {n} fixtures");
}

/// The read layer recycles block buffers without clearing them, so every
/// decoder must write every byte of its output. Decode every block of every
/// fixture (and of the zfp and elsewhere-free store fixtures' arrays that
/// open) into buffers filled with two different poison bytes: a byte left
/// unwritten would differ between the two.
#[test]
fn every_block_decoder_overwrites_its_whole_output() {
    let mut checked = 0usize;
    let mut failures = Vec::new();
    for dir in [fixtures_dir(), fixtures_dir().join("zfp")] {
        let manifest = read_manifest(&dir);
        for (name, entry) in &manifest {
            let Ok(array) = open_array(&dir.join(entry["path"].as_str().unwrap())) else {
                continue;
            };
            for c in 0..array.nchunks() {
                let Ok(layout) = array.read_layout(c) else {
                    continue;
                };
                let mut block0 = None;
                for b in 0..layout.nblocks() as u64 {
                    let len = layout.block_range(b as usize).len();
                    let (mut a, mut z) = (vec![0xA5u8; len], vec![0x5Au8; len]);
                    let ra = array.decode_block(&layout, c, b, block0.as_deref(), &mut a);
                    let rz = array.decode_block(&layout, c, b, block0.as_deref(), &mut z);
                    match (ra, rz) {
                        (Ok(()), Ok(())) if a == z => checked += 1,
                        (Ok(()), Ok(())) => {
                            let at = a.iter().zip(&z).position(|(x, y)| x != y).unwrap();
                            failures.push(format!(
                                "{name}: chunk {c} block {b} leaves byte {at} of {len} unwritten"
                            ));
                        }
                        (Err(ea), Err(ez)) if ea.to_string() == ez.to_string() => {}
                        (ra, rz) => {
                            failures.push(format!("{name}: chunk {c} block {b}: {ra:?} vs {rz:?}"))
                        }
                    }
                    if b == 0 && layout.needs_block0() {
                        block0 = Some(a);
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked > 1000, "only {checked} blocks checked");
}

/// `visit(name, array, layout, chunk)` for every chunk whose layout reads,
/// of every fixture in `dir` that opens.
fn for_each_chunk(
    dir: &std::path::Path,
    mut visit: impl FnMut(&str, &blosc2fs::format::Array, &blosc2fs::format::ChunkLayout, u64),
) {
    for (name, entry) in &read_manifest(dir) {
        let Ok(array) = open_array(&dir.join(entry["path"].as_str().unwrap())) else {
            continue;
        };
        for c in 0..array.nchunks() {
            if let Ok(layout) = array.read_layout(c) {
                visit(name, &array, &layout, c);
            }
        }
    }
}

/// A random read's block decoded with a helper thread taking some of its
/// streams (zstd and zlib blocks split into streams) is the same block,
/// for every block of every fixture.
#[test]
fn every_block_decodes_the_same_with_a_decode_helper() {
    let helpers = blosc2fs::read::helper::DecodeHelpers::for_cores(2).expect("a helper thread");
    let mut forked = 0usize;
    let mut failures = Vec::new();
    for_each_chunk(&fixtures_dir(), |name, array, layout, c| {
        let split = matches!(layout.header.codec(), Codec::Zstd | Codec::Zlib)
            && !layout.header.dont_split()
            && layout.header.typesize > 1;
        let mut block0 = None;
        for b in 0..layout.nblocks() as u64 {
            let len = layout.block_range(b as usize).len();
            let (mut one, mut two) = (vec![0xA5u8; len], vec![0x5Au8; len]);
            let r1 = array.decode_block(layout, c, b, block0.as_deref(), &mut one);
            let r2 = array.decode_block_forked(
                layout,
                c,
                b,
                block0.as_deref(),
                Some(&helpers),
                &mut two,
            );
            match (r1, r2) {
                (Ok(()), Ok(())) if one == two => forked += usize::from(split),
                (r1, r2) => failures.push(format!(
                    "{name}: chunk {c} block {b}: {r1:?} vs {r2:?}, same bytes: {}",
                    one == two
                )),
            }
            if b == 0 && layout.needs_block0() {
                block0 = Some(one);
            }
        }
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(forked > 100, "only {forked} split zstd/zlib blocks checked");
}

/// A small read of a byte-shuffled block unshuffles only the items it
/// reads: for every block of every fixture, windows at the start, in the
/// middle (across item boundaries) and at the end equal those bytes of the
/// whole decode, with and without a helper thread. Blocks the partial
/// decode does not handle answer false and leave the output untouched.
#[test]
fn every_shuffled_block_decodes_a_window_like_the_whole_block() {
    let helpers = blosc2fs::read::helper::DecodeHelpers::for_cores(2).expect("a helper thread");
    let (mut partial, mut whole_only) = (0usize, 0usize);
    let mut failures = Vec::new();
    for_each_chunk(&fixtures_dir(), |name, array, layout, c| {
        let mut block0 = None;
        for b in 0..layout.nblocks() as u64 {
            let len = layout.block_range(b as usize).len();
            let mut whole = vec![0u8; len];
            if array
                .decode_block(layout, c, b, block0.as_deref(), &mut whole)
                .is_err()
            {
                continue;
            }
            if b == 0 && layout.needs_block0() {
                block0 = Some(whole.clone());
            }
            let mid = len / 2;
            let windows = [
                (0, len.min(1)),
                (mid.saturating_sub(3), (len - mid.saturating_sub(3)).min(13)),
                (len.saturating_sub(7), len.min(7)),
                (0, len),
            ];
            for (fork, label) in [
                (None, "alone"),
                (
                    Some(&helpers as &dyn blosc2fs::format::Fork),
                    "with a helper",
                ),
            ] {
                for &(at, n) in &windows {
                    let mut got = vec![0xA5u8; n];
                    match array.decode_block_part_forked(layout, c, b, fork, at as u64, &mut got) {
                        Ok(true) if got == whole[at..at + n] => partial += 1,
                        Ok(false) if got.iter().all(|&x| x == 0xA5) => whole_only += 1,
                        other => failures.push(format!("{name}: chunk {c} block {b} bytes {at}+{n} {label}: {other:?}, same bytes: {}", got == whole[at..at + n])),
                    }
                }
            }
        }
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        partial > 500 && whole_only > 500,
        "{partial} windows decoded in part, {whole_only} left to whole decodes"
    );
}
