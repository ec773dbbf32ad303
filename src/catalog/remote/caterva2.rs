//! A Caterva2 root, folder or dataset as a mount presents it: which listed
//! names are folders (HDF5 files and `.b2z` stores, whose leaves the server
//! lists) and which are datasets, what a dataset's version is, and how it
//! is opened. The catalog's, since only the remote root asks it; the client
//! and the datasets' reading stay in the source layer
//! ([`crate::source::remote::caterva2`], [`crate::source::remote::served`]).
//!
//! The server's listings give names only, so versions come from two places,
//! each kept for the attribute TTL: a stored frame (known by its name) is
//! opened at lookup, and the open that follows takes that source, so a
//! lookup and an open cost the frame's first GETs and no `/api/info`; any
//! other dataset is described by `/api/info`, whose ETag is its version.
//!
//! A `c2array` operand of a saved expression is resolved here as well, and
//! only to a dataset of the mounted folder on the mounted server: no other
//! server is ever asked.

use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::format::byte_source::ByteSource;
use crate::format::{Array, Error, Version, VersionTag};
use crate::source::remote::caterva2::info::{DatasetInfo, InfoKind};
use crate::source::remote::caterva2::names::{in_container, is_container, is_stored_frame};
use crate::source::remote::caterva2::session::LOGIN_HINT;
use crate::source::remote::served::open_dataset;
use crate::source::remote::{RemoteError, RemoteLocation};

/// Infos kept (see [`MountedFolder::infos`]): each holds a dataset's
/// vlmeta, and is of use for one attribute TTL.
const INFOS_KEPT: usize = 1024;

/// Stored frames kept opened (see [`MountedFolder::probes`]); their spans
/// live in the connection's pool, under its budget.
const PROBES_KEPT: usize = 256;

/// What a Caterva2 URL names, once the server was asked.
#[derive(Debug)]
pub enum Mounted {
    /// A root or a folder (an HDF5 file and a store are folders too): the
    /// location, taken as a prefix.
    Folder(RemoteLocation),
    /// One dataset.
    Dataset(RemoteLocation),
}

/// How a name the server lists is shown, where Caterva2 decides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// A folder of datasets (an HDF5 file, a `.b2z` store).
    Folder,
    /// A dataset (any leaf inside a container, whatever its name).
    Dataset,
}

/// A stored frame opened, and when it was opened or last confirmed.
type Probe = (Instant, Arc<dyn ByteSource>);

/// The datasets under one mounted Caterva2 location, with what was learnt
/// of them for the TTL.
#[derive(Debug)]
pub struct MountedFolder {
    /// The mounted location (a prefix, or one dataset).
    loc: RemoteLocation,
    ttl: Duration,
    /// What `/api/info` said of a key, and when: the most recent
    /// [`INFOS_KEPT`].
    infos: Mutex<lru::LruCache<String, (Instant, Arc<DatasetInfo>)>>,
    /// Stored frames opened to learn their version, and when that was last
    /// confirmed: the most recent [`PROBES_KEPT`].
    probes: Mutex<lru::LruCache<String, Probe>>,
}

fn lru<V>(n: usize) -> Mutex<lru::LruCache<String, V>> {
    Mutex::new(lru::LruCache::new(
        NonZeroUsize::new(n).unwrap_or(NonZeroUsize::MIN),
    ))
}

