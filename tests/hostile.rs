//! Hostile input and load through a real mount: damaged files beside intact
//! ones, and many concurrent readers with a tiny cache. Every read ends with
//! data or EIO, the daemon stays up, memory stays bounded, bytes stay exact.

mod common;

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::mount::{run_python, serial_with_fuse, Mount};
use common::rng::Rng;
use common::*;

fn put_be(bytes: &mut [u8], at: usize, value: &[u8]) {
    if at + value.len() <= bytes.len() {
        bytes[at..at + value.len()].copy_from_slice(value);
    }
}

/// Rebuild a contiguous frame with its offsets index replaced by `offsets`
/// (stored as a memcpyed chunk), keeping header and trailer.
fn with_offsets(frame: &[u8], offsets: &[i64]) -> Vec<u8> {
    let array = blosc2fs::source::open_memory(Path::new("x"), frame.to_vec()).unwrap();
    let f = array.frame();
    let idx_pos = (f.header_len + f.cbytes) as usize;
    let idx_cbytes =
        u32::from_le_bytes(frame[idx_pos + 12..idx_pos + 16].try_into().unwrap()) as usize;
    let trailer = &frame[idx_pos + idx_cbytes..f.frame_len as usize];
    let raw: Vec<u8> = offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    let mut chunk = vec![5u8, 1, 0x02 | 0x01 | 0x04, 8];
    chunk.extend_from_slice(&(raw.len() as i32).to_le_bytes());
    chunk.extend_from_slice(&(raw.len() as i32).to_le_bytes());
    chunk.extend_from_slice(&((raw.len() + 32) as i32).to_le_bytes());
    chunk.extend_from_slice(&[0u8; 16]);
    chunk.extend_from_slice(&raw);
    let mut out = frame[..idx_pos].to_vec();
    out.extend_from_slice(&chunk);
    out.extend_from_slice(trailer);
    let len = out.len() as u64;
    put_be(&mut out, 16, &len.to_be_bytes());
    out
}

