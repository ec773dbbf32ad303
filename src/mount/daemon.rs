//! The mount daemon: checks, daemonizing with a readiness report, signal
//! handling, clean unmount (also of a mount whose daemon died). It takes a
//! [`MountConfig`]; `build_filesystem` is the one place that builds the
//! library objects (tree, cache, prefetcher, planner) behind the adapter.
//! Once it has, the process's secrets are masked ([`secrets`]), before the
//! mount is made and the waiting parent told it is ready.

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
use super::fusermount;
use super::sched;
use super::secrets;
use super::MountConfig;
#[cfg(feature = "remote")]
use crate::catalog::remote::RemoteRoot;
use crate::disk_cache::DiskCache;
use crate::fs::{Filesystem, FsConfig};
use crate::read::helper::DecodeHelpers;
use crate::read::planner::layout_budget;
use crate::read::{Blocks, Planner, Prefetcher, Stats};
#[cfg(feature = "remote")]
use crate::source::remote::{RemoteOptions, RemoteUrl, Scheme};
use crate::source::urls::{is_remote_url, redact_url};

/// How the mount is made.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mounter {
    /// mount(2) by fuser (root).
    Kernel,
    /// The setuid helper at this path (any other user; see [`fusermount`]).
    Helper(PathBuf),
}

/// What decides whether and how FUSE can be used by this process.
#[derive(Debug)]
struct FuseEnv {
    /// The effective user.
    euid: u32,
    /// Opening `/dev/fuse` for reading and writing: Ok, or why not.
    dev_fuse: std::io::Result<()>,
    /// `fusermount3` (or `fusermount`) on PATH.
    helper: Option<PathBuf>,
    /// `/etc/fuse.conf`, when readable.
    fuse_conf: Option<String>,
}

impl FuseEnv {
    /// This process's situation.
    fn probe() -> FuseEnv {
        FuseEnv {
            // SAFETY: geteuid cannot fail.
            euid: unsafe { libc::geteuid() },
            dev_fuse: std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/fuse")
                .map(drop),
            helper: fusermount::find(),
            fuse_conf: std::fs::read_to_string("/etc/fuse.conf").ok(),
        }
    }
}

/// Whether fuse.conf lets users mount with allow_other (a line
/// `user_allow_other`, comments aside).
fn user_allow_other(conf: &str) -> bool {
    conf.lines()
        .any(|line| line.split('#').next().unwrap_or("").trim() == "user_allow_other")
}

/// How to mount here, or precisely what is missing (everything missing, in
/// one message). A user other than root mounts through fusermount3, which
/// opens `/dev/fuse` with that user's own rights: a `/dev/fuse` the user
/// cannot open is a real obstacle, not one the helper gets around.
fn choose_mounter(env: &FuseEnv, allow_other: bool) -> Result<Mounter, String> {
    if let Err(e) = &env.dev_fuse {
        if e.kind() == std::io::ErrorKind::NotFound {
            return Err("FUSE is not available: /dev/fuse does not exist; load the fuse module (modprobe fuse), or in a container pass the device (--device /dev/fuse)".into());
        }
    }
    if env.euid == 0 {
        return match &env.dev_fuse {
            Ok(()) => Ok(Mounter::Kernel),
            Err(e) => Err(format!("FUSE is not available (/dev/fuse: {e})")),
        };
    }
    let mut missing = Vec::new();
    if let Err(e) = &env.dev_fuse {
        missing.push(format!(
            "/dev/fuse cannot be opened by you ({e}), and fusermount3 opens it with your rights: ask the administrator to let users use FUSE (mode 0666 on /dev/fuse is the usual default), or mount as root"
        ));
    }
    if env.helper.is_none() {
        missing.push("fusermount3 was not found on PATH: install fuse3 (it provides the setuid fusermount3), or mount as root".into());
    }
    if allow_other && !env.fuse_conf.as_deref().is_some_and(user_allow_other) {
        let state = if env.fuse_conf.is_some() {
            "has no such line"
        } else {
            "cannot be read"
        };
        missing.push(format!(
            "-o allow_other needs a line `user_allow_other` in /etc/fuse.conf (it {state}): add it as root, or mount without allow_other"
        ));
    }
    match (&env.helper, missing.is_empty()) {
        (Some(helper), true) => Ok(Mounter::Helper(helper.clone())),
        _ => Err(format!(
            "cannot mount as user {} (not root): {}",
            env.euid,
            missing.join("; ")
        )),
    }
}

