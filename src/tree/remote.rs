//! Remote sources in the tree: a mount whose source is a URL.
//!
//! An object-store prefix is mirrored as a directory tree: each folder is
//! listed with a delimiter when it is looked up or read, and the listing is
//! kept for the attribute TTL. Its names are classified as local ones are:
//! `.b2nd`/`.b2frame`/`.b2f`/`.b2` objects (and other objects that start
//! like a frame, sniffed once per ETag) are arrays, a prefix holding
//! `chunks.b2frame` is a sparse-frame array, `.b2z` and `.b2e` objects are
//! stores, and so are prefixes named `*.b2d` or holding `embed.b2e` (their
//! members read through the same client, [`super::remote_members`]); other
//! prefixes are folders. An object's version is its size and
//! ETag as its folder's listing gives them, so a replaced object is noticed
//! without a HEAD per lookup; new opens then see the new object, while open
//! files keep the source they opened (which refuses bytes of another
//! object). An http(s) URL names one object (the mount root), checked with
//! a HEAD at most once per TTL.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use crate::format::source::ByteSource;
use crate::format::{looks_like_frame, Array, Error, Version, VersionTag, SPARSE_INDEX};
use crate::source::remote::caterva2;
use crate::source::remote::{
    DatasetInfo, InfoKind, ListedObject, Listing, RemoteError, RemoteLocation, RemoteOptions,
    RemoteSource, Scheme, StatsSnapshot,
};
use crate::source::store::{Store, StoreFormat, EMBED_NAME};

use super::access::Access;
use super::listing::{Class, KNOWN_EXTENSIONS};

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
}

impl RemoteClass {
    /// The class the tree gives this entry (sparse or not, an array is an array).
    pub fn class(self) -> Class {
        match self {
            RemoteClass::Dir => Class::Dir,
            RemoteClass::Array { .. } => Class::Array,
            RemoteClass::Store(format) => Class::Store(format),
        }
    }
}

/// The remote side of a mount: where its root is, and the listings and
/// identities fetched, kept for the attribute TTL.
#[derive(Debug)]
pub struct RemoteRoot {
    loc: RemoteLocation,
    class: RemoteClass,
    /// The root is one object (not a prefix).
    object: bool,
    ttl: Duration,
    made: SystemTime,
    listings: Mutex<HashMap<String, (Instant, Arc<Listing>)>>,
    head: Mutex<Option<(Instant, ListedObject)>>,
    /// Whether an object of unknown extension starts like a frame, by (key,
    /// size, ETag): the most recent [`SNIFFS_KEPT`] answers (forgetting one
    /// costs one 11-byte GET, so a prefix of a million objects keeps this small).
    sniffed: Mutex<lru::LruCache<ObjectId, bool>>,
    /// Caterva2 only: what `/api/info` said of a key, and when (its
    /// listings give names only; versions and kinds come from here), the
    /// most recent [`INFOS_KEPT`].
    infos: Mutex<lru::LruCache<String, (Instant, Arc<DatasetInfo>)>>,
    /// Caterva2 only: stored frames (by extension) opened to learn their
    /// version, and when that was last confirmed: the open that follows a
    /// lookup takes the source from here, so a lookup and an open cost two
    /// GETs (the first MiB, the offsets index) and no `/api/info`.
    probes: Mutex<lru::LruCache<String, (Instant, Arc<RemoteSource>)>>,
}

/// Infos kept (see [`RemoteRoot::infos`]): each holds a dataset's vlmeta,
/// and is of use for one attribute TTL.
const INFOS_KEPT: usize = 1024;

/// Stored frames kept opened (see [`RemoteRoot::probes`]); their spans
/// live in the connection's pool, under its budget.
const PROBES_KEPT: usize = 256;

/// Sniff answers kept (see [`RemoteRoot::sniffed`]).
const SNIFFS_KEPT: usize = 16_384;

/// An object's key, size and ETag: what a sniff's answer holds for.
type ObjectId = (String, u64, Option<String>);

