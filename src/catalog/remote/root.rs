//! The root of a remote mount: what its URL names (one object, or a prefix
//! mirrored as folders), how each listed name is shown (a folder, an array,
//! a store), and each object's version as its folder's listing gives it.
//! A Caterva2 server decides some names and versions itself
//! ([`MountedFolder`]); everything else follows one rule for every store.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use parking_lot::Mutex;

use crate::disk_cache::DiskCache;
use crate::format::{Array, Error, Version, VersionTag, SPARSE_INDEX};
use crate::source::remote::{
    ListedObject, Listing, RemoteError, RemoteLocation, RemoteOptions, Scheme, StatsSnapshot,
};
use crate::source::store::{StoreFormat, EMBED_NAME};

use super::super::access::Access;
use super::super::folder_listing::Sort;
use super::super::local_dir::{Class, KNOWN_EXTENSIONS};
use super::caterva2::{self as c2, MountedFolder, Shown};
use super::keys::{extension, join};
use super::listings::Listings;

/// Child prefixes listed at once when a folder is read (to classify them).
const PARALLEL_LISTS: usize = 8;

/// What a remote name is shown as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteClass {
    /// A prefix shown as a folder.
    Dir,
    /// An array: a frame object, or (`sparse`) a prefix holding a sparse frame.
    Array {
        /// A sparse frame (a prefix holding `chunks.b2frame`).
        sparse: bool,
    },
    /// A store: an object (`.b2z`, `.b2e`) or a prefix (`.b2d`).
    Store(StoreFormat),
    /// Any other object, shown as itself (a plain file).
    Plain,
}

impl RemoteClass {
    /// The class the tree gives this entry (sparse or not, an array is an array).
    pub fn class(self) -> Class {
        match self {
            RemoteClass::Dir => Class::Dir,
            RemoteClass::Array { .. } => Class::Array,
            RemoteClass::Store(format) => Class::Store(format),
            RemoteClass::Plain => Class::Plain,
        }
    }
}

/// The remote side of a mount: where its root is, and the listings and
/// identities fetched, kept for the attribute TTL.
#[derive(Debug)]
pub struct RemoteRoot {
    listings: Arc<Listings>,
    class: RemoteClass,
    /// The root is one object (not a prefix).
    object: bool,
    made: SystemTime,
    head: Mutex<Option<(Instant, ListedObject)>>,
    /// For a Caterva2 server: its datasets' infos and stored frames.
    served: Option<MountedFolder>,
}

/// Owner, group and mode of every remote entry: the mounting user's,
/// readable by all (files 0444, folders 0555).
pub fn remote_access() -> Access {
    // SAFETY: getuid and getgid cannot fail and touch no memory.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    Access {
        uid,
        gid,
        mode: 0o444,
    }
}

/// A remote failure as the I/O error the filesystem reports (not found and
/// denied keep their kinds).
pub fn io_error(e: RemoteError) -> std::io::Error {
    let kind = match e {
        RemoteError::NotFound { .. } => std::io::ErrorKind::NotFound,
        RemoteError::Denied { .. } => std::io::ErrorKind::PermissionDenied,
        _ => std::io::ErrorKind::Other,
    };
    std::io::Error::new(kind, e.to_string())
}

impl RemoteRoot {
    /// Connect to `url` and find what it is: for http(s), one object (a URL
    /// ending in `/` is refused: a web server cannot be listed); for a
    /// store, a prefix when the URL ends in `/` or no object has its name,
    /// else that object; for a Caterva2 server, what the server says.
    /// With `disk_cache`, the bytes objects send are kept there (the
    /// remote tier). Errors name the URL without credentials.
    pub fn connect(
        url: &str,
        options: &RemoteOptions,
        ttl: Duration,
        disk_cache: Option<Arc<DiskCache>>,
    ) -> Result<RemoteRoot, RemoteError> {
        // Served regions carry no validator: their ETag is asked again at
        // most once per attribute TTL (source/remote/served/recheck.rs).
        let options = &RemoteOptions {
            attr_ttl: ttl,
            ..options.clone()
        };
        let connect = |url: &str| {
            let loc = RemoteLocation::connect(url, options)?;
            if let Some(cache) = &disk_cache {
                loc.keep_on_disk(cache.clone());
            }
            Ok::<_, RemoteError>(loc)
        };
        let mut loc = connect(url)?;
        if loc.scheme() == Scheme::Caterva2 {
            return Ok(match c2::connect(loc)? {
                c2::Mounted::Folder(loc) => Self::with(loc, RemoteClass::Dir, false, ttl, None),
                c2::Mounted::Dataset(loc) => {
                    Self::with(loc, RemoteClass::Array { sparse: false }, true, ttl, None)
                }
            });
        }
        let http = loc.scheme() == Scheme::Http;
        if http && loc.is_prefix() {
            return Err(RemoteError::Unsupported {
                url: loc.redacted(),
                detail: "a web server cannot be listed: mount the URL of one array (a .b2nd or .b2frame file)".into(),
            });
        }
        let mut head = None;
        if !loc.is_prefix() {
            match loc.head() {
                Ok(object) => head = Some(object),
                Err(RemoteError::NotFound { .. }) if !http => loc = connect(&format!("{url}/"))?,
                Err(e) => return Err(e),
            }
        }
        let (class, object) = match &head {
            Some(_) => {
                let class = match extension(&loc.name()) {
                    Some("b2z") => RemoteClass::Store(StoreFormat::Zip),
                    Some("b2e") => RemoteClass::Store(StoreFormat::Embed),
                    _ => RemoteClass::Array { sparse: false },
                };
                (class, true)
            }
            None => {
                let listing = loc.list()?;
                if listing.objects.is_empty() && listing.dirs.is_empty() && !url.ends_with('/') {
                    return Err(RemoteError::NotFound {
                        url: crate::source::remote::redact_url(url),
                    });
                }
                (Self::prefix_class(&loc.name(), &listing), false)
            }
        };
        Ok(Self::with(loc, class, object, ttl, head))
    }

