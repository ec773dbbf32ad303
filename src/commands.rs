//! What the one-shot subcommands do (`info`, `cat`, `cache`, `completions`,
//! `man`), so `main.rs` only parses and dispatches. Each writes to a locked
//! stdout and ends quietly when the reader closes the pipe early
//! (`blosc2fs info FILE | head`), as `cat` and `head` do.

use std::io::{ErrorKind, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use crate::catalog::computed::{compute_alone, Computer};
use crate::catalog::store::{self, LoadedStore};
use crate::cli::{open_file, RemoteArgs};
use crate::read::whole::{read_whole, WholeError};
use crate::read::Planner;
use crate::source::store::{Store, StoreFormat};
use crate::views::meta_json;

/// `blosc2fs info FILE [KEY]`: a table's schema (a store whose root is a
/// table, or the table at `key`), a store's group metadata (or with
/// `tree`, its tree of keys), a store value's meta.json, else the array's
/// meta.json (a saved expression's as computed, or why it is not).
pub fn info(
    file: &Path,
    key: Option<&str>,
    tree: bool,
    remote: &RemoteArgs,
) -> Result<ExitCode, String> {
    #[cfg(not(feature = "remote"))]
    crate::cli::refuse_url(file)?;
    if let Some(format) = StoreFormat::of_path(file) {
        let store = LoadedStore::new(
            Store::open(file, format).map_err(|e| e.to_string())?,
            std::time::SystemTime::UNIX_EPOCH,
            1,
        );
        let key = key.map(|k| k.trim_end_matches('/')).unwrap_or("");
        let text = if tree {
            store::tree_text(&store)
        } else if store.tables.iter().any(|t| t == key) {
            match &*store.table(key) {
                Ok(info) => crate::tables::schema_text::schema_text(&info.batches),
                Err(e) => return Err(e.to_string()),
            }
        } else if let Some(meta) = store.group_meta.get(key) {
            String::from_utf8_lossy(meta).into_owned()
        } else if store.store.values().contains_key(key) {
            let array = store.store.open_value(key).map_err(|e| e.to_string())?;
            let mut text = serde_json::to_string_pretty(&meta_json::render(&array))
                .map_err(|e| e.to_string())?;
            text.push('\n');
            text
        } else {
            return Err(format!(
                "{}: no table, group or value at key {key:?}",
                file.display()
            ));
        };
        return print(text.as_bytes());
    }
    if key.is_some() {
        return Err(format!(
            "{}: not a store (.b2z, .b2d, .b2e); a key is only for stores",
            file.display()
        ));
    }
    if tree {
        return Err(format!(
            "{}: --tree is for stores (.b2z, .b2d, .b2e)",
            file.display()
        ));
    }
    let array = open_file(file, remote)?;
    let mut meta = meta_json::render(&array);
    if Computer::wants(&array) {
        let planner = Arc::new(Planner::one_pass(64 << 20));
        match compute_alone(array, file, planner) {
            Ok(computed) => meta = meta_json::render(&computed),
            Err(why) => meta_json::mark_not_computed(&mut meta, &why),
        }
    }
    let mut text = serde_json::to_string_pretty(&meta).map_err(|e| e.to_string())?;
    text.push('\n');
    print(text.as_bytes())
}

/// `blosc2fs cat FILE [KEY]`: the array's C-order bytes (a store's value
/// named by `key`; a saved expression computed) to stdout.
pub fn cat(
    file: &Path,
    key: Option<&str>,
    remote: &RemoteArgs,
    cache_size: u64,
) -> Result<ExitCode, String> {
    #[cfg(not(feature = "remote"))]
    crate::cli::refuse_url(file)?;
    let array = match (StoreFormat::of_path(file), key) {
        (Some(format), Some(key)) => Store::open(file, format)
            .and_then(|s| s.open_value(key))
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
        (None, None) => open_file(file, remote)?,
    };
    let planner = Arc::new(Planner::one_pass(cache_size as usize));
    // A saved expression is computed from the operands in its own folder.
    let array = if Computer::wants(&array) {
        compute_alone(array, file, planner.clone())
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
    let mut out = std::io::stdout().lock();
    let written = match read_whole(&array, &planner, threads, ahead, |bytes| {
        out.write_all(bytes)
    }) {
        Err(WholeError::Write(e)) => Err(e),
        Err(e) => return Err(e.to_string()),
        Ok(()) => out.flush(),
    };
    stdout_done(written, "writing to stdout")
}

/// `blosc2fs cache DIR`: what a `--disk-cache` directory holds, or with
/// `clear`, empty it.
pub fn cache(dir: &Path, clear: bool) -> Result<ExitCode, String> {
    if !dir.join("lock").is_file() || !dir.join("entries").is_dir() {
        return Err(format!(
            "{}: not a blosc2fs disk cache (no lock file and entries folder)",
            dir.display()
        ));
    }
    let text = if clear {
        let n = crate::disk_cache::clear(dir).map_err(|e| e.to_string())?;
        format!("{}: {n} entries removed\n", dir.display())
    } else {
        crate::disk_cache::describe(dir).map_err(|e| e.to_string())?
    };
    print(text.as_bytes())
}

/// `blosc2fs completions SHELL`: the shell's completion script.
pub fn completions(shell: clap_complete::Shell) -> Result<ExitCode, String> {
    let written = crate::cli::completions(shell, &mut std::io::stdout().lock());
    stdout_done(written, "writing to stdout")
}

/// `blosc2fs man [SUBCOMMAND]`: the man page (roff).
pub fn man(subcommand: Option<&str>) -> Result<ExitCode, String> {
    let written = crate::cli::man_page(subcommand, &mut std::io::stdout().lock());
    stdout_done(written, "man")
}

/// Write `bytes` to stdout and flush.
fn print(bytes: &[u8]) -> Result<ExitCode, String> {
    let mut out = std::io::stdout().lock();
    let written = out.write_all(bytes).and_then(|()| out.flush());
    stdout_done(written, "writing to stdout")
}

/// The exit of a command that wrote to stdout: success, also when the
/// reader closed the pipe early (it wanted no more); any other write error
/// is one, prefixed by `doing`.
fn stdout_done(written: std::io::Result<()>, doing: &str) -> Result<ExitCode, String> {
    match written {
        Err(e) if e.kind() != ErrorKind::BrokenPipe => Err(format!("{doing}: {e}")),
        _ => Ok(ExitCode::SUCCESS),
    }
}
