//! A data lake through a real mount: a daemon allowed 256 descriptors
//! walks and reads 2,000 arrays; a mount inside its own source; a folder
//! symlink to an ancestor. The in-process counterparts (descriptor cap 8,
//! a few KiB of metadata) are in `tests/lake.rs`.

mod common;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::lake::*;
use common::mount::*;

/// Run `cmd` with `args` under `timeout` seconds (a hang fails the test
/// instead of hanging it).
fn run(seconds: u32, cmd: &str, args: &[&Path]) -> Output {
    Command::new("timeout")
        .arg("-k")
        .arg("5")
        .arg(seconds.to_string())
        .arg(cmd)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run {cmd}: {e}"))
}

fn fds_of(pid: i32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

#[test]
fn two_thousand_arrays_under_ulimit_256_find_clean_read_exact_and_the_root_still_lists() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let t = templates();
    let (src, arrays) = lake(2000, 100);
    let mnt = tempfile::tempdir().unwrap();
    let mount = Mount::start_at(
        src.path(),
        mnt.path(),
        &["--cache-size", "16M", "--meta-cache", "1M"],
        Some(256),
    );

    let found = run(300, "find", &[mount.path()]);
    assert!(
        found.status.success(),
        "find failed: {}\nlog:\n{}",
        String::from_utf8_lossy(&found.stderr),
        mount.log_text()
    );
    assert!(
        found.stderr.is_empty(),
        "find said: {}",
        String::from_utf8_lossy(&found.stderr)
    );
    let lines = String::from_utf8_lossy(&found.stdout).lines().count();
    assert!(lines > 2000 * 8, "find saw {lines} entries");
    assert!(
        fds_of(mount.pid()) < 256,
        "the daemon holds {} descriptors",
        fds_of(mount.pid())
    );

    for (rel, name) in &arrays {
        let got = std::fs::read(mount.path().join(rel).join("data"))
            .unwrap_or_else(|e| panic!("{rel}/data: {e}"));
        assert!(got == t.raw(name), "{rel}/data differs");
    }
    let root: Vec<String> = std::fs::read_dir(mount.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(root.len(), 22, "20 folders, .stats and zarr.json: {root:?}");
    let stats = mount.stats();
    assert!(
        stats["descriptors"]["cached"].as_u64().unwrap()
            <= stats["descriptors"]["capacity"].as_u64().unwrap(),
        "{}",
        stats["descriptors"]
    );
    assert_eq!(stats["descriptors"]["capacity"], 64, "a quarter of 256");
    assert!(
        stats["meta_cache"]["bytes"].as_u64().unwrap() <= 1 << 20,
        "{}",
        stats["meta_cache"]
    );
    assert_eq!(stats["read_errors"], 0);
    assert!(fds_of(mount.pid()) < 256);
}

#[test]
fn a_mount_inside_its_own_source_walks_without_entering_itself_and_unmounts_cleanly() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let t = templates();
    let src = tempfile::tempdir().unwrap();
    let arrays = lake_in(src.path(), 8, 4);
    let mnt = src.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    symlink("mnt", src.path().join("to-mnt")).unwrap();
    let mut mount = Mount::start_at(src.path(), &mnt, &[], None);

    let listed = run(60, "ls", &[Path::new("-R"), mount.path()]);
    assert!(
        listed.status.success(),
        "ls -R: {}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let found = run(60, "find", &[mount.path()]);
    assert!(
        found.status.success() && found.stderr.is_empty(),
        "find: {}",
        String::from_utf8_lossy(&found.stderr)
    );
    let text = String::from_utf8_lossy(&found.stdout);
    let root = mount.path().to_string_lossy().into_owned();
    let inside: Vec<&str> = text.lines().filter(|l| *l != root).collect();
    assert_eq!(
        inside.iter().filter(|l| l.ends_with(".b2nd")).count(),
        8,
        "{text}"
    );
    assert!(
        !inside
            .iter()
            .any(|l| l.ends_with("/mnt") || l.ends_with("/to-mnt")),
        "the mount showed itself:\n{text}"
    );
    assert!(!mount.path().join("mnt").exists() && !mount.path().join("to-mnt").exists());
    for (rel, name) in &arrays {
        assert!(
            std::fs::read(mount.path().join(rel).join("data")).unwrap() == t.raw(name),
            "{rel}"
        );
    }
    let pid = mount.pid();
    let out = Command::new(binary())
        .arg("unmount")
        .arg(mount.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "unmount: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        mount.wait_exit(Duration::from_secs(10)),
        Some(0),
        "the daemon {pid} did not exit; log:\n{}",
        mount.log_text()
    );
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "process {pid} left behind"
    );
}

#[test]
fn a_folder_symlink_to_an_ancestor_is_a_symlink_and_find_sees_the_tree_once() {
    let Some(_serial) = serial_with_fuse() else {
        return;
    };
    let src = tempfile::tempdir().unwrap();
    let arrays = lake_in(src.path(), 4, 2);
    symlink(".", src.path().join("loop")).unwrap();
    symlink("../..", src.path().join("d01/a0002.b2nd.up")).unwrap();
    let mount = Mount::start(src.path(), &[]);

    let link = mount.path().join("loop");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("."));
    assert_eq!(
        std::fs::canonicalize(&link).unwrap(),
        std::fs::canonicalize(mount.path()).unwrap(),
        "it leads back inside the mount"
    );
    let found = run(
        60,
        "find",
        &[mount.path(), Path::new("-name"), Path::new("*.b2nd")],
    );
    assert!(
        found.status.success(),
        "{}",
        String::from_utf8_lossy(&found.stderr)
    );
    let mut names: Vec<String> = String::from_utf8_lossy(&found.stdout)
        .lines()
        .map(|l| l.rsplit('/').next().unwrap().to_string())
        .collect();
    names.sort();
    let mut want: Vec<String> = arrays
        .iter()
        .map(|(rel, _)| rel.rsplit('/').next().unwrap().to_string())
        .collect();
    want.sort();
    assert_eq!(names, want, "each array once");
}