/// Write the damaged corpus into `dir`; returns how many files were made.
fn damaged_corpus(dir: &Path) -> usize {
    let conf = conformance_dir();
    let sources = [
        "example_item_prices.b2nd",
        "frame_simple-zstd.b2frame",
        "frame_simple-blosclz.b2frame",
    ];
    let mut rng = Rng::new(0x9e3779b97f4a7c15);
    let mut n = 0;
    let mut write = |name: String, bytes: &[u8]| {
        std::fs::write(dir.join(name), bytes).unwrap();
        n += 1;
    };
    for src in sources {
        let good = std::fs::read(conf.join(src)).unwrap();
        let stem = src.split('.').next().unwrap();
        // Truncated at many points.
        let len = good.len() as u64;
        let mut cuts: Vec<u64> = vec![
            0,
            1,
            10,
            11,
            50,
            86,
            87,
            88,
            120,
            200,
            500,
            len / 4,
            len / 2,
            len - 100,
            len - 25,
            len - 1,
        ];
        for _ in 0..8 {
            cuts.push(rng.below(len));
        }
        for cut in cuts {
            write(format!("{stem}-cut{cut}.b2nd"), &good[..cut as usize]);
        }
        // Bytes flipped at random.
        for i in 0..12 {
            let mut bad = good.clone();
            for _ in 0..1 + rng.below(20) {
                let at = rng.below(len) as usize;
                bad[at] ^= 1 << rng.below(8);
            }
            write(format!("{stem}-flip{i}.b2nd"), &bad);
        }
        // Header sizes and offsets blown up to 2^62 (and other extremes).
        let huge = (1u64 << 62).to_be_bytes();
        for (field, at, width) in [
            ("header_len", 11, 4),
            ("frame_len", 16, 8),
            ("nbytes", 30, 8),
            ("cbytes", 39, 8),
            ("typesize", 48, 4),
            ("blocksize", 53, 4),
            ("chunksize", 58, 4),
        ] {
            for (tag, value) in [
                ("huge", &huge[8 - width..]),
                ("max", &[0xffu8; 8][..width]),
                ("zero", &[0u8; 8][..width]),
            ] {
                let mut bad = good.clone();
                put_be(&mut bad, at, value);
                write(format!("{stem}-{field}-{tag}.b2nd"), &bad);
            }
        }
        // Index entries pointing past the end, before the start, into the header, special kinds.
        let array = blosc2fs::source::open_memory(Path::new(src), good.clone()).unwrap();
        let n_chunks = array.nchunks() as usize;
        for (tag, value) in [
            ("past-end", 1i64 << 62),
            ("near-end", len as i64),
            ("negative-kind", (0x83u64 << 56) as i64),
            ("zero", 0),
        ] {
            let mut offsets = vec![0i64; n_chunks];
            for (c, o) in offsets.iter_mut().enumerate() {
                *o = match array.frame().offsets[c] {
                    blosc2fs::format::ChunkOffset::Stored(v) => v as i64,
                    _ => 0,
                };
            }
            offsets[n_chunks / 2] = value;
            write(
                format!("{stem}-index-{tag}.b2nd"),
                &with_offsets(&good, &offsets),
            );
        }
        // A chunk header claiming a huge block and size.
        let first = array
            .frame()
            .offsets
            .iter()
            .find_map(|o| match o {
                blosc2fs::format::ChunkOffset::Stored(v) => Some(*v),
                _ => None,
            })
            .expect("a stored chunk");
        let chunk_at = (array.frame().header_len + first) as usize;
        for (tag, at, value) in [
            ("nbytes", 4, i32::MAX),
            ("blocksize", 8, 536_866_816),
            ("cbytes", 12, i32::MAX),
            ("neg-nbytes", 4, -8),
        ] {
            let mut bad = good.clone();
            bad[chunk_at + at..chunk_at + at + 4].copy_from_slice(&value.to_le_bytes());
            write(format!("{stem}-chunk-{tag}.b2nd"), &bad);
        }
    }
    write("empty.b2nd".into(), b"");
    write(
        "text.b2nd".into(),
        b"this is not a blosc2 file at all, just text with a .b2nd name\n",
    );
    write(
        "magic-only.b2frame".into(),
        &std::fs::read(conf.join("frame_simple-lz4.b2frame")).unwrap()[..12],
    );
    // A sparse frame with chunk files missing.
    let sparse_src = fixtures_dir().join("sparse_2d_f8.b2nd");
    let sparse = dir.join("sparse-missing.b2nd");
    std::fs::create_dir(&sparse).unwrap();
    let mut names: Vec<PathBuf> = std::fs::read_dir(&sparse_src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    for (i, p) in names.iter().enumerate() {
        let is_chunk = p.extension().is_some_and(|e| e == "chunk");
        if !(is_chunk && i % 2 == 1) {
            std::fs::copy(p, sparse.join(p.file_name().unwrap())).unwrap();
        }
    }
    n + 1
}

fn vm_hwm_kib(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap()
}

/// Read every file under `root` in 1 MiB pieces; each read must end (data or error) within `limit`.
fn read_everything(root: &Path, limit: Duration) -> (u64, u64, u64) {
    let (mut files, mut reads, mut errors) = (0, 0, 0);
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(_) => {
                errors += 1;
                continue;
            }
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            files += 1;
            let Ok(f) = std::fs::File::open(&path) else {
                errors += 1;
                continue;
            };
            let len = f.metadata().map(|m| m.len()).unwrap_or(0);
            let mut buf = vec![0u8; 1 << 20];
            let mut pos = 0;
            while pos < len.min(64 << 20) {
                let start = Instant::now();
                let r = f.read_at(&mut buf, pos);
                assert!(
                    start.elapsed() < limit,
                    "read of {} at {pos} took {:?}",
                    path.display(),
                    start.elapsed()
                );
                reads += 1;
                match r {
                    Ok(0) => break,
                    Ok(n) => pos += n as u64,
                    Err(e) => {
                        assert_eq!(e.raw_os_error(), Some(libc::EIO), "{}: {e}", path.display());
                        errors += 1;
                        pos += 1 << 20;
                    }
                }
            }
        }
    }
    (files, reads, errors)
}

