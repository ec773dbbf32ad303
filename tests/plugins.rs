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
use common::mount::{run_python, serial_with_fuse, Mount};
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
        let Some((array, meta)) = open_fixture(&dir, name, entry, &mut failures) else {
            continue;
        };
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
    // 13 JPEG 2000 / HTJ2K fixtures, and the 6 OpenZL ones where the build
    // has OpenZL (the default feature `openzl-c`).
    let want = if codec_support(38).decoded() { 19 } else { 13 };
    assert!(decoded >= want, "only {decoded} fixtures of decoded codecs");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Through a real mount: `data`, `data.npy` and every file of `chunks/` of
/// each decoded fixture hold python-blosc2's bytes, and `preview.png` is
/// the preview of those same values (an array numpy wrote from the mounted
/// `data.npy` with a classic codec, mounted beside it, previews the same);
/// the refused ones answer EIO.
#[test]
fn plugin_arrays_read_exactly_through_a_mount() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let dir = fixtures_dir().join("plugins");
    let manifest = read_manifest(&dir);
    let m = Mount::start(&dir, &["--cache-size", "64M"]);
    let copies = tempfile::tempdir().unwrap();
    let mut previews = Vec::new();
    for (name, entry) in &manifest {
        let at = m.path().join(entry["path"].as_str().unwrap());
        let id = entry["codec_id"].as_u64().unwrap() as u8;
        if !codec_support(id).decoded() {
            // EIO, unless every chunk was stored raw (the codec could not shrink it).
            match std::fs::read(at.join("data")) {
                Ok(bytes) => assert_eq!(
                    sha256_hex(&bytes),
                    entry["sha256"].as_str().unwrap(),
                    "{name}"
                ),
                Err(e) => assert_eq!(e.raw_os_error(), Some(libc::EIO), "{name}: {e}"),
            }
            continue;
        }
        let data = std::fs::read(at.join("data")).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            sha256_hex(&data),
            entry["sha256"].as_str().unwrap(),
            "{name}: data"
        );
        let npy = std::fs::read(at.join("data.npy")).unwrap();
        assert!(npy.starts_with(b"\x93NUMPY"), "{name}: data.npy");
        assert_eq!(
            sha256_hex(&npy[npy.len() - data.len()..]),
            entry["sha256"].as_str().unwrap(),
            "{name}: data.npy"
        );
        // chunks/ holds one file per chunk, named by its grid position (and .zarray).
        let mut chunks: Vec<(Vec<u64>, std::path::PathBuf)> = std::fs::read_dir(at.join("chunks"))
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| {
                let key = e
                    .file_name()
                    .to_string_lossy()
                    .split('.')
                    .map(|p| p.parse().unwrap())
                    .collect();
                (key, e.path())
            })
            .collect();
        chunks.sort();
        let expected = entry["chunk_sha256"].as_array().unwrap();
        assert_eq!(chunks.len(), expected.len(), "{name}: chunks/");
        for ((_, path), sha) in chunks.iter().zip(expected) {
            let bytes = std::fs::read(path).unwrap();
            assert_eq!(
                sha256_hex(&bytes),
                sha.as_str().unwrap(),
                "{name}: {}",
                path.display()
            );
        }
        if at.join("preview.png").exists() {
            let png = std::fs::read(at.join("preview.png"))
                .unwrap_or_else(|e| panic!("{name}: preview.png: {e}"));
            assert!(png.starts_with(b"\x89PNG"), "{name}: preview.png");
            let chunkshape: Vec<String> = entry["chunkshape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.to_string())
                .collect();
            run_python(
                "import sys, blosc2, numpy as np\n\
                 a = np.load(sys.argv[1])\n\
                 chunks = tuple(int(c) for c in sys.argv[3].split(','))\n\
                 blosc2.asarray(a, chunks=chunks, urlpath=sys.argv[2], mode='w', cparams={'codec': blosc2.Codec.ZSTD})\n",
                &[
                    at.join("data.npy").to_str().unwrap(),
                    copies.path().join(entry["path"].as_str().unwrap()).to_str().unwrap(),
                    &chunkshape.join(","),
                ],
            );
            previews.push((
                name.clone(),
                entry["path"].as_str().unwrap().to_string(),
                png,
            ));
        }
    }
    drop(m);
    assert!(previews.len() >= 10, "only {} previews", previews.len());
    let copy_mount = Mount::start(copies.path(), &[]);
    for (name, path, png) in previews {
        let want = std::fs::read(copy_mount.path().join(&path).join("preview.png")).unwrap();
        assert!(
            want == png,
            "{name}: preview.png differs from the preview of the same values"
        );
    }
}