/// The source as a URL, when it is one (`s3://`, `gs://`, `az://`, `http(s)://`).
fn source_url(source: &Path) -> Option<&str> {
    source.to_str().filter(|t| is_remote_url(t))
}

/// What the mount table and the logs call the source: a URL without its
/// credentials (user info, query string), or the path.
fn shown_source(source: &Path) -> String {
    match source_url(source) {
        Some(url) => redact_url(url),
        None => source.display().to_string(),
    }
}

/// Check a source URL without touching the network (the daemon connects).
#[cfg(feature = "remote")]
fn preflight_url(url: &str) -> Result<(), String> {
    let parsed = RemoteUrl::parse(url).map_err(|e| e.to_string())?;
    if parsed.scheme() == Scheme::Http && parsed.is_prefix() {
        return Err(format!("{}: a web server cannot be listed: mount the URL of one array (a .b2nd or .b2frame file)", parsed.redacted()));
    }
    Ok(())
}

/// A build without remote sources refuses every URL, before mounting.
#[cfg(not(feature = "remote"))]
fn preflight_url(url: &str) -> Result<(), String> {
    Err(crate::source::urls::remote_not_built(url))
}

/// Check what can be checked before mounting, with messages a user can act on.
fn preflight(source: &Path, mountpoint: &Path, allow_other: bool) -> Result<Mounter, String> {
    if let Some(url) = source_url(source) {
        preflight_url(url)?;
    } else {
        if !source.exists() {
            return Err(format!("source {} does not exist", source.display()));
        }
        std::fs::metadata(source).map_err(|e| format!("source {}: {e}", source.display()))?;
    }
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
        return Err(format!(
            "mountpoint {} is not a directory",
            mountpoint.display()
        ));
    }
    let mut entries = std::fs::read_dir(mountpoint)
        .map_err(|e| format!("mountpoint {}: {e}", mountpoint.display()))?;
    if entries.next().is_some() {
        return Err(format!("mountpoint {} is not empty", mountpoint.display()));
    }
    choose_mounter(&FuseEnv::probe(), allow_other)
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
    match fusermount::find() {
        Some(helper) => fusermount::unmount(&helper, mountpoint, true),
        None => {
            Err("cannot unmount: not root and no fusermount3 found on PATH (install fuse3)".into())
        }
    }
}

/// `blosc2fs unmount MOUNTPOINT`.
pub fn unmount(mountpoint: &Path) -> Result<(), String> {
    detach(mountpoint)
}

/// Raise the mount's readahead (root only; needs the mount to answer stat).
fn set_readahead(mountpoint: &Path, kb: u32) {
    let Ok(meta) = std::fs::metadata(mountpoint) else {
        return;
    };
    let dev = meta.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let knob = format!("/sys/class/bdi/{major}:{minor}/read_ahead_kb");
    match std::fs::write(&knob, kb.to_string()) {
        Ok(()) => log::info!("readahead of {} set to {kb} KiB", mountpoint.display()),
        Err(e) => log::debug!("cannot set {knob}: {e}"),
    }
}

