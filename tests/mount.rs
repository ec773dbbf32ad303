//! Real mounts: what a user of the mount sees (runs as root in CI).

mod common;

use std::ffi::CString;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::mount::{binary, is_mountpoint, run_python, serial_with_fuse, Mount};
use common::*;

fn fixture_entries() -> Vec<(String, serde_json::Value)> {
    read_manifest(&fixtures_dir()).into_iter().collect()
}

/// Where an entry's array directory appears in a mount of the fixtures dir.
fn mounted(m: &Mount, entry: &serde_json::Value) -> std::path::PathBuf {
    m.path().join(entry["path"].as_str().unwrap())
}

#[test]
fn tree_layout_and_exact_bytes_of_every_fixture() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let m = Mount::start(&fixtures_dir(), &["--cache-size", "64M"]);
    // manifest.json is not a Blosc2 file: not shown.
    assert!(!m.path().join("manifest.json").exists());
    let root: Vec<String> = std::fs::read_dir(m.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(root.contains(&".stats".to_string()), "{root:?}");
    let mut checked = 0;
    for (name, entry) in fixture_entries() {
        let dir = mounted(&m, &entry);
        assert!(dir.is_dir(), "{name}: {} is not a directory", dir.display());
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        // The views (data.txt, preview.png) and the sidecar headers depend on the dtype and
        // rank: see views_read_with_head_and_pillow and legacy_readers_open_data_through_the_sidecar_headers
        // (zarr.json, the Zarr v3 array node: tests/zarr_v3.rs).
        names.retain(|n| {
            ![
                "data.txt",
                "preview.png",
                "data.nhdr",
                "data.mhd",
                "data.hdr",
                "zarr.json",
            ]
            .contains(&n.as_str())
        });
        assert_eq!(names, ["chunks", "data", "data.npy", "meta.json"], "{name}");
        let data = std::fs::read(dir.join("data")).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            data.len() as u64,
            entry["size"].as_u64().unwrap(),
            "{name}: size"
        );
        assert_eq!(
            sha256_hex(&data),
            entry["sha256"].as_str().unwrap(),
            "{name}: bytes"
        );
        assert_eq!(
            std::fs::metadata(dir.join("data")).unwrap().len(),
            data.len() as u64,
            "{name}: stat size"
        );
        let meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("meta.json")).unwrap()).unwrap();
        assert_eq!(meta["format"], entry["kind"], "{name}");
        assert_eq!(meta["storage"], entry["storage"], "{name}");
        assert_eq!(meta["itemsize"], entry["itemsize"], "{name}");
        assert_eq!(meta["nchunks"], entry["nchunks"], "{name}");
        if entry["kind"] != "frame" {
            assert_eq!(meta["shape"], entry["shape"], "{name}");
            assert_eq!(meta["chunkshape"], entry["chunkshape"], "{name}");
            assert_eq!(meta["blockshape"], entry["blockshape"], "{name}");
        }
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} fixtures");
    // Files are read-only, directories 0555.
    let (_, first) = fixture_entries().remove(0);
    let dir = mounted(&m, &first);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(dir.join("data"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o444
    );
    assert_eq!(
        std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o555
    );
}

#[test]
fn numpy_loads_data_npy_and_zarr_reads_chunks() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let m = Mount::start(&fixtures_dir(), &[]);
    let mut paths = Vec::new();
    for (name, entry) in fixture_entries() {
        if entry["kind"] == "frame" {
            continue;
        }
        paths.push((name, mounted(&m, &entry), entry));
    }
    // One Python process checks them all: np.load(mmap) and zarr must give the exact bytes.
    let code = r#"
import sys, json, hashlib, numpy as np, zarr
out = {}
for name, path in json.loads(sys.argv[1]):
    a = np.load(path + "/data.npy", mmap_mode="r")
    z = zarr.open_array(path + "/chunks", mode="r")
    zb = np.ascontiguousarray(z[...]).tobytes()
    out[name] = [hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest(), list(a.shape), hashlib.sha256(zb).hexdigest()]
print(json.dumps(out))
"#;
    let arg: Vec<(String, String)> = paths
        .iter()
        .map(|(n, p, _)| (n.clone(), p.to_string_lossy().into_owned()))
        .collect();
    let result: serde_json::Value =
        serde_json::from_str(&run_python(code, &[&serde_json::to_string(&arg).unwrap()])).unwrap();
    for (name, _, entry) in &paths {
        let got = &result[name];
        assert_eq!(got[0], entry["sha256"], "{name}: np.load bytes");
        assert_eq!(got[1], entry["shape"], "{name}: np.load shape");
        assert_eq!(got[2], entry["sha256"], "{name}: zarr bytes");
    }
}

#[test]
fn xattrs_show_dtype_shape_and_chunkshape() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let m = Mount::start(&conformance_dir(), &[]);
    let data = m.path().join("example_item_prices.b2nd/data");
    let get = |name: &str| -> String {
        let path = CString::new(data.as_os_str().as_bytes()).unwrap();
        let attr = CString::new(name).unwrap();
        let mut buf = vec![0u8; 256];
        let n = unsafe {
            libc::getxattr(
                path.as_ptr(),
                attr.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        };
        assert!(
            n >= 0,
            "getxattr {name}: {}",
            std::io::Error::last_os_error()
        );
        String::from_utf8(buf[..n as usize].to_vec()).unwrap()
    };
    assert_eq!(get("user.blosc2.shape"), "[12,25,250]");
    assert_eq!(get("user.blosc2.chunkshape"), "[8,10,50]");
    // Declared |u1 over 4-byte items: the presented dtype follows the typesize.
    assert_eq!(get("user.blosc2.dtype"), "|V4");
    let path = CString::new(data.as_os_str().as_bytes()).unwrap();
    let mut names = vec![0u8; 256];
    let n = unsafe { libc::listxattr(path.as_ptr(), names.as_mut_ptr().cast(), names.len()) };
    assert!(n > 0, "listxattr: {}", std::io::Error::last_os_error());
    assert_eq!(
        &names[..n as usize],
        b"user.blosc2.dtype\0user.blosc2.shape\0user.blosc2.chunkshape\0user.blosc2.codec\0"
    );
    let missing = CString::new("user.nope").unwrap();
    let rc = unsafe {
        libc::getxattr(
            path.as_ptr(),
            missing.as_ptr(),
            names.as_mut_ptr().cast(),
            names.len(),
        )
    };
    assert_eq!(
        (rc, std::io::Error::last_os_error().raw_os_error()),
        (-1, Some(libc::ENODATA))
    );
    let rc = unsafe {
        libc::getxattr(
            path.as_ptr(),
            CString::new("user.blosc2.shape").unwrap().as_ptr(),
            names.as_mut_ptr().cast(),
            3,
        )
    };
    assert_eq!(
        (rc, std::io::Error::last_os_error().raw_os_error()),
        (-1, Some(libc::ERANGE))
    );
}

