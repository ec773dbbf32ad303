//! blosc2fs: read Blosc2 arrays as plain files.
//!
//! Layers, one folder each, data flowing down only:
//! - [`format`](mod@format): Blosc2 on disk (frames, chunks, codecs, filters, geometry);
//!   reads bytes only through its `ByteSource` trait, keeps no cache;
//! - [`descriptors`]: the descriptor pool of files read by path again and
//!   again (source files, the disk cache's data files), below both;
//! - [`disk_cache`]: decoded `data` and remote objects' bytes on local disk
//!   (`--disk-cache`), keyed by the source's version, within a budget; it
//!   knows only format's `ByteSource` (remote sources read through it, the
//!   filesystem core serves complete entries from it);
//! - [`source`]: where bytes come from (local file, window, memory, dir,
//!   stores, remote objects);
//! - [`read_deadline`]: one read's time budget (set by the adapter, spent
//!   by the remote sources' waits), below both;
//! - [`read`]: the block and layout caches, the planner that assembles a
//!   reply from pieces, prefetch and sequential-reader state;
//! - [`tables`]: python-blosc2's containers read as rows and columns (a
//!   CTable's logical columns, a BatchArray's batches), through the read
//!   layer's shared caches;
//! - [`views`]: one renderer per presented file (meta.json, the npy header,
//!   zarr, data.txt, preview.png, table.csv, items.jsonl) and the table of
//!   the files an array folder presents;
//! - [`catalog`]: what each source (local folders, remote roots, Caterva2,
//!   stores, computed operands) holds as folders, and their loaded versions;
//! - [`tree`]: the namespace: which folders and files exist, their sizes,
//!   inodes and errors;
//! - [`fs`]: the filesystem core the adapter drives: open files, reads,
//!   `.stats`;
//! - [`mount`]: the fuser adapter, the daemon, signals, allocator tuning;
//! - [`cli`] and [`commands`]: the command line as parsed, and what the
//!   one-shot subcommands (`info`, `cat`, `cache`, ...) do, on top of all;
//! - [`compute`]: saved lazy expressions (python-blosc2's `lazyexpr`):
//!   their recipe, dtype rules and blockwise evaluation, pure (no files).

pub mod catalog;
pub mod cli;
pub mod commands;
pub mod compute;
pub mod descriptors;
pub mod disk_cache;
pub mod format;
pub mod fs;
pub mod mount;
pub mod read;
pub mod read_deadline;
pub mod source;
pub mod tables;
#[cfg(test)]
pub(crate) mod test_rng;
pub mod tree;
pub mod views;
