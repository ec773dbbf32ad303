//! What the kernel is told of an inode: its attributes ([`Attr`]: kind,
//! size, modification time, owner and mode) and its extended attributes.
//! An array's entries are sized by the views' [`crate::views::ARRAY_FILES`],
//! a folder's own files by [`crate::views::FOLDER_FILES`].

use std::time::SystemTime;

use crate::catalog::access::Access;
use crate::catalog::local_dir::node_meta;
#[cfg(feature = "remote")]
use crate::catalog::remote::remote_access;
use crate::format::Region;
use crate::views::{array_file, Kind};

use super::error::FsError;
use super::inode::Role;
use super::namespace::{Location, NodeKind, Tree};
use super::node_files::folder_row;

/// Attributes of a presented entry (`--uid`/`--gid` are applied by the adapter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attr {
    /// Inode number.
    pub ino: u64,
    /// Directory or file.
    pub kind: Kind,
    /// Size in bytes (0 for directories).
    pub size: u64,
    /// The source's modification time.
    pub mtime: SystemTime,
    /// Permission bits, from the source's (see [`Access`]); never write bits.
    pub perm: u16,
    /// Owner and group, the source's; `None` for the mounting user (`.stats`).
    pub owner: Option<(u32, u32)>,
    /// It tells of the mount, not of its source (`.stats`): the tree knows
    /// none of its bytes, so its size here is 0 and the filesystem, which
    /// renders it, fills the size in.
    pub of_mount: bool,
}

impl Attr {
    /// This attribute with the permissions `access` gives an array's entries
    /// (folders can be entered wherever the source can be read).
    fn of_array(self, access: &Access) -> Attr {
        let perm = match self.kind {
            Kind::Dir => access.folder_perm(),
            Kind::File => access.file_perm(),
            Kind::Symlink => 0o777,
        };
        Attr {
            perm,
            owner: Some((access.uid, access.gid)),
            ..self
        }
    }
}

