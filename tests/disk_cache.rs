//! The disk cache (`--disk-cache DIR`) through real mounts (as root in
//! CI): bytes exact after a remount with no block decoded (by passthrough
//! and by the daemon reading the cache file), a source rewritten between
//! mounts and while mounted, a daemon killed while filling, two mounts
//! sharing one directory, the budget kept by LRU eviction, and a loop
//! reading without pause served from the cache by its third read (its
//! second read, opened with direct I/O, still mapped shared), a single
//! array changed while open in passthrough (a new open reads the new
//! version, the old one its own), and on moto S3: the first walk of a tree
//! sending the requests of a walk without the cache, and a prefix read
//! whole within a few descriptors.

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::moto::{env_refs, Moto};
use common::mount::{binary, reap, run_python, serial_with_fuse, Mount};
use common::read_tree;

/// Write `name`.b2nd in `dir` (an N-d float64 array of `rows` x 4096
/// values from `seed`, lz4, 2-D chunks and blocks) and its C-order bytes
/// as `name`.raw beside `dir`; returns the bytes.
fn write_array(dir: &Path, name: &str, seed: u64, rows: u64) -> Vec<u8> {
    let path = dir.join(format!("{name}.b2nd"));
    let raw = dir.with_extension(format!("{name}.raw"));
    run_python(
        r#"
import sys, numpy as np, blosc2
path, raw, seed, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(seed)
a = (rng.standard_normal((rows, 4096)) * 100).round(1)
blosc2.asarray(a, urlpath=path, mode="w", chunks=(64, 2048), blocks=(16, 1024),
               cparams={"codec": blosc2.Codec.LZ4, "clevel": 1})
open(raw, "wb").write(a.tobytes())
"#,
        &[
            path.to_str().unwrap(),
            raw.to_str().unwrap(),
            &seed.to_string(),
            &rows.to_string(),
        ],
    );
    std::fs::read(raw).unwrap()
}

fn counter(stats: &serde_json::Value, path: &[&str]) -> u64 {
    path.iter()
        .fold(stats, |v, k| &v[*k])
        .as_u64()
        .unwrap_or_else(|| panic!("no counter {path:?} in {stats}"))
}

/// `.stats` in one read call: it is rendered afresh at each read, and a
/// second read of a document grown meanwhile would not continue the first.
fn stats(m: &Mount) -> serde_json::Value {
    use std::io::Read;
    let mut buf = vec![0; 1 << 20];
    let mut file = std::fs::File::open(m.path().join(".stats")).unwrap();
    let n = file.read(&mut buf).unwrap();
    serde_json::from_slice(&buf[..n]).unwrap()
}

fn decoded(m: &Mount) -> u64 {
    counter(&stats(m), &["blocks_decoded"])
}

fn disk(m: &Mount, name: &str) -> u64 {
    counter(&stats(m), &["disk_cache", name])
}

/// Read `path` of mount `m` once, exactly, and wait for the cache to have
/// filled what that read touched: `completed` entries are complete after
/// one read (the writer produces the granules a read touched once the
/// mount is quiet, and drops none of them).
fn read_until_cached(m: &Mount, path: &Path, expected: &[u8], completed: u64) {
    assert_eq!(std::fs::read(path).unwrap(), expected);
    wait_idle(m);
    assert!(
        disk(m, "completed") >= completed,
        "{} not cached after one read: {}\n{}",
        path.display(),
        stats(m),
        m.log_text()
    );
}

/// Wait (30 s at most) until `m`'s disk cache has nothing queued or wanted.
fn wait_idle(m: &Mount) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while disk(m, "queued_bytes") > 0 || disk(m, "wanted_bytes") > 0 {
        assert!(Instant::now() < deadline, "never idle: {}", stats(m));
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Bytes the files under `dir` take on disk.
fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir.join("entries"))
        .unwrap()
        .map(|e| e.unwrap().metadata().map(|m| m.blocks() * 512).unwrap_or(0))
        .sum()
}

fn cache_args(dir: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = vec![
        "--disk-cache".to_string(),
        dir.display().to_string(),
        "--attr-timeout".into(),
        "0.2".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn mount(src: &Path, args: &[String]) -> Mount {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Mount::start(src, &args)
}

struct Setup {
    _tmp: tempfile::TempDir,
    src: PathBuf,
    cache: PathBuf,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    let cache = tmp.path().join("cache");
    Setup {
        src,
        cache,
        _tmp: tmp,
    }
}

#[test]
fn a_remount_serves_data_and_npy_from_the_cache_with_no_block_decoded() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let s = setup();
    let expected = write_array(&s.src, "a", 1, 512);
    {
        let m = mount(&s.src, &cache_args(&s.cache, &[]));
        read_until_cached(&m, &m.path().join("a.b2nd/data"), &expected, 1);
        assert!(decoded(&m) > 0);
    }
    // Unmounted: every fill written and its map persisted.
    for extra in [&[][..], &["--no-passthrough"][..]] {
        let m = mount(&s.src, &cache_args(&s.cache, extra));
        let data = m.path().join("a.b2nd/data");
        assert_eq!(std::fs::read(&data).unwrap(), expected, "{extra:?}");
        let npy = std::fs::read(m.path().join("a.b2nd/data.npy")).unwrap();
        assert_eq!(
            &npy[npy.len() - expected.len()..],
            &expected[..],
            "{extra:?}"
        );
        assert_eq!(decoded(&m), 0, "{extra:?}: {}", stats(&m));
        assert!(disk(&m, "hits") > 0, "data.npy came from the cache file");
        if extra.is_empty() {
            assert_eq!(disk(&m, "passthrough_opens"), 1, "{}", stats(&m));
        } else {
            assert_eq!(disk(&m, "passthrough_opens"), 0);
            assert_eq!(disk(&m, "cache_file_opens"), 1, "{}", stats(&m));
        }
        // Random reads too, not only a sequential scan.
        use std::os::unix::fs::FileExt;
        let file = std::fs::File::open(&data).unwrap();
        for offset in [0u64, 4095, 1 << 20, expected.len() as u64 - 10] {
            let mut buf = vec![0; 10];
            file.read_exact_at(&mut buf, offset).unwrap();
            assert_eq!(buf, expected[offset as usize..offset as usize + 10]);
        }
        assert_eq!(decoded(&m), 0);
    }
    let listing = Command::new(binary())
        .arg("cache")
        .arg(&s.cache)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&listing.stdout);
    assert!(
        text.contains("1 entries") && text.contains("100.0%"),
        "{text}"
    );
    let cleared = Command::new(binary())
        .args(["cache", "--clear"])
        .arg(&s.cache)
        .output()
        .unwrap();
    assert!(cleared.status.success());
    assert_eq!(dir_bytes(&s.cache), 0);
}