/// Truncated codestreams, images larger than their block and float blocks
/// of the wrong size (tests/fuzz_regressions/codecs-*j2k*, cut from the
/// fixtures' own payloads) are errors, never partly decoded images.
#[test]
fn hostile_jpeg2000_payloads_are_errors() {
    let dir = repo_root().join("tests/fuzz_regressions");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !(name.starts_with("codecs-") && (name.contains("j2k") || name.contains("grok"))) {
            continue;
        }
        // The fuzz harness's layout: op byte, output length, codec selector, payload.
        let data = std::fs::read(&path).unwrap();
        let raw = u16::from_le_bytes([data[1], data[2]]);
        let out_len = if raw & 0x8000 != 0 {
            ((raw & 0x7fff) as usize) << 5
        } else {
            raw as usize
        };
        let id = [36u8, 37, 39, 40][data[3] as usize % 4];
        let mut dst = vec![0u8; out_len];
        match blosc2fs::format::codec::jpeg2000::decompress(id, &data[4..], &mut dst) {
            Ok(()) => panic!("{name}: decoded"),
            Err(e) => assert!(!e.to_string().is_empty()),
        }
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} hostile payloads");
}

/// Every cut of a whole codestream (j2k's JP2, grok's raw J2K, an HTJ2K one)
/// is an error: JPEG 2000 decoders can decode a truncated codestream to a
/// blurred image, and that is not what the file holds. The whole payloads
/// are those of the `*-image-larger-than-block` regressions (chunk 0 of the
/// fixture named first), which decode to python-blosc2's chunk 0 in a
/// block of the right size.
#[test]
fn every_truncation_of_a_codestream_is_an_error() {
    use blosc2fs::format::codec::jpeg2000::decompress;
    let manifest = read_manifest(&fixtures_dir().join("plugins"));
    for (fixture, regression, id) in [
        (
            "j2k_gray_u2_stack",
            "codecs-j2k-image-larger-than-block.bin",
            39u8,
        ),
        (
            "grok_gray_u2_j2k",
            "codecs-grok-raw-j2k-image-larger-than-block.bin",
            37,
        ),
        (
            "htj2k_gray_u2_stack",
            "codecs-htj2k-image-larger-than-block.bin",
            40,
        ),
    ] {
        let data =
            std::fs::read(repo_root().join("tests/fuzz_regressions").join(regression)).unwrap();
        let payload = &data[4..];
        let entry = &manifest[fixture];
        let size = entry["size"].as_u64().unwrap() as usize
            / entry["chunk_sha256"].as_array().unwrap().len();
        let mut dst = vec![0u8; size];
        decompress(id, payload, &mut dst).unwrap();
        assert_eq!(
            sha256_hex(&dst),
            entry["chunk_sha256"][0].as_str().unwrap(),
            "{fixture}"
        );
        let mut cuts = 0;
        for cut in (1..payload.len()).step_by(payload.len() / 97 + 1) {
            let result = decompress(id, &payload[..cut], &mut dst);
            assert!(
                result.is_err(),
                "{fixture}: cut at {cut} of {} decoded",
                payload.len()
            );
            cuts += 1;
        }
        assert!(cuts > 90, "{cuts}");
    }
}

/// `blosc2fs cat` of every decoded fixture writes python-blosc2's bytes.
#[test]
fn cat_writes_python_blosc2s_bytes_for_every_decoded_plugin_array() {
    let dir = fixtures_dir().join("plugins");
    let mut checked = 0;
    for (name, entry) in &read_manifest(&dir) {
        let id = entry["codec_id"].as_u64().unwrap() as u8;
        if !codec_support(id).decoded() {
            continue;
        }
        let out = std::process::Command::new(common::mount::binary())
            .arg("cat")
            .arg(dir.join(entry["path"].as_str().unwrap()))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            sha256_hex(&out.stdout),
            entry["sha256"].as_str().unwrap(),
            "{name}: cat"
        );
        checked += 1;
    }
    assert!(checked >= 13, "only {checked}");
}

/// Where the OpenZL frame of a fixture's block `n` (counting the blocks
/// that went through OpenZL) starts, and its stream's size field: the
/// frame follows its 4-byte compressed size.
fn openzl_frame_at(bytes: &[u8], n: usize) -> (usize, usize) {
    let magic = [0xa5u8, 0xb1, 0xd7];
    let at = bytes
        .windows(4)
        .enumerate()
        .filter(|(_, w)| w[1..] == magic && (0xc8..=0xdb).contains(&w[0]))
        .map(|(i, _)| i)
        .nth(n)
        .expect("OpenZL frame");
    let csize = i32::from_le_bytes(bytes[at - 4..at].try_into().unwrap());
    (at, csize as usize)
}