#[test]
fn damaged_files_never_take_the_mount_down() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let src = tempfile::tempdir().unwrap();
    let made = damaged_corpus(src.path());
    std::fs::copy(
        conformance_dir().join("example_item_prices.b2nd"),
        src.path().join("intact.b2nd"),
    )
    .unwrap();
    let m = Mount::start(src.path(), &["--cache-size", "64M"]);
    let (files, reads, errors) = read_everything(m.path(), Duration::from_secs(10));
    eprintln!("hostile mount: {made} damaged sources, {files} presented files, {reads} reads, {errors} errors");
    assert!(files > made as u64, "{files} files for {made} sources");
    assert!(errors > 0);
    // The daemon is up, its memory bounded, and the intact file reads exactly.
    assert!(
        std::path::Path::new(&format!("/proc/{}", m.pid())).exists(),
        "daemon died; log:\n{}",
        m.log_text()
    );
    let hwm = vm_hwm_kib(m.pid());
    eprintln!("hostile mount: daemon peak RSS {} MiB", hwm / 1024);
    assert!(hwm < (64 + 96) * 1024, "peak RSS {hwm} KiB");
    let intact = std::fs::read(m.path().join("intact.b2nd/data")).unwrap();
    assert_eq!(
        sha256_hex(&intact),
        read_manifest(&conformance_dir())["example_item_prices.b2nd"]["sha256"]
            .as_str()
            .unwrap()
    );
    // Every damaged source still appears, with a meta.json.
    for entry in std::fs::read_dir(src.path()).unwrap() {
        let name = entry.unwrap().file_name();
        assert!(
            m.path().join(&name).join("meta.json").is_file(),
            "{name:?} has no meta.json"
        );
    }
}