#[test]
fn a_source_rewritten_between_mounts_or_while_mounted_is_never_served_old_bytes() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let s = setup();
    let first = write_array(&s.src, "a", 1, 128);
    {
        let m = mount(&s.src, &cache_args(&s.cache, &[]));
        read_until_cached(&m, &m.path().join("a.b2nd/data"), &first, 1);
    }
    let second = write_array(&s.src, "a", 2, 128);
    assert_ne!(first, second);
    let m = mount(&s.src, &cache_args(&s.cache, &[]));
    let data = m.path().join("a.b2nd/data");
    read_until_cached(&m, &data, &second, 1);
    // Complete now: the next open is passthrough, then the source changes.
    let before = disk(&m, "passthrough_opens");
    assert_eq!(std::fs::read(&data).unwrap(), second);
    assert_eq!(disk(&m, "passthrough_opens"), before + 1, "{}", stats(&m));
    let third = write_array(&s.src, "a", 3, 128);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        std::fs::read(&data).unwrap(),
        third,
        "rewritten while mounted"
    );
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(std::fs::read(&data).unwrap(), third);
}

/// Whether the cache folder `dir` holds a persisted map of any entry.
fn has_map(dir: &Path) -> bool {
    std::fs::read_dir(dir.join("entries")).is_ok_and(|items| {
        items
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "map"))
    })
}

#[test]
fn a_daemon_killed_while_filling_leaves_a_cache_that_reads_exact() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let s = setup();
    let expected = write_array(&s.src, "a", 7, 4096);
    for round in 0..3 {
        let mut m = mount(&s.src, &cache_args(&s.cache, &[]));
        let data = m.path().join("a.b2nd/data");
        let reader = std::thread::spawn(move || {
            // Fails once the daemon is gone; what it read is not checked.
            let _ = std::fs::read(data);
        });
        let deadline = Instant::now() + Duration::from_secs(20);
        // 128 MiB of data, filled in runs of up to 8 MiB once the read is
        // over. The first kill comes after a map was persisted (every 64
        // MiB of fills), the others at any point.
        let fill_bytes = [72 << 20, 8 << 20, 24 << 20][round];
        while disk(&m, "fill_bytes") < fill_bytes && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        // The first kill waits for that map on disk (under load the writer
        // may lag the fills counted).
        while round == 0 && !has_map(&s.cache) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        let child = m.child.as_mut().unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        m.child = None;
        drop(m);
        reader.join().unwrap();
    }
    let m = mount(&s.src, &cache_args(&s.cache, &[]));
    assert_eq!(
        std::fs::read(m.path().join("a.b2nd/data")).unwrap(),
        expected
    );
    let seen = stats(&m);
    assert!(
        disk(&m, "hits") + disk(&m, "passthrough_opens") > 0,
        "what the killed daemons persisted is used: {seen}"
    );
    drop(m);
    let m = mount(&s.src, &cache_args(&s.cache, &[]));
    assert_eq!(
        std::fs::read(m.path().join("a.b2nd/data")).unwrap(),
        expected
    );
    assert_eq!(decoded(&m), 0);
}

#[test]
fn two_mounts_share_one_directory_exact_and_consistent() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let s = setup();
    let a = write_array(&s.src, "a", 11, 1024);
    let b = write_array(&s.src, "b", 12, 1024);
    {
        let m1 = mount(&s.src, &cache_args(&s.cache, &[]));
        let m2 = mount(&s.src, &cache_args(&s.cache, &[]));
        let readers: Vec<_> = [&m1, &m2, &m1, &m2]
            .iter()
            .zip(["a", "b", "b", "a"])
            .map(|(m, name)| {
                let path = m.path().join(format!("{name}.b2nd/data"));
                std::thread::spawn(move || (name, std::fs::read(path).unwrap()))
            })
            .collect();
        for r in readers {
            let (name, bytes) = r.join().unwrap();
            assert!(
                bytes == if name == "a" { a.clone() } else { b.clone() },
                "{name}"
            );
        }
        // One read of each through either mount fills both entries: each
        // mount's writer produces what its reads touched once it is quiet.
        for m in [&m1, &m2] {
            wait_idle(m);
        }
    }
    let listing = Command::new(binary())
        .arg("cache")
        .arg(&s.cache)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&listing.stdout);
    assert!(text.contains("2 entries"), "{text}");
    assert_eq!(text.matches("100.0%").count(), 2, "{text}");
    let m = mount(&s.src, &cache_args(&s.cache, &[]));
    assert_eq!(std::fs::read(m.path().join("a.b2nd/data")).unwrap(), a);
    assert_eq!(std::fs::read(m.path().join("b.b2nd/data")).unwrap(), b);
    assert_eq!(decoded(&m), 0);
}

