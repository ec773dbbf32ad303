//! Command-line parsing: subcommands, sizes with K/M/G suffixes, and the
//! `mount.fuse3` calling convention (`blosc2fs SOURCE MOUNTPOINT -o OPTS`).
//! `mount`'s flags and `-o` options become a [`MountConfig`]. The same
//! definitions give the shell completions and the man page ([`completions`],
//! [`man_page`]), so help, completion and manual never disagree.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, CommandFactory, Parser, Subcommand};

use crate::catalog::folder_listing::ListingRules;
use crate::mount::sched::Sched;
use crate::mount::MountConfig;
#[cfg(feature = "remote")]
use crate::source::remote::RemoteOptions;
use crate::source::urls::is_remote_url;
use crate::views::ViewSet;

/// `--version`'s long form: the version, then what this build was built
/// with (the cargo features `remote`, `zstd-c` and `openzl-c`).
fn long_version() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let remote = if cfg!(feature = "remote") {
            "yes"
        } else {
            "no (built without the cargo feature `remote`)"
        };
        format!(
            "{}\nremote sources: {remote}\nzstd decoder: {}\nopenzl decoder: {}",
            env!("CARGO_PKG_VERSION"),
            crate::format::codec::zstd::BACKEND,
            crate::format::codec::openzl::backend()
        )
    })
}

/// The command line: global flags and one subcommand.
#[derive(Debug, Parser)]
#[command(
    name = "blosc2fs",
    version,
    long_version = long_version(),
    about = "Read Blosc2 arrays (.b2nd, frames) as plain files",
    long_about = "Read Blosc2 arrays (.b2nd, frames) as plain files.\n\n\
        `blosc2fs mount SOURCE MOUNTPOINT` presents every Blosc2 file under SOURCE as a folder holding \
        meta.json, data (the C-order bytes), data.npy and chunks/. The mount is read-only; presented \
        entries take the owner, group and read bits of their source. `blosc2fs unmount MOUNTPOINT` ends it."
)]
pub struct Cli {
    /// More log output (-v info, -vv debug, -vvv trace); RUST_LOG also works.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print a file's meta.json (a store's: its keys and metadata).
    Info {
        /// A Blosc2 file (.b2nd, .b2frame, ...), a sparse-frame directory, or
        /// a store (.b2z, .b2d, .b2e), or the URL of a frame (s3://, gs://,
        /// az://, http(s)://).
        file: PathBuf,
        /// For a store: the key of a table or value to describe (`/grp/tbl`);
        /// a table's schema is printed as text.
        key: Option<String>,
        /// For a store: print its tree of keys instead.
        #[arg(long)]
        tree: bool,
        /// How to reach a remote file.
        #[command(flatten)]
        remote: RemoteArgs,
    },
    /// Write the array's C-order bytes to stdout (a plain frame: its chunks in order).
    Cat {
        /// A Blosc2 file (.b2nd, .b2frame, ...), a sparse-frame directory, a
        /// store, or the URL of a frame (s3://, gs://, az://, http(s)://).
        file: PathBuf,
        /// For a store: the key of the value to write (`/exp/run1/temps`).
        key: Option<String>,
        /// How to reach a remote file.
        #[command(flatten)]
        remote: RemoteArgs,
        /// Decoded-block cache used while streaming.
        #[arg(long, default_value = "256M", value_parser = parse_size)]
        cache_size: u64,
    },
    /// Mount SOURCE (a Blosc2 file or a directory tree of them) read-only at MOUNTPOINT.
    Mount(MountArgs),
    /// Unmount MOUNTPOINT (also a mount whose daemon died).
    Unmount {
        /// Where the filesystem is mounted.
        mountpoint: PathBuf,
    },
    /// Show what a --disk-cache directory holds (entries, bytes on disk,
    /// how much of each is whole, their keys), or empty it.
    Cache {
        /// The directory given to --disk-cache.
        dir: PathBuf,
        /// Remove every entry (files still open by a mount stay readable to it).
        #[arg(long)]
        clear: bool,
    },
    /// Print a shell completion script, e.g. `blosc2fs completions bash > /etc/bash_completion.d/blosc2fs`.
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), e.g. `blosc2fs man | man -l -`.
    Man {
        /// Print the page of this subcommand (blosc2fs-mount(1), ...) instead of blosc2fs(1).
        subcommand: Option<String>,
    },
}

