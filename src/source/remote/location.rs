//! A place in a remote store (an object, or a prefix acting as a
//! directory) reached through one connection: open it as a source, list
//! it, or open the chunk files of a sparse frame stored under it.

use std::sync::Arc;

use object_store::path::{Path, PathPart};

use super::caterva2::info::InfoKind;
use super::caterva2::sliced::{ServedSource, SlicedBlocks};
use super::caterva2::DatasetInfo;
use super::error::RemoteError;
use super::source::RemoteSource;
use super::stats::StatsSnapshot;
use super::store::{Connection, RemoteOptions};
use super::url::RemoteUrl;
use super::Scheme;
use crate::format::source::{sparse_chunk_name, ByteSource, SparseChunks};
use crate::format::{Array, Description, Error, PResult};

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
        let path = self.path.clone().join(PathPart::from(name));
        RemoteLocation {
            conn: self.conn.clone(),
            url: self.url.with_key(path.as_ref()),
            path,
        }
    }

    /// Open the object here (one GET: its first MiB, size and identity).
    pub fn open(&self) -> Result<RemoteSource, RemoteError> {
        RemoteSource::open(self.conn.clone(), self.path.clone(), self.redacted())
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
    pub fn read_head(&self, len: u64) -> Result<Vec<u8>, RemoteError> {
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

    /// For a Caterva2 server: the dataset here, as its `info` describes
    /// it: a stored frame read in byte ranges when the server says it
    /// serves them (or says nothing, outside HDF5 files, and a ranged read
    /// works: a store's leaf kept whole), else as regions the server builds.
    pub fn open_dataset(&self, info: &DatasetInfo) -> Result<Array, Error> {
        let shown = self.redacted();
        let name = std::path::PathBuf::from(&shown);
        let fail = |e: RemoteError| Error::new(&name, e.into());
        match &info.kind {
            InfoKind::Dataset {
                description,
                ranges,
            } => {
                let try_ranges = ranges.unwrap_or_else(|| !super::caterva2::in_hdf5(self.key()));
                if try_ranges {
                    match self.open() {
                        Ok(source) => return Array::from_source(&name, Arc::new(source)),
                        // 416: nothing kept to take ranges of.
                        Err(RemoteError::Changed { .. }) if ranges.is_none() => {}
                        Err(e) => return Err(fail(e)),
                    }
                }
                self.open_served(description, info)
            }
            InfoKind::Frame {
                ranges: Some(false),
            } => Err(fail(RemoteError::Unsupported {
                url: shown.clone(),
                detail: "a frame the server does not serve in byte ranges".into(),
            })),
            InfoKind::Frame { .. } => {
                Array::from_source(&name, Arc::new(self.open().map_err(fail)?))
            }
            InfoKind::Group => Err(fail(RemoteError::Unsupported {
                url: shown.clone(),
                detail: "a folder or group, not a dataset".into(),
            })),
            InfoKind::Other(what) => Err(fail(RemoteError::Unsupported {
                url: shown.clone(),
                detail: what.clone(),
            })),
        }
    }

    /// For a Caterva2 server: the dataset here, which it serves as regions
    /// only (an HDF5 leaf), as `description` and the ETag of `info` give it.
    fn open_served(&self, description: &Description, info: &DatasetInfo) -> Result<Array, Error> {
        let etag = info.etag.as_deref();
        let shown = self.redacted();
        let name = std::path::PathBuf::from(&shown);
        let (geometry, _) = description.nd().map_err(|p| Error::new(&name, p))?;
        let blocks = SlicedBlocks::new(
            self.conn.clone(),
            self.path.clone(),
            shown.clone(),
            geometry,
            description.dtype.clone(),
            etag.map(|e| (e.to_string(), info.asked)),
        );
        Array::described(
            &name,
            description,
            Arc::new(ServedSource::new(shown, etag)),
            Arc::new(blocks),
        )
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
        Ok(Arc::new(self.dir.child(&sparse_chunk_name(n)).open()?))
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
