//! What reading an inode serves: the content of a presented file when it
//! is opened ([`Content`], from the views' [`crate::views::ARRAY_FILES`] or
//! [`crate::views::FOLDER_FILES`], or a chunk of an array), and the target
//! of a symlink.

use std::ffi::OsString;
use std::sync::Arc;

use crate::catalog::entry::Loaded;
use crate::views::{array_file, Content, FileId};

use super::error::FsError;
use super::inode::{self, Role};
use super::namespace::{NodeKind, Tree};
use super::node_files::folder_row;

impl Tree {
    /// What reading `ino` serves, plus the array version it serves.
    pub fn open(&self, ino: u64) -> Result<(Content, Option<Arc<Loaded>>), FsError> {
        let (node, role) = self.decode(ino)?;
        if let Some(row) = folder_row(role).filter(|f| f.of_mount) {
            let content = (row.open)(&self.mount_files(node)).ok_or(FsError::NotFound)?;
            return Ok((content, None));
        }
        let (_, kind) = self.node_info(node)?;
        if let (NodeKind::Plain(shown), Role::Node) = (&kind, role) {
            return Ok((Content::Plain(shown.open()?), None));
        }
        if role == Role::Node || role == Role::File(FileId::ChunksDir) {
            return Err(FsError::IsDir);
        }
        if let NodeKind::Dir(_) | NodeKind::Store(_) | NodeKind::Folder(_) | NodeKind::Indexes(_) =
            kind
        {
            let files = self.node_files(node, &kind)?;
            let row = folder_row(role).ok_or(FsError::NotFound)?;
            return Ok(((row.open)(&files).ok_or(FsError::NotFound)?, None));
        }
        let loaded = self.array_of(node)?;
        let content = match role {
            Role::File(id) => (array_file(id).open)(&loaded).ok_or(FsError::NotFound)?,
            Role::Chunk(c) if self.chunk_dir(&loaded, c).is_some() => return Err(FsError::IsDir),
            Role::Chunk(c) => loaded.chunk_file(c).ok_or(FsError::NotFound)?.1.into(),
            _ => return Err(FsError::NotFound),
        };
        Ok((content, Some(loaded)))
    }

    /// The target of symlink `ino` (relative, inside the mount).
    pub fn readlink(&self, ino: u64) -> Result<OsString, FsError> {
        match inode::decode(ino).ok_or(FsError::NotFound)? {
            (node, Role::Node) => match self.node_info(node)?.1 {
                NodeKind::Link(target) => Ok(target.to_os_string()),
                _ => Err(FsError::Io(std::io::Error::from_raw_os_error(libc::EINVAL))),
            },
            _ => Err(FsError::Io(std::io::Error::from_raw_os_error(libc::EINVAL))),
        }
    }
}