    fn with(
        loc: RemoteLocation,
        class: RemoteClass,
        object: bool,
        ttl: Duration,
        head: Option<ListedObject>,
    ) -> RemoteRoot {
        let served =
            (loc.scheme() == Scheme::Caterva2).then(|| MountedFolder::new(loc.clone(), ttl));
        RemoteRoot {
            listings: Arc::new(Listings::new(loc, ttl)),
            class,
            object,
            made: SystemTime::now(),
            head: Mutex::new(head.map(|h| (Instant::now(), h))),
            served,
        }
    }

    /// What the root is shown as.
    pub fn class(&self) -> RemoteClass {
        self.class
    }

    /// What the folder listing rules see of an entry of class `class`: a
    /// frame or store object is one file (`--originals` can show it as
    /// itself), except on a Caterva2 server, whose datasets are served as
    /// regions, not always as stored files.
    pub fn sort(&self, class: RemoteClass) -> Sort {
        match class {
            RemoteClass::Dir => Sort::Folder,
            RemoteClass::Plain => Sort::Plain,
            RemoteClass::Array { sparse } => Sort::Object {
                file: !sparse && self.served.is_none(),
            },
            RemoteClass::Store(format) => Sort::Object {
                file: format != StoreFormat::Dir && self.served.is_none(),
            },
        }
    }

    /// The URL of folder `key` without credentials (for messages).
    pub fn folder_name(&self, key: &str) -> String {
        self.location(key).redacted()
    }

    /// The root's URL without credentials.
    pub fn redacted(&self) -> String {
        self.listings.root().redacted()
    }

    /// When the mount connected: the mtime of its remote folders.
    pub fn made(&self) -> SystemTime {
        self.made
    }

    /// What the mount's connection has cost so far.
    pub fn stats(&self) -> StatsSnapshot {
        self.listings.root().stats()
    }

    /// The listings of the root's folders.
    pub(super) fn listings(&self) -> &Arc<Listings> {
        &self.listings
    }

    /// For a Caterva2 server: the mounted folder's datasets.
    pub(super) fn served(&self) -> Option<&MountedFolder> {
        self.served.as_ref()
    }

    /// The location of `key` (`/`-separated names under the root).
    pub(super) fn location(&self, key: &str) -> RemoteLocation {
        self.listings.location(key)
    }

    /// The root object as a HEAD gives it, at most once per TTL.
    fn head(&self) -> Result<ListedObject, RemoteError> {
        if let Some((at, o)) = &*self.head.lock() {
            if at.elapsed() < self.listings.ttl() {
                return Ok(o.clone());
            }
        }
        let o = self.listings.root().head()?;
        *self.head.lock() = Some((Instant::now(), o.clone()));
        Ok(o)
    }

    /// The class of prefix `name` from its listing: a sparse frame when it
    /// holds `chunks.b2frame`, a `.b2d` store when named so or holding
    /// `embed.b2e` (as a local directory is), else a folder.
    fn prefix_class(name: &str, listing: &Listing) -> RemoteClass {
        let holds = |file: &str| listing.objects.iter().any(|o| o.name == file);
        if holds(SPARSE_INDEX) {
            RemoteClass::Array { sparse: true }
        } else if extension(name) == Some("b2d") || holds(EMBED_NAME) {
            RemoteClass::Store(StoreFormat::Dir)
        } else {
            RemoteClass::Dir
        }
    }

