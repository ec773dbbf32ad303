//! Who may read a mount, and who may mount: presented entries take the
//! source's owner, group and read bits (enforced by the kernel with
//! `default_permissions`, checked here by reading as `nobody` from a mount
//! made with allow_other), and a user other than root mounts, reads and
//! unmounts through fusermount3. A computed array (a saved expression) is
//! computed for the mounting user whatever its operands' modes, and with
//! allow_other shows only what every file it reads allows. Real mounts:
//! they need root and /dev/fuse (and fuse3's fusermount3 for the user
//! mounts), and skip with a reason otherwise.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::mount::{
    binary, is_mountpoint, run_python, serial_with_fuse, unmount_if_mounted, Mount,
};
use common::*;

/// The unprivileged user the tests act as (present on every Debian-like system).
const NOBODY: u32 = 65534;

fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

fn nobody_exists() -> bool {
    std::fs::read_to_string("/etc/passwd")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split(':').nth(2) == Some("65534"))
}

/// `program` run as `uid` in group `gid` (no supplementary groups).
fn as_user(uid: u32, gid: u32, program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = Command::new(program);
    command.uid(uid).gid(gid).env("HOME", "/").current_dir("/");
    command
}

/// `program` run as nobody (uid and gid 65534, no supplementary groups).
fn as_nobody(program: impl AsRef<std::ffi::OsStr>) -> Command {
    as_user(NOBODY, NOBODY, program)
}

fn cat_as_nobody(path: &Path) -> Output {
    as_nobody("cat").arg(path).output().unwrap()
}

/// `path` read by `uid` in group `gid`: its bytes, or cat's error.
fn cat_as(uid: u32, gid: u32, path: &Path) -> Result<Vec<u8>, String> {
    let out = as_user(uid, gid, "cat").arg(path).output().unwrap();
    match out.status.success() {
        true => Ok(out.stdout),
        false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
    }
}