#[test]
fn writes_are_refused_read_only() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let m = Mount::start(&conformance_dir(), &[]);
    let data = m.path().join("example_day_month_temp.b2nd/data");
    let err = std::fs::OpenOptions::new()
        .write(true)
        .open(&data)
        .unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EROFS), "{err}");
    let err = std::fs::File::create(m.path().join("new.b2nd")).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EROFS), "{err}");
    let err = std::fs::create_dir(m.path().join("dir")).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EROFS), "{err}");
    let err = std::fs::remove_file(&data).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EROFS), "{err}");
}

#[test]
fn concurrent_readers_threads_and_processes() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let m = Mount::start(
        &conformance_dir(),
        &["--cache-size", "1M", "--threads", "4"],
    );
    let manifest = read_manifest(&conformance_dir());
    let targets: Vec<(std::path::PathBuf, String)> = [
        "example_item_prices.b2nd",
        "frame_simple-zstd.b2frame",
        "frame_simple-lz4.b2frame",
        "frame_simple-blosclz.b2frame",
    ]
    .iter()
    .map(|n| {
        (
            m.path().join(n).join("data"),
            manifest[*n]["sha256"].as_str().unwrap().to_string(),
        )
    })
    .collect();
    let mut children = Vec::new();
    for (path, _) in &targets {
        for _ in 0..2 {
            children.push(Command::new("sha256sum").arg(path).output_async());
        }
    }
    std::thread::scope(|s| {
        for t in 0..8 {
            let targets = &targets;
            s.spawn(move || {
                let (path, expected) = &targets[t % targets.len()];
                let f = std::fs::File::open(path).unwrap();
                let len = f.metadata().unwrap().len();
                let mut buf = vec![0u8; len as usize];
                // Read in odd-sized pieces, back to front, to mix offsets.
                let step = 7919 * (t as u64 + 1);
                let mut pos = len;
                while pos > 0 {
                    let start = pos.saturating_sub(step);
                    f.read_exact_at(&mut buf[start as usize..pos as usize], start)
                        .unwrap();
                    pos = start;
                }
                assert_eq!(&sha256_hex(&buf), expected, "{}", path.display());
            });
        }
    });
    for (child, (i, _)) in children
        .into_iter()
        .zip(targets.iter().flat_map(|t| [t, t]).enumerate())
    {
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.starts_with(&targets[i / 2].1),
            "process reader {i}: {text}"
        );
    }
    let stats = m.stats();
    assert!(stats["cache_bytes"].as_u64().unwrap() <= 1 << 20, "{stats}");
}

trait OutputAsync {
    fn output_async(&mut self) -> std::process::Child;
}

impl OutputAsync for Command {
    fn output_async(&mut self) -> std::process::Child {
        self.stdout(std::process::Stdio::piped()).spawn().unwrap()
    }
}

#[test]
fn sequential_scan_decodes_each_block_about_once() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let m = Mount::start(&conformance_dir(), &["--cache-size", "64M"]);
    let path = m.path().join("example_item_prices.b2nd/data");
    let mut f = std::fs::File::open(&path).unwrap();
    let mut buf = Vec::new();
    f.read_to_end(&mut buf).unwrap();
    assert_eq!(
        sha256_hex(&buf),
        read_manifest(&conformance_dir())["example_item_prices.b2nd"]["sha256"]
            .as_str()
            .unwrap()
    );
    let stats = m.stats();
    let decoded = stats["bytes_decoded"].as_f64().unwrap();
    // 30 chunks of 8x10x50 (padded to blocks 4x5x10: no padding) = all 300000 bytes, each block once.
    assert!(
        decoded <= 1.1 * 300_000.0,
        "decoded {decoded} bytes for a 300000-byte scan: {stats}"
    );
    assert!(decoded >= 300_000.0, "{stats}");
}

#[test]
fn source_change_shows_on_next_open_and_open_handle_keeps_its_version() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let src = tempfile::tempdir().unwrap();
    let conf = conformance_dir();
    std::fs::copy(
        conf.join("frame_simple-zstd.b2frame"),
        src.path().join("a.b2frame"),
    )
    .unwrap();
    let m = Mount::start(src.path(), &["--attr-timeout", "0.1"]);
    let data = m.path().join("a.b2frame/data");
    let manifest = read_manifest(&conf);
    let old = std::fs::read(&data).unwrap();
    assert_eq!(
        sha256_hex(&old),
        manifest["frame_simple-zstd.b2frame"]["sha256"]
            .as_str()
            .unwrap()
    );
    let held = std::fs::File::open(&data).unwrap();
    // Replace the source (write a new file, rename over).
    std::fs::copy(
        conf.join("varchunks-lz4-3.0.0.b2frame"),
        src.path().join("tmp"),
    )
    .unwrap();
    std::fs::rename(src.path().join("tmp"), src.path().join("a.b2frame")).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let new = std::fs::read(&data).unwrap();
    assert_eq!(
        sha256_hex(&new),
        manifest["varchunks-lz4-3.0.0.b2frame"]["sha256"]
            .as_str()
            .unwrap()
    );
    // The handle opened before the change still reads the old version, unmixed.
    let mut again = vec![0u8; 1 << 20];
    held.read_exact_at(&mut again, 0).unwrap();
    assert_eq!(&again[..], &old[..1 << 20]);
    // A deleted source disappears.
    std::fs::remove_file(src.path().join("a.b2frame")).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(!m.path().join("a.b2frame").exists());
}

