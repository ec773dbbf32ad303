//! Real mounts for tests: start `blosc2fs mount -f`, wait until it answers,
//! and always unmount (lazily) when dropped, also after a panic.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A mount test's turn: while it is held no other mount test runs, in this
/// test binary or in another one (scripts/test.sh runs suites side by side).
pub struct Serial {
    _thread: MutexGuard<'static, ()>,
    _process: File,
}

/// Mount tests run one at a time (they share /dev/fuse and the CPU): one
/// thread of this binary at a time, and one binary at a time through an
/// exclusive lock on a file in the temp directory (released by the kernel
/// when the holder exits, also after a crash).
pub fn serial() -> Serial {
    static LOCK: Mutex<()> = Mutex::new(());
    let thread = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let path = std::env::temp_dir().join("blosc2fs-mount-tests.lock");
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    file.lock()
        .unwrap_or_else(|e| panic!("locking {}: {e}", path.display()));
    Serial {
        _thread: thread,
        _process: file,
    }
}

/// [`serial`], or `None` (after saying why on stderr) on a machine where
/// FUSE cannot be used: these tests mount for real, and without
/// `/dev/fuse` there is nothing to mount. The same filesystem logic is
/// tested in-process, without FUSE, by `tests/fs.rs`.
pub fn serial_with_fuse() -> Option<Serial> {
    if let Err(e) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/fuse")
    {
        eprintln!("skipped: this test mounts for real and /dev/fuse cannot be opened ({e}); tests/fs.rs covers the same logic without FUSE");
        return None;
    }
    Some(serial())
}

/// The daemon under test: the binary cargo built for these tests, or the one
/// `BLOSC2FS_BIN` names (set it when several checkouts share one target
/// folder, where each build overwrites the same uplifted binary).
pub fn binary() -> PathBuf {
    match std::env::var_os("BLOSC2FS_BIN") {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => PathBuf::from(env!("CARGO_BIN_EXE_blosc2fs")),
    }
}

/// The command running [`binary`] with at most `nofile` open descriptors.
fn limited(nofile: u32) -> Command {
    let mut c = Command::new("bash");
    c.arg("-c")
        .arg(format!("ulimit -n {nofile} && exec \"$0\" \"$@\""))
        .arg(binary());
    c
}

pub struct Mount {
    /// The temporary mountpoint (none when the test chose its own).
    pub dir: Option<tempfile::TempDir>,
    mnt: PathBuf,
    pub child: Option<Child>,
    pub log: PathBuf,
}

impl Mount {
    /// Mount `source` in the foreground with extra `args`.
    pub fn start(source: &Path, args: &[&str]) -> Mount {
        Mount::start_with_env(source, args, &[])
    }

    /// [`Mount::start`] with extra environment variables for the daemon
    /// (credentials and endpoints of a remote source).
    pub fn start_with_env(source: &Path, args: &[&str], env: &[(&str, &str)]) -> Mount {
        let dir = tempfile::tempdir().expect("temp mountpoint");
        let mnt = dir.path().to_path_buf();
        Mount::spawn(Command::new(binary()), source, Some(dir), mnt, args, env)
    }

    /// Mount `source` at `mountpoint` (an empty folder the test made, which
    /// may lie inside the source), the daemon allowed at most `nofile` open
    /// descriptors (soft and hard, as `ulimit -n` sets them).
    pub fn start_at(source: &Path, mountpoint: &Path, args: &[&str], nofile: Option<u32>) -> Mount {
        let command = match nofile {
            None => Command::new(binary()),
            Some(n) => limited(n),
        };
        Mount::spawn(command, source, None, mountpoint.to_path_buf(), args, &[])
    }

    /// [`Mount::start_with_env`], the daemon allowed at most `nofile` open
    /// descriptors (soft and hard, as `ulimit -n` sets them).
    pub fn start_limited(source: &Path, args: &[&str], env: &[(&str, &str)], nofile: u32) -> Mount {
        let dir = tempfile::tempdir().expect("temp mountpoint");
        let mnt = dir.path().to_path_buf();
        Mount::spawn(limited(nofile), source, Some(dir), mnt, args, env)
    }

    fn spawn(
        mut command: Command,
        source: &Path,
        dir: Option<tempfile::TempDir>,
        mnt: PathBuf,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Mount {
        let log = mnt.with_extension("log");
        let log_file = std::fs::File::create(&log).expect("log file");
        let parent_dev = std::fs::metadata(&mnt).unwrap().dev();
        let child = command
            .arg("mount")
            .arg(source)
            .arg(&mnt)
            .arg("-f")
            .args(args)
            .env(
                "RUST_LOG",
                std::env::var("BLOSC2FS_TEST_LOG").unwrap_or_else(|_| "info".into()),
            )
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log_file))
            .spawn()
            .expect("start blosc2fs");
        let mount = Mount {
            dir,
            mnt,
            child: Some(child),
            log,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(meta) = std::fs::metadata(mount.path()) {
                if meta.dev() != parent_dev {
                    break;
                }
            }
            assert!(
                Instant::now() < deadline,
                "mount did not come up; log:\n{}",
                mount.log_text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        mount
    }

    pub fn path(&self) -> &Path {
        &self.mnt
    }

    pub fn pid(&self) -> i32 {
        self.child.as_ref().map(|c| c.id() as i32).unwrap_or(0)
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn stats(&self) -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(self.path().join(".stats")).unwrap()).unwrap()
    }

