//! A place in a remote store (an object, or a prefix acting as a
//! directory) reached through one connection: open it as a source, list
//! it, or open the chunk files of a sparse frame stored under it.

use std::sync::Arc;

use object_store::path::{Path, PathPart};

use super::caterva2::info::DatasetInfo;
use super::error::RemoteError;
use super::object_source::RemoteSource;
use super::stats::StatsSnapshot;
use super::store::{Connection, RemoteOptions};
use super::url::RemoteUrl;
use crate::disk_cache::DiskCache;
use crate::format::byte_source::{
    sparse_chunk_name, ByteSource, SparseChunks, Version, VersionTag,
};
use crate::format::PResult;
use crate::source::urls::Scheme;

/// An object or prefix of a store, with the client to reach it.
#[derive(Debug, Clone)]
pub struct RemoteLocation {
    conn: Arc<Connection>,
    url: RemoteUrl,
    path: Path,
}

/// One child of a listed prefix that is an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedObject {
    /// Its name inside the prefix (one path segment).
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its ETag, when the store gives one.
    pub etag: Option<String>,
    /// When it was last written.
    pub modified: std::time::SystemTime,
}

impl ListedObject {
    fn of(meta: &object_store::ObjectMeta) -> ListedObject {
        ListedObject {
            name: meta.location.filename().unwrap_or_default().to_string(),
            size: meta.size,
            etag: meta.e_tag.clone(),
            modified: meta.last_modified.into(),
        }
    }

    /// Its version as the listing or HEAD gave it: its ETag (else its
    /// modification time) with its size.
    pub fn version(&self) -> Version {
        let tag = match &self.etag {
            Some(e) => format!("etag {e}"),
            None => format!("modified {:?}", self.modified),
        };
        Version {
            len: self.size,
            tag: VersionTag::Token(tag),
        }
    }
}

/// The children of a prefix, as a delimiter listing gives them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// Child prefixes ("directories"), by name.
    pub dirs: Vec<String>,
    /// Child objects.
    pub objects: Vec<ListedObject>,
}

impl RemoteLocation {
    /// A client for the store of `url`, at the object or prefix it names.
    pub fn connect(url: &str, opts: &RemoteOptions) -> Result<RemoteLocation, RemoteError> {
        let url = RemoteUrl::parse(url)?;
        if url.has_query() && !url.is_signed() {
            let detail = if url.scheme() == Scheme::Http {
                "a query string (a presigned or SAS URL) signs one object, not a prefix"
            } else {
                "a query string is only taken on an https URL (a presigned or SAS URL); s3://, gs:// and az:// URLs take credentials from the environment"
            };
            return Err(RemoteError::Unsupported {
                url: url.redacted(),
                detail: detail.into(),
            });
        }
        let conn = Connection::connect(&url, opts)?;
        let path = Connection::path(&url)?;
        Ok(RemoteLocation { conn, url, path })
    }

    /// The URL without secrets.
    pub fn redacted(&self) -> String {
        self.url.redacted()
    }

    /// The last name of the key (of the object or prefix here, a trailing
    /// `/` aside), decoded; `""` at a bucket's top.
    pub fn name(&self) -> String {
        let last = self
            .url
            .key()
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or_default();
        Path::from_url_path(last)
            .map(|p| p.to_string())
            .unwrap_or_else(|_| last.to_string())
    }

    /// For a Caterva2 server: `http(s)://host[:port][/prefix]`.
    pub fn api_base(&self) -> Option<String> {
        self.url.api_base()
    }

    /// The key (for Caterva2: the path from its `@root`), percent-encoded.
    pub fn key(&self) -> &str {
        self.url.key()
    }

    /// Whether the URL ends in `/` (names a prefix).
    pub fn is_prefix(&self) -> bool {
        self.url.is_prefix()
    }

    /// The kind of store.
    pub fn scheme(&self) -> Scheme {
        self.url.scheme()
    }

    /// This location taken as a prefix (its URL ending in `/`), through the
    /// same connection.
    pub fn into_prefix(self) -> RemoteLocation {
        if self.is_prefix() {
            return self;
        }
        let url = self.url.with_key(&format!("{}/", self.url.key()));
        RemoteLocation { url, ..self }
    }

    /// The location of child `name` (one path segment) under this one.
    pub fn child(&self, name: &str) -> RemoteLocation {
        // A listed name is the key's segment as stored: used as it is (a
        // `%` in it stays one `%`); only a name that is no valid segment
        // (never listed: the listings leave such keys out) is escaped.
        let part = PathPart::parse(name).unwrap_or_else(|_| PathPart::from(name));
        let path = self.path.clone().join(part);
        RemoteLocation {
            conn: self.conn.clone(),
            url: self.url.with_key(path.as_ref()),
            path,
        }
    }

    /// The location of `key` (`/`-separated names, empty ones skipped)
    /// under this one.
    pub fn descendant(&self, key: &str) -> RemoteLocation {
        key.split('/')
            .filter(|s| !s.is_empty())
            .fold(self.clone(), |loc, name| loc.child(name))
    }

    /// Whether this store's listings give each object's size (a Caterva2
    /// server lists names only).
    pub fn lists_sizes(&self) -> bool {
        self.scheme() != Scheme::Caterva2
    }

    /// Open the object here: one GET (its first MiB, size and identity);
    /// with a disk cache ([`Self::keep_on_disk`]), read through it, and no
    /// GET when the cache holds those bytes of the object's current state
    /// (known from a listing or a HEAD within the attribute TTL).
    pub fn open(&self) -> Result<Arc<dyn ByteSource>, RemoteError> {
        match self.conn.disk_cache() {
            None => Ok(Arc::new(self.open_uncached()?)),
            Some(cache) => RemoteSource::open_cached(
                self.conn.clone(),
                self.path.clone(),
                self.redacted(),
                cache,
                || self.validate(),
            ),
        }
    }