#[test]
fn corrupt_chunk_gives_eio_rest_keeps_working_and_broken_header_explains() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let src = tempfile::tempdir().unwrap();
    let conf = conformance_dir();
    let mut bytes = std::fs::read(conf.join("frame_simple-zstd.b2frame")).unwrap();
    // Damage the streams of chunk 3: find its offset through the library.
    let array = blosc2fs::source::open_array(&conf.join("frame_simple-zstd.b2frame")).unwrap();
    let layout = array.read_layout(3).unwrap();
    let blocks = layout.block_source_range(0);
    let blosc2fs::format::ChunkOffset::Stored(off) = array.frame().offsets[3] else {
        panic!("chunk 3 is special")
    };
    let at = (array.frame().header_len + off + blocks.start + 8) as usize;
    for b in &mut bytes[at..at + 64] {
        *b ^= 0x5a;
    }
    std::fs::write(src.path().join("bad.b2frame"), &bytes).unwrap();
    std::fs::write(
        src.path().join("header.b2nd"),
        b"definitely not a blosc2 frame, but named like one",
    )
    .unwrap();
    std::fs::copy(
        conf.join("frame_simple-lz4.b2frame"),
        src.path().join("good.b2frame"),
    )
    .unwrap();
    let m = Mount::start(src.path(), &[]);
    let f = std::fs::File::open(m.path().join("bad.b2frame/data")).unwrap();
    let chunk = 200_000u64;
    let mut buf = vec![0u8; 4096];
    let err = f.read_exact_at(&mut buf, 3 * chunk).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EIO), "{err}");
    // Chunk 2 still reads exactly, up to the page it shares with chunk 3
    // (the page cache works in 4 KiB pages).
    let good_len = (3 * chunk / 4096 * 4096 - 2 * chunk) as usize;
    let mut good = vec![0u8; good_len];
    f.read_exact_at(&mut good, 2 * chunk).unwrap();
    let mut reference = vec![0u8; good_len];
    blosc2fs::read::read_uncached(
        &array,
        blosc2fs::format::Region::Data,
        2 * chunk,
        &mut reference,
    )
    .unwrap();
    assert_eq!(good, reference);
    // The rest of the mount works.
    let other = std::fs::read(m.path().join("good.b2frame/data")).unwrap();
    assert_eq!(
        sha256_hex(&other),
        read_manifest(&conf)["frame_simple-lz4.b2frame"]["sha256"]
            .as_str()
            .unwrap()
    );
    // One log line names the file and the chunk.
    std::thread::sleep(Duration::from_millis(100));
    let log = m.log_text();
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("bad.b2frame") && l.contains("chunk 3"))
        .collect();
    assert_eq!(lines.len(), 1, "log:\n{log}");
    // The unreadable file still appears, with a meta.json saying why.
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(m.path().join("header.b2nd/meta.json")).unwrap())
            .unwrap();
    assert!(
        meta["error"]
            .as_str()
            .unwrap()
            .contains("not a Blosc2 file"),
        "{meta}"
    );
    assert!(!m.path().join("header.b2nd/data").exists());
}

#[test]
fn sigterm_with_open_file_unmounts_cleanly() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let mut m = Mount::start(&conformance_dir(), &[]);
    let held = std::fs::File::open(m.path().join("frame_simple-lz4.b2frame/data")).unwrap();
    let mut first = [0u8; 16];
    held.read_exact_at(&mut first, 0).unwrap();
    unsafe { libc::kill(m.pid(), libc::SIGTERM) };
    // Detached at once, while the file is still open...
    std::thread::sleep(Duration::from_millis(300));
    assert!(!is_mountpoint(m.path()), "still mounted after SIGTERM");
    // ...the open file keeps reading correct bytes...
    let mut tail = vec![0u8; 4096];
    held.read_exact_at(&mut tail, 1_500_000).unwrap();
    let mut reference = vec![0u8; 4096];
    let lz4 =
        blosc2fs::source::open_array(&conformance_dir().join("frame_simple-lz4.b2frame")).unwrap();
    blosc2fs::read::read_uncached(
        &lz4,
        blosc2fs::format::Region::Data,
        1_500_000,
        &mut reference,
    )
    .unwrap();
    assert_eq!(tail, reference);
    // ...and closing it lets the daemon finish with status 0.
    drop(held);
    assert_eq!(
        m.wait_exit(Duration::from_secs(4)),
        Some(0),
        "log:\n{}",
        m.log_text()
    );
}

#[test]
fn sigterm_with_file_held_open_exits_after_grace() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let mut m = Mount::start(&conformance_dir(), &["--exit-grace", "1"]);
    let held = std::fs::File::open(m.path().join("frame_simple-lz4.b2frame/data")).unwrap();
    unsafe { libc::kill(m.pid(), libc::SIGTERM) };
    assert_eq!(
        m.wait_exit(Duration::from_secs(5)),
        Some(0),
        "log:\n{}",
        m.log_text()
    );
    assert!(!is_mountpoint(m.path()));
    let mut buf = [0u8; 16];
    let err = held.read_exact_at(&mut buf, 0).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENOTCONN), "{err}");
}

#[test]
fn sigint_unmounts_cleanly() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let mut m = Mount::start(&conformance_dir(), &[]);
    unsafe { libc::kill(m.pid(), libc::SIGINT) };
    assert_eq!(
        m.wait_exit(Duration::from_secs(10)),
        Some(0),
        "log:\n{}",
        m.log_text()
    );
    assert!(!is_mountpoint(m.path()));
}

#[test]
fn unmount_after_kill_9() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let mut m = Mount::start(&conformance_dir(), &[]);
    unsafe { libc::kill(m.pid(), libc::SIGKILL) };
    m.wait_exit(Duration::from_secs(10));
    let err = std::fs::metadata(m.path().join("x")).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENOTCONN), "{err}");
    let status = Command::new(binary())
        .arg("unmount")
        .arg(m.path())
        .status()
        .unwrap();
    assert!(status.success());
    assert!(!is_mountpoint(m.path()));
    assert!(std::fs::read_dir(m.path()).unwrap().next().is_none());
}