impl Tree {
    /// Attributes of `ino`.
    pub fn getattr(&self, ino: u64) -> Result<Attr, FsError> {
        let (node, role) = self.decode(ino)?;
        let (_, kind) = self.node_info(node)?;
        let dir = |mtime| Attr {
            ino,
            kind: Kind::Dir,
            size: 0,
            mtime,
            perm: 0,
            owner: None,
            of_mount: false,
        };
        let file = |size, mtime| Attr {
            ino,
            kind: Kind::File,
            size,
            mtime,
            perm: 0,
            owner: None,
            of_mount: false,
        };
        if let Some(row) = folder_row(role).filter(|f| f.of_mount) {
            // The mounting user's, readable by all (it holds no source bytes).
            let size = (row.size)(&self.mount_files(node)).ok_or(FsError::NotFound)?;
            return Ok(Attr {
                perm: 0o444,
                of_mount: true,
                ..file(size, SystemTime::now())
            });
        }
        let entry = match &kind {
            // A root array shows its current version's node's attributes.
            NodeKind::Array(entry) => match self.files_node(node, &kind) {
                files if files != node && role == Role::Node => self.array_entry(files)?,
                _ => entry.clone(),
            },
            NodeKind::Link(target) => {
                if role != Role::Node {
                    return Err(FsError::NotFound);
                }
                let Location::Local(path) = self.location(node)? else {
                    return Err(FsError::NotFound);
                };
                let mtime = std::fs::symlink_metadata(path)
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                return Ok(Attr {
                    ino,
                    kind: Kind::Symlink,
                    size: target.len() as u64,
                    mtime,
                    perm: 0o777,
                    owner: None,
                    of_mount: false,
                });
            }
            NodeKind::Dir(real) => {
                let own_file = match role {
                    Role::Node => None,
                    role => {
                        let row = folder_row(role).ok_or(FsError::NotFound)?;
                        let files = self.node_files(node, &kind)?;
                        Some((row.size)(&files).ok_or(FsError::NotFound)?)
                    }
                };
                let (mtime, access) = match &self.location(node)? {
                    Location::Local(path) => node_meta(real.as_deref().unwrap_or(path)),
                    #[cfg(feature = "remote")]
                    Location::Remote(_) => self.remote_dir_meta(),
                    Location::InStore => return Err(FsError::NotFound),
                };
                if let Some(size) = own_file {
                    return Ok(file(size, mtime).of_array(&access));
                }
                return Ok(Attr {
                    perm: access.dir_perm(),
                    owner: Some((access.uid, access.gid)),
                    ..dir(mtime)
                });
            }
            NodeKind::Plain(shown) => {
                if role != Role::Node {
                    return Err(FsError::NotFound);
                }
                let meta = shown.meta().map_err(FsError::Io)?;
                return Ok(file(meta.size, meta.mtime).of_array(&meta.access));
            }
            NodeKind::Indexes(entry) => {
                let (loaded, _) = self.indexes_of(entry)?;
                if role == Role::Node {
                    return Ok(dir(loaded.mtime).of_array(&loaded.access));
                }
                let row = folder_row(role).ok_or(FsError::NotFound)?;
                let size = (row.size)(&self.node_files(node, &kind)?).ok_or(FsError::NotFound)?;
                return Ok(file(size, loaded.mtime).of_array(&loaded.access));
            }
            NodeKind::Store(_) | NodeKind::Folder(_) => {
                let files = self.node_files(node, &kind)?;
                let view = files.view.as_ref().ok_or(FsError::NotFound)?;
                let (_, mtime) = view.meta().ok_or(FsError::NotFound)?;
                let access = view.access();
                if role == Role::Node {
                    return Ok(dir(mtime).of_array(&access));
                }
                let row = folder_row(role).ok_or(FsError::NotFound)?;
                let size = (row.size)(&files).ok_or(FsError::NotFound)?;
                return Ok(file(size, mtime).of_array(&access));
            }
        };
        let loaded = entry.current().map_err(FsError::from)?;
        let mtime = loaded.mtime;
        let attr = match role {
            Role::Node => dir(mtime),
            Role::File(id) => {
                let spec = array_file(id);
                let size = (spec.size)(&loaded).ok_or(FsError::NotFound)?;
                Attr {
                    kind: spec.kind,
                    ..file(size, mtime)
                }
            }
            Role::Chunk(c) if self.chunk_dir(&loaded, c).is_some() => dir(mtime),
            Role::Chunk(c) => {
                if let Some(array) = loaded.whole_array().filter(|a| c < a.nchunks()) {
                    file(
                        array
                            .region_len(Region::Chunk(c))
                            .map_err(|p| crate::format::Error::new(array.name(), p))?,
                        mtime,
                    )
                } else {
                    file(loaded.chunk_file(c).ok_or(FsError::NotFound)?.0, mtime)
                }
            }
            _ => return Err(FsError::NotFound),
        };
        Ok(attr.of_array(&loaded.access))
    }

    /// Extended attributes of `ino` (only the files the views' table marks,
    /// `data` and `data.npy`, carry any).
    pub fn xattrs(&self, ino: u64) -> Result<Vec<(String, Vec<u8>)>, FsError> {
        let (node, role) = self.decode(ino)?;
        match role {
            Role::File(id)
                if array_file(id).xattrs
                    && matches!(self.node_info(node)?.1, NodeKind::Array(_)) =>
            {
                Ok(self.array_of(node)?.xattrs.clone())
            }
            _ => {
                self.getattr(ino)?;
                Ok(Vec::new())
            }
        }
    }

    /// Modification time (the mount's start) and access of a remote folder
    /// (0555: anyone may list it).
    #[cfg(feature = "remote")]
    fn remote_dir_meta(&self) -> (SystemTime, Access) {
        let mtime = self
            .remote
            .as_ref()
            .map_or(SystemTime::UNIX_EPOCH, |r| r.made());
        (
            mtime,
            Access {
                mode: 0o555,
                ..remote_access()
            },
        )
    }
}
