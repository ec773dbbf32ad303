//! blosc2fs: read Blosc2 arrays as plain files.
//!
//! Four layers, one folder each: [`format`] (Blosc2 on disk), [`tree`] (which
//! presented files exist), [`read`] (cache and read planner) and the FUSE
//! adapter with the daemon ([`fuse`], [`daemon`]).

pub mod error;
pub mod format;
pub mod fuse;
pub mod tree;
pub mod alloc;
pub mod cli;
pub mod daemon;
pub mod read;