/// One object or sparse-frame prefix under a [`RemoteRoot`]: an array's or
/// a store's origin.
#[derive(Debug, Clone)]
pub struct RemoteObject {
    root: Arc<RemoteRoot>,
    key: String,
    sparse: bool,
    /// For a prefix (a sparse frame, a `.b2d` store): the object under it
    /// whose identity is the whole's version (`chunks.b2frame`, `embed.b2e`).
    stamp: Option<&'static str>,
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

/// The key of child `name` of folder `key` (`""` is the root).
pub fn join(key: &str, name: &str) -> String {
    if key.is_empty() {
        name.to_string()
    } else {
        format!("{key}/{name}")
    }
}

/// The key `relative` names from the folder of `key` (lexically, `..`
/// allowed); `None` for an absolute path or URL, or one that climbs above
/// the root.
pub fn sibling_key(key: &str, relative: &str) -> Option<String> {
    if relative.starts_with('/') || relative.contains("://") {
        return None;
    }
    let mut parts: Vec<&str> = key.split('/').filter(|p| !p.is_empty()).collect();
    parts.pop();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            name => parts.push(name),
        }
    }
    Some(parts.join("/")).filter(|k| !k.is_empty())
}

fn extension(name: &str) -> Option<&str> {
    name.rsplit_once('.')
        .map(|(_, ext)| ext)
        .filter(|_| !name.starts_with('.') || name.matches('.').count() > 1)
}

/// The version of an object as a listing or HEAD gives it (its ETag, else
/// its modification time, with its size).
fn version_of(object: &ListedObject) -> (Version, SystemTime) {
    let tag = match &object.etag {
        Some(e) => format!("etag {e}"),
        None => format!("modified {:?}", object.modified),
    };
    (
        Version {
            len: object.size,
            tag: VersionTag::Token(tag),
        },
        object.modified,
    )
}