#[test]
fn daemon_mode_returns_when_ready_and_reports_bad_arguments() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let mp = tempfile::tempdir().unwrap();
    let out = Command::new(binary())
        .arg("mount")
        .arg(conformance_dir())
        .arg(mp.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Ready on return: the tree answers at once.
    assert!(mp
        .path()
        .join("example_day_month_temp.b2nd/meta.json")
        .is_file());
    let status = Command::new(binary())
        .arg("unmount")
        .arg(mp.path())
        .status()
        .unwrap();
    assert!(status.success());
    assert!(!is_mountpoint(mp.path()));

    let missing = Command::new(binary())
        .args(["mount", "/nonexistent/source"])
        .arg(mp.path())
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/source does not exist"));

    std::fs::write(mp.path().join("file"), b"x").unwrap();
    let busy = Command::new(binary())
        .arg("mount")
        .arg(conformance_dir())
        .arg(mp.path())
        .output()
        .unwrap();
    assert!(!busy.status.success());
    assert!(String::from_utf8_lossy(&busy.stderr).contains("is not empty"));
}

#[test]
fn single_file_source_is_the_mount_root() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let conf = conformance_dir();
    let m = Mount::start(&conf.join("example_day_month_temp.b2nd"), &[]);
    let data = std::fs::read(m.path().join("data")).unwrap();
    assert_eq!(
        sha256_hex(&data),
        read_manifest(&conf)["example_day_month_temp.b2nd"]["sha256"]
            .as_str()
            .unwrap()
    );
    let mut chunks: Vec<String> = std::fs::read_dir(m.path().join("chunks"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    chunks.sort();
    assert_eq!(chunks, [".zarray", "0.0", "1.0", "2.0", "3.0"]);
    // Chunk (3, 0) covers rows 330..400 of 400: 40 rows of padding read as zeros.
    let last = std::fs::read(m.path().join("chunks/3.0")).unwrap();
    assert_eq!(last.len(), 110 * 3 * 4);
    assert_eq!(&last[..70 * 12], &data[330 * 12..]);
    assert!(last[70 * 12..].iter().all(|&b| b == 0));
}

fn run_as_nobody(path: &Path) -> std::process::Output {
    Command::new("runuser")
        .args(["-u", "nobody", "--", "cat"])
        .arg(path)
        .output()
        .unwrap()
}

#[test]
fn only_the_mounting_user_reads_without_allow_other() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let conf = conformance_dir();
    let private = Mount::start(&conf, &[]);
    let meta = private.path().join("example_day_month_temp.b2nd/meta.json");
    let denied = run_as_nobody(&meta);
    assert!(
        !denied.status.success(),
        "nobody could read without allow_other"
    );
    assert!(
        String::from_utf8_lossy(&denied.stderr).contains("Permission denied"),
        "{}",
        String::from_utf8_lossy(&denied.stderr)
    );
    drop(private);
    let shared = Mount::start(&conf, &["-o", "allow_other"]);
    let allowed = run_as_nobody(&shared.path().join("example_day_month_temp.b2nd/data"));
    assert!(
        allowed.status.success(),
        "{}",
        String::from_utf8_lossy(&allowed.stderr)
    );
    assert_eq!(
        sha256_hex(&allowed.stdout),
        read_manifest(&conf)["example_day_month_temp.b2nd"]["sha256"]
            .as_str()
            .unwrap()
    );
}

/// Saved expressions through a real mount: one whose operands lie in the
/// tree reads as python-blosc2 evaluates it (`numpy.fromfile` and `cat`,
/// also by `nobody` under `allow_other`); one whose operand lies outside
/// the tree (by absolute path, `..` or a symlink) never serves values, with
/// and without `allow_other`, to root or to `nobody`; one over a private
/// (0600) operand is computed for the mount's user, and under `allow_other`
/// shown 0400 like its operand, so `nobody` is refused.
#[test]
fn computed_arrays_read_only_operands_the_mount_shows() {
    use std::os::unix::fs::PermissionsExt;
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    gen_expressions(&common::mount::python(), dir.path());
    let expected = std::fs::read(dir.path().join("expected/e_where.bin")).unwrap();
    for args in [&[][..], &["-o", "allow_other"][..]] {
        let m = Mount::start(&dir.path().join("src"), args);
        let data = m.path().join("e_where.b2nd/data");
        assert_eq!(std::fs::read(&data).unwrap(), expected, "{args:?}");
        let code = "import sys, numpy as np; a = np.fromfile(sys.argv[1], dtype='<f8'); b = np.fromfile(sys.argv[2], dtype='<f8'); print(bool(np.array_equal(a, b)))";
        assert_eq!(
            run_python(
                code,
                &[
                    data.to_str().unwrap(),
                    dir.path().join("expected/e_where.bin").to_str().unwrap()
                ]
            )
            .trim(),
            "True"
        );
        let private = m.path().join("e_private.b2nd/data");
        assert_eq!(
            std::fs::read(&private).unwrap(),
            std::fs::read(dir.path().join("expected/e_private.bin")).unwrap(),
            "e_private {args:?}"
        );
        assert!(
            !run_as_nobody(&private).status.success(),
            "nobody read values of a private operand {args:?}"
        );
        if !args.is_empty() {
            let mode = std::fs::metadata(&private).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o400, "e_private {args:?}");
        }
        for name in ["e_outside_abs", "e_outside_rel", "e_outside_link"] {
            let folder = m.path().join(format!("{name}.b2nd"));
            let listed: Vec<String> = std::fs::read_dir(&folder)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            assert_eq!(listed, ["meta.json"], "{name} {args:?}");
            let meta: serde_json::Value =
                serde_json::from_slice(&std::fs::read(folder.join("meta.json")).unwrap()).unwrap();
            assert_eq!(meta["values"]["computed"], false, "{name}");
            assert_eq!(
                std::fs::metadata(folder.join("data")).unwrap_err().kind(),
                std::io::ErrorKind::NotFound,
                "{name}"
            );
            let nobody = run_as_nobody(&folder.join("data"));
            assert!(
                !nobody.status.success(),
                "{name}: nobody read values {args:?}"
            );
        }
        let nobody = run_as_nobody(&data);
        if args.is_empty() {
            assert!(!nobody.status.success(), "nobody read without allow_other");
        } else {
            assert!(
                nobody.status.success(),
                "{}",
                String::from_utf8_lossy(&nobody.stderr)
            );
            assert_eq!(nobody.stdout, expected);
        }
    }
}