/// Wait until a stat of the mountpoint is answered by our filesystem.
/// Returns the mount's device number, or `None` when it did not answer.
fn wait_until_mounted(mountpoint: &Path, parent_dev: u64) -> Option<u64> {
    for _ in 0..500 {
        if let Ok(meta) = std::fs::metadata(mountpoint) {
            if meta.dev() != parent_dev {
                return Some(meta.dev());
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// `blosc2fs mount`: returns once the mount answers, or serves in the foreground.
pub fn mount(config: MountConfig) -> Result<ExitCode, String> {
    let mounter = preflight(&config.source, &config.mountpoint, config.allow_other)?;
    let source = match source_url(&config.source) {
        Some(_) => config.source.clone(),
        None => std::fs::canonicalize(&config.source)
            .map_err(|e| format!("source {}: {e}", config.source.display()))?,
    };
    let mountpoint = std::fs::canonicalize(&config.mountpoint)
        .map_err(|e| format!("mountpoint {}: {e}", config.mountpoint.display()))?;
    // The daemon leaves the working directory: the cache's path is made whole now.
    let disk_cache = match &config.disk_cache {
        Some(dir) => Some(
            std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::canonicalize(dir))
                .map_err(|e| format!("--disk-cache {}: {e}", dir.display()))?,
        ),
        None => None,
    };
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
                    // This process only waits for the word now: it needs no secret.
                    hide_secrets();
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
    let config = MountConfig {
        source,
        mountpoint,
        disk_cache,
        ..config
    };
    let result = serve(&config, &mounter, parent_dev, &mut ready_pipe);
    if let (Err(message), Some(pipe)) = (&result, ready_pipe.as_mut()) {
        let _ = pipe.write_all(message.as_bytes());
        // The waiting parent prints the message; the daemon exits quietly.
        drop(ready_pipe);
        std::process::exit(1);
    }
    result
}

/// Mask the secrets of this process's command line and environment (see
/// [`secrets`]); a failure is logged, never fatal.
fn hide_secrets() {
    match secrets::scrub() {
        Ok(done) => log::debug!(
            "secrets masked in /proc: {} argument(s), {} variable(s)",
            done.arguments,
            done.variables
        ),
        Err(e) => log::warn!("{e}"),
    }
}

fn redirect_stdio(log_to_devnull: bool) {
    if !log_to_devnull {
        return;
    }
    if let Ok(devnull) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
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
/// planner behind the FUSE adapter (`config.source` already canonical). A
/// URL source is connected to here, in the daemon: its errors (a missing
/// bucket, refused credentials) reach the user through the readiness pipe.
fn build_filesystem(config: &MountConfig) -> Result<FuseAdapter, String> {
    let source = &config.source;
    let disk_cache = match &config.disk_cache {
        Some(dir) => Some(Arc::new(
            DiskCache::start(dir, config.disk_cache_size).map_err(|e| e.to_string())?,
        )),
        None => None,
    };
    let fs = match source_url(source) {
        #[cfg(feature = "remote")]
        Some(url) => remote_filesystem(url, config, disk_cache)?,
        #[cfg(not(feature = "remote"))]
        Some(url) => return Err(crate::source::urls::remote_not_built(url)),
        None => {
            let planner = planner(config, config.cache_size as usize, prefetch_window(config));
            // The mountpoint, when inside the source, is never walked into.
            let mountpoint = config
                .mountpoint
                .starts_with(source)
                .then(|| config.mountpoint.clone());
            Filesystem::new(
                source,
                planner,
                FsConfig {
                    direct_io: config.direct_io,
                    meta_cache: config.meta_cache as usize,
                    mountpoint,
                    views: config.views,
                    allow_other: config.allow_other,
                    disk_cache,
                    listing: config.listing,
                },
            )
            .map_err(|e| format!("source {}: {e}", source.display()))?
        }
    };
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let options = AdapterOptions {
        uid: config.uid,
        gid: config.gid,
        mounter: (uid, gid),
        ttl: config.attr_timeout,
        max_request_kb: config.max_request_kb,
        // Complete cache files, and local files shown as themselves.
        passthrough: config.passthrough
            && (config.disk_cache.is_some() || !config.listing.blosc2_only),
    };
    Ok(FuseAdapter::new(fs, options))
}

/// The filesystem over the remote source at `url`. Its bytes held and in
/// flight come out of the cache size (the block cache gets the rest), and
/// prefetch never reaches further than the bytes fetched ahead can hold.
#[cfg(feature = "remote")]
fn remote_filesystem(
    url: &str,
    config: &MountConfig,
    disk_cache: Option<Arc<DiskCache>>,
) -> Result<Filesystem, String> {
    let remote = RemoteOptions {
        budget: RemoteOptions::share_of_cache(config.cache_size),
        ..config.remote.clone()
    };
    let budget = (config.cache_size as usize)
        .saturating_sub(remote.budget as usize)
        .max(8 << 20);
    let planner = planner(
        config,
        budget,
        prefetch_window(config).min(remote.budget / 2),
    );
    let root = RemoteRoot::connect(url, &remote, config.attr_timeout, disk_cache.clone())
        .map_err(|e| format!("source {e}"))?;
    Ok(Filesystem::new_remote(
        Arc::new(root),
        planner,
        FsConfig {
            direct_io: config.direct_io,
            meta_cache: config.meta_cache as usize,
            mountpoint: None,
            views: config.views,
            allow_other: config.allow_other,
            disk_cache,
            listing: config.listing,
        },
    ))
}

/// The planner over a block cache of `budget` bytes (decode helpers and
/// prefetch threads as `config` asks), prefetching `window` bytes ahead.
fn planner(config: &MountConfig, budget: usize, window: u64) -> Arc<Planner> {
    let blocks = Arc::new(
        Blocks::new(budget, layout_budget(budget), Arc::new(Stats::default())).with_helpers(
            match config.decode_helpers {
                None => DecodeHelpers::for_this_machine(),
                Some(threads) => DecodeHelpers::start(threads),
            },
        ),
    );
    let prefetcher = (config.prefetch_threads > 0)
        .then(|| Prefetcher::start(blocks.clone(), config.prefetch_threads));
    Arc::new(Planner::new(blocks, prefetcher, window))
}

/// How far prefetch reads ahead: far enough to keep both cores busy, small
/// enough that the prefetched blocks never push out the ones being read.
fn prefetch_window(config: &MountConfig) -> u64 {
    (config.cache_size / 8).min(32 << 20)
}

/// The helper's `-o` list for `options`.
fn helper_options(options: &[MountOption], allow_other: bool) -> String {
    let mut out: Vec<String> = options
        .iter()
        .filter_map(|option| match option {
            MountOption::RO => Some("ro".into()),
            MountOption::FSName(name) => {
                Some(format!("fsname={}", fusermount::escape_option_value(name)))
            }
            MountOption::CUSTOM(text) => Some(text.clone()),
            MountOption::DefaultPermissions => Some("default_permissions".into()),
            MountOption::NoSuid => Some("nosuid".into()),
            MountOption::NoDev => Some("nodev".into()),
            other => {
                log::warn!("mount option {other:?} not passed to fusermount3");
                None
            }
        })
        .collect();
    if allow_other {
        out.push("allow_other".into());
    }
    out.join(",")
}

/// Serve `config` (paths already canonical) until unmounted.
fn serve(
    config: &MountConfig,
    mounter: &Mounter,
    parent_dev: u64,
    ready: &mut Option<std::fs::File>,
) -> Result<ExitCode, String> {
    let (source, mountpoint) = (config.source.as_path(), config.mountpoint.as_path());
    // Blocked before the prefetch workers start, so every thread inherits the mask.
    let signals = block_signals();
    // Descriptors are pooled (see source::fds); the pool is a share of this.
    crate::source::fds::raise_limit();
    let fs = build_filesystem(config)?;
    // Every secret has been read (logins, store clients, a signed URL's
    // query): from now on ps and /proc show none of them.
    hide_secrets();
    let served = fs.filesystem();
    let mut session_config = Config::default();
    session_config.mount_options = vec![
        MountOption::RO,
        MountOption::FSName(shown_source(source)),
        MountOption::CUSTOM("subtype=blosc2fs".into()),
        MountOption::DefaultPermissions,
        MountOption::NoSuid,
        MountOption::NoDev,
    ];
    session_config.acl = if config.allow_other {
        SessionACL::All
    } else {
        SessionACL::Owner
    };
    session_config.n_threads = Some(config.threads);
    let session = match mounter {
        Mounter::Kernel => {
            session_config.clone_fd = config.threads > 1;
            Session::new(fs, mountpoint, &session_config)
        }
        Mounter::Helper(helper) => {
            // Each extra channel opens /dev/fuse itself: only where we may.
            session_config.clone_fd = config.threads > 1 && FuseEnv::probe().dev_fuse.is_ok();
            let options = helper_options(&session_config.mount_options, config.allow_other);
            let fd = fusermount::mount(helper, mountpoint, &options)
                .map_err(|e| format!("cannot mount {}: {e}", mountpoint.display()))?;
            Session::from_fd(fs, fd, session_config.acl, session_config.clone())
        }
    };
    let mut session = session.map_err(|e| format!("cannot mount {}: {e}", mountpoint.display()))?;
    let mut unmounter = session.unmount_callable();

    let mp: PathBuf = mountpoint.to_path_buf();
    let readahead = config.readahead_kb;
    let ready_fd = ready.take();
    let foreground = config.foreground;
    std::thread::spawn(move || {
        let dev = wait_until_mounted(&mp, parent_dev);
        if let Some(dev) = dev {
            // From now on the walk refuses anything on the mount itself.
            served.set_mount_device(dev);
            set_readahead(&mp, readahead);
        }
        let ok = dev.is_some();
        if let Some(mut pipe) = ready_fd {
            let _ = pipe.write_all(if ok {
                b"ok" as &[u8]
            } else {
                b"the mount did not answer within 5 seconds"
            });
            drop(pipe);
        }
        if ok && !foreground {
            redirect_stdio(std::env::var_os("RUST_LOG").is_none());
        }
    });
    let mp = mountpoint.to_path_buf();
    let grace = config.exit_grace;
    let stopping = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop = stopping.clone();
    std::thread::spawn(move || {
        let sig = wait_signal(&signals);
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
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
        log::warn!(
            "files still open {:.1} s after the unmount; exiting",
            grace.as_secs_f64()
        );
        std::process::exit(0);
    });
    log::info!(
        "serving {} at {}",
        shown_source(source),
        mountpoint.display()
    );
    // run() starts the FUSE threads, which inherit this thread's policy.
    if let Err(e) = sched::apply_to_this_thread(config.sched) {
        log::warn!(
            "cannot give the FUSE threads the {:?} scheduling policy: {e}",
            config.sched
        );
    }
    match session.run() {
        // Once the mount is detached, the kernel may end the connection by
        // aborting it rather than closing it (seen on 6.18 in one test run
        // of four): both are the unmount we asked for.
        Err(e)
            if e.raw_os_error() == Some(libc::ECONNABORTED)
                && stopping.load(std::sync::atomic::Ordering::SeqCst) => {}
        other => other.map_err(|e| format!("FUSE session ended with an error: {e}"))?,
    }
    log::info!("unmounted {}", mountpoint.display());
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(
        euid: u32,
        dev_fuse: Option<std::io::ErrorKind>,
        helper: bool,
        conf: Option<&str>,
    ) -> FuseEnv {
        FuseEnv {
            euid,
            dev_fuse: dev_fuse.map_or(Ok(()), |kind| Err(std::io::Error::from(kind))),
            helper: helper.then(|| PathBuf::from("/usr/bin/fusermount3")),
            fuse_conf: conf.map(str::to_string),
        }
    }

    #[test]
    fn root_mounts_itself_and_needs_only_dev_fuse() {
        assert_eq!(
            choose_mounter(&env(0, None, false, None), true),
            Ok(Mounter::Kernel)
        );
        let err = choose_mounter(
            &env(0, Some(std::io::ErrorKind::NotFound), true, None),
            false,
        )
        .unwrap_err();
        assert!(
            err.contains("/dev/fuse does not exist") && err.contains("modprobe fuse"),
            "{err}"
        );
        let err = choose_mounter(
            &env(0, Some(std::io::ErrorKind::PermissionDenied), true, None),
            false,
        )
        .unwrap_err();
        assert!(
            err.starts_with("FUSE is not available (/dev/fuse: "),
            "{err}"
        );
    }

    #[test]
    fn other_users_mount_through_the_helper() {
        let helper = Mounter::Helper(PathBuf::from("/usr/bin/fusermount3"));
        assert_eq!(
            choose_mounter(&env(1000, None, true, None), false),
            Ok(helper.clone())
        );
        assert_eq!(
            choose_mounter(
                &env(
                    1000,
                    None,
                    true,
                    Some("# comment\n  user_allow_other  # yes\n")
                ),
                true
            ),
            Ok(helper)
        );
    }

    #[test]
    fn other_users_are_told_everything_missing() {
        let err = choose_mounter(&env(1000, None, false, None), false).unwrap_err();
        assert_eq!(err, "cannot mount as user 1000 (not root): fusermount3 was not found on PATH: install fuse3 (it provides the setuid fusermount3), or mount as root");
        let err = choose_mounter(
            &env(1000, Some(std::io::ErrorKind::PermissionDenied), true, None),
            false,
        )
        .unwrap_err();
        assert!(
            err.contains("/dev/fuse cannot be opened by you (permission denied)"),
            "{err}"
        );
        assert!(!err.contains("fusermount3 was not found"), "{err}");
        let err =
            choose_mounter(&env(1000, None, true, Some("#user_allow_other\n")), true).unwrap_err();
        assert!(
            err.contains("needs a line `user_allow_other` in /etc/fuse.conf (it has no such line)"),
            "{err}"
        );
        let err = choose_mounter(
            &env(
                1000,
                Some(std::io::ErrorKind::PermissionDenied),
                false,
                None,
            ),
            true,
        )
        .unwrap_err();
        assert_eq!(err.matches("; ").count(), 2, "{err}");
        assert!(err.contains("(it cannot be read)"), "{err}");
    }

    #[test]
    fn helper_options_carry_the_mount_options_and_escape_the_name() {
        let options = [
            MountOption::RO,
            MountOption::FSName("/data/a,b".into()),
            MountOption::CUSTOM("subtype=blosc2fs".into()),
            MountOption::DefaultPermissions,
            MountOption::NoSuid,
            MountOption::NoDev,
        ];
        assert_eq!(
            helper_options(&options, false),
            "ro,fsname=/data/a\\,b,subtype=blosc2fs,default_permissions,nosuid,nodev"
        );
        assert!(helper_options(&options, true).ends_with(",nodev,allow_other"));
    }
}
