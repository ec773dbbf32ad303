//! A data lake in-process: many arrays, few descriptors, a small metadata
//! budget, and the tree walk's safety (symlink loops, the mount's own
//! mountpoint), driven through `blosc2fs::fs::Filesystem` without FUSE.
//! The same limits under a real mount are in `tests/lake_mount.rs`.
//!
//! Expected bytes come from the python-blosc2 4.14.1 oracle: a few template
//! arrays with the numpy bytes (`.raw`) and `np.save` files (`.npy`) they
//! were made from; the lake is copies of them under many names.
//!
//! This binary sets the process-wide descriptor pool to 8, so every test
//! here runs with that cap.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, MutexGuard};

use blosc2fs::fs::{Filesystem, FsConfig, FsError, Kind};
use blosc2fs::read::planner::layout_budget;
use blosc2fs::read::{Blocks, Planner, Stats};
use blosc2fs::source::fds;
use common::inproc::*;
use common::lake::*;

/// The descriptor pool's cap in this binary.
const FD_CAP: usize = 8;

/// Tests here share the process-wide descriptor pool: one at a time, with
/// the pool capped at [`FD_CAP`].
fn turn() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    fds::pool().set_capacity(FD_CAP);
    guard
}

fn filesystem(source: &Path, meta_cache: usize, mountpoint: Option<PathBuf>) -> Filesystem {
    let budget = 4 << 20;
    let blocks = Arc::new(Blocks::new(
        budget,
        layout_budget(budget),
        Arc::new(Stats::default()),
    ));
    let planner = Arc::new(Planner::new(blocks, None, 1 << 20));
    Filesystem::new(
        source,
        planner,
        FsConfig {
            meta_cache,
            mountpoint,
            ..FsConfig::default()
        },
    )
    .unwrap()
}

fn read_path(fs: &Filesystem, path: &str) -> Result<Vec<u8>, FsError> {
    read_ino(fs, walk(fs, path)?.ino)
}

