//! blosc2fs: read Blosc2 arrays as plain files.
//!
//! Four layers, one folder each: [`format`] (Blosc2 on disk), [`tree`] (which
//! presented files exist), [`read`] (cache and read planner) and [`mount`]
//! (the FUSE adapter, the daemon and its [`MountConfig`](mount::MountConfig)).
//! [`cli`] turns the command line into a `MountConfig`.

pub mod error;
pub mod format;
pub mod tree;
pub mod cli;
pub mod mount;
pub mod read;
