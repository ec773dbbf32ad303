//! The HTTP layer under `object_store`'s S3, GCS and Azure clients: every
//! attempt the client makes passes here, so this is where retries are seen
//! (counted per kind in [`RemoteStats`] and logged with their reason) and
//! where a listing answer is cleaned of keys a mount cannot show before
//! the client parses it ([`super::listing_filter`]).

use std::sync::Arc;

use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse,
    HttpResponseBody, HttpService, ReqwestConnector,
};
use object_store::ClientOptions;

use super::listing_filter::{filter_listing, Dialect};
use super::stats::{RemoteStats, RequestKind};

/// The largest listing page cleaned (a page of 1000 keys of 1 KiB, with
/// room); a larger answer is passed on untouched.
const MAX_LISTING_BYTES: usize = 16 << 20;

/// Builds clients whose attempts go through [`Watched`].
#[derive(Debug)]
pub(crate) struct WatchingConnector {
    stats: Arc<RemoteStats>,
}

impl WatchingConnector {
    /// A connector counting into `stats`.
    pub(crate) fn new(stats: Arc<RemoteStats>) -> WatchingConnector {
        WatchingConnector { stats }
    }
}

impl HttpConnector for WatchingConnector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let inner = ReqwestConnector::default().connect(options)?;
        Ok(HttpClient::new(Watched {
            inner,
            stats: self.stats.clone(),
        }))
    }
}

/// One client's attempts, watched.
#[derive(Debug)]
struct Watched {
    inner: HttpClient,
    stats: Arc<RemoteStats>,
}

/// What a request is, from its method and query.
fn kind_of(req: &HttpRequest) -> (RequestKind, Option<Dialect>) {
    let query = req.uri().query().unwrap_or_default();
    let has = |pair: &str| query.split('&').any(|p| p == pair);
    if req.method().as_str() == "HEAD" {
        (RequestKind::Head, None)
    } else if has("list-type=2") {
        (RequestKind::List, Some(Dialect::S3))
    } else if has("comp=list") {
        (RequestKind::List, Some(Dialect::Azure))
    } else {
        (RequestKind::Get, None)
    }
}

#[async_trait::async_trait]
impl HttpService for Watched {
    async fn call(&self, req: HttpRequest) -> Result<HttpResponse, HttpError> {
        let (kind, dialect) = kind_of(&req);
        let path = req.uri().path().to_string();
        let answer = match self.inner.execute(req).await {
            Ok(answer) => answer,
            Err(e) => {
                let timeout = e.kind() == HttpErrorKind::Timeout;
                self.stats.attempt_failed(kind, timeout);
                log::info!(
                    "{} {path}: attempt failed ({}); retried while retries and time remain",
                    kind.name(),
                    if timeout {
                        "timed out".to_string()
                    } else {
                        e.to_string()
                    }
                );
                return Err(e);
            }
        };
        let status = answer.status();
        if status.is_server_error() || status.as_u16() == 429 {
            self.stats.attempt_failed(kind, false);
            log::info!(
                "{} {path}: attempt failed (HTTP {status}); retried while retries and time remain",
                kind.name()
            );
            return Ok(answer);
        }
        match dialect {
            Some(dialect) if status.is_success() => self.cleaned(answer, dialect, &path).await,
            _ => Ok(answer),
        }
    }
}

impl Watched {
    /// A listing answer without the keys a mount cannot show (each logged
    /// and counted).
    async fn cleaned(
        &self,
        answer: HttpResponse,
        dialect: Dialect,
        path: &str,
    ) -> Result<HttpResponse, HttpError> {
        let (parts, body) = answer.into_parts();
        let bytes = body.bytes().await.inspect_err(|e| {
            self.stats
                .attempt_failed(RequestKind::List, e.kind() == HttpErrorKind::Timeout);
            log::info!("LIST {path}: attempt failed reading the answer ({e})");
        })?;
        let text = match std::str::from_utf8(&bytes) {
            Ok(text) if bytes.len() <= MAX_LISTING_BYTES => text,
            _ => return Ok(HttpResponse::from_parts(parts, bytes.into())),
        };
        let Some((kept, skipped)) = filter_listing(text, dialect) else {
            return Ok(HttpResponse::from_parts(parts, bytes.into()));
        };
        for skip in &skipped {
            self.stats.skipped_key();
            log::warn!(
                "LIST {path}: key {:?} not shown: {}",
                skip.key.chars().take(120).collect::<String>(),
                skip.problem
            );
        }
        let mut parts = parts;
        parts.headers.remove("content-length");
        Ok(HttpResponse::from_parts(
            parts,
            HttpResponseBody::from(kept),
        ))
    }
}
