//! blosc2fs command line: `info`, `cat`, `mount`, `unmount`, `cache`,
//! `completions`, `man`. Thin: it parses and dispatches; the commands live
//! in the library (`blosc2fs::commands`, `blosc2fs::mount::daemon`).

use std::process::ExitCode;

use clap::Parser;

use blosc2fs::cli::{normalize_args, Cli, Command};
use blosc2fs::commands;

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
    match command {
        Command::Info {
            file,
            key,
            tree,
            remote,
        } => commands::info(&file, key.as_deref(), tree, &remote),
        Command::Cat {
            file,
            key,
            remote,
            cache_size,
        } => commands::cat(&file, key.as_deref(), &remote, cache_size),
        Command::Mount(args) => blosc2fs::mount::daemon::mount(args.settle()?),
        Command::Unmount { mountpoint } => {
            blosc2fs::mount::daemon::unmount(&mountpoint)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Cache { dir, clear } => commands::cache(&dir, clear),
        Command::Completions { shell } => commands::completions(shell),
        Command::Man { subcommand } => commands::man(subcommand.as_deref()),
    }
}
