//! blosc2fs command line: `info`, `cat`, `mount`, `unmount`, `completions`,
//! `man`. Thin: the work lives in the library.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;

use blosc2fs::catalog::computed::{compute_alone, Computer};
use blosc2fs::catalog::store::{self, LoadedStore};
use blosc2fs::cli::{normalize_args, open_file, Cli, Command};
use blosc2fs::read::whole::{read_whole, WholeError};
use blosc2fs::read::Planner;
use blosc2fs::source::store::{Store, StoreFormat};
use blosc2fs::views::meta_json;

fn main() -> ExitCode {
    blosc2fs::mount::alloc::tune_allocator();
    let cli = Cli::parse_from(normalize_args(std::env::args().collect()));
    init_logging(cli.verbose);
    match run(cli.command) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("blosc2fs: {message}");
            ExitCode::from(1)
        }
    }
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(default))
        .format_timestamp_millis()
        .init();
}

fn run(command: Command) -> Result<ExitCode, String> {
    #[cfg(not(feature = "remote"))]
    if let Command::Info { file, .. } | Command::Cat { file, .. } = &command {
        blosc2fs::cli::refuse_url(file)?;
    }
    match command {
        Command::Info { file, tree, remote } => {
            if let Some(format) = StoreFormat::of_path(&file) {
                let store = LoadedStore::new(
                    Store::open(&file, format).map_err(|e| e.to_string())?,
                    std::time::SystemTime::UNIX_EPOCH,
                    1,
                );
                if tree {
                    print!("{}", store::tree_text(&store));
                } else {
                    print!(
                        "{}",
                        String::from_utf8_lossy(
                            store
                                .group_meta
                                .get("")
                                .map(|m| m.as_slice())
                                .unwrap_or_default()
                        )
                    );
                }
                return Ok(ExitCode::SUCCESS);
            }
            if tree {
                return Err(format!(
                    "{}: --tree is for stores (.b2z, .b2d, .b2e)",
                    file.display()
                ));
            }
            let array = open_file(&file, &remote)?;
            let mut meta = meta_json::render(&array);
            if Computer::wants(&array) {
                let planner = Arc::new(Planner::one_pass(64 << 20));
                match compute_alone(array, &file, planner) {
                    Ok(computed) => meta = meta_json::render(&computed),
                    Err(why) => {
                        meta["values"]["computed"] = false.into();
                        meta["values"]["why_not_computed"] = why.into();
                    }
                }
            }
            let text = serde_json::to_string_pretty(&meta).map_err(|e| e.to_string())?;
            println!("{text}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Cat {
            file,
            key,
            remote,
            cache_size,
        } => {
            let array = match (StoreFormat::of_path(&file), key) {
                (Some(format), Some(key)) => Store::open(&file, format)
                    .and_then(|s| s.open_value(&key))
                    .map_err(|e| e.to_string())?,
                (Some(_), None) => {
                    return Err(format!(
                        "{}: a store; name the key to write (blosc2fs cat STORE KEY)",
                        file.display()
                    ))
                }
                (None, Some(_)) => {
                    return Err(format!(
                        "{}: not a store (.b2z, .b2d, .b2e); a key is only for stores",
                        file.display()
                    ))
                }
                (None, None) => open_file(&file, &remote)?,
            };
            let planner = Arc::new(Planner::one_pass(cache_size as usize));
            // A saved expression is computed from the operands in its own folder.
            let array = if Computer::wants(&array) {
                compute_alone(array, &file, planner.clone())
                    .map_err(|why| format!("{}: not computed: {why}", file.display()))?
            } else {
                array
            };
            // A remote array's next chunks are fetched while these decode.
            #[cfg(feature = "remote")]
            let ahead = remote.options()?.budget / 2;
            #[cfg(not(feature = "remote"))]
            let ahead = 0;
            let threads = std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(4);
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            match read_whole(&array, &planner, threads, ahead, |bytes| {
                out.write_all(bytes)
            }) {
                Err(WholeError::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                    return Ok(ExitCode::SUCCESS)
                }
                Err(WholeError::Write(e)) => return Err(format!("writing to stdout: {e}")),
                Err(e) => return Err(e.to_string()),
                Ok(()) => {}
            }
            out.flush().map_err(|e| format!("writing to stdout: {e}"))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Mount(args) => {
            let config = args.settle()?;
            blosc2fs::mount::daemon::mount(config)
        }
        Command::Unmount { mountpoint } => {
            blosc2fs::mount::daemon::unmount(&mountpoint)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Cache { dir, clear } => {
            if !dir.join("lock").is_file() || !dir.join("entries").is_dir() {
                return Err(format!(
                    "{}: not a blosc2fs disk cache (no lock file and entries folder)",
                    dir.display()
                ));
            }
            if clear {
                let n = blosc2fs::disk_cache::clear(&dir).map_err(|e| e.to_string())?;
                println!("{}: {n} entries removed", dir.display());
            } else {
                print!(
                    "{}",
                    blosc2fs::disk_cache::describe(&dir).map_err(|e| e.to_string())?
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Completions { shell } => {
            match blosc2fs::cli::completions(shell, &mut std::io::stdout().lock()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    Err(format!("writing to stdout: {e}"))
                }
                _ => Ok(ExitCode::SUCCESS),
            }
        }
        Command::Man { subcommand } => {
            match blosc2fs::cli::man_page(subcommand.as_deref(), &mut std::io::stdout().lock()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(format!("man: {e}")),
                _ => Ok(ExitCode::SUCCESS),
            }
        }
    }
}