/// Write the completion script of `shell` for the whole command line.
pub fn completions(
    shell: clap_complete::Shell,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    // Generated into memory first: clap_complete panics on a failed write.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "blosc2fs", &mut script);
    out.write_all(&script)
}

/// Write the man page (roff) of blosc2fs, or of one of its subcommands
/// (named `blosc2fs-SUBCOMMAND`).
/// An unknown subcommand is an `InvalidInput` error.
pub fn man_page(subcommand: Option<&str>, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let command = Cli::command();
    let page = match subcommand {
        None => command,
        Some(name) => {
            let unknown = || {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("no subcommand {name:?}"),
                )
            };
            let sub = command.find_subcommand(name).ok_or_else(unknown)?.clone();
            let full = format!("blosc2fs-{}", sub.get_name());
            let usage = format!("blosc2fs {}", sub.get_name());
            sub.display_name(full)
                .bin_name(usage)
                .version(env!("CARGO_PKG_VERSION"))
        }
    };
    clap_mangen::Man::new(page)
        .source(format!("blosc2fs {}", env!("CARGO_PKG_VERSION")))
        .render(out)
}

/// Flags for remote sources (credentials and endpoints otherwise come from
/// the environment: AWS_*, GOOGLE_*, AZURE_* variables, AWS profiles).
/// A build without the cargo feature `remote` has none of them.
#[derive(Debug, Clone, Args)]
pub struct RemoteArgs {
    /// Seconds one remote request may take, retries included.
    #[cfg(feature = "remote")]
    #[arg(long, default_value_t = 30.0)]
    pub remote_timeout: f64,
    /// Send unsigned requests (public buckets; no credentials looked up).
    #[cfg(feature = "remote")]
    #[arg(long)]
    pub anonymous: bool,
    /// Allow a plain-http endpoint for s3://, gs://, az:// (also AWS_ALLOW_HTTP=true).
    #[cfg(feature = "remote")]
    #[arg(long)]
    pub allow_http: bool,
}

impl RemoteArgs {
    /// The client options these flags ask for.
    #[cfg(feature = "remote")]
    pub fn options(&self) -> Result<RemoteOptions, String> {
        let timeout = seconds("--remote-timeout", self.remote_timeout)?;
        if timeout.is_zero() {
            return Err("--remote-timeout must be more than 0 seconds".into());
        }
        Ok(RemoteOptions {
            timeout,
            anonymous: self.anonymous,
            allow_http: self.allow_http,
            ..RemoteOptions::default()
        })
    }

    /// Open the array at `url` (see [`crate::source::open_url`]).
    #[cfg(feature = "remote")]
    fn open(&self, url: &str) -> Result<crate::format::Array, String> {
        crate::source::open_url(url, &self.options()?).map_err(|e| e.to_string())
    }

    /// A build without remote sources refuses every URL.
    #[cfg(not(feature = "remote"))]
    fn open(&self, url: &str) -> Result<crate::format::Array, String> {
        Err(crate::source::urls::remote_not_built(url))
    }
}

/// A build without remote sources refuses a URL given to `info` or `cat`
/// before anything else is made of it (a `.b2z` URL is not a store that
/// happens to be missing).
#[cfg(not(feature = "remote"))]
pub fn refuse_url(file: &std::path::Path) -> Result<(), String> {
    match file.to_str().filter(|t| is_remote_url(t)) {
        Some(url) => Err(crate::source::urls::remote_not_built(url)),
        None => Ok(()),
    }
}