#[test]
fn symlinks_inside_are_followed_outside_are_not_and_odd_names_pass_through() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let conf = conformance_dir();
    let outside = tempfile::tempdir().unwrap();
    std::fs::copy(
        conf.join("frame_simple-lz4.b2frame"),
        outside.path().join("elsewhere.b2frame"),
    )
    .unwrap();
    let src = tempfile::tempdir().unwrap();
    std::fs::create_dir(src.path().join("sub")).unwrap();
    std::fs::copy(
        conf.join("frame_simple-zstd.b2frame"),
        src.path().join("sub/real.b2frame"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        src.path().join("sub/real.b2frame"),
        src.path().join("inside.b2frame"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("elsewhere.b2frame"),
        src.path().join("outside.b2frame"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path(), src.path().join("outside-dir")).unwrap();
    std::fs::copy(
        conf.join("frame_simple-zstd.b2frame"),
        src.path().join("odd\nname\u{7f}.b2frame"),
    )
    .unwrap();
    std::fs::write(src.path().join("notes.txt"), b"not shown").unwrap();
    let m = Mount::start(src.path(), &[]);
    let mut names: Vec<String> = std::fs::read_dir(m.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            ".stats",
            "inside.b2frame",
            "odd\nname\u{7f}.b2frame",
            "sub",
            "zarr.json"
        ]
    );
    let sha = read_manifest(&conf)["frame_simple-zstd.b2frame"]["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        sha256_hex(&std::fs::read(m.path().join("inside.b2frame/data")).unwrap()),
        sha
    );
    assert_eq!(
        sha256_hex(&std::fs::read(m.path().join("sub/real.b2frame/data")).unwrap()),
        sha
    );
    assert_eq!(
        sha256_hex(&std::fs::read(m.path().join("odd\nname\u{7f}.b2frame/data")).unwrap()),
        sha
    );
    assert!(!m.path().join("outside.b2frame").exists());
    assert!(!m.path().join("outside-dir").exists());
}

#[test]
fn mount_t_fuse_blosc2fs_goes_through_mount_fuse3() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let helper_present =
        Path::new("/usr/sbin/mount.fuse3").exists() || Path::new("/sbin/mount.fuse3").exists();
    if unsafe { libc::geteuid() } != 0 || !helper_present {
        eprintln!("skipped: needs root and fuse3's mount.fuse3 (scripts/test.sh installs it)");
        return;
    }
    // mount(8) runs mount.fuse3 with a standard PATH (/usr/local/bin among
    // it), which runs `blosc2fs SOURCE MOUNTPOINT -o OPTIONS`: put ours there
    // for the test unless one is installed already.
    let installed = Path::new("/usr/local/bin/blosc2fs");
    let placed = !installed.exists() && std::os::unix::fs::symlink(binary(), installed).is_ok();
    let mp = tempfile::tempdir().unwrap();
    let conf = conformance_dir();
    let status = Command::new("mount")
        .args(["-t", "fuse.blosc2fs"])
        .arg(&conf)
        .arg(mp.path())
        .args(["-o", "ro,allow_other,cache_size=64M"])
        .status()
        .unwrap();
    if placed {
        let _ = std::fs::remove_file(installed);
    }
    assert!(status.success());
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    let line = mounts
        .lines()
        .find(|l| l.split(' ').nth(1) == Some(&*mp.path().to_string_lossy()))
        .expect("in /proc/self/mounts")
        .to_string();
    let data = std::fs::read(mp.path().join("example_day_month_temp.b2nd/data"));
    let _ = Command::new(binary())
        .arg("unmount")
        .arg(mp.path())
        .status();
    assert!(line.contains(" fuse.blosc2fs ro,"), "{line}");
    assert!(line.contains("allow_other"), "{line}");
    assert_eq!(
        sha256_hex(&data.unwrap()),
        read_manifest(&conf)["example_day_month_temp.b2nd"]["sha256"]
            .as_str()
            .unwrap()
    );
}

#[test]
fn listing_ten_thousand_arrays_opens_none_of_them() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let src = tempfile::tempdir().unwrap();
    let original = conformance_dir().join("example_day_month_temp.b2nd");
    let first = src.path().join("a00000.b2nd");
    std::fs::copy(&original, &first).unwrap();
    for i in 1..10_000 {
        std::fs::hard_link(&first, src.path().join(format!("a{i:05}.b2nd"))).unwrap();
    }
    let m = Mount::start(src.path(), &[]);
    let fds = || {
        std::fs::read_dir(format!("/proc/{}/fd", m.pid()))
            .unwrap()
            .count()
    };
    let before = fds();
    let start = std::time::Instant::now();
    let listed = std::fs::read_dir(m.path()).unwrap().count();
    let elapsed = start.elapsed();
    assert_eq!(listed, 10_000 + 2, "10,000 arrays, .stats and zarr.json");
    assert!(
        fds() <= before + 2,
        "listing opened files: {before} -> {} descriptors",
        fds()
    );
    eprintln!("listed 10,000 arrays in {elapsed:?}");
    // Opening one array opens just that one.
    let data = std::fs::read(m.path().join("a04242.b2nd/data")).unwrap();
    assert_eq!(
        sha256_hex(&data),
        read_manifest(&conformance_dir())["example_day_month_temp.b2nd"]["sha256"]
            .as_str()
            .unwrap()
    );
}

#[test]
fn source_truncated_in_place_gives_eio_to_open_readers_not_mixed_bytes() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let src = tempfile::tempdir().unwrap();
    let conf = conformance_dir();
    std::fs::copy(
        conf.join("frame_simple-zstd.b2frame"),
        src.path().join("t.b2frame"),
    )
    .unwrap();
    let m = Mount::start(
        src.path(),
        &["--attr-timeout", "0.1", "--prefetch-threads", "0"],
    );
    let held = std::fs::File::open(m.path().join("t.b2frame/data")).unwrap();
    let mut first = vec![0u8; 4096];
    held.read_exact_at(&mut first, 0).unwrap();
    // Truncate the source in place while the reader holds it open.
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(src.path().join("t.b2frame"))
        .unwrap();
    f.set_len(3000).unwrap();
    drop(f);
    let mut later = vec![0u8; 4096];
    let err = held.read_exact_at(&mut later, 1_800_000).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EIO), "{err}");
    // New opens see the new state: a file whose frame cannot be read.
    std::thread::sleep(Duration::from_millis(300));
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(m.path().join("t.b2frame/meta.json")).unwrap())
            .unwrap();
    assert!(meta["error"].as_str().unwrap().contains("frame"), "{meta}");
    assert!(
        std::path::Path::new(&format!("/proc/{}", m.pid())).exists(),
        "daemon died"
    );
}

