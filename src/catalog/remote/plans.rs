//! nnU-Net plans under a remote root: the objects and prefixes the plans
//! rules ([`crate::catalog::nnunet_plans`]) look at, by key written as a
//! relative path. A folder's state and a file's identity (size, ETag) come
//! from its prefix's listing, which the tree keeps for the attribute TTL
//! anyway; a plans file is read with [`RemoteLocation::open`], so through
//! the disk cache's remote tier when the mount has one.
//!
//! [`RemoteLocation::open`]: crate::source::remote::RemoteLocation::open

use std::path::{Path, PathBuf};

use crate::catalog::nnunet_plans::{PlansFiles, Stamp, MAX_CANDIDATES, MAX_PLANS_BYTES};
use crate::source::remote::ListedObject;

use super::keys::join;
use super::root::RemoteRoot;

/// The objects of `root` as plans files.
pub struct RemotePlans<'a>(pub &'a RemoteRoot);

/// `path` as a key under the root (`""` for the root itself).
fn key(path: &Path) -> Option<&str> {
    path.to_str()
}

impl RemotePlans<'_> {
    /// The listed object `path`, from its prefix's listing.
    fn object(&self, path: &Path) -> Option<ListedObject> {
        let name = key(path.file_name()?.as_ref())?;
        let listing = self.0.listings().listing(key(path.parent()?)?).ok()?;
        listing.objects.iter().find(|o| o.name == name).cloned()
    }
}

impl PlansFiles for RemotePlans<'_> {
    /// Every key is under the root (keys never climb above it).
    fn shown(&self, _folder: &Path) -> bool {
        true
    }

    fn stamp(&self, path: &Path) -> Option<Stamp> {
        if let Some(o) = self.object(path) {
            return Some((0, o.size, Some(o.modified), o.etag));
        }
        // A folder: what its listing says of its JSON files.
        let listing = self.0.listings().listing(key(path)?).ok()?;
        let mut said = String::new();
        let mut count = 0;
        for o in listing.objects.iter().filter(|o| o.name.ends_with(".json")) {
            said += &format!("{}\0{}\0{:?}\0", o.name, o.size, o.etag);
            count += 1;
        }
        Some((1, count, None, Some(said)))
    }

    fn not_a_file(&self, path: &Path) -> bool {
        let (Some(name), Some(parent)) = (path.file_name(), path.parent()) else {
            return true;
        };
        let (Some(name), Some(parent)) = (name.to_str(), key(parent)) else {
            return true;
        };
        self.0
            .listings()
            .listing(parent)
            .is_ok_and(|l| l.dirs.iter().any(|d| d == name))
    }

    fn json_files(&self, folder: &Path) -> Option<Vec<PathBuf>> {
        let folder = key(folder)?;
        let listing = self.0.listings().listing(folder).ok()?;
        Some(
            listing
                .objects
                .iter()
                .filter(|o| o.name.ends_with(".json"))
                .take(MAX_CANDIDATES + 8)
                .map(|o| PathBuf::from(join(folder, &o.name)))
                .collect(),
        )
    }

    fn read(&self, path: &Path) -> Option<Vec<u8>> {
        let source = match self.0.location(key(path)?).open() {
            Ok(source) => source,
            Err(e) => {
                log::warn!("{e}");
                return None;
            }
        };
        let len = source.len();
        if len > MAX_PLANS_BYTES {
            return None;
        }
        let mut bytes = vec![0; len as usize];
        match source.read_at(0, &mut bytes) {
            Ok(()) => Some(bytes),
            Err(e) => {
                log::warn!("{}: {e}", self.0.location(key(path)?).redacted());
                None
            }
        }
    }
}