/// Open the array at `file`: a URL as the remote flags say, anything else
/// as a local path.
pub fn open_file(
    file: &std::path::Path,
    remote: &RemoteArgs,
) -> Result<crate::format::Array, String> {
    match file.to_str().filter(|t| is_remote_url(t)) {
        Some(url) => remote.open(url),
        None => crate::source::open_array(file).map_err(|e| e.to_string()),
    }
}

/// Flags of `blosc2fs mount` as typed (see [`MountArgs::settle`]).
#[derive(Debug, Clone, Args)]
pub struct MountArgs {
    /// A Blosc2 file (.b2nd, .b2frame, ...), a sparse-frame directory, or a
    /// directory tree holding them (mirrored; its other files are shown as
    /// themselves, unless `--blosc2-only` is given); or a URL: an object-store prefix
    /// (s3://bucket/prefix/, gs://, az://) or the http(s) URL of one array.
    pub source: PathBuf,
    /// An empty directory to mount at (a user other than root needs write
    /// access to it).
    pub mountpoint: PathBuf,
    /// Stay in the foreground instead of daemonizing.
    #[arg(short, long)]
    pub foreground: bool,
    /// Byte budget of the decoded-block cache (K/M/G suffixes).
    #[arg(long, default_value = "512M", value_parser = parse_size)]
    pub cache_size: u64,
    /// Byte budget of what the daemon keeps of the arrays and stores it has
    /// looked at (parsed headers, chunk indexes, meta.json, store listings;
    /// K/M/G suffixes): past it, the least recently used are dropped and
    /// read again when next needed.
    #[arg(long, default_value = "32M", value_parser = parse_size)]
    pub meta_cache: u64,
    /// Which presented files array folders offer, comma separated: npy,
    /// text, preview, chunks, items, nrrd, metaimage, envi, table (table.csv),
    /// arrow (table.arrow), zarr3 (the Zarr v3 hierarchy: zarr.json in every folder and array
    /// folder, chunk keys `c/<i>/<j>` by lookup), headers (nrrd, metaimage and
    /// envi), all, or none. `data` and `meta.json` are always offered;
    /// `--views none` gives a plain tree.
    #[arg(long, default_value = "all", value_parser = parse_views)]
    pub views: ViewSet,
    /// Show only Blosc2 objects and folders, as earlier releases did: no
    /// other file of the source (`.json`, `.pkl`, ...) is shown.
    #[arg(long)]
    pub blosc2_only: bool,
    /// Show each Blosc2 file also as itself (its own bytes, under its own
    /// name), so tools that open `.b2nd` files work on the mount; its
    /// folder of views is then named after it plus `.d` (`x.b2nd.d/`).
    #[arg(long)]
    pub originals: bool,
    /// FUSE worker threads.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Prefetch worker threads (0 disables prefetch).
    #[arg(long, default_value_t = 2)]
    pub prefetch_threads: usize,
    /// Threads that decode half of a random read's zstd/zlib block (default:
    /// one fewer than the cores, at most 3; 0 disables them).
    #[arg(long)]
    pub decode_helpers: Option<usize>,
    /// Scheduling of the FUSE threads: `batch` (SCHED_BATCH: a thread woken
    /// by a request does not preempt the reader copying out pages) or
    /// `normal` (as started).
    #[arg(long, default_value = "batch", value_parser = parse_sched)]
    pub sched: Sched,
    /// Owner of every presented file (default: the owner of its source).
    #[arg(long)]
    pub uid: Option<u32>,
    /// Group of every presented file (default: the group of its source).
    #[arg(long)]
    pub gid: Option<u32>,
    /// Mount options, comma separated: ro, allow_other (other users may
    /// read, as the source's permissions allow), cache_size=SIZE, meta_cache=SIZE,
    /// views=LIST (names separated by `:` or `+`), threads=N,
    /// prefetch_threads=N, decode_helpers=N, sched=batch|normal, uid=N, gid=N,
    /// direct_io, readahead_kb=N, max_request_kb=N, disk_cache=DIR,
    /// disk_cache_size=SIZE, no_passthrough, blosc2_only, originals.
    #[arg(short = 'o', value_name = "OPTIONS", value_delimiter = ',')]
    pub options: Vec<String>,
    /// Serve reads with direct_io (no kernel page cache; breaks shared mmap).
    #[arg(long)]
    pub direct_io: bool,
    /// Readahead of the mount in KiB (written to its bdi after mounting).
    #[arg(long, default_value_t = 4096)]
    pub readahead_kb: u32,
    /// Largest read request the kernel sends, in KiB (0: its maximum, 1 MiB).
    #[arg(long, default_value_t = 0)]
    pub max_request_kb: u32,
    /// After SIGINT/SIGTERM the mount is detached at once; files still open
    /// are served this many seconds more before the daemon exits.
    #[arg(long, default_value_t = 5.0)]
    pub exit_grace: f64,
    /// Seconds the kernel may cache attributes and names (source changes
    /// show up after this long at most).
    #[arg(long, default_value_t = 1.0)]
    pub attr_timeout: f64,
    /// Keep decoded `data` bytes in this directory (created if missing),
    /// keyed by each source's version, so re-reads and later mounts are
    /// served from plain files instead of decoding; complete ones are handed
    /// to the kernel (FUSE passthrough) when mounted as root. Mounts may
    /// share one directory. Off by default.
    #[arg(long, value_name = "DIR")]
    pub disk_cache: Option<PathBuf>,
    /// Byte budget of the --disk-cache directory (K/M/G suffixes): least
    /// recently used entries are evicted to stay within it.
    #[arg(long, default_value = "10G", value_parser = parse_size)]
    pub disk_cache_size: u64,
    /// Serve complete disk cache files through the daemon, never by FUSE
    /// passthrough.
    #[arg(long)]
    pub no_passthrough: bool,
    /// How to reach a remote source.
    #[command(flatten)]
    pub remote: RemoteArgs,
}