/// Ask the server what `loc` names: `/api/roots` first, so a root this
/// login cannot reach fails here, saying how to log in; then a root or a
/// folder is listed, a dataset described.
pub fn connect(loc: RemoteLocation) -> Result<Mounted, RemoteError> {
    let key = loc.key();
    let root_name = key.split('/').next().unwrap_or_default().to_string();
    let roots = loc.roots()?;
    if !roots.contains(&root_name) {
        let hint = if loc.has_login() {
            "the login given does not reach it"
        } else {
            LOGIN_HINT
        };
        return Err(RemoteError::Denied {
            url: loc.redacted(),
            detail: format!(
                "the server offers the roots {} only; {hint}",
                roots.join(", ")
            ),
        });
    }
    if key.trim_end_matches('/').contains('/') {
        match loc.info()?.kind {
            InfoKind::Group => {}
            InfoKind::Dataset { .. } | InfoKind::Frame { .. } => return Ok(Mounted::Dataset(loc)),
            InfoKind::Other(what) => {
                return Err(RemoteError::Unsupported {
                    url: loc.redacted(),
                    detail: what,
                })
            }
        }
    }
    let loc = loc.into_prefix();
    loc.list()?;
    Ok(Mounted::Folder(loc))
}

impl MountedFolder {
    /// The datasets under `loc` (as [`connect`] gave it), their infos and
    /// stored frames kept for `ttl`.
    pub fn new(loc: RemoteLocation, ttl: Duration) -> MountedFolder {
        MountedFolder {
            loc,
            ttl,
            infos: lru(INFOS_KEPT),
            probes: lru(PROBES_KEPT),
        }
    }

    /// The dataset path of `key` (a key under the mounted location), from
    /// its `@root`.
    fn path(&self, key: &str) -> String {
        let base = self.loc.key().trim_end_matches('/');
        match (base.is_empty(), key.is_empty()) {
            (_, true) => base.to_string(),
            (true, false) => key.to_string(),
            (false, false) => format!("{base}/{key}"),
        }
    }

    /// Whether `key` is a stored frame by its name (a frame extension,
    /// outside HDF5 files and stores), read without `/api/info`.
    pub fn is_stored_frame(&self, key: &str) -> bool {
        is_stored_frame(&self.path(key))
    }

    /// How the listed object `key` (named `name`) is shown, where the
    /// server's layout decides it: HDF5 files and `.b2z` stores are folders
    /// of their datasets, and every name inside one is a dataset. `None`:
    /// decide as for any store (a frame by its extension, or by sniffing).
    pub fn shown_as(&self, key: &str, name: &str) -> Option<Shown> {
        if is_container(name) {
            Some(Shown::Folder)
        } else if in_container(&self.path(key)) {
            Some(Shown::Dataset)
        } else {
            None
        }
    }

    /// The version of dataset `key`: a stored frame's own identity, else
    /// the ETag `/api/info` gives (at most a TTL old).
    pub fn version(&self, key: &str) -> Result<Version, RemoteError> {
        if self.is_stored_frame(key) {
            return Ok(self.probe(key)?.opened_version());
        }
        let tag = self
            .info(key)?
            .etag
            .as_ref()
            .map_or_else(|| "no etag".to_string(), |e| format!("etag {e}"));
        Ok(Version {
            len: 0,
            tag: VersionTag::Token(tag),
        })
    }

    /// Open dataset `key` (named `name` in messages): a stored frame from
    /// the source its lookup opened, else as its info describes it.
    pub fn open(&self, key: &str, name: &Path) -> Result<Array, Error> {
        let fail = |e: RemoteError| Error::new(name, e.into());
        if self.is_stored_frame(key) {
            return Array::from_source(name, self.probe(key).map_err(fail)?);
        }
        let info = self.info(key).map_err(fail)?;
        open_dataset(&self.loc.descendant(key), &info)
    }

    /// The key under the mounted location of the dataset a `c2array`
    /// operand names (`path` from its `@root`, on the server at `urlbase`),
    /// when that is the mounted server and the path lies in the mounted
    /// folder; otherwise the reason it is not read.
    pub fn operand_key(&self, path: &str, urlbase: Option<&str>) -> Result<String, String> {
        let mounted = self
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
        let folder = self.loc.key().trim_end_matches('/');
        let key = path
            .trim_start_matches('/')
            .strip_prefix(folder)
            .and_then(|rest| rest.strip_prefix('/'))
            .filter(|k| !k.is_empty() && !k.split('/').any(|s| s == ".." || s == "."));
        key.map(str::to_string)
            .ok_or_else(|| format!("{path} is outside the mounted folder {folder}"))
    }

