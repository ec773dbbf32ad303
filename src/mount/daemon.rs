//! The mount daemon: checks, daemonizing with a readiness report, signal
//! handling, clean unmount (also of a mount whose daemon died). It takes a
//! [`MountConfig`]; `build_filesystem` is the one place that builds the
//! library objects (tree, cache, prefetcher, planner) behind the adapter.

use std::ffi::CString;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use fuser::{Config, MountOption, Session, SessionACL};

use super::fuse::{AdapterOptions, FuseAdapter};
use super::MountConfig;
use crate::read::planner::layout_budget;
use crate::read::{Blocks, Planner, Prefetcher, Stats};
use crate::tree::{Filesystem, FsConfig};

/// Check what can be checked before mounting, with messages a user can act on.
fn preflight(source: &Path, mountpoint: &Path) -> Result<(), String> {
    if !source.exists() {
        return Err(format!("source {} does not exist", source.display()));
    }
    std::fs::metadata(source).map_err(|e| format!("source {}: {e}", source.display()))?;
    let meta = match std::fs::metadata(mountpoint) {
        Ok(m) => m,
        Err(e) if e.raw_os_error() == Some(libc::ENOTCONN) => {
            return Err(format!(
                "mountpoint {} is a dead mount (transport endpoint is not connected); run `blosc2fs unmount {}` first",
                mountpoint.display(),
                mountpoint.display()
            ))
        }
        Err(e) => return Err(format!("mountpoint {}: {e}", mountpoint.display())),
    };
    if !meta.is_dir() {
        return Err(format!("mountpoint {} is not a directory", mountpoint.display()));
    }
    let mut entries = std::fs::read_dir(mountpoint).map_err(|e| format!("mountpoint {}: {e}", mountpoint.display()))?;
    if entries.next().is_some() {
        return Err(format!("mountpoint {} is not empty", mountpoint.display()));
    }
    if let Err(e) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/fuse") {
        return Err(format!("FUSE is not available (/dev/fuse: {e}); load the fuse module or run where /dev/fuse exists"));
    }
    Ok(())
}

fn block_signals() -> libc::sigset_t {
    // SAFETY: plain libc signal-set manipulation on a local sigset_t.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGHUP);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

fn wait_signal(set: &libc::sigset_t) -> i32 {
    let mut sig: libc::c_int = 0;
    // SAFETY: sigwait on a valid, initialised set.
    unsafe { libc::sigwait(set, &mut sig) };
    sig
}

/// Detach the mount at `mountpoint` (lazily, so open files do not block it).
fn detach(mountpoint: &Path) -> Result<(), String> {
    let is_root = unsafe { libc::geteuid() } == 0;
    if is_root {
        let path = CString::new(mountpoint.as_os_str().as_bytes()).map_err(|e| e.to_string())?;
        // SAFETY: umount2 with a valid NUL-terminated path.
        let rc = unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) };
        if rc == 0 {
            return Ok(());
        }
        let err = std::io::Error::last_os_error();
        return Err(format!("cannot unmount {}: {err}", mountpoint.display()));
    }
    for helper in ["fusermount3", "fusermount"] {
        match std::process::Command::new(helper).arg("-u").arg("-z").arg(mountpoint).status() {
            Ok(status) if status.success() => return Ok(()),
            Ok(status) => return Err(format!("{helper} -u -z {} failed ({status})", mountpoint.display())),
            Err(_) => continue,
        }
    }
    Err("cannot unmount: not root and no fusermount3 found".into())
}

/// `blosc2fs unmount MOUNTPOINT`.
pub fn unmount(mountpoint: &Path) -> Result<(), String> {
    detach(mountpoint)
}

/// Raise the mount's readahead (root only; needs the mount to answer stat).
fn set_readahead(mountpoint: &Path, kb: u32) {
    let Ok(meta) = std::fs::metadata(mountpoint) else { return };
    let dev = meta.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let knob = format!("/sys/class/bdi/{major}:{minor}/read_ahead_kb");
    match std::fs::write(&knob, kb.to_string()) {
        Ok(()) => log::info!("readahead of {} set to {kb} KiB", mountpoint.display()),
        Err(e) => log::debug!("cannot set {knob}: {e}"),
    }
}