    /// Wait for the daemon to exit; returns its exit code.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let deadline = Instant::now() + timeout;
        let child = self.child.as_mut()?;
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                self.child = None;
                return status.code();
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

pub fn is_mountpoint(path: &Path) -> bool {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let p = path.to_string_lossy();
    text.lines().any(|l| l.split(' ').nth(4) == Some(&*p))
}

/// `blosc2fs unmount PATH` when something is mounted at `path`, errors
/// ignored: the first step of every mount's `Drop` (which must not panic).
pub fn unmount_if_mounted(path: &Path) {
    if is_mountpoint(path) {
        let _ = Command::new(binary()).arg("unmount").arg(path).status();
    }
}

/// Wait up to `within` for `child` (a daemon whose mount is going) to
/// exit; kill it past that. Reaped either way.
pub fn reap(child: &mut Child, within: Duration) {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

impl Drop for Mount {
    fn drop(&mut self) {
        unmount_if_mounted(self.path());
        if let Some(mut child) = self.child.take() {
            reap(&mut child, Duration::from_secs(5));
        }
    }
}

/// The Python of the project's virtualenv (numpy, zarr, blosc2).
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("BLOSC2FS_PYTHON") {
        return PathBuf::from(p);
    }
    let p = super::repo_root().join(".venv/bin/python");
    assert!(
        p.exists(),
        "no virtualenv at {}: run scripts/setup_venv.sh (or set BLOSC2FS_PYTHON)",
        p.display()
    );
    p
}

/// Run a Python snippet with `args`; returns stdout, panics on failure.
pub fn run_python(code: &str, args: &[&str]) -> String {
    String::from_utf8_lossy(&run_python_bytes(code, args)).into_owned()
}

/// [`run_python`], stdout as bytes.
pub fn run_python_bytes(code: &str, args: &[&str]) -> Vec<u8> {
    let out = Command::new(python())
        .arg("-c")
        .arg(code)
        .args(args)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "python failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A mount made the way users make it: `blosc2fs mount` without `-f`, which
/// forks the daemon and returns once the mount answers. The daemon is found
/// through `/proc` ([`daemon_of`]). Dropping it unmounts and waits for the
/// daemon to exit (killing that one process if it does not).
pub struct Daemon {
    dir: tempfile::TempDir,
    pid: i32,
    pub log: PathBuf,
}

impl Daemon {
    /// Mount `source` at a new temporary folder with extra `args` and
    /// environment `env` (logging at info into [`Daemon::log`]); panics
    /// with the log when `mount` fails.
    pub fn start(source: &str, args: &[&str], env: &[(&str, &str)]) -> Daemon {
        let dir = tempfile::tempdir().expect("temp mountpoint");
        let log = dir.path().with_extension("log");
        let log_file = File::create(&log).expect("log file");
        // The daemon keeps the standard descriptors: files, so nothing waits on a pipe.
        let status = Command::new(binary())
            .arg("mount")
            .arg(source)
            .arg(dir.path())
            .args(args)
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log_file))
            .status()
            .expect("run blosc2fs mount");
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(status.success(), "mount failed ({status}):\n{text}");
        let found = daemon_of(dir.path());
        let pid = match found[..] {
            [pid] => pid,
            _ => {
                let _ = Command::new(binary())
                    .arg("unmount")
                    .arg(dir.path())
                    .status();
                panic!("not one daemon serves {}: {found:?}", dir.path().display())
            }
        };
        Daemon { dir, pid, log }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// `/proc/PID/NAME` of the daemon (`cmdline`, `environ`).
    pub fn proc_file(&self, name: &str) -> Vec<u8> {
        std::fs::read(format!("/proc/{}/{name}", self.pid))
            .unwrap_or_else(|e| panic!("/proc/{}/{name}: {e}", self.pid))
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn stats(&self) -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(self.path().join(".stats")).unwrap()).unwrap()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        unmount_if_mounted(self.path());
        let deadline = Instant::now() + Duration::from_secs(10);
        while daemon_of(self.path()).contains(&self.pid) {
            if Instant::now() > deadline {
                // SAFETY: kill(2) of the one process found serving our mountpoint.
                unsafe { libc::kill(self.pid, libc::SIGKILL) };
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The live processes of [`binary`] serving `mountpoint`: their executable
/// is the binary and one of their arguments is `mountpoint` (zombies left
/// out).
pub fn daemon_of(mountpoint: &Path) -> Vec<i32> {
    use std::os::unix::ffi::OsStrExt;
    let exe = std::fs::canonicalize(binary()).unwrap_or_else(|_| binary());
    let wanted = mountpoint.as_os_str().as_bytes();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let proc = entry.path();
        let Ok(link) = std::fs::read_link(proc.join("exe")) else {
            continue;
        };
        let same_exe = link == exe
            || link.as_os_str().as_bytes().strip_suffix(b" (deleted)")
                == Some(exe.as_os_str().as_bytes());
        let serves = std::fs::read(proc.join("cmdline"))
            .is_ok_and(|c| c.split(|&b| b == 0).any(|arg| arg == wanted));
        let stat = std::fs::read_to_string(proc.join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X']));
        if same_exe && serves && !zombie {
            out.push(pid);
        }
    }
    out
}