    /// The stored frame `key`, opened (its first MiB and identity) at most
    /// a TTL ago, or confirmed unchanged since by a GET of its first byte;
    /// opened again when it changed.
    fn probe(&self, key: &str) -> Result<Arc<dyn ByteSource>, RemoteError> {
        let loc = self.loc.descendant(key);
        let kept = self.probes.lock().get(key).cloned();
        if let Some((at, source)) = kept {
            if at.elapsed() < self.ttl {
                return Ok(source);
            }
            if loc.head()?.version() == source.opened_version() {
                self.probes
                    .lock()
                    .put(key.to_string(), (Instant::now(), source.clone()));
                return Ok(source);
            }
        }
        let source = loc.open()?;
        self.probes
            .lock()
            .put(key.to_string(), (Instant::now(), source.clone()));
        Ok(source)
    }

    /// What `/api/info` says of `key`, at most a TTL old.
    fn info(&self, key: &str) -> Result<Arc<DatasetInfo>, RemoteError> {
        if let Some((at, info)) = self.infos.lock().get(key) {
            if at.elapsed() < self.ttl {
                return Ok(info.clone());
            }
        }
        let info = Arc::new(self.loc.descendant(key).info()?);
        self.infos
            .lock()
            .put(key.to_string(), (Instant::now(), info.clone()));
        Ok(info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::remote::RemoteOptions;

    /// A `c2array` operand is read only from the mounted server, inside the mounted folder.
    #[test]
    fn operands_stay_on_the_mounted_server_and_folder() {
        let loc = RemoteLocation::connect(
            "c2+http://127.0.0.1:9/c2/@public/exp/",
            &RemoteOptions::default(),
        )
        .unwrap();
        let folder = MountedFolder::new(loc, Duration::from_secs(1));
        let base = Some("http://127.0.0.1:9/c2");
        assert_eq!(
            folder.operand_key("@public/exp/ops/a.b2nd", Some("http://127.0.0.1:9/c2/")),
            Ok("ops/a.b2nd".to_string())
        );
        let other_server = folder
            .operand_key("@public/exp/a.b2nd", Some("http://evil.example/"))
            .unwrap_err();
        assert!(
            other_server.contains("not on the mounted server"),
            "{other_server}"
        );
        assert!(
            folder.operand_key("@public/exp/a.b2nd", None).is_err(),
            "no urlbase: not assumed to be this server"
        );
        assert!(folder
            .operand_key("@public/other/a.b2nd", base)
            .unwrap_err()
            .contains("outside the mounted folder"));
        assert!(folder
            .operand_key("@public/exp/../secret.b2nd", base)
            .is_err());
        assert!(folder.operand_key("@personal/exp/a.b2nd", base).is_err());
    }

    /// Names inside HDF5 files and stores are datasets; the containers are folders.
    #[test]
    fn containers_are_folders_of_datasets() {
        let loc =
            RemoteLocation::connect("c2+http://127.0.0.1:9/@public/", &RemoteOptions::default())
                .unwrap();
        let folder = MountedFolder::new(loc, Duration::from_secs(1));
        assert_eq!(folder.shown_as("x.h5", "x.h5"), Some(Shown::Folder));
        assert_eq!(folder.shown_as("d/s.b2z", "s.b2z"), Some(Shown::Folder));
        assert_eq!(folder.shown_as("x.h5/grid/t", "t"), Some(Shown::Dataset));
        assert_eq!(folder.shown_as("d/a.b2nd", "a.b2nd"), None);
        assert!(folder.is_stored_frame("d/a.b2nd") && !folder.is_stored_frame("s.b2z/a.b2nd"));
    }
}