#[test]
fn views_read_with_head_and_pillow() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let m = Mount::start(&fixtures_dir(), &[]);
    let manifest = read_manifest(&fixtures_dir());
    let dir = m
        .path()
        .join(manifest["dtype_le_f8"]["path"].as_str().unwrap());
    // Which arrays have views: every dtype gets data.txt (a plain frame's items are opaque
    // bytes, quoted), numeric arrays with axes preview.png.
    for (name, has_text, has_png) in [
        ("dtype_le_f8", true, true),
        ("dtype_S7", true, false),
        ("shape_0d_f8", true, false),
        ("shape_0d_struct", true, false),
        ("frame_f32", true, false),
    ] {
        let d = m.path().join(manifest[name]["path"].as_str().unwrap());
        assert_eq!(d.join("data.txt").exists(), has_text, "{name}");
        assert_eq!(d.join("preview.png").exists(), has_png, "{name}");
    }
    // head: the first three lines, 21 values each (33 x 21 float64).
    let out = Command::new("head")
        .arg("-n")
        .arg("3")
        .arg(dir.join("data.txt"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 3);
    let data = std::fs::read(dir.join("data")).unwrap();
    for (i, v) in text.split_ascii_whitespace().enumerate() {
        let want = f64::from_le_bytes(data[i * 8..i * 8 + 8].try_into().unwrap());
        assert_eq!(
            v.parse::<f64>().unwrap().to_bits(),
            want.to_bits(),
            "value {i}: {v}"
        );
    }
    assert_eq!(
        std::fs::metadata(dir.join("data.txt")).unwrap().len(),
        33 * 21 * 25
    );
    // The PNG: cp gets it whole, Pillow decodes it (21 x 33, RGB), numpy reloads the text.
    let copy = tempfile::tempdir().unwrap();
    let png = copy.path().join("preview.png");
    assert!(Command::new("cp")
        .arg(dir.join("preview.png"))
        .arg(&png)
        .status()
        .unwrap()
        .success());
    assert_eq!(
        std::fs::metadata(&png).unwrap().len(),
        std::fs::metadata(dir.join("preview.png")).unwrap().len()
    );
    let code = r#"
import sys, json, numpy as np
from PIL import Image
img = Image.open(sys.argv[1]); img.load()
txt = np.loadtxt(sys.argv[2])
npy = np.load(sys.argv[3])
print(json.dumps({"size": list(img.size), "mode": img.mode, "sampled": img.text["Sampled"].strip(),
                  "text_equal": bool(np.array_equal(txt, npy, equal_nan=True))}))
"#;
    let out = run_python(
        code,
        &[
            png.to_str().unwrap(),
            dir.join("data.txt").to_str().unwrap(),
            dir.join("data.npy").to_str().unwrap(),
        ],
    );
    let doc: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        doc,
        serde_json::json!({"size": [21, 33], "mode": "RGB", "sampled": "no", "text_equal": true})
    );
}

/// The legacy readers open the mounted fixtures through their sidecar
/// headers: pynrrd, SimpleITK and rasterio (ENVI driver) give the arrays'
/// exact values, spacing and origin; each header is there exactly when its
/// format can describe the array; data.txt of strings and records reads back
/// exactly (scripts/check/check_legacy_readers.py decides all of it from the
/// manifest, not from the mount).
#[test]
fn legacy_readers_open_data_through_the_sidecar_headers() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let m = Mount::start(&fixtures_dir(), &[]);
    let out = Command::new(common::mount::python())
        .arg(repo_root().join("scripts/check/check_legacy_readers.py"))
        .arg(m.path())
        .arg(fixtures_dir().join("manifest.json"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "check_legacy_readers.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["failures"], serde_json::json!([]), "{doc}");
    // Today's fixtures: 132 arrays NRRD can describe, 100 of them of rank 2-4 (MetaImage:
    // 98 of rank 2-3 and the two 4-D ones), 100 with an ENVI type and rank 2-3, 2 placed by
    // vlmeta, 9 with strings.
    assert_eq!(
        doc["counts"],
        serde_json::json!({"arrays": 151, "data.nhdr": 132, "data.mhd": 100, "data.hdr": 100, "data.txt strings": 9, "placed": 2})
    );
    // A store member and a table column have them too (the column: its valid rows).
    let stores = Mount::start(&fixtures_dir().join("stores"), &[]);
    let code = r#"
import os, sys, json, warnings, numpy as np, nrrd, SimpleITK as sitk, rasterio
out = {}
for d in sys.argv[1:]:
    npy = np.load(d + "/data.npy")
    got = {"nrrd": bool(np.array_equal(nrrd.read(d + "/data.nhdr", index_order="C")[0], npy))}
    if os.path.exists(d + "/data.mhd"):
        got["mhd"] = bool(np.array_equal(sitk.GetArrayFromImage(sitk.ReadImage(d + "/data.mhd")), npy))
    if os.path.exists(d + "/data.hdr"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with rasterio.open(d + "/data") as ds:
                r = ds.read()
        got["envi"] = bool(np.array_equal(r[0] if npy.ndim == 2 else r, npy))
    out[d.split("/stores/")[-1]] = [list(npy.shape), got]
print(json.dumps(out))
"#;
    let dirs = ["tree.b2z/exp/run2/delta", "table.b2z/tbl/a"]
        .map(|p| stores.path().join(p).to_str().unwrap().to_string());
    let out = run_python(code, &[&dirs[0], &dirs[1]]);
    let doc: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    for (path, result) in doc.as_object().unwrap() {
        assert!(
            result[1].as_object().unwrap().values().all(|v| v == true),
            "{path}: {result}"
        );
    }
    assert_eq!(doc.as_object().unwrap().len(), 2, "{doc}");
    assert!(
        doc.as_object()
            .unwrap()
            .values()
            .any(|r| r[1].get("mhd").is_some()),
        "{doc}"
    );
}

/// `--views none` gives a plain tree: data and meta.json only, and the
/// other files are absent to lookup too; `-o views=npy:headers` adds just
/// those; an unknown view stops the mount with a message naming it.
#[test]
fn views_choose_the_presented_files() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let names = |d: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    };
    let m = Mount::start(&fixtures_dir(), &["--views", "none"]);
    let dir = m.path().join("dtype_le_f8.b2nd");
    assert_eq!(names(&dir), ["data", "meta.json"]);
    for absent in [
        "data.npy",
        "data.txt",
        "chunks",
        "chunks/0.0",
        "preview.png",
        "data.nhdr",
    ] {
        assert_eq!(
            std::fs::metadata(dir.join(absent)).unwrap_err().kind(),
            std::io::ErrorKind::NotFound,
            "{absent}"
        );
    }
    assert_eq!(std::fs::read(dir.join("data")).unwrap().len(), 33 * 21 * 8);
    drop(m);
    let m = Mount::start(&fixtures_dir(), &["-o", "ro,views=npy:headers"]);
    assert_eq!(
        names(&m.path().join("dtype_le_f8.b2nd")),
        [
            "data",
            "data.hdr",
            "data.mhd",
            "data.nhdr",
            "data.npy",
            "meta.json"
        ]
    );
    drop(m);
    let mnt = tempfile::tempdir().unwrap();
    let out = Command::new(binary())
        .arg("mount")
        .arg(fixtures_dir())
        .arg(mnt.path())
        .args(["--views", "npy,tiff"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown view \"tiff\""), "{err}");
    assert!(!is_mountpoint(mnt.path()));
}

