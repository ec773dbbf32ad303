//! A Caterva2 server as an `object_store` store, so that the connection,
//! sources, pools and listings written for object storage read it too:
//!
//! - a GET with a range is a ranged `GET /api/fetch/PATH` (the server
//!   answers 206 for datasets it keeps as files, and for the leaves of its
//!   `.b2z` stores); a HEAD is a GET of byte 0 (the API has no HEAD);
//! - a delimiter listing is `GET /api/list/PATH`, whose deep names (`dir/a.b2nd`,
//!   an HDF5 file's `group/leaf`) are cut at their first `/` into child
//!   prefixes and objects. Listings give names only: objects are listed
//!   with size 0 and no ETag, and the tree takes versions from `/api/info`.
//!
//! Writes are refused: the mount is read-only.

use std::ops::Range;
use std::sync::Arc;

use futures::stream::{BoxStream, StreamExt};
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetRange, GetResult, GetResultPayload, ListResult, MultipartUpload,
    ObjectMeta, ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};

use super::session::{Failure, Session};
use crate::source::remote::stats::Endpoint;

/// Store name in `object_store` errors.
const STORE: &str = "Caterva2";

/// A Caterva2 server seen as a store.
#[derive(Debug)]
pub(crate) struct C2Store {
    pub(crate) session: Arc<Session>,
}

impl std::fmt::Display for C2Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Caterva2")
    }
}

/// `failure` as the `object_store` error the connection maps to its own
/// (the status stays in the text, where it looks for it).
pub(crate) fn store_error(path: &Path, failure: Failure) -> object_store::Error {
    match failure {
        Failure::Status { code: 404, .. } => object_store::Error::NotFound {
            path: path.to_string(),
            source: Box::new(failure),
        },
        other => object_store::Error::Generic {
            store: STORE,
            source: Box::new(other),
        },
    }
}

fn refused(what: &str) -> object_store::Error {
    object_store::Error::NotSupported {
        source: format!("a Caterva2 mount is read-only: {what} is not done").into(),
    }
}

/// Start and end of a `Content-Range: bytes a-b/total` header, and the total.
fn content_range(text: &str) -> Option<(Range<u64>, u64)> {
    let (span, total) = text.strip_prefix("bytes ")?.split_once('/')?;
    let (a, b) = span.split_once('-')?;
    let (a, b, total) = (
        a.trim().parse::<u64>().ok()?,
        b.trim().parse::<u64>().ok()?,
        total.trim().parse::<u64>().ok()?,
    );
    (a <= b && b < total).then_some((a..b + 1, total))
}

/// The `/`-separated names under `prefix` (as `/api/list` gives them) as
/// a delimiter listing: first segments of deep names are prefixes.
pub(crate) fn listing_of(prefix: &Path, names: &[String]) -> ListResult {
    let mut dirs: Vec<String> = Vec::new();
    let mut objects = Vec::new();
    for name in names {
        let name = name.trim_start_matches('/');
        match name.split_once('/') {
            // A folder listed already (never the empty name).
            Some((dir, _)) if dirs.iter().any(|d| d == dir) => {}
            Some((dir, _)) if !dir.is_empty() => dirs.push(dir.to_string()),
            _ if !name.is_empty() => objects.push(ObjectMeta {
                location: prefix.clone().join(name),
                last_modified: chrono::DateTime::UNIX_EPOCH,
                size: 0,
                e_tag: None,
                version: None,
            }),
            _ => {}
        }
    }
    ListResult {
        common_prefixes: dirs
            .into_iter()
            .map(|d| prefix.clone().join(d.as_str()))
            .collect(),
        objects,
        extensions: Default::default(),
    }
}

