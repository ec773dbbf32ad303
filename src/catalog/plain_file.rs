//! A file shown as itself: a source file that is not a Blosc2 object (a
//! `.json`, a `.pkl`, a `.nii.gz` beside the arrays), or, with
//! `--originals`, a Blosc2 file's own bytes. Same name, bytes, size and
//! modification time as in the source, read-only, with the permissions
//! the source gives (as arrays get theirs).
//!
//! Nothing is held per file: a local one is stat'ed when asked and opened
//! only when opened (its descriptor then goes to the pool, as an array's
//! does); a remote one's size and time come from its folder's listing and
//! its bytes from ranged GETs (through the disk cache's remote tier when
//! there is one).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use crate::format::{ByteSource, Error, Version};
use crate::source::file_version as version_of;
use crate::source::FileSource;

use super::access::Access;
#[cfg(feature = "remote")]
use super::remote::RemoteObject;

/// Where a shown file's bytes are.
#[derive(Debug, Clone)]
pub enum PlainFile {
    /// A local regular file (its real path, symlinks resolved), in the
    /// state it had when listed: a changed file is a new node.
    Local {
        /// The file's path.
        path: PathBuf,
        /// Its version when listed (device, inode, size, mtime).
        listed: Option<Version>,
    },
    /// An object under the remote root.
    #[cfg(feature = "remote")]
    Remote(RemoteObject),
}

/// What `getattr` tells of a shown file.
#[derive(Debug, Clone)]
pub struct PlainMeta {
    /// Its size in bytes.
    pub size: u64,
    /// Its modification time.
    pub mtime: SystemTime,
    /// Its owner and mode.
    pub access: Access,
}

impl PlainFile {
    /// The local file at `path`, as `meta` (its metadata, links followed) found it.
    pub fn local(path: PathBuf, meta: &std::fs::Metadata) -> PlainFile {
        PlainFile::Local {
            path,
            listed: Some(version_of(meta)),
        }
    }

    /// Whether `self` and `other` show the same file in the same state.
    pub fn same_as(&self, other: &PlainFile) -> bool {
        match (self, other) {
            (
                PlainFile::Local { path, listed },
                PlainFile::Local {
                    path: p2,
                    listed: l2,
                },
            ) => path == p2 && listed == l2,
            #[cfg(feature = "remote")]
            (PlainFile::Remote(a), PlainFile::Remote(b)) => a.key() == b.key(),
            #[cfg(feature = "remote")]
            _ => false,
        }
    }

    /// Its name in messages.
    pub fn name(&self) -> PathBuf {
        match self {
            PlainFile::Local { path, .. } => path.clone(),
            #[cfg(feature = "remote")]
            PlainFile::Remote(object) => object.name(),
        }
    }

    /// Its size, time and access now.
    pub fn meta(&self) -> std::io::Result<PlainMeta> {
        match self {
            PlainFile::Local { path, .. } => {
                let meta = std::fs::metadata(path)?;
                Ok(PlainMeta {
                    size: meta.len(),
                    mtime: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                    access: Access::of(&meta),
                })
            }
            #[cfg(feature = "remote")]
            PlainFile::Remote(object) => {
                let (version, mtime) = object.version()?;
                Ok(PlainMeta {
                    size: version.len,
                    mtime,
                    access: super::remote::remote_access(),
                })
            }
        }
    }

    /// Open its bytes for reading.
    pub fn open(&self) -> Result<Arc<dyn ByteSource>, Error> {
        match self {
            PlainFile::Local { path, .. } => Ok(Arc::new(
                FileSource::open(path).map_err(|p| Error::new(path, p))?,
            )),
            #[cfg(feature = "remote")]
            PlainFile::Remote(object) => object.open_bytes(),
        }
    }

    /// The local path, for a local file.
    pub fn path(&self) -> Option<&Path> {
        match self {
            PlainFile::Local { path, .. } => Some(path),
            #[cfg(feature = "remote")]
            PlainFile::Remote(_) => None,
        }
    }
}