/// Random 4 KiB reads inside large zstd and zlib blocks (each read decodes
/// its block, shared with a decode helper thread when there is one) give
/// the array's bytes, with helpers and without.
#[test]
fn random_small_reads_inside_blocks_with_and_without_decode_helpers() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let code = r#"
import sys, os, numpy as np, blosc2
out = sys.argv[1]
x = (np.arange(256 * 1024, dtype=np.float64).reshape(256, 1024) * 0.37) % 101.0
x.tofile(os.path.join(out, "expected.bin"))
for name, codec in (("z", blosc2.Codec.ZSTD), ("l", blosc2.Codec.ZLIB)):
    blosc2.asarray(x, urlpath=os.path.join(out, name + ".b2nd"), mode="w", chunks=(128, 1024), blocks=(16, 1024),
                   cparams={"codec": codec, "clevel": 5, "filters": [blosc2.Filter.SHUFFLE]})
"#;
    run_python(code, &[dir.path().to_str().unwrap()]);
    let expected = std::fs::read(dir.path().join("expected.bin")).unwrap();
    let expected_hash = sha256_hex(&expected);
    std::fs::rename(
        dir.path().join("expected.bin"),
        dir.path().join("expected.raw"),
    )
    .unwrap();
    for helpers in ["1", "0"] {
        let m = Mount::start(dir.path(), &["--direct-io", "--decode-helpers", helpers]);
        for name in ["z.b2nd", "l.b2nd"] {
            let f = std::fs::File::open(m.path().join(name).join("data")).unwrap();
            let pages = expected.len() / 4096;
            let mut got = vec![0u8; expected.len()];
            // Every page once, in a shuffled order (no reader the prefetcher would follow).
            let mut order: Vec<usize> = (0..pages).collect();
            let mut rng = common::rng::Rng::new(0x9E37_79B9_7F4A_7C15);
            for i in (1..pages).rev() {
                order.swap(i, rng.index(i + 1));
            }
            for page in order {
                f.read_exact_at(
                    &mut got[page * 4096..(page + 1) * 4096],
                    (page * 4096) as u64,
                )
                .unwrap();
            }
            assert_eq!(
                sha256_hex(&got),
                expected_hash,
                "{name} with --decode-helpers {helpers}"
            );
        }
        // 2 arrays of 16 blocks, each block read in 32 pieces far apart.
        let stats = m.stats();
        assert!(
            stats["blocks_decoded"].as_u64().unwrap() >= 2 * 16,
            "{stats}"
        );
        let jobs = stats["helper_jobs"].as_u64().unwrap();
        if helpers == "1" {
            assert!(jobs >= 2 * 16, "{stats}");
        } else {
            assert_eq!(jobs, 0, "{stats}");
        }
    }
}

/// Name and scheduling policy (field 41 of `/proc/PID/task/TID/stat`) of
/// each thread of process `pid` but its main thread.
fn thread_policies(pid: i32) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let task = task.unwrap();
        if task.file_name().to_str() == Some(&pid.to_string()) {
            continue;
        }
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap();
        let (open, close) = (stat.find('(').unwrap(), stat.rfind(')').unwrap());
        let name = stat[open + 1..close].to_string();
        // Fields after the name start at field 3 (state); policy is field 41.
        let policy = stat[close + 2..]
            .split_whitespace()
            .nth(41 - 3)
            .unwrap()
            .parse()
            .unwrap();
        out.push((name, policy));
    }
    out.sort();
    out
}

#[test]
fn fuse_threads_run_sched_batch_unless_told_normal() {
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    const SCHED_OTHER: u32 = 0;
    const SCHED_BATCH: u32 = 3;
    let manifest = read_manifest(&conformance_dir());
    for (args, fuse_policy) in [
        (&[][..], SCHED_BATCH),
        (&["--sched", "normal"][..], SCHED_OTHER),
        (&["-o", "sched=normal"][..], SCHED_OTHER),
    ] {
        let m = Mount::start(&conformance_dir(), args);
        let bytes = std::fs::read(m.path().join("example_item_prices.b2nd/data")).unwrap();
        assert_eq!(
            sha256_hex(&bytes),
            manifest["example_item_prices.b2nd"]["sha256"]
                .as_str()
                .unwrap(),
            "{args:?}"
        );
        let threads = thread_policies(m.pid());
        let fuse: Vec<u32> = threads
            .iter()
            .filter(|(name, _)| name.starts_with("fuser"))
            .map(|&(_, p)| p)
            .collect();
        assert_eq!(fuse, vec![fuse_policy; 2], "{args:?}: {threads:?}");
        // Only the FUSE threads: the daemon's other threads (decode helpers,
        // prefetchers, remote reads, signal handling) keep the policy they
        // started with.
        let others: Vec<&(String, u32)> = threads
            .iter()
            .filter(|(name, _)| !name.starts_with("fuser"))
            .collect();
        assert!(
            others.len() >= 3 && others.iter().all(|&&(_, p)| p == SCHED_OTHER),
            "{args:?}: {threads:?}"
        );
    }
}