    /// Open the object here, not through the disk cache (one GET).
    pub fn open_uncached(&self) -> Result<RemoteSource, RemoteError> {
        RemoteSource::open(self.conn.clone(), self.path.clone(), self.redacted())
    }

    /// Keep the bytes objects reached through this location's connection
    /// send in `cache` (every location derived from it shares it).
    pub fn keep_on_disk(&self, cache: Arc<DiskCache>) {
        self.conn.keep_on_disk(cache);
    }

    /// The object's identity now, for an open through the disk cache: one
    /// HEAD (for a signed URL, which signs GETs only, a GET of one byte).
    fn validate(&self) -> Result<object_store::ObjectMeta, RemoteError> {
        if self.url.is_signed() {
            return Ok(self.conn.get(&self.path, &self.redacted(), 0..1, None)?.0);
        }
        self.conn.head(&self.path, &self.redacted())
    }

    /// The child prefixes and objects under this prefix (one delimiter
    /// listing; the store may page it). Not possible for http(s) URLs.
    pub fn list(&self) -> Result<Listing, RemoteError> {
        if self.scheme() == Scheme::Http {
            return Err(RemoteError::Unsupported { url: self.redacted(), detail: "a web server cannot be listed: give the URL of one array (or mount a Caterva2 server as c2+https://HOST/@ROOT)".into() });
        }
        let prefix = if self.path.as_ref().is_empty() {
            None
        } else {
            Some(&self.path)
        };
        let result = self.conn.list(prefix, &self.redacted())?;
        let name = |p: &Path| p.filename().unwrap_or_default().to_string();
        Ok(Listing {
            dirs: result.common_prefixes.iter().map(name).collect(),
            objects: result.objects.iter().map(ListedObject::of).collect(),
        })
    }

    /// The object here as it is now (one HEAD request; for a signed URL,
    /// which signs GETs only, a GET of its first byte).
    pub fn head(&self) -> Result<ListedObject, RemoteError> {
        if self.url.is_signed() {
            return Ok(ListedObject::of(
                &self.conn.get(&self.path, &self.redacted(), 0..1, None)?.0,
            ));
        }
        Ok(ListedObject::of(
            &self.conn.head(&self.path, &self.redacted())?,
        ))
    }

    /// The first `len` bytes of the object here (fewer if it is shorter),
    /// in one GET: enough to tell whether it starts like a Blosc2 frame.
    /// With a disk cache that holds them for the object's identity (known
    /// from a listing or HEAD within the attribute TTL), no GET.
    pub fn read_head(&self, len: u64) -> Result<Vec<u8>, RemoteError> {
        if let Some(cache) = self.conn.disk_cache() {
            let shown = self.redacted();
            if let Some(head) =
                RemoteSource::cached_head(&self.conn, &self.path, &shown, cache, len)
            {
                return Ok(head);
            }
        }
        Ok(self
            .conn
            .get(&self.path, &self.redacted(), 0..len, None)?
            .1
            .to_vec())
    }

    /// What this location's connection has cost so far (shared by every
    /// location derived from it with [`Self::child`]).
    pub fn stats(&self) -> StatsSnapshot {
        self.conn.stats.snapshot()
    }

    /// For a Caterva2 server: what `/api/info` says of the path here.
    pub fn info(&self) -> Result<DatasetInfo, RemoteError> {
        self.conn.c2_info(&self.path, &self.redacted())
    }

    /// For a Caterva2 server: whether a login is configured for it.
    pub fn has_login(&self) -> bool {
        self.conn.c2.as_ref().is_some_and(|s| s.has_login())
    }

    /// For a Caterva2 server: the roots this login reaches (`/api/roots`).
    pub fn roots(&self) -> Result<Vec<String>, RemoteError> {
        self.conn.c2_roots(&self.redacted())
    }

    /// The connection this location reaches its store through.
    pub(crate) fn connection(&self) -> &Arc<Connection> {
        &self.conn
    }

    /// The object's path inside its store.
    pub(crate) fn object_path(&self) -> &Path {
        &self.path
    }

    /// The chunk files of a sparse frame stored under this prefix.
    pub fn sparse_chunks(&self) -> RemoteChunks {
        RemoteChunks { dir: self.clone() }
    }
}

/// The chunk files of a sparse frame under a remote prefix.
#[derive(Debug, Clone)]
pub struct RemoteChunks {
    dir: RemoteLocation,
}

impl SparseChunks for RemoteChunks {
    fn open_chunk(&self, n: u64) -> PResult<Arc<dyn ByteSource>> {
        Ok(self.dir.child(&sparse_chunk_name(n)).open()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A location's name is its key's last segment, decoded, whether the
    /// URL ends in `/` or carries a signed query.
    #[test]
    fn names_are_the_last_segment_of_the_key() {
        let opts = RemoteOptions {
            anonymous: true,
            ..RemoteOptions::default()
        };
        for (url, name) in [
            ("s3://b/x/dict.b2d/", "dict.b2d"),
            ("s3://b/x/dict.b2d", "dict.b2d"),
            ("s3://b/a%20b.b2nd", "a b.b2nd"),
            ("s3://b/", ""),
            ("https://h/d/k.b2z?sig=1", "k.b2z"),
        ] {
            assert_eq!(
                RemoteLocation::connect(url, &opts).unwrap().name(),
                name,
                "{url}"
            );
        }
    }
}