impl MountArgs {
    /// Fold the `-o` options into the flags and check them; unknown generic
    /// mount options are accepted and ignored.
    pub fn settle(mut self) -> Result<MountConfig, String> {
        let mut allow_other = false;
        for opt in std::mem::take(&mut self.options) {
            let opt = opt.trim();
            let (key, value) = match opt.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (opt, None),
            };
            fn need<'a>(key: &str, v: Option<&'a str>) -> Result<&'a str, String> {
                v.ok_or_else(|| format!("option {key} needs a value"))
            }
            match key {
                ""
                | "ro"
                | "dev"
                | "nodev"
                | "suid"
                | "nosuid"
                | "exec"
                | "noexec"
                | "auto"
                | "noauto"
                | "user"
                | "nouser"
                | "users"
                | "_netdev"
                | "nofail"
                | "defaults"
                | "atime"
                | "noatime"
                | "relatime"
                | "default_permissions" => {}
                "rw" => return Err("blosc2fs is read-only: option rw is not possible".into()),
                "allow_other" => allow_other = true,
                "allow_root" => allow_other = true,
                "cache_size" => self.cache_size = parse_size(need(key, value)?)?,
                "meta_cache" => self.meta_cache = parse_size(need(key, value)?)?,
                "disk_cache" => self.disk_cache = Some(PathBuf::from(need(key, value)?)),
                "disk_cache_size" => self.disk_cache_size = parse_size(need(key, value)?)?,
                "no_passthrough" => self.no_passthrough = true,
                "blosc2_only" => self.blosc2_only = true,
                "originals" => self.originals = true,
                "views" => self.views = parse_views(need(key, value)?)?,
                "threads" => {
                    self.threads = need(key, value)?
                        .parse()
                        .map_err(|e| format!("threads: {e}"))?
                }
                "prefetch_threads" => {
                    self.prefetch_threads = need(key, value)?
                        .parse()
                        .map_err(|e| format!("prefetch_threads: {e}"))?
                }
                "decode_helpers" => {
                    self.decode_helpers = Some(
                        need(key, value)?
                            .parse()
                            .map_err(|e| format!("decode_helpers: {e}"))?,
                    )
                }
                "sched" => self.sched = parse_sched(need(key, value)?)?,
                "uid" => {
                    self.uid = Some(need(key, value)?.parse().map_err(|e| format!("uid: {e}"))?)
                }
                "gid" => {
                    self.gid = Some(need(key, value)?.parse().map_err(|e| format!("gid: {e}"))?)
                }
                "direct_io" => self.direct_io = true,
                "readahead_kb" => {
                    self.readahead_kb = need(key, value)?
                        .parse()
                        .map_err(|e| format!("readahead_kb: {e}"))?
                }
                "max_request_kb" => {
                    self.max_request_kb = need(key, value)?
                        .parse()
                        .map_err(|e| format!("max_request_kb: {e}"))?
                }
                "foreground" => self.foreground = true,
                other => log::warn!("ignoring unknown mount option {other}"),
            }
        }
        if self.threads == 0 {
            return Err("--threads must be at least 1".into());
        }
        Ok(MountConfig {
            source: self.source,
            mountpoint: self.mountpoint,
            foreground: self.foreground,
            cache_size: self.cache_size,
            meta_cache: self.meta_cache,
            views: self.views,
            listing: ListingRules {
                blosc2_only: self.blosc2_only,
                originals: self.originals,
            },
            threads: self.threads,
            prefetch_threads: self.prefetch_threads,
            decode_helpers: self.decode_helpers,
            sched: self.sched,
            uid: self.uid,
            gid: self.gid,
            allow_other,
            direct_io: self.direct_io,
            readahead_kb: self.readahead_kb,
            max_request_kb: self.max_request_kb,
            exit_grace: seconds("--exit-grace", self.exit_grace)?,
            attr_timeout: seconds("--attr-timeout", self.attr_timeout)?,
            disk_cache: self.disk_cache,
            disk_cache_size: self.disk_cache_size,
            passthrough: !self.no_passthrough,
            #[cfg(feature = "remote")]
            remote: self.remote.options()?,
        })
    }
}