#[test]
fn the_budget_is_kept_by_evicting_the_least_recently_used() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let s = setup();
    // Three arrays of 4 MiB of data; room for two.
    let arrays: Vec<Vec<u8>> = (0..3)
        .map(|i| write_array(&s.src, &format!("a{i}"), 20 + i, 128))
        .collect();
    let budget: u64 = 9 << 20;
    let chunk: u64 = 64 * 2048 * 8;
    let args = cache_args(&s.cache, &["--disk-cache-size", "9M"]);
    {
        let m = mount(&s.src, &args);
        for (i, expected) in arrays.iter().enumerate() {
            let path = m.path().join(format!("a{i}.b2nd/data"));
            read_until_cached(&m, &path, expected, i as u64 + 1);
            assert!(dir_bytes(&s.cache) <= budget + chunk);
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(disk(&m, "evictions") >= 1, "{}", stats(&m));
    }
    let listing = |dir: &Path| {
        let out = Command::new(binary())
            .arg("cache")
            .arg(dir)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let before_remount = listing(&s.cache);
    assert!(
        dir_bytes(&s.cache) <= budget + chunk,
        "{}",
        dir_bytes(&s.cache)
    );
    // a0 was the least recently used: gone; a1 and a2 are served whole.
    let m = mount(&s.src, &args);
    for i in [1, 2] {
        let path = m.path().join(format!("a{i}.b2nd/data"));
        assert_eq!(std::fs::read(path).unwrap(), arrays[i]);
        assert_eq!(
            decoded(&m),
            0,
            "a{i}: {}\nbefore the remount:\n{before_remount}",
            stats(&m)
        );
    }
    assert_eq!(
        std::fs::read(m.path().join("a0.b2nd/data")).unwrap(),
        arrays[0]
    );
    assert!(decoded(&m) > 0, "a0 was evicted");
    drop(m);
    assert!(
        dir_bytes(&s.cache) <= budget + chunk,
        "{}",
        dir_bytes(&s.cache)
    );
}

/// A training loop's reads: three full reads of `name` in a row, no pause
/// (only a `.stats` read between them), each ending with `expected` after
/// a header (a `.npy` one, or none for `data`); answers the `.stats` after
/// reads 1, 2 and 3.
fn three_reads_in_a_row(m: &Mount, name: &str, expected: &[u8]) -> [serde_json::Value; 3] {
    let path = m.path().join(name);
    let mut seen = Vec::new();
    for read in 1..=3 {
        let bytes = std::fs::read(&path).unwrap();
        let header = bytes.len().checked_sub(expected.len()).unwrap();
        assert!(
            header == 0 || bytes.starts_with(b"\x93NUMPY") && header < 4096,
            "{name}: read {read} is {} bytes",
            bytes.len()
        );
        assert!(
            bytes[header..] == *expected,
            "{name}: read {read} differs from the source"
        );
        seen.push(stats(m));
    }
    seen.try_into().unwrap()
}

#[test]
fn a_loop_reading_without_pause_is_served_from_the_cache_by_its_third_read() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let s = setup();
    // 32 MiB of data each, and a memory block cache of 8 MiB: every read
    // that is not served from the disk cache decodes.
    let a = write_array(&s.src, "a", 51, 1024);
    let b = write_array(&s.src, "b", 52, 1024);
    let m = mount(&s.src, &cache_args(&s.cache, &["--cache-size", "8M"]));
    let n = a.len() as u64;

    // `data`: the second read hands what it decodes to the writer, and the
    // third open finds the entry complete (passthrough as root, else the
    // daemon reads the cache file).
    let [after1, after2, after3] = three_reads_in_a_row(&m, "a.b2nd/data", &a);
    let get = |s: &serde_json::Value, k: &str| counter(s, &["disk_cache", k]);
    let opened_from_cache =
        |s: &serde_json::Value| get(s, "passthrough_opens") + get(s, "cache_file_opens");
    assert_eq!(
        get(&after1, "handed_bytes"),
        0,
        "a first read only names its granules: {after1}"
    );
    assert!(counter(&after2, &["blocks_decoded"]) > counter(&after1, &["blocks_decoded"]));
    assert_eq!(
        opened_from_cache(&after3),
        opened_from_cache(&after2) + 1,
        "read 3 was not served from the cache: {after3}\n{}",
        m.log_text()
    );
    assert_eq!(
        counter(&after3, &["blocks_decoded"]),
        counter(&after2, &["blocks_decoded"]),
        "read 3 decoded: {after3}"
    );
    // Filled once, from the second read's own bytes (or, had the loop
    // paused for 100 ms, partly by the producer): nothing twice.
    assert_eq!(get(&after3, "fill_bytes"), n, "{after3}");
    assert_eq!(
        get(&after3, "handed_bytes") + get(&after3, "produced_bytes"),
        n
    );
    assert!(get(&after3, "handed_bytes") > 0, "{after3}");

    // `data.npy`: its header puts every granule across two reads, gathered
    // in parts; the entry is whole after the second read, and the third
    // decodes nothing (the kernel keeps the second read's pages, or the
    // daemon reads the cache file).
    let [_, after2, after3] = three_reads_in_a_row(&m, "b.b2nd/data.npy", &b);
    assert_eq!(get(&after2, "completed"), 2, "{after2}");
    assert_eq!(
        counter(&after3, &["blocks_decoded"]),
        counter(&after2, &["blocks_decoded"]),
        "read 3 of data.npy decoded: {after3}"
    );
    assert_eq!(get(&after3, "fill_bytes"), 2 * n, "{after3}");
    drop(m);

    // What the loop filled was persisted: a remount decodes nothing.
    let m = mount(&s.src, &cache_args(&s.cache, &[]));
    assert_eq!(std::fs::read(m.path().join("a.b2nd/data")).unwrap(), a);
    let npy = std::fs::read(m.path().join("b.b2nd/data.npy")).unwrap();
    assert!(npy[npy.len() - b.len()..] == b);
    assert_eq!(decoded(&m), 0, "{}", stats(&m));
    assert!(disk(&m, "hits") > 0, "data.npy came from the cache file");
}

#[test]
fn a_re_read_of_data_while_its_entry_fills_still_maps_shared() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let s = setup();
    let c = write_array(&s.src, "c", 53, 256);
    let m = mount(&s.src, &cache_args(&s.cache, &["--cache-size", "8M"]));
    let path = m.path().join("c.b2nd/data");
    assert_eq!(std::fs::read(&path).unwrap(), c);
    // The second open of `data` bypasses the kernel's page cache (its
    // reads complete the entry); numpy maps it shared all the same.
    let out = run_python(
        r#"
import sys, numpy as np
a = np.memmap(sys.argv[1], dtype=np.uint8, mode="r")
b = np.fromfile(sys.argv[2], dtype=np.uint8)
print(a.shape == b.shape and bool((a == b).all()))
"#,
        &[
            path.to_str().unwrap(),
            s.src.with_extension("c.raw").to_str().unwrap(),
        ],
    );
    assert_eq!(out.trim(), "True");
    wait_idle(&m);
    assert_eq!(disk(&m, "completed"), 1, "{}", stats(&m));
    assert_eq!(std::fs::read(&path).unwrap(), c);
}

fn s3_gets(m: &Mount) -> u64 {
    counter(&stats(m), &["remote", "gets"])
}

/// The remote counter once the prefetcher's GETs are over.
fn settled_gets(m: &Mount) -> u64 {
    let mut gets = s3_gets(m);
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let now = s3_gets(m);
        if now == gets {
            return gets;
        }
        gets = now;
    }
}