/// Writes (`write`) or grows (`grow`) a 2-D float64 b2nd of 64 columns in
/// chunks of 16 rows (blocks of 4), and writes the numpy bytes of all its
/// rows beside it: row r holds r * 64 + k, scaled.
const CHUNK_ARRAY: &str = r#"
import sys
import numpy as np
import blosc2
op, path, rows, raw = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
def values(a, b):
    return np.arange(a * 64, b * 64, dtype="<f8").reshape(b - a, 64) * 1.5 + 0.25
if op == "write":
    cparams = blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=5, filters=[blosc2.Filter.SHUFFLE], nthreads=1)
    blosc2.asarray(values(0, rows), urlpath=path, mode="w", chunks=(16, 64), blocks=(4, 64), cparams=cparams)
else:
    a = blosc2.open(path, mode="a")
    old = a.shape[0]
    a.resize((rows, 64))
    a[old:rows] = values(old, rows)
    del a
np.ascontiguousarray(blosc2.open(path)[...]).tofile(raw + ".b2")
values(0, rows).tofile(raw)
"#;

/// Chunk `i` of the array CHUNK_ARRAY wrote, from its numpy bytes `raw`:
/// rows 16i..16i+16, the rows past the end zeros.
fn chunk_rows(raw: &[u8], i: usize) -> Vec<u8> {
    let chunk = 16 * 64 * 8;
    let mut want = vec![0u8; chunk];
    let start = (i * chunk).min(raw.len());
    let end = ((i + 1) * chunk).min(raw.len());
    want[..end - start].copy_from_slice(&raw[start..end]);
    want
}

#[test]
fn chunk_files_stay_in_the_page_cache_until_their_array_changes() {
    // `c/<i>/0` of an unchanged array is opened with FOPEN_KEEP_CACHE from
    // its second open on, so a second pass (Dask computing again) reads the
    // kernel's pages and decodes nothing. Once the array changes (resized
    // in place, as a running simulation grows its output), the next open
    // of the edge chunk's file must not serve the pages it kept: its bytes
    // changed, its length did not.
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let src = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let array = src.path().join("sim.b2nd");
    let raw_path = scratch.path().join("sim.raw");
    let (array_arg, raw_arg) = (array.to_str().unwrap(), raw_path.to_str().unwrap());
    run_python(CHUNK_ARRAY, &["write", array_arg, "40", raw_arg]);
    let old = std::fs::read(&raw_path).unwrap();
    assert_eq!(old.len(), 40 * 64 * 8);
    assert_eq!(
        std::fs::read(scratch.path().join("sim.raw.b2")).unwrap(),
        old,
        "python-blosc2 reads back the values written"
    );

    let m = Mount::start(src.path(), &["--attr-timeout", "0.1"]);
    let chunk_file = |i: usize| m.path().join(format!("sim.b2nd/c/{i}/0"));
    for i in 0..3 {
        let got = std::fs::read(chunk_file(i)).unwrap();
        assert!(got == chunk_rows(&old, i), "c/{i}/0 before the change");
    }
    let decoded = |m: &Mount| m.stats()["bytes_decoded"].as_u64().unwrap();
    let before = decoded(&m);
    // Past the attribute timeout: the kernel asks for the attributes again,
    // and they are unchanged.
    std::thread::sleep(Duration::from_millis(300));
    for i in 0..3 {
        let got = std::fs::read(chunk_file(i)).unwrap();
        assert!(got == chunk_rows(&old, i), "c/{i}/0 read again");
    }
    assert_eq!(
        decoded(&m),
        before,
        "the second pass came from the page cache"
    );

    // Grow the array in place to 100 rows: chunk 2 (rows 32..48, 8 of them
    // padding until now) is rewritten, chunks 3..6 are new. (The new
    // version's files are new inodes today, whose pages start empty; the
    // version check on open covers an inode that would stay.)
    run_python(CHUNK_ARRAY, &["grow", array_arg, "100", raw_arg]);
    let new = std::fs::read(&raw_path).unwrap();
    assert_eq!(new.len(), 100 * 64 * 8);
    assert_eq!(
        std::fs::read(scratch.path().join("sim.raw.b2")).unwrap(),
        new,
        "python-blosc2 reads back the grown array"
    );
    assert_ne!(chunk_rows(&new, 2), chunk_rows(&old, 2));
    std::thread::sleep(Duration::from_millis(300));
    let edge = std::fs::read(chunk_file(2)).unwrap();
    assert!(
        edge != chunk_rows(&old, 2),
        "c/2/0 served from the pages kept before the change"
    );
    assert!(edge == chunk_rows(&new, 2), "c/2/0 after the change");
    for i in 0..7 {
        let got = std::fs::read(chunk_file(i)).unwrap();
        assert!(got == chunk_rows(&new, i), "c/{i}/0 after the change");
    }
    assert!(!chunk_file(7).exists(), "past the grid");
}

#[test]
fn chunk_files_read_at_once_with_direct_io_are_exact() {
    // Two readers of chunk files at once with direct_io: each read is
    // decoded straight into its reply (no core left for prefetch), a lone
    // reader is prefetched for; the bytes are the same either way.
    let Some(_guard) = serial_with_fuse() else {
        return;
    };
    let src = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let array = src.path().join("sim.b2nd");
    let raw_path = scratch.path().join("sim.raw");
    run_python(
        CHUNK_ARRAY,
        &[
            "write",
            array.to_str().unwrap(),
            "1000",
            raw_path.to_str().unwrap(),
        ],
    );
    let raw = std::fs::read(&raw_path).unwrap();
    let m = Mount::start(src.path(), &["--direct-io"]);
    let root = m.path().join("sim.b2nd/c");
    let grid = 1000usize.div_ceil(16);
    std::thread::scope(|s| {
        for first in 0..2 {
            let (root, raw) = (&root, &raw);
            s.spawn(move || {
                for i in (first..grid).step_by(2) {
                    let got = std::fs::read(root.join(format!("{i}/0"))).unwrap();
                    assert!(got == chunk_rows(raw, i), "c/{i}/0");
                }
            });
        }
    });
    let one = std::fs::read(root.join("0/0")).unwrap();
    assert!(one == chunk_rows(&raw, 0), "c/0/0 alone");
    assert_eq!(m.stats()["read_errors"], 0);
}