/// Wait until a stat of the mountpoint is answered by our filesystem.
fn wait_until_mounted(mountpoint: &Path, parent_dev: u64) -> bool {
    for _ in 0..500 {
        if let Ok(meta) = std::fs::metadata(mountpoint) {
            if meta.dev() != parent_dev {
                return true;
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// `blosc2fs mount`: returns once the mount answers, or serves in the foreground.
pub fn mount(config: MountConfig) -> Result<ExitCode, String> {
    preflight(&config.source, &config.mountpoint)?;
    let source = std::fs::canonicalize(&config.source).map_err(|e| format!("source {}: {e}", config.source.display()))?;
    let mountpoint =
        std::fs::canonicalize(&config.mountpoint).map_err(|e| format!("mountpoint {}: {e}", config.mountpoint.display()))?;
    let parent_dev = std::fs::metadata(&mountpoint).map(|m| m.dev()).unwrap_or(0);

    // Daemonize before any thread exists; the parent waits for a readiness word.
    let mut ready_pipe: Option<std::fs::File> = None;
    if !config.foreground {
        let mut fds = [0 as RawFd; 2];
        // SAFETY: pipe/fork/setsid are called before any thread is started.
        unsafe {
            if libc::pipe(fds.as_mut_ptr()) != 0 {
                return Err(format!("pipe: {}", std::io::Error::last_os_error()));
            }
            match libc::fork() {
                -1 => return Err(format!("fork: {}", std::io::Error::last_os_error())),
                0 => {
                    libc::close(fds[0]);
                    libc::setsid();
                    ready_pipe = Some(std::fs::File::from_raw_fd(fds[1]));
                }
                _child => {
                    libc::close(fds[1]);
                    let mut reader = std::fs::File::from_raw_fd(fds[0]);
                    let mut message = String::new();
                    let _ = reader.read_to_string(&mut message);
                    return if message == "ok" {
                        Ok(ExitCode::SUCCESS)
                    } else if message.is_empty() {
                        Err("the mount daemon exited before the mount was ready".into())
                    } else {
                        Err(message)
                    };
                }
            }
        }
    }
    let config = MountConfig { source, mountpoint, ..config };
    let result = serve(&config, parent_dev, &mut ready_pipe);
    if let (Err(message), Some(pipe)) = (&result, ready_pipe.as_mut()) {
        let _ = pipe.write_all(message.as_bytes());
    }
    result
}

fn redirect_stdio(log_to_devnull: bool) {
    if !log_to_devnull {
        return;
    }
    if let Ok(devnull) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null") {
        use std::os::fd::AsRawFd;
        // SAFETY: dup2 onto the standard descriptors of this process.
        unsafe {
            libc::dup2(devnull.as_raw_fd(), 0);
            libc::dup2(devnull.as_raw_fd(), 1);
            libc::dup2(devnull.as_raw_fd(), 2);
        }
    }
}

/// The filesystem the session serves: tree, block cache, prefetcher and
/// planner behind the FUSE adapter (`config.source` already canonical).
fn build_filesystem(config: &MountConfig) -> Result<FuseAdapter, String> {
    let source = &config.source;
    let budget = config.cache_size as usize;
    let blocks = Arc::new(Blocks::new(budget, layout_budget(budget), Arc::new(Stats::default())));
    let prefetcher = (config.prefetch_threads > 0).then(|| Prefetcher::start(blocks.clone(), config.prefetch_threads));
    // Far enough ahead to keep both cores busy, small enough that the
    // prefetched blocks never push out the ones being read.
    let window = (config.cache_size / 8).min(32 << 20);
    let planner = Arc::new(Planner::new(blocks, prefetcher, window));
    let fs = Filesystem::new(source, planner, FsConfig { direct_io: config.direct_io }).map_err(|e| format!("source {}: {e}", source.display()))?;
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let options = AdapterOptions { uid: config.uid, gid: config.gid, mounter: (uid, gid), ttl: config.attr_timeout };
    Ok(FuseAdapter::new(fs, options))
}

/// Serve `config` (paths already canonical) until unmounted.
fn serve(config: &MountConfig, parent_dev: u64, ready: &mut Option<std::fs::File>) -> Result<ExitCode, String> {
    let (source, mountpoint) = (config.source.as_path(), config.mountpoint.as_path());
    // Blocked before the prefetch workers start, so every thread inherits the mask.
    let signals = block_signals();
    let fs = build_filesystem(config)?;
    let mut session_config = Config::default();
    session_config.mount_options = vec![
        MountOption::RO,
        MountOption::FSName(source.display().to_string()),
        MountOption::CUSTOM("subtype=blosc2fs".into()),
        MountOption::DefaultPermissions,
        MountOption::NoSuid,
        MountOption::NoDev,
    ];
    session_config.acl = if config.allow_other { SessionACL::All } else { SessionACL::Owner };
    session_config.n_threads = Some(config.threads);
    session_config.clone_fd = config.threads > 1;
    let mut session = Session::new(fs, mountpoint, &session_config).map_err(|e| format!("cannot mount {}: {e}", mountpoint.display()))?;
    let mut unmounter = session.unmount_callable();

    let mp: PathBuf = mountpoint.to_path_buf();
    let readahead = config.readahead_kb;
    let ready_fd = ready.take();
    let foreground = config.foreground;
    std::thread::spawn(move || {
        let ok = wait_until_mounted(&mp, parent_dev);
        if ok {
            set_readahead(&mp, readahead);
        }
        if let Some(mut pipe) = ready_fd {
            let _ = pipe.write_all(if ok { b"ok" as &[u8] } else { b"the mount did not answer within 5 seconds" });
            drop(pipe);
        }
        if ok && !foreground {
            redirect_stdio(std::env::var_os("RUST_LOG").is_none());
        }
    });
    let mp = mountpoint.to_path_buf();
    let grace = config.exit_grace;
    std::thread::spawn(move || {
        let sig = wait_signal(&signals);
        log::info!("signal {sig}: unmounting {}", mp.display());
        // A lazy detach takes the mount out of the namespace at once; open
        // files keep being served until they are closed, then the session ends.
        match detach(&mp) {
            Ok(()) => {}
            Err(e) => {
                log::warn!("{e}");
                let _ = unmounter.unmount();
            }
        }
        std::thread::sleep(grace);
        log::warn!("files still open {:.1} s after the unmount; exiting", grace.as_secs_f64());
        std::process::exit(0);
    });
    log::info!("serving {} at {}", source.display(), mountpoint.display());
    session.run().map_err(|e| format!("FUSE session ended with an error: {e}"))?;
    log::info!("unmounted {}", mountpoint.display());
    Ok(ExitCode::SUCCESS)
}
