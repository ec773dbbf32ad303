//! The filesystem core: the operations the kernel asks for, on inode
//! numbers and handles, with no FUSE in sight (lookup, getattr, readdir,
//! open, read, release, xattrs), and the mount's `.stats`. The fuser
//! adapter (`crate::mount::fuse`) only translates calls and replies; tests
//! drive [`Filesystem`] directly (`tests/fs.rs`).
//!
//! [`config`] is what the core is told at start, [`open_handle`] what an
//! open file keeps, [`stats`] the `.stats` document, [`filesystem`] the
//! operations themselves.

pub mod config;
mod disk_read;
pub mod filesystem;
pub mod open_handle;
mod stats;

pub use crate::tree::{Attr, DirEntry, FsError};
pub use crate::views::{Content, Kind};
pub use config::FsConfig;
pub use filesystem::Filesystem;
pub use open_handle::Opened;