fn assert_denied(output: &Output, what: &Path) {
    assert!(
        !output.status.success(),
        "nobody could read {}",
        what.display()
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("Permission denied"),
        "{}: {stderr}",
        what.display()
    );
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// The conformance array used throughout, and its data's sha256.
fn sample() -> (PathBuf, String) {
    let conf = conformance_dir();
    let sha = read_manifest(&conf)["example_day_month_temp.b2nd"]["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    (conf.join("example_day_month_temp.b2nd"), sha)
}

fn copy_with_mode(from: &Path, to: &Path, mode: u32) {
    std::fs::copy(from, to).unwrap();
    chmod(to, mode);
}

/// A source tree owned by root:
/// `private/` 0700 holding `secret.b2nd` 0600; `public/` 0755 holding
/// `open.b2nd` 0644, `hidden.b2nd` 0600, `group.b2nd` 0640 and the sparse
/// frame `sparse.caterva` (directory 0755, index 0600).
fn source_tree() -> tempfile::TempDir {
    let (array, _) = sample();
    let src = tempfile::tempdir().unwrap();
    chmod(src.path(), 0o755);
    let private = src.path().join("private");
    let public = src.path().join("public");
    std::fs::create_dir(&private).unwrap();
    std::fs::create_dir(&public).unwrap();
    chmod(&private, 0o700);
    chmod(&public, 0o755);
    copy_with_mode(&array, &private.join("secret.b2nd"), 0o600);
    copy_with_mode(&array, &public.join("open.b2nd"), 0o644);
    copy_with_mode(&array, &public.join("hidden.b2nd"), 0o600);
    copy_with_mode(&array, &public.join("group.b2nd"), 0o640);
    let sparse = public.join("sparse.caterva");
    std::fs::create_dir(&sparse).unwrap();
    for item in std::fs::read_dir(fixtures_dir().join("caterva_1d_u1_sparse.caterva")).unwrap() {
        let item = item.unwrap();
        copy_with_mode(&item.path(), &sparse.join(item.file_name()), 0o644);
    }
    chmod(&sparse, 0o755);
    chmod(&sparse.join("chunks.b2frame"), 0o600);
    src
}

fn root_with_fuse_and_nobody() -> Option<common::mount::Serial> {
    if !is_root() || !nobody_exists() {
        eprintln!("skipped: needs root (to mount with allow_other) and the user nobody");
        return None;
    }
    serial_with_fuse()
}

#[test]
fn presented_modes_and_owners_follow_the_source() {
    let Some(_guard) = root_with_fuse_and_nobody() else {
        return;
    };
    let src = source_tree();
    let m = Mount::start(src.path(), &["-o", "allow_other"]);
    let p = |rel: &str| m.path().join(rel);
    // Mirrored directories keep their r and x bits.
    assert_eq!(mode(m.path()), 0o555);
    assert_eq!(mode(&p("private")), 0o500);
    assert_eq!(mode(&p("public")), 0o555);
    // An array file's r bits make its folder's r and x, its files' r.
    for (array, folder, file) in [
        ("private/secret.b2nd", 0o500, 0o400),
        ("public/open.b2nd", 0o555, 0o444),
        ("public/group.b2nd", 0o550, 0o440),
        ("public/sparse.caterva", 0o500, 0o400),
    ] {
        assert_eq!(mode(&p(array)), folder, "{array}");
        assert_eq!(
            mode(&p(&format!("{array}/chunks"))),
            folder,
            "{array}/chunks"
        );
        for name in ["meta.json", "data", "data.npy", "chunks/0"] {
            let path = p(&format!("{array}/{name}"));
            if name == "chunks/0" && !path.exists() {
                continue;
            }
            assert_eq!(mode(&path), file, "{array}/{name}");
        }
    }
    let meta = std::fs::metadata(p("private/secret.b2nd/data")).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (0, 0));
    // .stats: the mounting user's, readable.
    assert_eq!(mode(&p(".stats")), 0o444);
    assert!(std::fs::read(p(".stats")).is_ok());
}

#[test]
fn allow_other_mount_denies_what_the_source_denies() {
    let Some(_guard) = root_with_fuse_and_nobody() else {
        return;
    };
    let (_, sha) = sample();
    let src = source_tree();
    // Attributes and names are not cached, so a chmod shows at once.
    let m = Mount::start(src.path(), &["-o", "allow_other", "--attr-timeout", "0"]);
    let p = |rel: &str| m.path().join(rel);
    let allowed = cat_as_nobody(&p("public/open.b2nd/data"));
    assert!(
        allowed.status.success(),
        "{}",
        String::from_utf8_lossy(&allowed.stderr)
    );
    assert_eq!(sha256_hex(&allowed.stdout), sha);
    // A 0600 file in a 0700 folder, owned by root: neither listed nor read.
    assert_denied(
        &cat_as_nobody(&p("private/secret.b2nd/data")),
        &p("private/secret.b2nd/data"),
    );
    assert_denied(
        &as_nobody("ls").arg(p("private")).output().unwrap(),
        &p("private"),
    );
    // A 0600 file in an open folder: its name shows, its folder does not open.
    assert_denied(
        &cat_as_nobody(&p("public/hidden.b2nd/data")),
        &p("public/hidden.b2nd/data"),
    );
    assert_denied(
        &cat_as_nobody(&p("public/hidden.b2nd/meta.json")),
        &p("public/hidden.b2nd/meta.json"),
    );
    assert_denied(
        &as_nobody("ls")
            .arg(p("public/hidden.b2nd"))
            .output()
            .unwrap(),
        &p("public/hidden.b2nd"),
    );
    // Group read only, and nobody is not in the group.
    assert_denied(
        &cat_as_nobody(&p("public/group.b2nd/data")),
        &p("public/group.b2nd/data"),
    );
    // A sparse frame whose index file is 0600.
    assert_denied(
        &cat_as_nobody(&p("public/sparse.caterva/data")),
        &p("public/sparse.caterva/data"),
    );
    // A chmod of the source shows on the next access, both ways.
    chmod(&src.path().join("public/hidden.b2nd"), 0o644);
    let opened = cat_as_nobody(&p("public/hidden.b2nd/data"));
    assert!(
        opened.status.success(),
        "{}",
        String::from_utf8_lossy(&opened.stderr)
    );
    assert_eq!(sha256_hex(&opened.stdout), sha);
    chmod(&src.path().join("public/hidden.b2nd"), 0o600);
    assert_denied(
        &cat_as_nobody(&p("public/hidden.b2nd/data")),
        &p("public/hidden.b2nd/data"),
    );
}

#[test]
fn uid_and_gid_options_override_the_owner_not_the_bits() {
    let Some(_guard) = root_with_fuse_and_nobody() else {
        return;
    };
    let (_, sha) = sample();
    let src = source_tree();
    let nobody = NOBODY.to_string();
    let m = Mount::start(
        src.path(),
        &["-o", "allow_other", "--uid", &nobody, "--gid", &nobody],
    );
    let data = m.path().join("private/secret.b2nd/data");
    let meta = std::fs::metadata(&data).unwrap();
    assert_eq!(
        (meta.uid(), meta.gid(), meta.permissions().mode() & 0o777),
        (NOBODY, NOBODY, 0o400)
    );
    let read = cat_as_nobody(&data);
    assert!(
        read.status.success(),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    assert_eq!(sha256_hex(&read.stdout), sha);
}

/// Sets /dev/fuse's mode for the length of a test and puts the old one back,
/// also after a panic.
struct DevFuseMode(u32);

impl DevFuseMode {
    fn set(mode: u32) -> DevFuseMode {
        let old = std::fs::metadata("/dev/fuse").unwrap().permissions().mode() & 0o7777;
        chmod(Path::new("/dev/fuse"), mode);
        DevFuseMode(old)
    }
}

impl Drop for DevFuseMode {
    fn drop(&mut self) {
        chmod(Path::new("/dev/fuse"), self.0);
    }
}

/// A mountpoint owned by nobody; lazily unmounted by root when dropped.
struct UserMountpoint(tempfile::TempDir);

impl UserMountpoint {
    fn new() -> UserMountpoint {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::chown(dir.path(), Some(NOBODY), Some(NOBODY)).unwrap();
        UserMountpoint(dir)
    }
    fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for UserMountpoint {
    fn drop(&mut self) {
        unmount_if_mounted(self.path());
    }
}

/// A world-readable copy of the sample array in a world-readable folder.
fn public_source() -> tempfile::TempDir {
    let (array, _) = sample();
    let src = tempfile::tempdir().unwrap();
    chmod(src.path(), 0o755);
    copy_with_mode(&array, &src.path().join("temp.b2nd"), 0o644);
    src
}

fn user_mount_possible() -> Option<common::mount::Serial> {
    let helper = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|d| d.join("fusermount3").is_file());
    if !is_root() || !nobody_exists() || !helper || !Path::new("/dev/fuse").exists() {
        eprintln!("skipped: needs root (to set it up), the user nobody, /dev/fuse and fuse3's fusermount3 (scripts/test.sh installs it)");
        return None;
    }
    serial_with_fuse()
}

fn mount_as_nobody(source: &Path, mountpoint: &Path, extra: &[&str]) -> Output {
    as_nobody(binary())
        .arg("mount")
        .arg(source)
        .arg(mountpoint)
        .args(extra)
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

#[test]
fn a_user_mounts_reads_and_unmounts_through_fusermount3() {
    let Some(_guard) = user_mount_possible() else {
        return;
    };
    let (_, sha) = sample();
    let src = public_source();
    let mp = UserMountpoint::new();
    // Users may open /dev/fuse (the usual 0666); fusermount3 does the mount.
    let dev_fuse = DevFuseMode::set(0o666);
    let mounted = mount_as_nobody(src.path(), mp.path(), &[]);
    assert!(
        mounted.status.success(),
        "{}",
        String::from_utf8_lossy(&mounted.stderr)
    );
    // The daemon holds its descriptors: /dev/fuse may be closed to users again.
    drop(dev_fuse);
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let line = mountinfo
        .lines()
        .find(|l| l.split(' ').nth(4) == Some(&*mp.path().to_string_lossy()))
        .expect("mounted")
        .to_string();
    assert!(
        line.contains(" fuse.blosc2fs ")
            && line.contains("user_id=65534")
            && line.contains("default_permissions"),
        "{line}"
    );
    let read = cat_as_nobody(&mp.path().join("temp.b2nd/data"));
    assert!(
        read.status.success(),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    assert_eq!(sha256_hex(&read.stdout), sha);
    let stats = cat_as_nobody(&mp.path().join(".stats"));
    assert!(
        stats.status.success(),
        "{}",
        String::from_utf8_lossy(&stats.stderr)
    );
    let unmounted = as_nobody(binary())
        .arg("unmount")
        .arg(mp.path())
        .output()
        .unwrap();
    assert!(
        unmounted.status.success(),
        "{}",
        String::from_utf8_lossy(&unmounted.stderr)
    );
    assert!(!is_mountpoint(mp.path()));

    // SIGTERM ends a user's mount too (the daemon detaches with fusermount3 -u -z).
    let dev_fuse = DevFuseMode::set(0o666);
    let mut daemon = as_nobody(binary())
        .arg("mount")
        .arg(src.path())
        .arg(mp.path())
        .arg("-f")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !is_mountpoint(mp.path()) {
        if Instant::now() > deadline || daemon.try_wait().unwrap().is_some() {
            let _ = daemon.kill();
            panic!(
                "foreground user mount did not come up: {}",
                String::from_utf8_lossy(&daemon.wait_with_output().unwrap().stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(dev_fuse);
    assert!(cat_as_nobody(&mp.path().join("temp.b2nd/meta.json"))
        .status
        .success());
    // SAFETY: kill with the pid of our own child.
    unsafe { libc::kill(daemon.id() as i32, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = daemon.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "daemon still running 10 s after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    assert!(!is_mountpoint(mp.path()));
}

#[test]
fn a_user_is_told_precisely_what_is_missing() {
    let Some(_guard) = user_mount_possible() else {
        return;
    };
    let src = public_source();
    let mp = UserMountpoint::new();
    let stderr = |out: &Output| {
        assert!(!out.status.success(), "mounted unexpectedly");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    {
        // fusermount3 opens /dev/fuse with the user's rights: a root-only
        // device is a real obstacle, named as such.
        let _dev_fuse = DevFuseMode::set(0o600);
        let err = stderr(&mount_as_nobody(src.path(), mp.path(), &[]));
        assert!(
            err.contains("/dev/fuse cannot be opened by you (Permission denied"),
            "{err}"
        );
    }
    let _dev_fuse = DevFuseMode::set(0o666);
    let err = stderr(
        &as_nobody(binary())
            .arg("mount")
            .arg(src.path())
            .arg(mp.path())
            .env("PATH", "/nonexistent")
            .output()
            .unwrap(),
    );
    assert!(err.contains("fusermount3 was not found on PATH"), "{err}");
    let conf = std::fs::read_to_string("/etc/fuse.conf").unwrap_or_default();
    if !conf
        .lines()
        .any(|l| l.split('#').next().unwrap_or("").trim() == "user_allow_other")
    {
        let err = stderr(&mount_as_nobody(
            src.path(),
            mp.path(),
            &["-o", "allow_other"],
        ));
        assert!(
            err.contains("needs a line `user_allow_other` in /etc/fuse.conf"),
            "{err}"
        );
    }
    assert!(!is_mountpoint(mp.path()));
}

/// Issue 35's saved expression, written now by python-blosc2 in a new 0755
/// folder: `x * y + 1` saved as `e.b2nd` (0644) over `x` and `y`, the
/// members `/x` and `/y` of a TreeStore `t.b2z` (which python-blosc2 writes
/// 0600), or with `files` the arrays `x.b2nd` and `y.b2nd` (0644). All of
/// it is then given to nobody. Returns the folder and numpy's `x * y + 1`.
fn saved_expression(files: bool) -> (tempfile::TempDir, Vec<u8>) {
    const WRITE: &str = r#"
import os, sys
import numpy as np, blosc2
os.chdir(sys.argv[1])
rng = np.random.default_rng(35)
x, y = rng.uniform(-5, 5, (60, 50)), rng.uniform(-5, 5, (60, 50))
if sys.argv[2] == "store":
    ts = blosc2.TreeStore("t.b2z", mode="w"); ts["/x"] = x; ts["/y"] = y; ts.close()
    ts = blosc2.TreeStore("t.b2z", mode="r")
    ops = {"x": ts["/x"], "y": ts["/y"]}
else:
    ops = {"x": blosc2.asarray(x, urlpath="x.b2nd", mode="w"),
           "y": blosc2.asarray(y, urlpath="y.b2nd", mode="w")}
blosc2.lazyexpr("x * y + 1", operands=ops).save("e.b2nd")
sys.stdout.write((x * y + 1).tobytes().hex())
"#;
    let src = tempfile::tempdir().unwrap();
    chmod(src.path(), 0o755);
    let dir = src.path().to_str().unwrap();
    let hex = run_python(WRITE, &[dir, if files { "files" } else { "store" }]);
    let expected = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    if !files {
        assert_eq!(
            mode(&src.path().join("t.b2z")),
            0o600,
            "python-blosc2's mode"
        );
    }
    for entry in std::fs::read_dir(src.path()).unwrap() {
        let path = entry.unwrap().path();
        std::os::unix::fs::chown(&path, Some(NOBODY), Some(NOBODY)).unwrap();
    }
    std::os::unix::fs::chown(src.path(), Some(NOBODY), Some(NOBODY)).unwrap();
    assert_eq!(mode(&src.path().join("e.b2nd")), 0o644);
    (src, expected)
}

/// `meta.json`'s `values` of the array folder `dir`, read by nobody.
fn values_as_nobody(dir: &Path) -> serde_json::Value {
    let out = cat_as_nobody(&dir.join("meta.json"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["values"].clone()
}

/// Modes and owner of a computed array folder, as `uid` (in its own
/// group) sees them: (folder, `chunks/`, `meta.json`, `data`, `data.npy`,
/// a chunk file), and the (uid, gid) they all share.
fn computed_modes(dir: &Path, uid: u32) -> ([u32; 6], (u32, u32)) {
    let out = as_user(uid, uid, "sh")
        .arg("-c")
        .arg(r#"cd "$0" && stat -c '%a %u %g' . chunks meta.json data data.npy "chunks/$(ls chunks | head -1)""#)
        .arg(dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}: {text} {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Vec<u32>> = text
        .lines()
        .map(|l| {
            let mut fields = l.split(' ');
            let mode = u32::from_str_radix(fields.next().unwrap(), 8).unwrap();
            std::iter::once(mode)
                .chain(fields.map(|f| f.parse().unwrap()))
                .collect()
        })
        .collect();
    assert_eq!(lines.len(), 6, "{text}");
    let owner = (lines[0][1], lines[0][2]);
    assert!(
        lines.iter().all(|l| (l[1], l[2]) == owner),
        "{}: {text}",
        dir.display()
    );
    (std::array::from_fn(|i| lines[i][0]), owner)
}

/// Issue 35: a saved expression (0644) over a TreeStore python-blosc2 wrote
/// 0600, mounted by their owner without allow_other: nobody else can read
/// the mount at all, so its values are computed, and exact.
#[test]
fn an_owner_mounting_without_allow_other_reads_an_expression_over_a_0600_store() {
    let Some(_guard) = user_mount_possible() else {
        return;
    };
    let (src, expected) = saved_expression(false);
    let mp = UserMountpoint::new();
    let dev_fuse = DevFuseMode::set(0o666);
    let mounted = mount_as_nobody(src.path(), mp.path(), &[]);
    assert!(
        mounted.status.success(),
        "{}",
        String::from_utf8_lossy(&mounted.stderr)
    );
    drop(dev_fuse);
    let e = mp.path().join("e.b2nd");
    let values = values_as_nobody(&e);
    assert_eq!(values["computed"], true, "{values}");
    assert_eq!(cat_as(NOBODY, NOBODY, &e.join("data")).unwrap(), expected);
    // The expression's own access: its operands' modes do not narrow it.
    let (modes, owner) = computed_modes(&e, NOBODY);
    assert_eq!(modes, [0o555, 0o555, 0o444, 0o444, 0o444, 0o444]);
    assert_eq!(owner, (NOBODY, NOBODY));
    let unmounted = as_nobody(binary())
        .arg("unmount")
        .arg(mp.path())
        .output()
        .unwrap();
    assert!(
        unmounted.status.success(),
        "{}",
        String::from_utf8_lossy(&unmounted.stderr)
    );
    assert!(!is_mountpoint(mp.path()));
}

/// The same with allow_other: the computed array shows what the 0600 store
/// allows, owner only; its owner reads exact values, another user is
/// refused by the kernel; a chmod of the store opens it at the next lookup.
#[test]
fn with_allow_other_an_expression_over_a_0600_store_is_its_owners_alone() {
    let Some(_guard) = root_with_fuse_and_nobody() else {
        return;
    };
    let (src, expected) = saved_expression(false);
    let m = Mount::start(src.path(), &["-o", "allow_other", "--attr-timeout", "0"]);
    let e = m.path().join("e.b2nd");
    let (modes, owner) = computed_modes(&e, 0);
    assert_eq!(modes, [0o500, 0o500, 0o400, 0o400, 0o400, 0o400]);
    assert_eq!(owner, (NOBODY, NOBODY));
    assert_eq!(values_as_nobody(&e)["computed"], true);
    assert_eq!(cat_as(NOBODY, NOBODY, &e.join("data")).unwrap(), expected);
    for path in [e.join("data"), e.join("meta.json"), e.join("data.npy")] {
        let err = cat_as(4242, 4242, &path).unwrap_err();
        assert!(
            err.contains("Permission denied"),
            "{}: {err}",
            path.display()
        );
    }
    let listed = as_user(4242, 4242, "ls").arg(&e).output().unwrap();
    assert_denied(&listed, &e);
    // The store made readable by all: so is the computed array.
    chmod(&src.path().join("t.b2z"), 0o644);
    assert_eq!(
        computed_modes(&e, 0).0,
        [0o555, 0o555, 0o444, 0o444, 0o444, 0o444]
    );
    assert_eq!(cat_as(4242, 4242, &e.join("data")).unwrap(), expected);
}

/// Operands of different owners, with allow_other (docs/semantics.md,
/// "Computed arrays"): `y` given to uid 4242 in nobody's group, 0640,
/// leaves the group alone (the owner, nobody, may not be a member: the
/// kernel checks its owner bits); `y` in another group leaves no reader,
/// and `meta.json` (the expression's own access) names `y`; `y` readable
/// by all withholds nothing.
#[test]
fn with_allow_other_operands_of_other_owners_narrow_or_refuse_the_expression() {
    let Some(_guard) = root_with_fuse_and_nobody() else {
        return;
    };
    let (src, expected) = saved_expression(true);
    let y = src.path().join("y.b2nd");
    std::os::unix::fs::chown(&y, Some(4242), Some(NOBODY)).unwrap();
    chmod(&y, 0o640);
    let m = Mount::start(src.path(), &["-o", "allow_other", "--attr-timeout", "0"]);
    let e = m.path().join("e.b2nd");
    let (modes, owner) = computed_modes(&e, 0);
    assert_eq!(modes, [0o050, 0o050, 0o040, 0o040, 0o040, 0o040]);
    assert_eq!(owner, (NOBODY, NOBODY));
    // A member of the group reads exact values; the owner and y's owner may not.
    assert_eq!(cat_as(4343, NOBODY, &e.join("data")).unwrap(), expected);
    for (uid, gid) in [(NOBODY, NOBODY), (4242, 4242)] {
        let err = cat_as(uid, gid, &e.join("data")).unwrap_err();
        assert!(err.contains("Permission denied"), "{uid}: {err}");
    }
    // y in another group: nobody but root would remain.
    std::os::unix::fs::chown(&y, Some(4242), Some(4242)).unwrap();
    let values = values_as_nobody(&e);
    assert_eq!(values["computed"], false, "{values}");
    let why = values["why_not_computed"].as_str().unwrap();
    assert!(
        why.contains("no reader left: y.b2nd (owner 4242, group 4242, mode 0640)"),
        "{why}"
    );
    assert_eq!(
        mode(&e),
        0o555,
        "meta.json alone, the expression's own access"
    );
    assert!(!e.join("data").exists());
    // y readable by all: the expression's own bits remain.
    chmod(&y, 0o644);
    assert_eq!(
        computed_modes(&e, 0).0,
        [0o555, 0o555, 0o444, 0o444, 0o444, 0o444]
    );
    for (uid, gid) in [(NOBODY, NOBODY), (4242, 4242)] {
        assert_eq!(
            cat_as(uid, gid, &e.join("data")).unwrap(),
            expected,
            "{uid}"
        );
    }
}