#[test]
fn sixteen_readers_with_a_tiny_cache_get_exact_bytes() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let dir = fixtures_dir();
    let manifest = read_manifest(&dir);
    let cache = 256 * 1024;
    let m = Mount::start(&dir, &["--cache-size", "256K", "--threads", "4"]);
    let entries: Vec<(PathBuf, String)> = manifest
        .values()
        .filter(|e| e["size"].as_u64().unwrap() > 0)
        .map(|e| {
            (
                m.path().join(e["path"].as_str().unwrap()).join("data"),
                e["sha256"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // Reference bytes: a whole sequential read, checked against the numpy sha256.
    let reference: Vec<Vec<u8>> = entries
        .iter()
        .map(|(p, sha)| {
            let bytes = std::fs::read(p).unwrap();
            assert_eq!(&sha256_hex(&bytes), sha, "{}", p.display());
            bytes
        })
        .collect();
    let checked = AtomicU64::new(0);
    let mut children = Vec::new();
    for i in 0..8 {
        // Processes: sequential whole-file hashes of a slice of the arrays.
        let list: Vec<String> = entries
            .iter()
            .skip(i)
            .step_by(8)
            .map(|(p, _)| p.to_string_lossy().into_owned())
            .collect();
        children.push(
            std::process::Command::new("sha256sum")
                .args(&list)
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap(),
        );
    }
    std::thread::scope(|s| {
        for t in 0..8u64 {
            let (entries, reference, checked) = (&entries, &reference, &checked);
            s.spawn(move || {
                let mut rng = Rng::new(t * 7919 + 17);
                for _ in 0..400 {
                    let k = rng.below(entries.len() as u64) as usize;
                    let f = std::fs::File::open(&entries[k].0).unwrap();
                    let len = reference[k].len() as u64;
                    let start = rng.below(len);
                    let n = 1 + rng.below((len - start).min(70_000));
                    let mut buf = vec![0u8; n as usize];
                    f.read_exact_at(&mut buf, start).unwrap();
                    assert_eq!(
                        &buf[..],
                        &reference[k][start as usize..(start + n) as usize],
                        "{} at {start}+{n}",
                        entries[k].0.display()
                    );
                    checked.fetch_add(n, Ordering::Relaxed);
                }
            });
        }
    });
    for child in children {
        let out = child.wait_with_output().unwrap();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let (sha, path) = line.split_once("  ").unwrap();
            let expected = &entries
                .iter()
                .find(|(p, _)| p.to_string_lossy() == path)
                .unwrap()
                .1;
            assert_eq!(sha, expected, "{path}");
        }
    }
    let stats = m.stats();
    assert!(stats["cache_bytes"].as_u64().unwrap() <= cache, "{stats}");
    let hwm = vm_hwm_kib(m.pid());
    eprintln!(
        "load: {} random bytes checked, peak RSS {} MiB, stats {stats}",
        checked.load(Ordering::Relaxed),
        hwm / 1024
    );
    assert!(hwm < 64 * 1024, "peak RSS {hwm} KiB with a 256 KiB cache");
}

#[test]
fn damaged_array_gives_eio_on_its_views_and_the_mount_lives() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let manifest = read_manifest(&fixtures_dir());
    let original = fixtures_dir().join(manifest["codec_zstd_shuffle"]["path"].as_str().unwrap());
    // Garble the header of chunk 0 (located through the format layer).
    let array = blosc2fs::source::open_array(&original).unwrap();
    let blosc2fs::format::ChunkOffset::Stored(off) = array.frame().offsets[0] else {
        panic!("chunk 0 is special")
    };
    let base = (array.frame().header_len + off) as usize;
    let mut bytes = std::fs::read(&original).unwrap();
    for b in &mut bytes[base..base + 32] {
        *b ^= 0x5a;
    }
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("bad.b2nd"), &bytes).unwrap();
    std::fs::copy(&original, src.path().join("good.b2nd")).unwrap();
    let m = Mount::start(src.path(), &["--cache-size", "64M"]);
    let bad = m.path().join("bad.b2nd");
    let mut buf = vec![0u8; 4096];
    let data = std::fs::File::open(bad.join("data")).unwrap();
    assert_eq!(
        data.read_at(&mut buf, 0).unwrap_err().raw_os_error(),
        Some(libc::EIO),
        "the damage is detected"
    );
    let text = std::fs::File::open(bad.join("data.txt")).unwrap();
    assert_eq!(
        text.read_at(&mut buf, 0).unwrap_err().raw_os_error(),
        Some(libc::EIO)
    );
    for _ in 0..2 {
        let err = std::fs::read(bad.join("preview.png")).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EIO), "{err}");
    }
    // The daemon lives, said why, and the intact array's views read.
    assert!(
        std::path::Path::new(&format!("/proc/{}", m.pid())).exists(),
        "daemon died; log:\n{}",
        m.log_text()
    );
    assert!(
        m.log_text().contains("preview.png"),
        "no log line; log:\n{}",
        m.log_text()
    );
    let good = std::fs::read(m.path().join("good.b2nd/preview.png")).unwrap();
    assert_eq!(&good[1..4], b"PNG");
    assert_eq!(
        std::fs::read(m.path().join("good.b2nd/data.txt"))
            .unwrap()
            .len(),
        45 * 37 * 16
    );
}