#[test]
fn an_s3_array_read_again_after_a_remount_costs_no_data_get() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let Some(moto) = Moto::start("an_s3_array_read_again_after_a_remount_costs_no_data_get") else {
        return;
    };
    let s = setup();
    let expected = write_array(&s.src, "a", 31, 512);
    moto.upload("cached", &[(s.src.join("a.b2nd"), "a.b2nd".into())]);
    let env = moto.env();
    let env = env_refs(&env);
    let args = cache_args(&s.cache, &[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    {
        let m = Mount::start_with_env(Path::new("s3://cached/"), &args, &env);
        read_until_cached(&m, &m.path().join("a.b2nd/data"), &expected, 1);
        assert!(s3_gets(&m) > 0);
    }
    for extra in [&[][..], &["--no-passthrough"][..]] {
        let all: Vec<&str> = args.iter().chain(extra).copied().collect();
        let m = Mount::start_with_env(Path::new("s3://cached/"), &all, &env);
        let data = m.path().join("a.b2nd/data");
        // Looking the array up loads its header and chunk index (metadata GETs).
        assert_eq!(
            std::fs::metadata(&data).unwrap().len(),
            expected.len() as u64
        );
        let before = settled_gets(&m);
        assert_eq!(std::fs::read(&data).unwrap(), expected, "{extra:?}");
        assert_eq!(std::fs::read(&data).unwrap(), expected, "{extra:?}");
        assert_eq!(
            settled_gets(&m),
            before,
            "{extra:?}: data GETs: {}",
            stats(&m)
        );
        assert_eq!(decoded(&m), 0);
    }
}

/// Write operands x.b2nd, y.b2nd (from `seed`) and the saved expression
/// e.b2nd = x * y + 1 in `dir`; returns numpy's bytes of it.
fn write_expression(dir: &Path, seed: u64, only_y: bool) -> Vec<u8> {
    let hex = run_python(
        r#"
import os, sys
import numpy as np, blosc2
os.chdir(sys.argv[1])
rng = np.random.default_rng(int(sys.argv[2]))
x, y = rng.uniform(-5, 5, (600, 500)), rng.uniform(-5, 5, (600, 500))
if sys.argv[3] == "all":
    blosc2.asarray(x, urlpath="x.b2nd", mode="w")
    blosc2.asarray(y, urlpath="y.b2nd", mode="w")
    ops = {"x": blosc2.open("x.b2nd"), "y": blosc2.open("y.b2nd")}
    blosc2.lazyexpr("x * y + 1", operands=ops).save("e.b2nd")
else:
    blosc2.asarray(y, urlpath="y.b2nd", mode="w")
x = blosc2.open("x.b2nd")[:]
sys.stdout.write((x * y + 1).tobytes().hex())
"#,
        &[
            dir.to_str().unwrap(),
            &seed.to_string(),
            if only_y { "y" } else { "all" },
        ],
    );
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn a_computed_array_is_cached_under_its_operands_versions() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let s = setup();
    let first = write_expression(&s.src, 41, false);
    {
        let m = mount(&s.src, &cache_args(&s.cache, &[]));
        read_until_cached(&m, &m.path().join("e.b2nd/data"), &first, 1);
    }
    {
        let m = mount(&s.src, &cache_args(&s.cache, &[]));
        assert_eq!(std::fs::read(m.path().join("e.b2nd/data")).unwrap(), first);
        assert_eq!(decoded(&m), 0, "{}", stats(&m));
    }
    // An operand rewritten (the recipe file untouched): new values, never the old ones.
    let second = write_expression(&s.src, 42, true);
    assert_ne!(first, second);
    let m = mount(&s.src, &cache_args(&s.cache, &[]));
    assert_eq!(std::fs::read(m.path().join("e.b2nd/data")).unwrap(), second);
    assert!(decoded(&m) > 0);
}

#[test]
fn chunk_files_of_row_chunks_are_served_from_the_cache_padding_included() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let s = setup();
    // 1000 rows in chunks of 96 (the last one padded) spanning every
    // column: each chunk file is one run of `data` then zeros.
    let expected = {
        let raw = s.src.with_extension("rows.raw");
        run_python(
            r#"
import sys, numpy as np, blosc2
rng = np.random.default_rng(5)
a = (rng.standard_normal((1000, 300)) * 10).round(2)
blosc2.asarray(a, urlpath=sys.argv[1], mode="w", chunks=(96, 300), blocks=(32, 300))
open(sys.argv[2], "wb").write(a.tobytes())
"#,
            &[
                s.src.join("r.b2nd").to_str().unwrap(),
                raw.to_str().unwrap(),
            ],
        );
        std::fs::read(raw).unwrap()
    };
    let chunk_names = |m: &Mount| {
        let mut names: Vec<PathBuf> = std::fs::read_dir(m.path().join("r.b2nd/chunks"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
            .collect();
        // "<row chunk>.0", in chunk order.
        names.sort_by_key(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.split('.').next().unwrap().parse::<u64>().unwrap()
        });
        names
    };
    let decoded_chunks: Vec<Vec<u8>> = {
        let m = mount(&s.src, &cache_args(&s.cache, &[]));
        let chunks: Vec<Vec<u8>> = chunk_names(&m)
            .iter()
            .map(|p| std::fs::read(p).unwrap())
            .collect();
        read_until_cached(&m, &m.path().join("r.b2nd/data"), &expected, 1);
        chunks
    };
    assert_eq!(decoded_chunks.len(), 11);
    let row = 300 * 8;
    for (i, chunk) in decoded_chunks.iter().enumerate() {
        let start = i * 96 * row;
        let end = (start + 96 * row).min(expected.len());
        assert_eq!(chunk.len(), 96 * row);
        assert_eq!(&chunk[..end - start], &expected[start..end]);
        assert!(chunk[end - start..].iter().all(|&b| b == 0));
    }
    let m = mount(&s.src, &cache_args(&s.cache, &[]));
    let served: Vec<Vec<u8>> = chunk_names(&m)
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    assert_eq!(served, decoded_chunks);
    // A read straddling a chunk file's data and its padding.
    use std::os::unix::fs::FileExt;
    let last = std::fs::File::open(&chunk_names(&m)[10]).unwrap();
    let mut buf = vec![1u8; 100];
    last.read_exact_at(&mut buf, (1000 - 960) as u64 * row as u64 - 50)
        .unwrap();
    assert_eq!(buf, decoded_chunks[10][40 * row - 50..40 * row + 50]);
    assert_eq!(decoded(&m), 0, "{}", stats(&m));
    assert!(disk(&m, "hits") >= 11);
}

/// Write, in `dir`, `name` (contiguous, or a sparse frame's directory) of
/// `rows` x `cols` float64 from `seed` in chunks and blocks that leave the
/// edge chunks padded; beside it `name.raw` (numpy's C-order bytes) and
/// `name.chunks/<i>.<j>` (each chunk padded with zeros to its shape, as
/// numpy makes it).
fn write_grid(dir: &Path, name: &str, seed: u64, shape: (u64, u64), sparse: bool) {
    run_python(
        r#"
import os, sys, numpy as np, blosc2
path, seed, rows, cols, sparse = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
rng = np.random.default_rng(seed)
a = (rng.standard_normal((rows, cols)) * 100).round(1)
chunks, blocks = (64, 128), (16, 64)
blosc2.asarray(a, urlpath=path, mode="w", chunks=chunks, blocks=blocks, contiguous=not sparse,
               cparams={"codec": blosc2.Codec.LZ4, "clevel": 1})
open(path + ".raw", "wb").write(a.tobytes())
os.makedirs(path + ".chunks", exist_ok=True)
for i in range(-(-rows // chunks[0])):
    for j in range(-(-cols // chunks[1])):
        c = np.zeros(chunks)
        part = a[i * chunks[0]:(i + 1) * chunks[0], j * chunks[1]:(j + 1) * chunks[1]]
        c[:part.shape[0], :part.shape[1]] = part
        open(f"{path}.chunks/{i}.{j}", "wb").write(c.tobytes())
"#,
        &[
            dir.join(name).to_str().unwrap(),
            &seed.to_string(),
            &shape.0.to_string(),
            &shape.1.to_string(),
            if sparse { "1" } else { "0" },
        ],
    );
}

/// The objects of a sparse frame's directory `dir`, as keys under `prefix`.
fn sparse_objects(dir: &Path, prefix: &str) -> Vec<(PathBuf, String)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let key = format!("{prefix}/{}", path.file_name().unwrap().to_string_lossy());
            (path, key)
        })
        .collect()
}

/// Check the files of array folder `array` in `tree` against numpy's bytes
/// written by [`write_grid`] at `written`.
fn check_grid(tree: &std::collections::BTreeMap<PathBuf, Vec<u8>>, array: &str, written: &Path) {
    let raw = std::fs::read(written.with_extension("b2nd.raw")).unwrap();
    let file = |name: &str| &tree[&Path::new(array).join(name)];
    assert_eq!(file("data"), &raw, "{array}/data");
    assert!(file("data.npy").ends_with(&raw), "{array}/data.npy");
    let chunks = written.with_extension("b2nd.chunks");
    let mut n = 0;
    for e in std::fs::read_dir(&chunks).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let shown = Path::new(array).join("chunks").join(&name);
        let got = tree
            .get(&shown)
            .unwrap_or_else(|| panic!("no {} in {:?}", shown.display(), tree.keys()));
        assert_eq!(got, &std::fs::read(&path).unwrap(), "{}", shown.display());
        n += 1;
    }
    assert!(n >= 4, "{n} chunks");
    for name in ["meta.json", "preview.png", "data.txt"] {
        assert!(!file(name).is_empty(), "{array}/{name}");
    }
}

#[test]
fn every_file_of_an_s3_prefix_read_again_after_a_remount_costs_no_get() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let Some(moto) =
        Moto::start("every_file_of_an_s3_prefix_read_again_after_a_remount_costs_no_get")
    else {
        return;
    };
    let s = setup();
    // A contiguous frame of ~2 MB compressed (more than the open's first
    // MiB) and a sparse frame, both with padded edge chunks in both axes.
    write_grid(&s.src, "a.b2nd", 7, (600, 700), false);
    write_grid(&s.src, "s.b2nd", 8, (200, 300), true);
    // A frame of no known extension: shown after its first bytes are sniffed.
    write_grid(&s.src, "u.b2nd", 12, (100, 200), false);
    let mut objects = vec![
        (s.src.join("a.b2nd"), "a.b2nd".to_string()),
        (s.src.join("u.b2nd"), "u.blob".to_string()),
    ];
    objects.extend(sparse_objects(&s.src.join("s.b2nd"), "sub/s.b2nd"));
    moto.upload("tier", &objects);
    let env = moto.env();
    let env = env_refs(&env);
    let args = cache_args(&s.cache, &[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let url = Path::new("s3://tier/");
    let first = {
        let m = Mount::start_with_env(url, &args, &env);
        let tree = read_tree(m.path());
        check_grid(&tree, "a.b2nd", &s.src.join("a.b2nd"));
        check_grid(&tree, "sub/s.b2nd", &s.src.join("s.b2nd"));
        check_grid(&tree, "u.blob", &s.src.join("u.b2nd"));
        wait_idle(&m);
        let st = stats(&m);
        eprintln!(
            "first mount: gets {} heads {} lists {} bytes {}; disk {}",
            counter(&st, &["remote", "gets"]),
            counter(&st, &["remote", "heads"]),
            counter(&st, &["remote", "lists"]),
            counter(&st, &["remote", "bytes_fetched"]),
            st["disk_cache"]
        );
        assert!(counter(&st, &["remote", "gets"]) > 0);
        assert!(counter(&st, &["disk_cache", "remote_fills"]) > 0);
        assert_eq!(counter(&st, &["disk_cache", "fills_dropped"]), 0, "{st}");
        tree
    };
    for extra in [&[][..], &["--no-passthrough"][..]] {
        let all: Vec<&str> = args.iter().chain(extra).copied().collect();
        let m = Mount::start_with_env(url, &all, &env);
        let tree = read_tree(m.path());
        assert_eq!(
            tree.keys().collect::<Vec<_>>(),
            first.keys().collect::<Vec<_>>()
        );
        for (path, bytes) in &tree {
            assert!(bytes == &first[path], "{extra:?}: {}", path.display());
        }
        check_grid(&tree, "a.b2nd", &s.src.join("a.b2nd"));
        check_grid(&tree, "sub/s.b2nd", &s.src.join("s.b2nd"));
        check_grid(&tree, "u.blob", &s.src.join("u.b2nd"));
        let st = stats(&m);
        eprintln!(
            "remount {extra:?}: gets {} heads {} lists {}; disk {}",
            settled_gets(&m),
            counter(&st, &["remote", "heads"]),
            counter(&st, &["remote", "lists"]),
            st["disk_cache"]
        );
        assert_eq!(
            settled_gets(&m),
            0,
            "{extra:?}: GETs after the remount: {st}"
        );
        assert!(counter(&st, &["disk_cache", "remote_hits"]) > 0, "{st}");
    }
    // The object mounted alone (its identity from the mount's HEAD): no GET either.
    {
        let m = Mount::start_with_env(Path::new("s3://tier/a.b2nd"), &args, &env);
        let tree = read_tree(m.path());
        check_grid(&tree, "", &s.src.join("a.b2nd"));
        for (path, bytes) in &tree {
            assert!(
                bytes == &first[&Path::new("a.b2nd").join(path)],
                "{}",
                path.display()
            );
        }
        assert_eq!(settled_gets(&m), 0, "one object: {}", stats(&m));
    }
    // a.b2nd rewritten in S3 (a new ETag): its new bytes, never the old.
    write_grid(&s.src, "a.b2nd", 9, (600, 700), false);
    moto.upload("tier", &[(s.src.join("a.b2nd"), "a.b2nd".to_string())]);
    let m = Mount::start_with_env(url, &args, &env);
    let tree = read_tree(m.path());
    check_grid(&tree, "a.b2nd", &s.src.join("a.b2nd"));
    assert_ne!(
        tree[Path::new("a.b2nd/data")],
        first[Path::new("a.b2nd/data")]
    );
    check_grid(&tree, "sub/s.b2nd", &s.src.join("s.b2nd"));
    assert!(s3_gets(&m) > 0, "the rewritten object is fetched");
}

#[test]
fn an_s3_object_cached_in_part_fetches_only_what_is_missing() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let Some(moto) = Moto::start("an_s3_object_cached_in_part_fetches_only_what_is_missing") else {
        return;
    };
    let s = setup();
    write_grid(&s.src, "h.b2nd", 11, (1200, 700), false);
    let size = std::fs::metadata(s.src.join("h.b2nd")).unwrap().len();
    moto.upload("holes", &[(s.src.join("h.b2nd"), "h.b2nd".to_string())]);
    let env = moto.env();
    let env = env_refs(&env);
    let args = cache_args(&s.cache, &[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let url = Path::new("s3://holes/");
    let raw = std::fs::read(s.src.join("h.b2nd.raw")).unwrap();
    // The first mount reads the first row of chunks only.
    let kept = {
        let m = Mount::start_with_env(url, &args, &env);
        let chunk = std::fs::read(m.path().join("h.b2nd/chunks/0.0")).unwrap();
        assert_eq!(
            chunk,
            std::fs::read(s.src.join("h.b2nd.chunks/0.0")).unwrap()
        );
        wait_idle(&m);
        disk(&m, "remote_fill_bytes")
    };
    assert!(kept > 0 && kept < size, "{kept} of {size}");
    // The remount logs each GET's range.
    let mut logged = env.clone();
    logged.push(("RUST_LOG", "info,blosc2fs::source::remote::store=debug"));
    let m = Mount::start_with_env(url, &args, &logged);
    assert_eq!(std::fs::read(m.path().join("h.b2nd/data")).unwrap(), raw);
    let st = stats(&m);
    let fetched = counter(&st, &["remote", "bytes_fetched"]);
    assert!(counter(&st, &["disk_cache", "remote_hits"]) > 0, "{st}");
    let log = m.log_text();
    let gets = get_ranges(&log, "s3://holes/h.b2nd");
    assert_eq!(
        gets.iter().map(|r| r.end - r.start).sum::<u64>(),
        fetched,
        "the log names every GET: {log}"
    );
    // What the first mount kept is not fetched again. (A granule can be
    // fetched twice at once, by a read and by a prefetch hint whose GET
    // had not started yet; the union of what was fetched counts it once.)
    let union = union_len(gets);
    eprintln!(
        "holes: object {size}, kept {kept}, fetched after remount {fetched} ({union} distinct)"
    );
    assert!(
        union <= size - kept,
        "fetched {union} distinct bytes, object {size}, kept {kept}\n{log}"
    );
}

/// The byte ranges of the GETs of `url` a mount's debug log names.
fn get_ranges(log: &str, url: &str) -> Vec<std::ops::Range<u64>> {
    let prefix = format!("GET {url} bytes ");
    log.lines()
        .filter_map(|line| line.split_once(&prefix).map(|(_, r)| r.trim()))
        .map(|r| {
            let (a, b) = r.split_once("..").unwrap();
            a.parse().unwrap()..b.parse().unwrap()
        })
        .collect()
}

/// How many bytes `ranges` cover together.
fn union_len(mut ranges: Vec<std::ops::Range<u64>>) -> u64 {
    ranges.sort_by_key(|r| r.start);
    let (mut total, mut reached) = (0, 0);
    for r in ranges {
        let start = r.start.max(reached);
        if r.end > start {
            total += r.end - start;
        }
        reached = reached.max(r.end);
    }
    total
}

/// `/dev/fuse` opened up to every user (mode 0666, the usual default) for
/// as long as it lives, its old mode put back after.
struct FuseForUsers(Option<u32>);

impl FuseForUsers {
    fn open() -> FuseForUsers {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata("/dev/fuse").unwrap().permissions().mode() & 0o7777;
        if mode & 0o006 == 0o006 {
            return FuseForUsers(None);
        }
        std::fs::set_permissions("/dev/fuse", std::fs::Permissions::from_mode(0o666)).unwrap();
        FuseForUsers(Some(mode))
    }
}

impl Drop for FuseForUsers {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        if let Some(mode) = self.0 {
            let _ = std::fs::set_permissions("/dev/fuse", std::fs::Permissions::from_mode(mode));
        }
    }
}

/// The user the mount below runs as: nobody, no groups.
const NOBODY: &str = "65534";

/// `program args` run as [`NOBODY`]; its stdout, checked to succeed.
fn as_nobody(program: &Path, args: &[&Path]) -> Vec<u8> {
    let out = Command::new("setpriv")
        .args(["--reuid", NOBODY, "--regid", NOBODY, "--clear-groups"])
        .arg(program)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} {args:?} as nobody: {}",
        program.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A mount run by [`NOBODY`] through fusermount3 (so without CAP_SYS_ADMIN:
/// the kernel refuses it passthrough). Only that user may read it.
struct UserMount {
    child: std::process::Child,
    mnt: PathBuf,
    log: PathBuf,
}

impl UserMount {
    fn start(binary: &Path, src: &Path, mnt: &Path, cache: &Path) -> UserMount {
        let log = mnt.with_extension("log");
        let child = Command::new("setpriv")
            .args(["--reuid", NOBODY, "--regid", NOBODY, "--clear-groups"])
            .arg(binary)
            .arg("mount")
            .args([src, mnt])
            .arg("-f")
            .arg("--disk-cache")
            .arg(cache)
            .env("RUST_LOG", "info")
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut m = UserMount {
            child,
            mnt: mnt.to_path_buf(),
            log,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !mounted_at(mnt) {
            let gone = m.child.try_wait().unwrap().is_some();
            assert!(
                !gone && Instant::now() < deadline,
                "the mount as nobody did not come up: {}",
                m.log_text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        m
    }

    fn read(&self, name: &str) -> Vec<u8> {
        as_nobody(Path::new("/bin/cat"), &[&self.mnt.join(name)])
    }

    fn stats(&self) -> serde_json::Value {
        serde_json::from_slice(&self.read(".stats")).unwrap()
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for UserMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mnt).status();
        reap(&mut self.child, Duration::from_secs(15));
    }
}

/// Whether `/proc/self/mountinfo` lists a mount at `path` (root cannot
/// stat a FUSE mount another user made without allow_other).
fn mounted_at(path: &Path) -> bool {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let want = path.to_str().unwrap();
    info.lines()
        .any(|line| line.split(' ').nth(4) == Some(want))
}

#[test]
fn a_mount_without_cap_sys_admin_is_refused_passthrough_and_serves_the_cache_file() {
    use std::os::unix::fs::PermissionsExt;
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    for tool in ["setpriv", "fusermount3"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            eprintln!("SKIP: {tool} is not installed (scripts/test.sh installs fuse3)");
            return;
        }
    }
    let _fuse = FuseForUsers::open();
    let s = setup();
    let expected = write_array(&s.src, "a", 41, 256);
    // Everything the user needs: the binary (copied out of a build folder
    // it may not reach), the source, the cache folder and the mountpoint.
    let top = s.src.parent().unwrap();
    let binary_copy = top.join("blosc2fs");
    std::fs::copy(binary(), &binary_copy).unwrap();
    let mnt = top.join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    std::fs::create_dir(&s.cache).unwrap();
    for (path, mode) in [
        (top, 0o755),
        (&s.src, 0o755),
        (&s.cache, 0o777),
        (&mnt, 0o777),
    ] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let decoded = |st: &serde_json::Value| counter(st, &["blocks_decoded"]);
    {
        let m = UserMount::start(&binary_copy, &s.src, &mnt, &s.cache);
        assert_eq!(m.read("a.b2nd/data"), expected);
        let deadline = Instant::now() + Duration::from_secs(30);
        let filled = loop {
            let st = m.stats();
            let d = &st["disk_cache"];
            if d["wanted_bytes"] == 0 && d["queued_bytes"] == 0 && d["completed"] == 1 {
                break st;
            }
            assert!(Instant::now() < deadline, "never filled: {st}");
            std::thread::sleep(Duration::from_millis(50));
        };
        // Complete: the next open is offered to the kernel, which refuses
        // this user; the daemon serves the cache file without decoding.
        assert_eq!(m.read("a.b2nd/data"), expected);
        assert_eq!(m.read("a.b2nd/data"), expected);
        let st = m.stats();
        assert_eq!(decoded(&st), decoded(&filled), "{st}");
        assert_eq!(counter(&st, &["disk_cache", "passthrough_opens"]), 0);
        assert!(
            counter(&st, &["disk_cache", "cache_file_opens"]) >= 2,
            "{st}"
        );
        assert!(
            m.log_text().contains("FUSE passthrough refused"),
            "{}",
            m.log_text()
        );
    }
    // A remount by the same user reads the entry it filled, through the
    // daemon (no kernel pages survive the unmount).
    let m = UserMount::start(&binary_copy, &s.src, &mnt, &s.cache);
    assert_eq!(m.read("a.b2nd/data"), expected);
    let st = m.stats();
    assert_eq!(decoded(&st), 0, "{st}");
    assert_eq!(counter(&st, &["disk_cache", "passthrough_opens"]), 0);
    assert_eq!(counter(&st, &["disk_cache", "cache_file_opens"]), 1, "{st}");
    assert_eq!(
        counter(&st, &["disk_cache", "hit_bytes"]),
        expected.len() as u64,
        "{st}"
    );
}

/// Put `prefixes` x `per` small arrays into a new bucket `bucket` of the
/// moto on `port`: array k (`tree/pI/aK.b2nd`, or `tree/aK.b2nd` for one
/// prefix) holds the 100 float64 values k, k + 1, ..., k + 99 (python-blosc2's
/// defaults). Returns the keys.
fn put_small_arrays(moto: &Moto, bucket: &str, prefixes: usize, per: usize) -> Vec<String> {
    let keys: Vec<String> = (0..prefixes * per)
        .map(|k| match prefixes {
            1 => format!("tree/a{k:05}.b2nd"),
            _ => format!("tree/p{}/a{k:05}.b2nd", k / per),
        })
        .collect();
    let mut args = vec![bucket];
    args.extend(keys.iter().map(String::as_str));
    moto.run(
        r#"
import numpy as np, blosc2
from concurrent.futures import ThreadPoolExecutor
name, keys = sys.argv[2], sys.argv[3:]
bucket(name)
def put(k):
    body = blosc2.asarray(np.arange(100, dtype=np.float64) + k).to_cframe()
    s3.put_object(Bucket=name, Key=keys[k], Body=body)
with ThreadPoolExecutor(8) as pool:
    list(pool.map(put, range(len(keys))))
"#,
        &args,
    );
    keys
}

/// The `data` of array k of [`put_small_arrays`], from its definition.
fn small_array(k: usize) -> Vec<u8> {
    (0..100)
        .flat_map(|i| ((i + k) as f64).to_le_bytes())
        .collect()
}

/// What `find MNT` lists under the mount of `m`, relative to it.
fn find(m: &Mount) -> Vec<String> {
    let out = Command::new("find").arg(m.path()).output().unwrap();
    assert!(out.status.success(), "find failed");
    let root = m.path().display().to_string();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.strip_prefix(&root).unwrap_or(l).to_string())
        .collect()
}

#[test]
fn a_first_walk_of_an_s3_tree_sends_the_requests_of_a_walk_without_the_cache() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let Some(moto) =
        Moto::start("a_first_walk_of_an_s3_tree_sends_the_requests_of_a_walk_without_the_cache")
    else {
        return;
    };
    let s = setup();
    let keys = put_small_arrays(&moto, "walk", 3, 12);
    let env = moto.env();
    let env = env_refs(&env);
    let url = Path::new("s3://walk/tree/");
    // Listings and identities are kept for the whole walk (a long
    // attribute timeout): the requests do not depend on the walk's pace.
    let plain_args = ["--attr-timeout", "60"];
    let cache = s.cache.display().to_string();
    let cached_args = ["--attr-timeout", "60", "--disk-cache", &cache];
    let walk = |args: &[&str]| {
        let m = Mount::start_with_env(url, args, &env);
        let found = find(&m);
        (m, found)
    };
    let (plain, plain_found) = walk(&plain_args);
    let plain_st = stats(&plain);
    drop(plain);
    let (first, first_found) = walk(&cached_args);
    let first_st = stats(&first);
    drop(first);
    let (again, again_found) = walk(&cached_args);
    let again_st = stats(&again);
    let req = |st: &serde_json::Value, k: &str| counter(st, &["remote", k]);
    assert!(plain_found.len() > keys.len() * 5, "{plain_found:?}");
    assert_eq!(first_found, plain_found);
    assert_eq!(again_found, plain_found);
    assert_eq!(req(&plain_st, "gets"), keys.len() as u64, "{plain_st}");
    for k in ["lists", "gets", "heads"] {
        assert_eq!(
            req(&first_st, k),
            req(&plain_st, k),
            "{k} with the cache: {first_st}\nwithout: {plain_st}"
        );
    }
    // The remount walks with no GET, and every array reads exactly.
    assert_eq!(req(&again_st, "gets"), 0, "{again_st}");
    assert_eq!(req(&again_st, "lists"), req(&plain_st, "lists"));
    for (k, key) in keys.iter().enumerate() {
        let name = key.strip_prefix("tree/").unwrap();
        let data = std::fs::read(again.path().join(name).join("data")).unwrap();
        assert!(data == small_array(k), "{name}");
    }
    assert_eq!(s3_gets(&again), 0, "{}", stats(&again));
}

#[test]
fn an_s3_prefix_read_whole_through_the_cache_holds_a_few_descriptors() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let Some(moto) =
        Moto::start("an_s3_prefix_read_whole_through_the_cache_holds_a_few_descriptors")
    else {
        return;
    };
    let s = setup();
    // More objects than the daemon may hold descriptors: each one's cache
    // entry stays in memory with its array (the metadata cache), but not
    // its data file's descriptor.
    let keys = put_small_arrays(&moto, "many", 1, 400);
    let env = moto.env();
    let env = env_refs(&env);
    let args = cache_args(&s.cache, &[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let fds = |m: &Mount| {
        std::fs::read_dir(format!("/proc/{}/fd", m.pid()))
            .unwrap()
            .count()
    };
    // The cache holds at most 64 data files open; the rest is the kernel
    // connection, sockets and the log.
    const MOST: usize = 96;
    for pass in ["first", "after a remount"] {
        let m = Mount::start_limited(Path::new("s3://many/tree/"), &args, &env, 128);
        let mut peak = 0;
        for (k, key) in keys.iter().enumerate() {
            let name = key.strip_prefix("tree/").unwrap();
            let data = std::fs::read(m.path().join(name).join("data")).unwrap();
            assert!(data == small_array(k), "{pass}: {name}");
            if k % 25 == 0 {
                peak = peak.max(fds(&m));
            }
        }
        wait_idle(&m);
        let st = stats(&m);
        peak = peak.max(fds(&m));
        assert!(peak <= MOST, "{pass}: {peak} descriptors: {st}");
        assert!(counter(&st, &["disk_cache", "open_files"]) <= 64, "{st}");
        assert_eq!(counter(&st, &["disk_cache", "errors"]), 0, "{pass}: {st}");
        assert_eq!(counter(&st, &["read_errors"]), 0, "{pass}: {st}");
        if pass == "first" {
            assert_eq!(
                counter(&st, &["disk_cache", "remote_fills"]),
                keys.len() as u64,
                "{st}"
            );
        } else {
            assert_eq!(s3_gets(&m), 0, "{pass}: {st}");
        }
    }
}

#[test]
fn a_single_array_changed_while_open_in_passthrough_opens_anew_and_the_old_open_keeps_its_bytes() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    use std::os::unix::fs::FileExt;
    let s = setup();
    let first = write_array(&s.src, "a", 1, 128);
    // The array itself is the mount's source: its folder is the mount root.
    let m = mount(&s.src.join("a.b2nd"), &cache_args(&s.cache, &[]));
    let data = m.path().join("data");
    read_until_cached(&m, &data, &first, 1);
    let before = disk(&m, "passthrough_opens");
    let old = std::fs::File::open(&data).unwrap();
    assert_eq!(disk(&m, "passthrough_opens"), before + 1, "{}", stats(&m));
    let old_ino = old.metadata().unwrap().ino();
    let second = write_array(&s.src, "a", 2, 128);
    assert_ne!(first, second);
    std::thread::sleep(Duration::from_millis(500));
    // A new open reads the new version (under new inode numbers: the
    // kernel cannot serve one inode both by passthrough and by the daemon),
    // while the old open keeps reading what it opened.
    let new = std::fs::File::open(&data).unwrap();
    assert_ne!(new.metadata().unwrap().ino(), old_ino);
    let mut got = vec![0; second.len()];
    new.read_exact_at(&mut got, 0).unwrap();
    assert!(got == second, "a new open after the change");
    let mut kept = vec![0; first.len()];
    old.read_exact_at(&mut kept, 0).unwrap();
    assert!(kept == first, "the old open");
    assert!(std::fs::read(&data).unwrap() == second);
    drop((old, new));
    // The new version fills its own entry and is handed to the kernel in turn.
    read_until_cached(&m, &data, &second, 2);
    let before = disk(&m, "passthrough_opens");
    assert!(std::fs::read(&data).unwrap() == second);
    assert_eq!(disk(&m, "passthrough_opens"), before + 1, "{}", stats(&m));
}
