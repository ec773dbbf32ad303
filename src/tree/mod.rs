//! The namespace of a mount: which names exist under which folder, their
//! inode numbers and attributes, and the one error type the filesystem
//! answers with. What each source holds as folders is the catalog's
//! business ([`crate::catalog`]); what a presented file holds, the views'
//! ([`crate::views`]); open files and reads, the filesystem core's
//! ([`crate::fs`]).
//!
//! From the ground up: [`error`] (errors and their errno), [`inode`] (inode
//! numbers), [`nodes`] (the node table), [`chunk_tree`] (the inodes of an
//! array's hidden Zarr v3 chunk tree `c/`), [`namespace`] (the tree of
//! nodes, found and kept), [`node_files`] (which of a folder's own files a
//! node holds), [`index_folder`] (an indexed array's `indexes/`); then one file per question asked of an inode:
//! [`attributes`] (getattr, xattrs), [`folder_entries`] (lookup, readdir),
//! [`opening`] (open, readlink).

pub mod attributes;
pub mod chunk_tree;
pub mod error;
pub mod folder_entries;
pub mod index_folder;
pub mod inode;
pub mod namespace;
pub mod node_files;
pub mod nodes;
pub mod opening;

pub use attributes::Attr;
pub use error::FsError;
pub use folder_entries::DirEntry;
pub use namespace::Tree;