/// A damaged OpenZL block gives EIO for the reads that need it, with the
/// file named in the daemon's log and in `cat`'s message, while its other
/// chunks and the other arrays keep reading exactly: a frame cut short
/// (its stream's size field halved), a frame whose magic was overwritten,
/// and a flipped byte inside a frame with checksums (codec_meta 16).
#[test]
fn damaged_openzl_blocks_give_eio_and_the_mount_keeps_serving() {
    if !codec_support(38).decoded() {
        return;
    }
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let dir = fixtures_dir().join("plugins");
    let manifest = read_manifest(&dir);
    let src = tempfile::tempdir().unwrap();
    let intact = std::fs::read(dir.join("openzl_zstd_i4.b2nd")).unwrap();
    std::fs::write(src.path().join("intact.b2nd"), &intact).unwrap();
    // Chunk 1's frame (chunk 0's comes first) cut to half its length.
    let mut cut = intact.clone();
    let (at, csize) = openzl_frame_at(&cut, 1);
    cut[at - 4..at].copy_from_slice(&((csize / 2) as i32).to_le_bytes());
    std::fs::write(src.path().join("cut.b2nd"), &cut).unwrap();
    // Chunk 1's frame no longer starts with OpenZL's magic.
    let mut nomagic = intact.clone();
    nomagic[at + 1] ^= 0xff;
    std::fs::write(src.path().join("nomagic.b2nd"), &nomagic).unwrap();
    // A flipped byte in the middle of the checksummed fixture's one frame.
    let mut flipped = std::fs::read(dir.join("openzl_zstd_cs_u1.b2nd")).unwrap();
    let (at_cs, csize_cs) = openzl_frame_at(&flipped, 0);
    flipped[at_cs + csize_cs / 2] ^= 0x10;
    std::fs::write(src.path().join("flipped.b2nd"), &flipped).unwrap();

    let m = Mount::start(src.path(), &["--cache-size", "16M"]);
    let want = &manifest["openzl_zstd_i4"]["chunk_sha256"];
    for name in ["cut", "nomagic"] {
        let chunks = m.path().join(format!("{name}.b2nd/chunks"));
        let c0 = std::fs::read(chunks.join("0")).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            sha256_hex(&c0),
            want[0].as_str().unwrap(),
            "{name}: chunk 0"
        );
        let err = std::fs::read(chunks.join("1")).expect_err(name);
        assert_eq!(err.raw_os_error(), Some(libc::EIO), "{name}: {err}");
        let err = std::fs::read(m.path().join(format!("{name}.b2nd/data"))).expect_err(name);
        assert_eq!(err.raw_os_error(), Some(libc::EIO), "{name}: {err}");
        let c2 = std::fs::read(chunks.join("2")).unwrap();
        assert_eq!(
            sha256_hex(&c2),
            want[2].as_str().unwrap(),
            "{name}: chunk 2"
        );
    }
    let err = std::fs::read(m.path().join("flipped.b2nd/data")).expect_err("flipped");
    assert_eq!(err.raw_os_error(), Some(libc::EIO), "flipped: {err}");
    // The daemon is alive and the intact copy reads exactly.
    let data = std::fs::read(m.path().join("intact.b2nd/data")).unwrap();
    assert_eq!(
        sha256_hex(&data),
        manifest["openzl_zstd_i4"]["sha256"].as_str().unwrap()
    );
    let log = m.log_text();
    for name in ["cut.b2nd", "nomagic.b2nd", "flipped.b2nd"] {
        assert!(
            log.lines()
                .any(|l| l.contains(name) && l.contains("openzl")),
            "the log names no openzl error for {name}:\n{log}"
        );
    }
    drop(m);
    for name in ["cut.b2nd", "nomagic.b2nd", "flipped.b2nd"] {
        let out = std::process::Command::new(common::mount::binary())
            .arg("cat")
            .arg(src.path().join(name))
            .output()
            .unwrap();
        assert!(!out.status.success(), "{name}: cat succeeded");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(name) && stderr.contains("openzl"),
            "{name}: {stderr}"
        );
    }
}

/// The OpenZL regressions (tests/fuzz_regressions/codecs-openzl-*, cut
/// from chunk 0 of `openzl_zstd_i4` and of the checksummed
/// `openzl_zstd_cs_u1`): the whole frame decodes to python-blosc2's chunk;
/// the frame cut in half, decoded into a block smaller than it claims, as
/// items of another size, or with a flipped byte under checksums, is an
/// error.
#[test]
fn hostile_openzl_payloads_are_errors() {
    use blosc2fs::format::codec::openzl::decompress;
    if !codec_support(38).decoded() {
        return;
    }
    let manifest = read_manifest(&fixtures_dir().join("plugins"));
    let dir = repo_root().join("tests/fuzz_regressions");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("codecs-openzl-") {
            continue;
        }
        // The fuzz harness's layout: op byte, output length, item size selector, frame.
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data[0], 224, "{name}: not the OpenZL op");
        let out_len = u16::from_le_bytes([data[1], data[2]]) as usize;
        let typesize = [1usize, 2, 4, 8][data[3] as usize % 4];
        let mut dst = vec![0u8; out_len];
        let result = decompress(&data[4..], &mut dst, typesize);
        if name == "codecs-openzl-whole-frame.bin" {
            result.unwrap();
            assert_eq!(
                sha256_hex(&dst),
                manifest["openzl_zstd_i4"]["chunk_sha256"][0]
                    .as_str()
                    .unwrap()
            );
        } else {
            let err = result.expect_err(&name);
            assert!(err.to_string().starts_with("openzl"), "{name}: {err}");
        }
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} OpenZL regressions");
}