impl C2Store {
    async fn fetch(&self, location: &Path, range: Range<u64>) -> Result<GetResult, Failure> {
        let url = self.session.url("fetch", location.as_ref())?;
        let asked = range.end.saturating_sub(range.start);
        let answer = self
            .session
            .get(Endpoint::Fetch, &url, Some(range.clone()))
            .await?;
        let header = |name: reqwest::header::HeaderName| {
            answer
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let e_tag = header(reqwest::header::ETAG);
        let last_modified = header(reqwest::header::LAST_MODIFIED)
            .and_then(|t| chrono::DateTime::parse_from_rfc2822(&t).ok())
            .map_or(chrono::DateTime::UNIX_EPOCH, |t| {
                t.with_timezone(&chrono::Utc)
            });
        let partial = answer.status().as_u16() == 206;
        let ranged = header(reqwest::header::CONTENT_RANGE).and_then(|t| content_range(&t));
        let (got, size, body) = match (partial, ranged) {
            (true, Some((got, size))) => (got, size, Session::body(answer, asked).await?),
            (true, None) => {
                return Err(Failure::Malformed(
                    "a 206 answer without a Content-Range".into(),
                ))
            }
            // The whole object: acceptable when it is what was asked for.
            (false, _) => {
                let body = Session::body(answer, range.end).await?;
                let size = body.len() as u64;
                let got = range.start.min(size)..range.end.min(size);
                (
                    got.clone(),
                    size,
                    body.slice(got.start as usize..got.end as usize),
                )
            }
        };
        let meta = ObjectMeta {
            location: location.clone(),
            last_modified,
            size,
            e_tag,
            version: None,
        };
        Ok(GetResult {
            payload: GetResultPayload::Stream(
                futures::stream::once(async move { Ok(body) }).boxed(),
            ),
            meta,
            range: got,
            attributes: Default::default(),
            extensions: Default::default(),
        })
    }
}

#[async_trait::async_trait]
impl ObjectStore for C2Store {
    async fn put_opts(
        &self,
        _: &Path,
        _: PutPayload,
        _: PutOptions,
    ) -> object_store::Result<PutResult> {
        Err(refused("put"))
    }

    async fn put_multipart_opts(
        &self,
        _: &Path,
        _: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        Err(refused("put"))
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let range = if options.head {
            0..1
        } else {
            match options.range {
                Some(GetRange::Bounded(r)) => r,
                _ => return Err(refused("an unbounded GET")),
            }
        };
        self.fetch(location, range)
            .await
            .map_err(|f| store_error(location, f))
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        locations.map(|_| Err(refused("delete"))).boxed()
    }

    fn list(&self, _: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        futures::stream::once(async { Err(refused("a recursive listing")) }).boxed()
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        let prefix = prefix.cloned().unwrap_or_default();
        let fail = |f| store_error(&prefix, f);
        let (json, _) = self
            .session
            .get_json(Endpoint::List, prefix.as_ref(), LIST_LIMIT, "a listing")
            .await
            .map_err(fail)?;
        let names: Vec<String> = serde_json::from_value(json).map_err(|e| {
            fail(Failure::Malformed(format!(
                "a listing that is not a list of names: {e}"
            )))
        })?;
        Ok(listing_of(&prefix, &names))
    }

    async fn copy_opts(&self, _: &Path, _: &Path, _: CopyOptions) -> object_store::Result<()> {
        Err(refused("copy"))
    }
}

/// Largest listing accepted (64 MiB of names: about a million datasets).
const LIST_LIMIT: u64 = 64 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_names_list_as_prefixes_once() {
        let names: Vec<String> = [
            "a.b2nd",
            "dir1/b.b2nd",
            "dir1/c/d.b2nd",
            "x.h5",
            "grid/temp",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let l = listing_of(&Path::from("@public"), &names);
        let dirs: Vec<&str> = l.common_prefixes.iter().map(|p| p.as_ref()).collect();
        assert_eq!(dirs, ["@public/dir1", "@public/grid"]);
        let objects: Vec<&str> = l.objects.iter().map(|o| o.location.as_ref()).collect();
        assert_eq!(objects, ["@public/a.b2nd", "@public/x.h5"]);
        assert_eq!(content_range("bytes 0-0/13569"), Some((0..1, 13569)));
        assert_eq!(content_range("bytes 5-4/10"), None);
        assert_eq!(content_range("bytes 0-10/10"), None);
    }
}