/// Damaged copies of the `dict.b2z` / `values.b2e` store fixtures: (file
/// name, what the damage is). Written into `dir`.
fn damaged_stores(dir: &Path) -> Vec<(&'static str, &'static str)> {
    let stores = fixtures_dir().join("stores");
    let zip = std::fs::read(stores.join("dict.b2z")).unwrap();
    let eocd = (0..zip.len() - 21)
        .rev()
        .find(|&i| zip[i..i + 4] == [0x50, 0x4b, 0x05, 0x06])
        .unwrap();
    let cd = u32::from_le_bytes(zip[eocd + 16..eocd + 20].try_into().unwrap()) as usize;
    let mut made = Vec::new();
    let mut put = |name: &'static str, what: &'static str, bytes: &[u8]| {
        std::fs::write(dir.join(name), bytes).unwrap();
        made.push((name, what));
    };
    // The first central entry's signature smashed.
    let mut b = zip.clone();
    b[cd..cd + 4].copy_from_slice(b"XXXX");
    put("corrupt_directory.b2z", "zip central directory", &b);
    // Cut short: no end-of-central-directory record left.
    put(
        "truncated.b2z",
        "no end-of-central-directory record",
        &zip[..zip.len() / 2],
    );
    // The first member's sizes (central entry) grown past the end of the file.
    let mut b = zip.clone();
    b[cd + 20..cd + 28].copy_from_slice(&[0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f]);
    put("window_past_end.b2z", "truncated: zip member", &b);
    // A bomb of entries: the record claims 65535, the directory holds 4.
    let mut b = zip.clone();
    b[eocd + 8..eocd + 12].copy_from_slice(&[0xff, 0xfe, 0xff, 0xfe]);
    put("bomb16.b2z", "cannot fit", &b);
    // A zip64 bomb: 2^40 entries claimed by a zip64 record.
    let mut b = zip[..eocd].to_vec();
    let rec = b.len() as u64;
    b.extend_from_slice(&[0x50, 0x4b, 0x06, 0x06]);
    b.extend_from_slice(&44u64.to_le_bytes());
    b.extend_from_slice(&[45, 0, 45, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    b.extend_from_slice(&(1u64 << 40).to_le_bytes());
    b.extend_from_slice(&(1u64 << 40).to_le_bytes());
    b.extend_from_slice(&(1u64 << 30).to_le_bytes());
    b.extend_from_slice(&(cd as u64).to_le_bytes());
    b.extend_from_slice(&[0x50, 0x4b, 0x06, 0x07, 0, 0, 0, 0]);
    b.extend_from_slice(&rec.to_le_bytes());
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(&[
        0x50, 0x4b, 0x05, 0x06, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0, 0,
    ]);
    put("bomb64.b2z", "limit exceeded: zip directory", &b);
    made
}

#[test]
fn damaged_stores_explain_themselves_and_never_take_the_mount_down() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let src = tempfile::tempdir().unwrap();
    let made = damaged_stores(src.path());
    // An embed map pointing outside the embed frame, written by python-blosc2 itself.
    let bad_embed = src.path().join("embed_outside.b2e");
    std::fs::copy(fixtures_dir().join("stores/values.b2e"), &bad_embed).unwrap();
    run_python(
        "import sys, blosc2\ns = blosc2.open(sys.argv[1], mode='a')\ns._store.vlmeta['estore_metadata'] = {'embed_map': {'/a': {'offset': 10**9, 'length': 10}}, 'current_offset': 0}\n",
        &[bad_embed.to_str().unwrap()],
    );
    std::fs::copy(
        fixtures_dir().join("stores/dict.b2z"),
        src.path().join("intact.b2z"),
    )
    .unwrap();
    let m = Mount::start(src.path(), &["--cache-size", "64M"]);
    let (files, reads, errors) = read_everything(m.path(), Duration::from_secs(10));
    eprintln!("hostile stores: {files} presented files, {reads} reads, {errors} errors");
    assert!(
        std::path::Path::new(&format!("/proc/{}", m.pid())).exists(),
        "daemon died; log:\n{}",
        m.log_text()
    );
    let hwm = vm_hwm_kib(m.pid());
    assert!(hwm < (64 + 96) * 1024, "peak RSS {hwm} KiB");
    for (name, what) in made.iter().chain(&[(
        "embed_outside.b2e",
        "bytes 1000000000..1000000010 lie outside the embed frame",
    )]) {
        let meta = std::fs::read_to_string(m.path().join(name).join("meta.json"))
            .unwrap_or_else(|e| panic!("{name}/meta.json: {e}"));
        if *name == "window_past_end.b2z" {
            // The store opens; the damaged member explains itself, naming store and key.
            let key_meta =
                std::fs::read_to_string(m.path().join(name).join("dir/x/meta.json")).unwrap();
            assert!(
                key_meta.contains(&format!("{name}:/dir/x")) && key_meta.contains(what),
                "{key_meta}"
            );
            let big = std::fs::read(m.path().join(name).join("big/data")).unwrap();
            assert_eq!(big.len(), 8000, "the other members still read");
        } else {
            assert!(meta.contains(name) && meta.contains(what), "{name}: {meta}");
        }
    }
    let want = &read_manifest(&fixtures_dir().join("stores"))["stores"]["dict.b2z"]["keys"];
    for key in ["/big", "/small", "/dir/x", "/dir/emb"] {
        let bytes = std::fs::read(m.path().join(format!("intact.b2z{key}/data"))).unwrap();
        assert_eq!(
            sha256_hex(&bytes),
            want[key]["sha256"].as_str().unwrap(),
            "{key}"
        );
    }
}