impl RemoteRoot {
    /// Connect to `url` and find what it is: for http(s), one object (a URL
    /// ending in `/` is refused: a web server cannot be listed); for a
    /// store, a prefix when the URL ends in `/` or no object has its name,
    /// else that object. Errors name the URL without credentials.
    pub fn connect(
        url: &str,
        options: &RemoteOptions,
        ttl: Duration,
    ) -> Result<RemoteRoot, RemoteError> {
        let options = &RemoteOptions {
            attr_ttl: ttl,
            ..options.clone()
        };
        let mut loc = RemoteLocation::connect(url, options)?;
        if loc.scheme() == Scheme::Caterva2 {
            return Self::connect_caterva2(loc, ttl);
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
                Err(RemoteError::NotFound { .. }) if !http => {
                    loc = RemoteLocation::connect(&format!("{url}/"), options)?
                }
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
        let now = Instant::now();
        let kept = std::num::NonZeroUsize::new(SNIFFS_KEPT).unwrap_or(std::num::NonZeroUsize::MIN);
        RemoteRoot {
            class,
            object,
            ttl,
            made: SystemTime::now(),
            listings: Mutex::new(HashMap::new()),
            head: Mutex::new(head.map(|h| (now, h))),
            sniffed: Mutex::new(lru::LruCache::new(kept)),
            infos: Mutex::new(lru::LruCache::new(
                std::num::NonZeroUsize::new(INFOS_KEPT).unwrap_or(std::num::NonZeroUsize::MIN),
            )),
            probes: Mutex::new(lru::LruCache::new(
                std::num::NonZeroUsize::new(PROBES_KEPT).unwrap_or(std::num::NonZeroUsize::MIN),
            )),
            loc,
        }
    }

    /// A Caterva2 root, folder or dataset: `/api/roots` first, so a root
    /// this login cannot reach fails here, saying how to log in; then a
    /// root or a folder is listed, a dataset described.
    fn connect_caterva2(loc: RemoteLocation, ttl: Duration) -> Result<RemoteRoot, RemoteError> {
        let key = loc.key();
        let root_name = key.split('/').next().unwrap_or_default().to_string();
        let roots = loc.roots()?;
        if !roots.iter().any(|r| *r == root_name) {
            let hint = if loc.has_login() {
                "the login given does not reach it"
            } else {
                crate::source::remote::caterva2::session::LOGIN_HINT
            };
            return Err(RemoteError::Denied {
                url: loc.redacted(),
                detail: format!(
                    "the server offers the roots {} only; {hint}",
                    roots.join(", ")
                ),
            });
        }
        let folder = if key.trim_end_matches('/').contains('/') {
            match loc.info()?.kind {
                InfoKind::Group => true,
                InfoKind::Dataset { .. } | InfoKind::Frame { .. } => false,
                InfoKind::Other(what) => {
                    return Err(RemoteError::Unsupported {
                        url: loc.redacted(),
                        detail: what,
                    })
                }
            }
        } else {
            true
        };
        if !folder {
            return Ok(Self::with(
                loc,
                RemoteClass::Array { sparse: false },
                true,
                ttl,
                None,
            ));
        }
        let loc = loc.into_prefix();
        loc.list()?;
        Ok(Self::with(loc, RemoteClass::Dir, false, ttl, None))
    }

    /// Whether the root is a Caterva2 server.
    fn caterva2(&self) -> bool {
        self.loc.scheme() == Scheme::Caterva2
    }

    /// Caterva2 only: whether `key` is a stored frame by its name (a frame
    /// extension, outside HDF5 files and stores), read without `/api/info`.
    fn stored_frame(&self, key: &str) -> bool {
        self.caterva2() && caterva2::is_stored_frame(&self.c2_path(key))
    }

    /// Caterva2 only: the dataset path of `key` (from its `@root`; a mount
    /// of an HDF5 file or store keeps it as the container of what it shows).
    fn c2_path(&self, key: &str) -> String {
        join(self.loc.key().trim_end_matches('/'), key)
    }

    /// Caterva2 only: the stored frame `key`, opened (its first MiB and
    /// identity) at most a TTL ago, or confirmed unchanged since by a GET
    /// of its first byte; opened again when it changed.
    fn probe(&self, key: &str) -> Result<Arc<RemoteSource>, RemoteError> {
        let kept = self
            .probes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .cloned();
        if let Some((at, source)) = kept {
            if at.elapsed() < self.ttl {
                return Ok(source);
            }
            let now = self.location(key).head()?;
            if version_of(&now).0 == source.opened_version() {
                self.probes
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .put(key.to_string(), (Instant::now(), source.clone()));
                return Ok(source);
            }
        }
        let source = Arc::new(self.location(key).open()?);
        self.probes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .put(key.to_string(), (Instant::now(), source.clone()));
        Ok(source)
    }

    /// Caterva2 only: what `/api/info` says of `key`, at most a TTL old.
    pub(super) fn info(&self, key: &str) -> Result<Arc<DatasetInfo>, RemoteError> {
        if let Some((at, info)) = self
            .infos
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
        {
            if at.elapsed() < self.ttl {
                return Ok(info.clone());
            }
        }
        let info = Arc::new(self.location(key).info()?);
        self.infos
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .put(key.to_string(), (Instant::now(), info.clone()));
        Ok(info)
    }

    /// What the root is shown as.
    pub fn class(&self) -> RemoteClass {
        self.class
    }

    /// The root's URL without credentials.
    pub fn redacted(&self) -> String {
        self.loc.redacted()
    }

    /// When the mount connected: the mtime of its remote folders.
    pub fn made(&self) -> SystemTime {
        self.made
    }

    /// What the mount's connection has cost so far.
    pub fn stats(&self) -> StatsSnapshot {
        self.loc.stats()
    }

    /// The location of `key` (`/`-separated names under the root).
    pub(super) fn location(&self, key: &str) -> RemoteLocation {
        key.split('/')
            .filter(|s| !s.is_empty())
            .fold(self.loc.clone(), |loc, name| loc.child(name))
    }

    fn cached(&self, key: &str) -> Option<Arc<Listing>> {
        let listings = self.listings.lock().unwrap_or_else(|e| e.into_inner());
        listings
            .get(key)
            .filter(|(at, _)| at.elapsed() < self.ttl)
            .map(|(_, l)| l.clone())
    }

    /// The listing of prefix `key`, from the cache while under the TTL old.
    pub(super) fn listing(&self, key: &str) -> Result<Arc<Listing>, RemoteError> {
        if let Some(l) = self.cached(key) {
            return Ok(l);
        }
        let listing = Arc::new(self.location(key).list()?);
        let mut listings = self.listings.lock().unwrap_or_else(|e| e.into_inner());
        listings.retain(|_, (at, _)| at.elapsed() < self.ttl);
        listings.insert(key.to_string(), (Instant::now(), listing.clone()));
        Ok(listing)
    }

    /// The root object as a HEAD gives it, at most once per TTL.
    fn head(&self) -> Result<ListedObject, RemoteError> {
        if let Some((at, o)) = &*self.head.lock().unwrap_or_else(|e| e.into_inner()) {
            if at.elapsed() < self.ttl {
                return Ok(o.clone());
            }
        }
        let o = self.loc.head()?;
        *self.head.lock().unwrap_or_else(|e| e.into_inner()) = Some((Instant::now(), o.clone()));
        Ok(o)
    }

    /// Whether the object `key` (listed as `object`) starts like a frame:
    /// one 11-byte GET the first time each (key, size, ETag) is seen.
    pub(super) fn sniff(&self, key: &str, object: &ListedObject) -> bool {
        // Caterva2 listings give no sizes.
        if object.size < 11 && !self.caterva2() {
            return false;
        }
        let id = (key.to_string(), object.size, object.etag.clone());
        if let Some(&known) = self
            .sniffed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
        {
            return known;
        }
        let frame = match self.location(key).read_head(11) {
            Ok(head) => looks_like_frame(&head),
            Err(e) => {
                log::warn!("{e}");
                return false;
            }
        };
        self.sniffed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .put(id, frame);
        frame
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
        let listing = self.listing(key)?;
        let unlisted: Vec<String> = listing
            .dirs
            .iter()
            .map(|d| join(key, d))
            .filter(|k| self.cached(k).is_none())
            .collect();
        std::thread::scope(|s| {
            for batch in unlisted.chunks(PARALLEL_LISTS) {
                let handles: Vec<_> = batch
                    .iter()
                    .map(|k| s.spawn(move || self.listing(k)))
                    .collect();
                for h in handles {
                    let _ = h.join();
                }
            }
        });
        let mut out = Vec::new();
        for d in &listing.dirs {
            match self.listing(&join(key, d)) {
                Ok(l) => out.push((d.clone(), Self::prefix_class(d, &l))),
                Err(e) => log::warn!("{e}"),
            }
        }
        for o in &listing.objects {
            if listing.dirs.contains(&o.name) {
                continue;
            }
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
        let listing = self.listing(key)?;
        let child_key = join(key, name);
        if listing.dirs.iter().any(|d| d == name) {
            return Ok(Some(Self::prefix_class(name, &*self.listing(&child_key)?)));
        }
        Ok(listing
            .objects
            .iter()
            .find(|o| o.name == name)
            .and_then(|o| self.object_class(&child_key, o)))
    }

    fn object_class(&self, key: &str, object: &ListedObject) -> Option<RemoteClass> {
        if self.caterva2() {
            return self.caterva2_class(key, object);
        }
        match extension(&object.name) {
            Some("b2z") => Some(RemoteClass::Store(StoreFormat::Zip)),
            Some("b2e") => Some(RemoteClass::Store(StoreFormat::Embed)),
            Some(ext) if KNOWN_EXTENSIONS.contains(&ext) => {
                Some(RemoteClass::Array { sparse: false })
            }
            _ => self
                .sniff(key, object)
                .then_some(RemoteClass::Array { sparse: false }),
        }
    }

    /// How a name a Caterva2 server lists is shown: HDF5 files and `.b2z`
    /// stores are folders of their datasets (the server lists inside them),
    /// every name inside one is a dataset, frames by their extension are
    /// datasets, and other names are datasets when they start like a frame
    /// (a `.b2` file is listed without its extension).
    fn caterva2_class(&self, key: &str, object: &ListedObject) -> Option<RemoteClass> {
        let ext = extension(&object.name);
        if ext.is_some_and(|e| caterva2::CONTAINERS.contains(&e)) {
            return Some(RemoteClass::Dir);
        }
        match ext {
            _ if caterva2::in_container(&self.c2_path(key)) => {
                Some(RemoteClass::Array { sparse: false })
            }
            Some(ext) if KNOWN_EXTENSIONS.contains(&ext) => {
                Some(RemoteClass::Array { sparse: false })
            }
            _ => self
                .sniff(key, object)
                .then_some(RemoteClass::Array { sparse: false }),
        }
    }

    /// The version and modification time of the object `key` (of the
    /// object `stamp` under it, for a prefix), from its folder's listing.
    fn version(
        &self,
        key: &str,
        stamp: Option<&str>,
    ) -> Result<(Version, SystemTime), RemoteError> {
        let missing = || RemoteError::NotFound {
            url: self.location(key).redacted(),
        };
        if self.stored_frame(key) {
            return Ok((self.probe(key)?.opened_version(), self.made));
        }
        if self.caterva2() {
            let info = self.info(key)?;
            let tag = info
                .etag
                .as_ref()
                .map_or_else(|| "no etag".to_string(), |e| format!("etag {e}"));
            return Ok((
                Version {
                    len: 0,
                    tag: VersionTag::Token(tag),
                },
                self.made,
            ));
        }
        if key.is_empty() && self.object {
            return Ok(version_of(&self.head()?));
        }
        let (folder, name) = match (stamp, key.rsplit_once('/')) {
            (Some(stamp), _) => (key, stamp),
            (None, Some((folder, name))) => (folder, name),
            (None, None) => ("", key),
        };
        let listing = self.listing(folder)?;
        match listing.objects.iter().find(|o| o.name == name) {
            Some(object) => Ok(version_of(object)),
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
            None => Err(missing()),
        }
    }
}

impl RemoteObject {
    /// The object (or sparse-frame prefix) `key` under `root`.
    pub fn new(root: Arc<RemoteRoot>, key: String, sparse: bool) -> RemoteObject {
        RemoteObject {
            root,
            key,
            sparse,
            stamp: sparse.then_some(SPARSE_INDEX),
        }
    }

    /// The store kept as `format` at `key` under `root` (an object, or a
    /// prefix for a `.b2d`).
    pub fn store(root: Arc<RemoteRoot>, key: String, format: StoreFormat) -> RemoteObject {
        RemoteObject {
            root,
            key,
            sparse: false,
            stamp: (format == StoreFormat::Dir).then_some(EMBED_NAME),
        }
    }

    /// Its version now (from its folder's listing, at most a TTL old) and
    /// its modification time.
    pub fn version(&self) -> std::io::Result<(Version, SystemTime)> {
        self.root.version(&self.key, self.stamp).map_err(io_error)
    }

    /// Its redacted URL, as the name in messages.
    pub fn name(&self) -> PathBuf {
        PathBuf::from(self.root.location(&self.key).redacted())
    }

    /// Open the array stored here.
    pub fn open(&self) -> Result<Array, Error> {
        let name = self.name();
        let fail = |e: RemoteError| Error::new(&name, e.into());
        let loc = self.root.location(&self.key);
        if self.root.stored_frame(&self.key) {
            return Array::from_source(&name, self.root.probe(&self.key).map_err(fail)?);
        }
        if self.root.caterva2() {
            return loc.open_dataset(&*self.root.info(&self.key).map_err(fail)?);
        }
        if self.sparse {
            let index = loc.child(SPARSE_INDEX).open().map_err(fail)?;
            Array::from_sparse(&name, Arc::new(index), Arc::new(loc.sparse_chunks()))
        } else {
            Array::from_source(&name, Arc::new(loc.open().map_err(fail)?))
        }
    }

    /// The object at `relative` (a `/`-separated path, `..` allowed) from
    /// this object's folder, when it stays under the same root; `None` for
    /// an absolute path or one that climbs above the root.
    pub fn sibling(&self, relative: &str) -> Option<RemoteObject> {
        Some(RemoteObject::new(
            self.root.clone(),
            sibling_key(&self.key, relative)?,
            false,
        ))
    }

    /// The dataset a `c2array` operand names (`path` from its `@root`, on
    /// the server at `urlbase`), when that is the mounted Caterva2 server
    /// and the path lies in the mounted folder; otherwise the reason it is
    /// not read (no other server is ever asked).
    pub fn caterva2_dataset(
        &self,
        path: &str,
        urlbase: Option<&str>,
    ) -> Result<RemoteObject, String> {
        let mounted = self
            .root
            .loc
            .api_base()
            .ok_or("a Caterva2 operand is read only when the mount is of its server")?;
        let same = urlbase.is_some_and(|u| {
            u.trim_end_matches('/')
                .eq_ignore_ascii_case(mounted.trim_end_matches('/'))
        });
        if !same {
            return Err(format!(
                "{path} lives on {}, not on the mounted server; no other server is asked",
                urlbase.unwrap_or("a server the recipe does not name")
            ));
        }
        let folder = self.root.loc.key().trim_end_matches('/');
        let key = path
            .trim_start_matches('/')
            .strip_prefix(folder)
            .and_then(|rest| rest.strip_prefix('/'))
            .filter(|k| !k.is_empty() && !k.split('/').any(|s| s == ".." || s == "."));
        let key = key.ok_or_else(|| format!("{path} is outside the mounted folder {folder}"))?;
        Ok(RemoteObject::new(self.root.clone(), key.to_string(), false))
    }

    /// Its key under the root (for messages and cycle checks).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Open the store kept here as `format`, reporting `version` as its version.
    pub fn open_store(&self, format: StoreFormat, version: Version) -> Result<Store, Error> {
        let name = self.name();
        if format == StoreFormat::Dir {
            let members =
                super::remote_members::RemoteMembers::new(self.root.clone(), self.key.clone());
            return Store::open_members(&name, Arc::new(members), version);
        }
        let source = self
            .root
            .location(&self.key)
            .open()
            .map_err(|e| Error::new(&name, e.into()))?;
        Store::open_source(&name, Arc::new(source), format, version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_and_keys() {
        assert_eq!(extension("a.b2nd"), Some("b2nd"));
        assert_eq!(extension("x.tar.b2z"), Some("b2z"));
        assert_eq!(extension("noext"), None);
        assert_eq!(extension(".hidden"), None);
        assert_eq!(join("", "a"), "a");
        assert_eq!(join("a/b", "c"), "a/b/c");
        let o = ListedObject {
            name: "a".into(),
            size: 5,
            etag: Some("\"e\"".into()),
            modified: SystemTime::UNIX_EPOCH,
        };
        let (v, _) = version_of(&o);
        assert_eq!(
            v,
            Version {
                len: 5,
                tag: VersionTag::Token("etag \"e\"".into())
            }
        );
        assert_eq!(remote_access().file_perm(), 0o444);
        assert_eq!(remote_access().folder_perm(), 0o555);
    }

    /// A `c2array` operand is read only from the mounted server, inside the mounted folder.
    #[test]
    fn caterva2_operands_stay_on_the_mounted_server_and_folder() {
        let loc = RemoteLocation::connect(
            "c2+http://127.0.0.1:9/c2/@public/exp/",
            &RemoteOptions::default(),
        )
        .unwrap();
        let root = Arc::new(RemoteRoot::with(
            loc,
            RemoteClass::Dir,
            false,
            Duration::from_secs(1),
            None,
        ));
        let e = RemoteObject::new(root, "run/e.b2nd".into(), false);
        let ok = e
            .caterva2_dataset("@public/exp/ops/a.b2nd", Some("http://127.0.0.1:9/c2/"))
            .unwrap();
        assert_eq!(ok.key(), "ops/a.b2nd");
        let other_server = e
            .caterva2_dataset("@public/exp/a.b2nd", Some("http://evil.example/"))
            .unwrap_err();
        assert!(
            other_server.contains("not on the mounted server"),
            "{other_server}"
        );
        assert!(
            e.caterva2_dataset("@public/exp/a.b2nd", None).is_err(),
            "no urlbase: not assumed to be this server"
        );
        assert!(e
            .caterva2_dataset("@public/other/a.b2nd", Some("http://127.0.0.1:9/c2"))
            .unwrap_err()
            .contains("outside the mounted folder"));
        assert!(e
            .caterva2_dataset("@public/exp/../secret.b2nd", Some("http://127.0.0.1:9/c2"))
            .is_err());
        assert!(e
            .caterva2_dataset("@personal/exp/a.b2nd", Some("http://127.0.0.1:9/c2"))
            .is_err());
    }

    /// Relative paths resolve under the root; absolute ones and climbs above it do not.
    #[test]
    fn sibling_keys_stay_under_the_root() {
        let key = |rel: &str| sibling_key("exp/e.b2nd", rel);
        assert_eq!(key("a.b2nd").as_deref(), Some("exp/a.b2nd"));
        assert_eq!(key("../ops/./a.b2nd").as_deref(), Some("ops/a.b2nd"));
        assert_eq!(sibling_key("e.b2nd", "a.b2nd").as_deref(), Some("a.b2nd"));
        assert_eq!(key("../../a.b2nd"), None, "above the root");
        assert_eq!(key("/data/a.b2nd"), None, "the writer's disk");
        assert_eq!(key("s3://other/a.b2nd"), None, "another place");
        assert_eq!(key(".."), None);
    }
}
