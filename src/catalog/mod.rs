//! What each kind of source holds as folders, and the loaded versions of
//! what it holds: local folders ([`local_dir`]), remote roots ([`remote`]),
//! stores and their groups and tables ([`store`]) and what such a folder
//! shows ([`store_folder`]), where an array's bytes come from
//! ([`location`]), which saved expressions are computed from which
//! operands ([`computed`]), which arrays are index sidecars
//! ([`index_sidecar`]) and an indexed array's `indexes/` folder
//! ([`array_indexes`]), the geometry nnU-Net's plans give the arrays of
//! its folders ([`nnunet_plans`]), and who may read what ([`access`]).
//! Loaded versions are kept within one byte budget ([`meta_cache`],
//! [`versioned`]); [`entry`] is one array's loaded version.
//!
//! The namespace above ([`crate::tree`]) asks the catalog what a name is
//! and opens what it names; the catalog knows nothing of inodes or FUSE.

pub mod access;
pub mod array_indexes;
pub mod computed;
pub mod entry;
pub mod folder_listing;
pub mod index_sidecar;
pub mod local_dir;
pub mod location;
pub mod meta_cache;
pub mod nnunet_plans;
pub mod plain_file;
#[cfg(feature = "remote")]
pub mod remote;
pub mod store;
pub mod store_folder;
pub mod versioned;

pub use access::Access;
pub use entry::{ArrayEntry, Loaded, Loading, OnLoad};
pub use location::Origin;
pub use meta_cache::{MetaCache, MetaCacheStats};