    /// The shown children of prefix `key`, sorted by name. Child prefixes
    /// are listed (several at once) to tell sparse frames from folders.
    pub fn children(&self, key: &str) -> Result<Vec<(String, RemoteClass)>, RemoteError> {
        let listings = &self.listings;
        let listing = listings.listing(key)?;
        let unlisted: Vec<String> = listing
            .dirs
            .iter()
            .map(|d| join(key, d))
            .filter(|k| listings.cached(k).is_none())
            .collect();
        std::thread::scope(|s| {
            for batch in unlisted.chunks(PARALLEL_LISTS) {
                let handles: Vec<_> = batch
                    .iter()
                    .map(|k| s.spawn(move || listings.listing(k)))
                    .collect();
                for h in handles {
                    let _ = h.join();
                }
            }
        });
        let mut out = Vec::new();
        for d in &listing.dirs {
            match listings.listing(&join(key, d)) {
                Ok(l) => out.push((d.clone(), Self::prefix_class(d, &l))),
                Err(e) => log::warn!("{e}"),
            }
        }
        // An object named like a prefix beside it is handed on too: the
        // folder's listing rules show the prefix and log the object.
        for o in &listing.objects {
            if let Some(class) = self.object_class(&join(key, &o.name), o) {
                out.push((o.name.clone(), class));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// The class of child `name` of prefix `key`, or `None` when it is not
    /// shown (or not there).
    pub fn child(&self, key: &str, name: &str) -> Result<Option<RemoteClass>, RemoteError> {
        let listing = self.listings.listing(key)?;
        let child_key = join(key, name);
        if listing.dirs.iter().any(|d| d == name) {
            let child = self.listings.listing(&child_key)?;
            return Ok(Some(Self::prefix_class(name, &child)));
        }
        Ok(listing
            .objects
            .iter()
            .find(|o| o.name == name)
            .and_then(|o| self.object_class(&child_key, o)))
    }

    /// How the listed object `key` is shown: as the server decides (a
    /// Caterva2 container or its leaf), else a store or a frame by its
    /// extension, else an array when it starts like a frame, else a plain
    /// file (which the folder's listing rules may leave out).
    fn object_class(&self, key: &str, object: &ListedObject) -> Option<RemoteClass> {
        match self
            .served
            .as_ref()
            .and_then(|c2| c2.shown_as(key, &object.name))
        {
            Some(Shown::Folder) => return Some(RemoteClass::Dir),
            Some(Shown::Dataset) => return Some(RemoteClass::Array { sparse: false }),
            None => {}
        }
        let ext = extension(&object.name);
        match ext {
            Some("b2z") if self.served.is_none() => Some(RemoteClass::Store(StoreFormat::Zip)),
            Some("b2e") if self.served.is_none() => Some(RemoteClass::Store(StoreFormat::Embed)),
            Some(ext) if KNOWN_EXTENSIONS.contains(&ext) => {
                Some(RemoteClass::Array { sparse: false })
            }
            _ if self.listings.sniff(key, object) => Some(RemoteClass::Array { sparse: false }),
            _ => Some(RemoteClass::Plain),
        }
    }

    /// The version and modification time of the object `key` (of the
    /// object `stamp` under it, for a prefix), from its folder's listing.
    pub(super) fn version(
        &self,
        key: &str,
        stamp: Option<&str>,
    ) -> Result<(Version, SystemTime), RemoteError> {
        if let Some(c2) = &self.served {
            return Ok((c2.version(key)?, self.made));
        }
        if key.is_empty() && self.object {
            let head = self.head()?;
            return Ok((head.version(), head.modified));
        }
        let (folder, name) = match (stamp, key.rsplit_once('/')) {
            (Some(stamp), _) => (key, stamp),
            (None, Some((folder, name))) => (folder, name),
            (None, None) => ("", key),
        };
        let listing = self.listings.listing(folder)?;
        match listing.objects.iter().find(|o| o.name == name) {
            Some(object) => Ok((object.version(), object.modified)),
            // A `.b2d` without an embed frame (as a local one may be): its
            // listing is all there is to it.
            None if stamp == Some(EMBED_NAME)
                && !(listing.dirs.is_empty() && listing.objects.is_empty()) =>
            {
                Ok((
                    Version {
                        len: 0,
                        tag: VersionTag::Token("no embed.b2e".into()),
                    },
                    self.made,
                ))
            }
            None => Err(RemoteError::NotFound {
                url: self.location(key).redacted(),
            }),
        }
    }

    /// Open the array at `key` (named `name` in messages): through the
    /// server where it decides, else a sparse frame's index and chunks, or
    /// one frame object.
    pub(super) fn open_array(&self, key: &str, sparse: bool, name: &Path) -> Result<Array, Error> {
        if let Some(c2) = &self.served {
            return c2.open(key, name);
        }
        let fail = |e: RemoteError| Error::new(name, e.into());
        let loc = self.location(key);
        if sparse {
            let index = loc.child(SPARSE_INDEX).open().map_err(fail)?;
            Array::from_sparse(name, index, Arc::new(loc.sparse_chunks()))
        } else {
            Array::from_source(name, loc.open().map_err(fail)?)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_access() {
        let o = ListedObject {
            name: "a".into(),
            size: 5,
            etag: Some("\"e\"".into()),
            modified: SystemTime::UNIX_EPOCH,
        };
        assert_eq!(
            o.version(),
            Version {
                len: 5,
                tag: VersionTag::Token("etag \"e\"".into())
            }
        );
        assert_eq!(remote_access().file_perm(), 0o444);
        assert_eq!(remote_access().folder_perm(), 0o555);
    }
}