fn stats(fs: &Filesystem) -> serde_json::Value {
    serde_json::from_slice(&read_path(fs, ".stats").unwrap()).unwrap()
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Every `data`, `data.npy` and `meta.json` of the lake, checked exactly.
fn check_every_array(fs: &Filesystem, arrays: &[(String, &str)]) {
    let t = templates();
    for (rel, name) in arrays {
        assert!(
            read_path(fs, &format!("{rel}/data")).unwrap() == t.raw(name),
            "{rel}/data"
        );
        assert!(
            read_path(fs, &format!("{rel}/data.npy")).unwrap() == t.npy(name),
            "{rel}/data.npy"
        );
        let meta: serde_json::Value =
            serde_json::from_slice(&read_path(fs, &format!("{rel}/meta.json")).unwrap()).unwrap();
        assert_eq!(meta["shape"], t.info[name]["shape"], "{rel}/meta.json");
        assert_eq!(meta["dtype"], t.info[name]["dtype"], "{rel}/meta.json");
    }
}

#[test]
fn three_hundred_arrays_through_eight_descriptors_and_a_few_kib_of_metadata() {
    let _turn = turn();
    let (src, arrays) = lake(300, 30);
    let budget = 24 << 10;
    let fs = filesystem(src.path(), budget, None);
    let fds_before = open_fds();

    // The walk: every folder listed, every array folder listed.
    let folders = children(&fs, ROOT);
    assert_eq!(
        folders.iter().filter(|(_, k, _)| *k == Kind::Dir).count(),
        10
    );
    let mut seen = 0;
    for (ino, _, folder) in folders.iter().filter(|(_, k, _)| *k == Kind::Dir) {
        for (array_ino, kind, name) in children(&fs, *ino) {
            if name == "zarr.json" {
                continue; // the folder's Zarr v3 group (tests/zarr_v3.rs)
            }
            assert_eq!(kind, Kind::Dir, "{folder}/{name}");
            let files: Vec<String> = children(&fs, array_ino)
                .into_iter()
                .map(|(_, _, n)| n)
                .collect();
            assert!(
                files.contains(&"data".to_string()) && files.contains(&"meta.json".to_string()),
                "{folder}/{name}: {files:?}"
            );
            seen += 1;
            assert!(
                open_fds() <= fds_before + FD_CAP,
                "descriptors grow with the tree: {} open",
                open_fds()
            );
        }
    }
    assert_eq!(seen, 300);
    check_every_array(&fs, &arrays);
    // Twice: the second pass loads what the budget let go of, the same.
    check_every_array(&fs, &arrays);

    let s = stats(&fs);
    let meta = &s["meta_cache"];
    assert_eq!(meta["budget"], budget as u64);
    assert!(meta["bytes"].as_u64().unwrap() <= budget as u64, "{meta}");
    assert!(
        meta["entries"].as_u64().unwrap() < 20,
        "a few KiB hold a few entries: {meta}"
    );
    assert!(meta["evictions"].as_u64().unwrap() > 500, "{meta}");
    assert!(
        meta["loads"].as_u64().unwrap() > 600,
        "every array loaded again on the second pass: {meta}"
    );
    let d = &s["descriptors"];
    assert_eq!(d["capacity"], FD_CAP as u64);
    assert!(d["cached"].as_u64().unwrap() <= FD_CAP as u64, "{d}");
    assert!(
        open_fds() <= fds_before + FD_CAP,
        "{} descriptors open, {fds_before} before",
        open_fds()
    );
    assert_eq!(s["read_errors"], 0);
    drop(fs);

    // A budget that keeps every entry: the entries stay, their descriptors
    // do not, and reads open the files again (checked to be the same).
    let fs = filesystem(src.path(), 64 << 20, None);
    let reopens_before = fds::pool().stats().reopens;
    check_every_array(&fs, &arrays);
    check_every_array(&fs, &arrays);
    let s = stats(&fs);
    assert_eq!(s["meta_cache"]["evictions"], 0, "{}", s["meta_cache"]);
    assert!(
        s["meta_cache"]["entries"].as_u64().unwrap() >= 300,
        "{}",
        s["meta_cache"]
    );
    let d = &s["descriptors"];
    assert!(d["cached"].as_u64().unwrap() <= FD_CAP as u64, "{d}");
    assert!(fds::pool().stats().reopens - reopens_before >= 200, "{d}");
    assert!(
        open_fds() <= fds_before + FD_CAP,
        "{} descriptors open, {fds_before} before",
        open_fds()
    );
    assert_eq!(s["read_errors"], 0);
}

#[test]
fn a_file_replaced_while_its_entry_was_evicted_shows_its_new_version_never_a_mix() {
    let _turn = turn();
    let t = templates();
    let (src, arrays) = lake(40, 40);
    let fs = filesystem(src.path(), 8 << 10, None);
    let target = "d00/a0000.b2nd";
    assert_eq!(arrays[0], (target.to_string(), "f8"));
    let old_data = walk(&fs, &format!("{target}/data")).unwrap();
    assert!(read_ino(&fs, old_data.ino).unwrap() == t.raw("f8"));

    // Another handle stays open on it across everything below.
    let held = fs.open(old_data.ino, false).unwrap().fh;

    // The walk over the others evicts its entry and its descriptor.
    check_every_array(&fs, &arrays[1..]);
    let s = stats(&fs);
    assert!(
        s["meta_cache"]["evictions"].as_u64().unwrap() > 30,
        "{}",
        s["meta_cache"]
    );

    // Replaced by another array (new inode, other size and dtype).
    let tmp = src.path().join("d00/.partial");
    t.copy("i4", &tmp);
    std::fs::rename(&tmp, src.path().join(target)).unwrap();

    // New lookups present the new version, whole.
    let new_data = walk(&fs, &format!("{target}/data")).unwrap();
    assert_ne!(new_data.ino, old_data.ino, "a new node");
    assert_eq!(new_data.size, t.raw("i4").len() as u64);
    assert!(read_ino(&fs, new_data.ino).unwrap() == t.raw("i4"));
    let meta: serde_json::Value =
        serde_json::from_slice(&read_path(&fs, &format!("{target}/meta.json")).unwrap()).unwrap();
    assert_eq!(meta["dtype"], "<i4");
    assert!(read_path(&fs, &format!("{target}/data.npy")).unwrap() == t.npy("i4"));

    // The handle opened before reads the old bytes, whole and exact: its
    // descriptor was kept for it.
    let mut old = Vec::new();
    loop {
        let got = fs.read(held, old.len() as u64, 4096).unwrap();
        if got.is_empty() {
            break;
        }
        old.extend_from_slice(&got);
    }
    assert!(old == t.raw("f8"), "the open handle keeps its version");
    fs.release(held);

    // Rewritten in place while evicted (same inode, other bytes): never a mix.
    let in_place = "d00/a0004.b2nd";
    assert_eq!(arrays[4].1, "f8");
    let before = walk(&fs, &format!("{in_place}/data")).unwrap();
    check_every_array(&fs, &arrays[5..20]);
    std::fs::write(
        src.path().join(in_place),
        std::fs::read(t.dir.path().join("u1.b2nd")).unwrap(),
    )
    .unwrap();
    // The old inode, no longer held by anything: stale, so the kernel looks again.
    let err = read_ino(&fs, before.ino).unwrap_err();
    assert_eq!(err.errno(), libc::ESTALE, "{err}");
    assert!(read_path(&fs, &format!("{in_place}/data")).unwrap() == t.raw("u1"));
    assert_eq!(stats(&fs)["read_errors"], 0);
}

#[test]
fn a_symlink_to_an_ancestor_is_a_symlink_and_the_tree_is_seen_once() {
    let _turn = turn();
    let (src, arrays) = lake(6, 3);
    std::os::unix::fs::symlink(".", src.path().join("loop")).unwrap();
    std::os::unix::fs::symlink("..", src.path().join("d01/up")).unwrap();
    std::os::unix::fs::symlink("../d00", src.path().join("d01/sibling")).unwrap();
    // A FIFO is never opened (opening it would hang the walk).
    let fifo = src.path().join("d00/pipe.b2nd");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let fs = filesystem(src.path(), 1 << 20, None);

    let root: Vec<(Kind, String)> = children(&fs, ROOT)
        .into_iter()
        .map(|(_, k, n)| (k, n))
        .collect();
    assert!(root.contains(&(Kind::Symlink, "loop".into())), "{root:?}");
    let loop_attr = walk(&fs, "loop").unwrap();
    assert_eq!(loop_attr.kind, Kind::Symlink);
    assert_eq!(fs.readlink(loop_attr.ino).unwrap(), ".");
    let up = walk(&fs, "d01/up").unwrap();
    assert_eq!(
        (up.kind, fs.readlink(up.ino).unwrap().into_string().unwrap()),
        (Kind::Symlink, "..".to_string())
    );
    // A link to a sibling tree is a folder, as before.
    assert_eq!(walk(&fs, "d01/sibling").unwrap().kind, Kind::Dir);
    assert!(read_path(&fs, "d01/sibling/a0000.b2nd/data").unwrap() == templates().raw(arrays[0].1));
    // A folder is not a link target.
    assert_eq!(
        fs.readlink(walk(&fs, "d00").unwrap().ino)
            .unwrap_err()
            .errno(),
        libc::EINVAL
    );

    // A full walk (following folders, never symlinks) sees each array once,
    // plus the sibling link's copies.
    fn count(fs: &Filesystem, ino: u64, depth: usize, out: &mut Vec<String>) {
        assert!(depth < 10, "the walk went too deep");
        for (child, kind, name) in children(fs, ino) {
            if name.ends_with(".b2nd") {
                out.push(name);
            } else if kind == Kind::Dir {
                count(fs, child, depth + 1, out);
            }
        }
    }
    let mut found = Vec::new();
    count(&fs, ROOT, 0, &mut found);
    assert_eq!(found.len(), 6 + 3, "{found:?}");
    assert!(!found.contains(&"pipe.b2nd".to_string()));
}

#[test]
fn the_mounts_own_mountpoint_is_never_listed_looked_up_or_followed() {
    let _turn = turn();
    let (src, _) = lake(3, 3);
    let mnt = src.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    std::os::unix::fs::symlink("mnt", src.path().join("tomnt")).unwrap();
    std::os::unix::fs::symlink("../d00/../mnt", src.path().join("d00/deep")).unwrap();
    let fs = filesystem(
        src.path(),
        1 << 20,
        Some(std::fs::canonicalize(&mnt).unwrap()),
    );
    let root: Vec<String> = children(&fs, ROOT).into_iter().map(|(_, _, n)| n).collect();
    assert_eq!(root, [".stats", "zarr.json", "d00"]);
    for name in ["mnt", "tomnt", "d00/deep"] {
        assert_eq!(walk(&fs, name).unwrap_err().errno(), libc::ENOENT, "{name}");
    }
    // Without the fence (another mount elsewhere), the folder is an ordinary one.
    let open = filesystem(src.path(), 1 << 20, None);
    assert_eq!(walk(&open, "mnt").unwrap().kind, Kind::Dir);
}

/// A `.b2z` and a `.b2d` DictStore of `n` keys `/gGG/kNNNN` (20 groups),
/// value i = `np.arange(50, dtype="<i4") + i`: a member file for even i,
/// embedded (small) for odd i.
const STORE_ORACLE: &str = r#"
import sys
import numpy as np
import blosc2
out, n = sys.argv[1], int(sys.argv[2])
for path in (out + "/big.b2z", out + "/big.b2d"):
    with blosc2.DictStore(path, mode="w", threshold=64) as s:
        for i in range(n):
            v = np.arange(50, dtype="<i4") + i
            s[f"/g{i % 20:02d}/k{i:04d}"] = blosc2.asarray(v) if i % 2 == 0 else v[:3]
"#;

#[test]
fn stores_of_thousands_of_keys_list_and_read_within_the_budget() {
    let _turn = turn();
    let n = 2000;
    let src = tempfile::tempdir().unwrap();
    let out = Command::new(python())
        .arg("-c")
        .arg(STORE_ORACLE)
        .arg(src.path())
        .arg(n.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "oracle failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let budget = 1 << 20;
    let fs = filesystem(src.path(), budget, None);
    let fds_before = open_fds();
    for store in ["big.b2z", "big.b2d"] {
        for pass in 0..2 {
            let mut values = 0;
            for (gino, _, group) in children(&fs, walk(&fs, store).unwrap().ino)
                .into_iter()
                .filter(|(_, k, _)| *k == Kind::Dir)
            {
                for (_, _, key) in children(&fs, gino)
                    .into_iter()
                    .filter(|(_, k, _)| *k == Kind::Dir)
                {
                    let i: i32 = key[1..].parse().unwrap();
                    let len = if i % 2 == 0 { 50 } else { 3 };
                    let want: Vec<u8> = (0..len).flat_map(|j| (j + i).to_le_bytes()).collect();
                    let got = read_path(&fs, &format!("{store}/{group}/{key}/data")).unwrap();
                    assert!(got == want, "{store}/{group}/{key} (pass {pass})");
                    values += 1;
                }
            }
            assert_eq!(values, n, "{store}");
            assert!(open_fds() <= fds_before + FD_CAP);
        }
    }
    let s = stats(&fs);
    assert!(
        s["meta_cache"]["bytes"].as_u64().unwrap() <= budget as u64,
        "{}",
        s["meta_cache"]
    );
    assert!(
        s["meta_cache"]["evictions"].as_u64().unwrap() > 1000,
        "{}",
        s["meta_cache"]
    );
    assert_eq!(s["read_errors"], 0);
}
