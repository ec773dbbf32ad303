//! The presented tree: the namespace of a mount. Which source entries become
//! which folders (local folders, stores and their groups and tables, remote
//! prefixes), their inode numbers, the array entries and their versions,
//! and the filesystem operations over them. What a presented file holds is
//! the views' business ([`crate::views`]).
//!
//! From the ground up: [`access`], [`inode`], [`error`]; [`listing`]
//! (local folders), [`remote`] (remote roots), [`store`] (store folders);
//! [`location`] (where a node's bytes come from); [`computed`] (which saved
//! expressions are computed, from which operands); [`meta_cache`] and
//! [`versioned`] (loaded versions within a budget); [`entry`] (an array's
//! loaded version); [`namespace`] (the nodes and their entries); [`fs`]
//! (open files and reads, what the FUSE adapter drives).

pub mod access;
pub mod computed;
pub mod entry;
pub mod error;
pub mod fs;
pub mod inode;
pub mod listing;
pub mod location;
pub mod meta_cache;
pub mod namespace;
pub mod nodes;
#[cfg(feature = "remote")]
pub mod remote;
#[cfg(feature = "remote")]
pub mod remote_members;
pub mod store;
pub mod versioned;

pub use crate::views::{Content, Kind};
pub use access::Access;
pub use entry::{ArrayEntry, Loaded, Loading, OnLoad};
pub use error::FsError;
pub use fs::{Filesystem, FsConfig};
pub use location::Origin;
pub use meta_cache::{MetaCache, MetaCacheStats};
pub use namespace::{Attr, DirEntry, Tree};