/// A flag's seconds as a Duration; negative, NaN and overflowing values are refused.
fn seconds(flag: &str, value: f64) -> Result<Duration, String> {
    if value.is_nan() || value < 0.0 {
        return Err(format!(
            "{flag} must be a number of seconds, 0 or more (got {value})"
        ));
    }
    Duration::try_from_secs_f64(value).map_err(|_| format!("{flag} {value} is too many seconds"))
}

/// Parse `batch` or `normal` (see [`Sched`]).
fn parse_views(text: &str) -> Result<ViewSet, String> {
    ViewSet::parse(text).map_err(|e| e.to_string())
}

fn parse_sched(text: &str) -> Result<Sched, String> {
    text.parse()
}

/// Parse `1024`, `64K`, `512M`, `1G`, `2T` (powers of 1024; a trailing `B`/`iB` is allowed).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (digits, shift) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 10),
        Some('m' | 'M') => (&t[..t.len() - 1], 20),
        Some('g' | 'G') => (&t[..t.len() - 1], 30),
        Some('t' | 'T') => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    let n: u64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("not a size: {text:?}"))?;
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("size too large: {text:?}"))
}

/// Rewrite `blosc2fs SOURCE MOUNTPOINT [-o OPTS]` (as mount.fuse3 calls it)
/// into `blosc2fs mount SOURCE MOUNTPOINT ...`.
pub fn normalize_args(mut args: Vec<String>) -> Vec<String> {
    const SUBCOMMANDS: [&str; 8] = [
        "info",
        "cat",
        "mount",
        "unmount",
        "cache",
        "completions",
        "man",
        "help",
    ];
    if let Some(first) = args.get(1) {
        if !first.starts_with('-') && !SUBCOMMANDS.contains(&first.as_str()) {
            args.insert(1, "mount".into());
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1024"), Ok(1024));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("99999999999T").is_err());
    }

    #[test]
    fn mount_helper_form_and_options() {
        let args = normalize_args(vec![
            "blosc2fs".into(),
            "/src".into(),
            "/mnt".into(),
            "-o".into(),
            "ro,allow_other,cache_size=1G,meta_cache=4M,dev,suid,disk_cache=/var/cache/b2,disk_cache_size=2G,no_passthrough".into(),
        ]);
        let cli = Cli::try_parse_from(args).unwrap();
        let Command::Mount(m) = cli.command else {
            panic!("not a mount")
        };
        let c = m.settle().unwrap();
        assert_eq!(c.disk_cache, Some(PathBuf::from("/var/cache/b2")));
        assert_eq!(c.disk_cache_size, 2 << 30);
        assert!(!c.passthrough);
        assert!(c.allow_other);
        assert_eq!(c.cache_size, 1 << 30);
        assert_eq!(c.meta_cache, 4 << 20);
        assert_eq!(c.source, PathBuf::from("/src"));
        let rw = Cli::try_parse_from(normalize_args(vec![
            "blosc2fs".into(),
            "/s".into(),
            "/m".into(),
            "-o".into(),
            "rw".into(),
        ]))
        .unwrap();
        let Command::Mount(m) = rw.command else {
            panic!("not a mount")
        };
        assert!(m.settle().is_err());
    }

    #[test]
    fn sched_from_the_flag_or_the_option() {
        assert_eq!(
            mount_args(&["--sched", "normal"]).settle().unwrap().sched,
            Sched::Normal
        );
        assert_eq!(
            mount_args(&["-o", "ro,sched=normal"])
                .settle()
                .unwrap()
                .sched,
            Sched::Normal
        );
        assert_eq!(
            mount_args(&["--sched", "normal", "-o", "sched=batch"])
                .settle()
                .unwrap()
                .sched,
            Sched::Batch
        );
        let bad = mount_args(&["-o", "sched=idle"]).settle().unwrap_err();
        assert_eq!(bad, "sched: `idle` is neither `batch` nor `normal`");
        let args = ["blosc2fs", "mount", "/src", "/mnt", "--sched", "fifo"];
        let err = Cli::try_parse_from(args).unwrap_err().to_string();
        assert!(err.contains("neither `batch` nor `normal`"), "{err}");
    }

    #[test]
    fn decode_helpers_from_the_flag_or_the_option() {
        assert_eq!(
            mount_args(&["--decode-helpers", "0"])
                .settle()
                .unwrap()
                .decode_helpers,
            Some(0)
        );
        assert_eq!(
            mount_args(&["-o", "ro,decode_helpers=2"])
                .settle()
                .unwrap()
                .decode_helpers,
            Some(2)
        );
        let bad = mount_args(&["-o", "decode_helpers=many"])
            .settle()
            .unwrap_err();
        assert_eq!(bad, "decode_helpers: invalid digit found in string");
    }

    #[test]
    fn views_from_the_flag_or_the_option() {
        assert_eq!(
            mount_args(&["--views", "none"]).settle().unwrap().views,
            ViewSet::PLAIN
        );
        assert_eq!(
            mount_args(&["--views", "npy,headers"])
                .settle()
                .unwrap()
                .views,
            ViewSet::parse("npy,nrrd,metaimage,envi").unwrap()
        );
        // In a -o list the names are joined by ':' or '+'; the option wins over the flag.
        assert_eq!(
            mount_args(&["--views", "none", "-o", "ro,views=npy:text"])
                .settle()
                .unwrap()
                .views,
            ViewSet::parse("npy,text").unwrap()
        );
        let bad = mount_args(&["-o", "views=npy:tiff"]).settle().unwrap_err();
        assert!(bad.starts_with("unknown view \"tiff\" in --views"), "{bad}");
        let err = Cli::try_parse_from(["blosc2fs", "mount", "/src", "/mnt", "--views", "gif"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown view \"gif\""), "{err}");
    }

    fn mount_args(extra: &[&str]) -> MountArgs {
        let mut args = vec!["blosc2fs", "mount", "/src", "/mnt"];
        args.extend_from_slice(extra);
        let Command::Mount(m) = Cli::try_parse_from(args).unwrap().command else {
            panic!("not a mount")
        };
        m
    }

    #[test]
    fn settle_without_options_gives_the_flag_defaults() {
        let c = mount_args(&[]).settle().unwrap();
        let MountConfig {
            source,
            mountpoint,
            foreground,
            cache_size,
            meta_cache,
            views,
            listing,
            threads,
            prefetch_threads,
            decode_helpers,
            sched,
            uid,
            gid,
            allow_other,
            direct_io,
            readahead_kb,
            max_request_kb,
            exit_grace,
            attr_timeout,
            disk_cache,
            disk_cache_size,
            passthrough,
            #[cfg(feature = "remote")]
            remote,
        } = c;
        assert_eq!(disk_cache, None, "off by default");
        assert_eq!(
            disk_cache_size,
            crate::mount::config::DEFAULT_DISK_CACHE_SIZE
        );
        assert!(passthrough);
        #[cfg(feature = "remote")]
        assert_eq!(remote, RemoteOptions::default());
        assert_eq!(source, PathBuf::from("/src"));
        assert_eq!(mountpoint, PathBuf::from("/mnt"));
        assert!(!foreground);
        assert_eq!(cache_size, 512 << 20);
        assert_eq!(meta_cache, 32 << 20);
        assert_eq!(
            meta_cache,
            MountConfig::default().meta_cache,
            "the flag and the library agree"
        );
        assert_eq!(views, ViewSet::ALL);
        assert_eq!(views, MountConfig::default().views);
        assert_eq!(
            listing,
            ListingRules::default(),
            "plain files shown, no originals"
        );
        assert_eq!(
            mount_args(&["--originals", "-o", "blosc2_only"])
                .settle()
                .unwrap()
                .listing,
            ListingRules {
                blosc2_only: true,
                originals: true
            }
        );
        assert_eq!(threads, 2);
        assert_eq!(prefetch_threads, 2);
        assert_eq!(decode_helpers, None);
        assert_eq!(sched, Sched::Batch);
        assert_eq!(uid, None);
        assert_eq!(gid, None);
        assert!(!allow_other);
        assert!(!direct_io);
        assert_eq!(readahead_kb, 4096);
        assert_eq!(max_request_kb, 0);
        assert_eq!(exit_grace, Duration::from_secs(5));
        assert_eq!(attr_timeout, Duration::from_secs(1));
    }

    #[test]
    fn mount_config_default_matches_the_flag_defaults() {
        let from_flags = mount_args(&[]).settle().unwrap();
        assert_eq!(
            MountConfig {
                source: "/src".into(),
                mountpoint: "/mnt".into(),
                ..MountConfig::default()
            },
            from_flags
        );
    }

    /// Every subcommand has an about, every argument and option a help text.
    #[test]
    fn every_argument_has_help_text() {
        fn check(command: &clap::Command, path: &str, seen: &mut usize) {
            assert!(
                command
                    .get_about()
                    .is_some_and(|a| !a.to_string().trim().is_empty()),
                "{path}: no about"
            );
            for arg in command.get_arguments() {
                let id = arg.get_id().as_str();
                if id == "help" || id == "version" {
                    continue;
                }
                assert!(
                    arg.get_help()
                        .is_some_and(|h| h.to_string().trim().len() > 10),
                    "{path} {id}: no help text"
                );
                *seen += 1;
            }
            for sub in command.get_subcommands() {
                check(sub, &format!("{path} {}", sub.get_name()), seen);
            }
        }
        let mut seen = 0;
        check(&Cli::command(), "blosc2fs", &mut seen);
        assert!(seen >= 20, "only {seen} arguments checked");
        Cli::command().debug_assert();
    }

    const SUBCOMMAND_NAMES: [&str; 7] = [
        "info",
        "cat",
        "mount",
        "unmount",
        "cache",
        "completions",
        "man",
    ];

    #[test]
    fn completions_name_every_subcommand() {
        for shell in [
            clap_complete::Shell::Bash,
            clap_complete::Shell::Zsh,
            clap_complete::Shell::Fish,
        ] {
            let mut out = Vec::new();
            completions(shell, &mut out).unwrap();
            let text = String::from_utf8(out).unwrap();
            assert!(text.len() > 2000, "{shell}: {} bytes", text.len());
            for name in SUBCOMMAND_NAMES {
                assert!(text.contains(name), "{shell}: no {name}");
            }
            assert!(
                text.contains("cache-size") && text.contains("readahead-kb"),
                "{shell}"
            );
        }
    }

    #[test]
    fn man_pages_describe_the_commands() {
        let mut out = Vec::new();
        man_page(None, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("\n.TH blosc2fs 1 "),
            "{}",
            &text[..200.min(text.len())]
        );
        for name in SUBCOMMAND_NAMES {
            assert!(text.contains(&format!("blosc2fs\\-{name}(1)")), "no {name}");
        }
        let mut out = Vec::new();
        man_page(Some("mount"), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("\n.TH blosc2fs-mount 1 "),
            "{}",
            &text[..200.min(text.len())]
        );
        assert!(
            text.contains("cache\\-size") && text.contains("MOUNTPOINT"),
            "{text}"
        );
        assert!(man_page(Some("nonesuch"), &mut Vec::new()).is_err());
    }

    /// Without the cargo feature `remote`, `info`, `cat` and `mount` refuse
    /// a URL by saying so (its credentials not shown), not as a missing file.
    #[cfg(not(feature = "remote"))]
    #[test]
    fn urls_are_refused_without_the_remote_feature() {
        let why = "this blosc2fs was built without remote sources (cargo feature `remote`)";
        let url = "s3://key:secret@bucket/run.b2z";
        let shown = format!("s3://***@bucket/run.b2z: {why}");
        for args in [
            ["blosc2fs", "info", url].as_slice(),
            &["blosc2fs", "cat", url, "/exp/x"],
        ] {
            let (Command::Info { file, remote, .. } | Command::Cat { file, remote, .. }) =
                Cli::try_parse_from(args).unwrap().command
            else {
                panic!("{args:?}: neither info nor cat")
            };
            assert_eq!(refuse_url(&file), Err(shown.clone()));
            assert_eq!(open_file(&file, &remote).unwrap_err(), shown);
        }
        assert_eq!(refuse_url(std::path::Path::new("/data/run.b2z")), Ok(()));
        let config = MountConfig {
            source: "https://h/a.b2nd?sig=1".into(),
            ..mount_args(&[]).settle().unwrap()
        };
        assert_eq!(
            crate::mount::daemon::mount(config).unwrap_err(),
            format!("https://h/a.b2nd?<redacted>: {why}")
        );
        for flag in ["--anonymous", "--allow-http", "--remote-timeout=5"] {
            assert!(
                Cli::try_parse_from(["blosc2fs", "info", flag, url]).is_err(),
                "{flag}"
            );
        }
    }

    #[test]
    fn settle_refuses_negative_and_nan_seconds() {
        for flag in ["--exit-grace", "--attr-timeout"] {
            for bad in ["-1", "NaN"] {
                let err = mount_args(&[&format!("{flag}={bad}")])
                    .settle()
                    .unwrap_err();
                assert!(err.contains(flag), "{err}");
            }
        }
        let c = mount_args(&["--exit-grace=0", "--attr-timeout=0.25"])
            .settle()
            .unwrap();
        assert_eq!(c.exit_grace, Duration::ZERO);
        assert_eq!(c.attr_timeout, Duration::from_millis(250));
    }
}
