//! One connection to a store: the `object_store` client built from a URL,
//! the process environment (AWS_*, GOOGLE_*, AZURE_* variables, an AWS
//! profile) and [`RemoteOptions`], with every request counted, bounded by
//! the timeout and its errors turned into [`RemoteError`]s without secrets.

use std::num::NonZeroUsize;
use std::ops::Range;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::http::HttpBuilder;
use object_store::path::Path;
use object_store::{
    BackoffConfig, ClientConfigKey, ClientOptions, GetOptions, ObjectMeta, ObjectStore,
    ObjectStoreExt, RetryConfig,
};

use super::caterva2::{
    self, info::DatasetInfo, session::Failure, session::Session, store::C2Store,
};
use super::connector::WatchingConnector;
use super::error::RemoteError;
use super::pool::Pool;
use super::profile;
use super::runtime::{self, Wait};
use super::stats::{Endpoint, RemoteStats, RequestKind};
use super::url::RemoteUrl;
use crate::disk_cache::DiskCache;
use crate::source::urls::{redact_text, Scheme};

/// How to reach remote stores; credentials and endpoints otherwise come
/// from the standard places (environment variables, the AWS profile files,
/// instance metadata).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteOptions {
    /// The longest one request may take, retries included; a stalled
    /// server gives [`RemoteError::Timeout`] after this long.
    pub timeout: Duration,
    /// How many times a failed request (5xx, throttling, a reset
    /// connection, a timeout) is retried, with exponential backoff.
    pub retries: usize,
    /// Send unsigned requests (public buckets): no credentials are looked up.
    pub anonymous: bool,
    /// Allow plain-http endpoints for S3/GCS/Azure (also `AWS_ALLOW_HTTP=true`).
    pub allow_http: bool,
    /// Extra client settings as `object_store` configuration keys
    /// (`aws_endpoint`, `aws_access_key_id`, `allow_http`...), applied
    /// after the environment.
    pub config: Vec<(String, String)>,
    /// Bytes one connection may hold for reads to come (spans, bytes
    /// fetched ahead on hints) plus bytes in flight; a mount takes it out
    /// of its cache size with [`RemoteOptions::share_of_cache`].
    pub budget: u64,
    /// How long what a server said of a dataset is taken as current (a
    /// mount's `--attr-timeout`): a Caterva2 dataset served as regions asks
    /// its ETag again at most this often while it is read.
    pub attr_ttl: Duration,
}

/// The smallest remote budget: room for the open's span and a few chunks.
pub const MIN_BUDGET: u64 = 8 << 20;

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            timeout: Duration::from_secs(30),
            retries: 4,
            anonymous: false,
            allow_http: false,
            config: Vec::new(),
            budget: 64 << 20,
            attr_ttl: Duration::from_secs(1),
        }
    }
}

impl RemoteOptions {
    /// The part of a `cache_size`-byte cache that remote reading takes for
    /// bytes held and in flight: a quarter, at least [`MIN_BUDGET`]. The
    /// block cache gets the rest.
    pub fn share_of_cache(cache_size: u64) -> u64 {
        (cache_size / 4).max(MIN_BUDGET)
    }
}

/// A client for one bucket (or web server), shared by the sources opened
/// through it.
#[derive(Debug)]
pub(crate) struct Connection {
    store: Arc<dyn ObjectStore>,
    pub(crate) timeout: Duration,
    pub(crate) stats: Arc<RemoteStats>,
    /// Bytes held and in flight for every source of this connection.
    pub(crate) pool: Arc<Pool>,
    /// The most one request asks for ahead of reads (a hint's GET); on a
    /// Caterva2 server also the most decoded bytes a served region holds.
    pub(crate) part: u64,
    /// See [`RemoteOptions::attr_ttl`].
    pub(crate) attr_ttl: Duration,
    /// For a Caterva2 server: its session (login, JSON endpoints).
    pub(crate) c2: Option<Arc<Session>>,
    /// The mount's disk cache, when it keeps the bytes objects sent (set
    /// once, before the first open).
    disk: OnceLock<Arc<DiskCache>>,
    /// With a disk cache: the identities listings and HEADs gave, by path,
    /// and when, so an open within the attribute TTL needs no request to
    /// know which cache entry holds the object.
    seen: Mutex<lru::LruCache<Path, (Instant, ObjectMeta)>>,
}

/// Identities remembered per connection for opens ([`Connection::known`]).
const SEEN_KEPT: usize = 16_384;

/// Hinted GETs in flight at most per connection.
const HINT_GETS: usize = 8;

fn env_with_prefix(prefix: &str) -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| k.starts_with(prefix))
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .collect()
}

/// What `object_store`'s three cloud builders (S3, GCS, Azure) have in
/// common, which no trait of theirs states: [`cloud_store`] sets them up
/// one way.
trait CloudBuilder: Sized {
    /// Its configuration keys (`aws_endpoint`, `google_service_account`...).
    type Key: std::str::FromStr<Err = object_store::Error>;
    /// The prefix of its keys, lower case: a setting with it that is no key
    /// of this `object_store` is passed over (the environment's `AWS_*`
    /// serve other tools too); any other unknown setting is an error.
    const PREFIX: &'static str;
    /// A builder with these client options and retries, its attempts
    /// going through `connector`.
    fn start(client: ClientOptions, retry: RetryConfig, connector: WatchingConnector) -> Self;
    /// The builder with `key` set to `value`.
    fn config(self, key: Self::Key, value: String) -> Self;
    /// The builder sending unsigned requests.
    fn unsigned(self) -> Self;
    /// The store at `url`.
    fn build_at(self, url: String) -> object_store::Result<Arc<dyn ObjectStore>>;
}

/// [`CloudBuilder`] for one builder: its keys and their prefix (the
/// builders' methods have the same names and shapes).
macro_rules! cloud_builder {
    ($builder:ty, $key:ty, $prefix:literal) => {
        impl CloudBuilder for $builder {
            type Key = $key;
            const PREFIX: &'static str = $prefix;
            fn start(
                client: ClientOptions,
                retry: RetryConfig,
                connector: WatchingConnector,
            ) -> Self {
                <$builder>::new()
                    .with_client_options(client)
                    .with_retry(retry)
                    .with_http_connector(connector)
            }
            fn config(self, key: $key, value: String) -> Self {
                self.with_config(key, value)
            }
            fn unsigned(self) -> Self {
                self.with_skip_signature(true)
            }
            fn build_at(self, url: String) -> object_store::Result<Arc<dyn ObjectStore>> {
                Ok(Arc::new(self.with_url(url).build()?))
            }
        }
    };
}

cloud_builder!(AmazonS3Builder, AmazonS3ConfigKey, "aws_");
cloud_builder!(GoogleCloudStorageBuilder, GoogleConfigKey, "google_");
cloud_builder!(MicrosoftAzureBuilder, AzureConfigKey, "azure_");

/// The cloud store at `root` from builder `b` with its settings applied in
/// order, each overriding the one before: `first`, the environment's
/// variables of its prefix (`AWS_*`), then `opts.config`; unsigned when
/// `opts.anonymous`. The error is `object_store`'s text.
fn cloud_store<B: CloudBuilder>(
    mut b: B,
    first: Vec<(String, String)>,
    opts: &RemoteOptions,
    root: String,
) -> Result<Arc<dyn ObjectStore>, String> {
    let env = env_with_prefix(&B::PREFIX.to_ascii_uppercase());
    for (k, v) in first.into_iter().chain(env).chain(opts.config.clone()) {
        match k.parse::<B::Key>() {
            Ok(key) => b = b.config(key, v),
            Err(_) if k.starts_with(B::PREFIX) => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    if opts.anonymous {
        b = b.unsigned();
    }
    b.build_at(root).map_err(|e| e.to_string())
}

impl Connection {
    /// A client for the bucket or server of `url`.
    pub(crate) fn connect(
        url: &RemoteUrl,
        opts: &RemoteOptions,
    ) -> Result<Arc<Connection>, RemoteError> {
        let setup = |detail: String| RemoteError::Setup {
            url: url.redacted(),
            detail: redact_text(&detail),
        };
        // Each attempt gets half the time, so a stalled attempt can be
        // retried once; the whole call is cut at `timeout` in any case.
        let attempt = opts.timeout / 2;
        let client = ClientOptions::new()
            .with_timeout(attempt)
            .with_connect_timeout(attempt.min(Duration::from_secs(10)))
            .with_allow_http(opts.allow_http || url.scheme() == Scheme::Http);
        let retry = RetryConfig {
            backoff: BackoffConfig {
                init_backoff: Duration::from_millis(50),
                max_backoff: Duration::from_secs(2),
                base: 2.0,
            },
            max_retries: opts.retries,
            retry_timeout: opts.timeout,
        };
        let root = url.base();
        let stats = Arc::new(RemoteStats::default());
        let mut c2 = None;
        let watching = WatchingConnector::new(stats.clone());
        let store: Arc<dyn ObjectStore> = match url.scheme() {
            Scheme::Caterva2 => {
                let api = url
                    .api_base()
                    .ok_or_else(|| setup("no server in the URL".into()))?;
                let login = caterva2::config::credentials(&api);
                let session = Arc::new(
                    Session::new(api, login, opts.timeout, opts.retries, stats.clone())
                        .map_err(setup)?,
                );
                c2 = Some(session.clone());
                Arc::new(C2Store { session })
            }
            Scheme::S3 => {
                // The AWS profile files first: the environment overrides them.
                let profile = if opts.anonymous {
                    Vec::new()
                } else {
                    profile::settings()
                };
                let b = AmazonS3Builder::start(client, retry, watching);
                cloud_store(b, profile, opts, root).map_err(setup)?
            }
            Scheme::Gcs => {
                let b = GoogleCloudStorageBuilder::start(client, retry, watching);
                cloud_store(b, Vec::new(), opts, root).map_err(setup)?
            }
            Scheme::Azure => {
                let b = MicrosoftAzureBuilder::start(client, retry, watching);
                cloud_store(b, Vec::new(), opts, root).map_err(setup)?
            }
            Scheme::Http => {
                let mut b = HttpBuilder::new()
                    .with_client_options(client)
                    .with_retry(retry)
                    .with_http_connector(watching);
                for (k, v) in &opts.config {
                    let key = k
                        .parse::<ClientConfigKey>()
                        .map_err(|e| setup(e.to_string()))?;
                    b = b.with_config(key, v);
                }
                Arc::new(b.with_url(root).build().map_err(|e| setup(e.to_string()))?)
            }
        };
        let budget = opts.budget.max(MIN_BUDGET);
        stats.set_budget(budget);
        // A Caterva2 server spends milliseconds of Python on each request
        // whatever its size, so its read-ahead GETs (and served regions) are
        // larger.
        let part = if url.scheme() == Scheme::Caterva2 {
            (budget / 4).clamp(1 << 20, 16 << 20)
        } else {
            (budget / 8).clamp(256 << 10, 4 << 20)
        };
        let pool = Arc::new(Pool::new(budget, part, HINT_GETS));
        Ok(Arc::new(Connection {
            store,
            timeout: opts.timeout,
            stats,
            pool,
            part,
            attr_ttl: opts.attr_ttl,
            c2,
            disk: OnceLock::new(),
            seen: Mutex::new(lru::LruCache::new(
                NonZeroUsize::new(SEEN_KEPT).unwrap_or(NonZeroUsize::MIN),
            )),
        }))
    }

    /// Keep the bytes objects send in `cache` (the remote tier); the first
    /// cache given stays.
    pub(crate) fn keep_on_disk(&self, cache: Arc<DiskCache>) {
        let _ = self.disk.set(cache);
    }

    /// The disk cache objects' bytes are kept in, if any.
    pub(crate) fn disk_cache(&self) -> Option<&Arc<DiskCache>> {
        self.disk.get()
    }

    /// The identity a listing or HEAD gave of the object at `path` less
    /// than the attribute TTL ago (only kept with a disk cache).
    pub(crate) fn known(&self, path: &Path) -> Option<ObjectMeta> {
        let mut seen = self.seen.lock();
        match seen.get(path) {
            Some((at, meta)) if at.elapsed() < self.attr_ttl => Some(meta.clone()),
            _ => None,
        }
    }

    /// Remember `meta` as the object's identity now (with a disk cache, and
    /// when it names a state: an ETag or version id; a Caterva2 listing
    /// gives neither, nor a size).
    fn saw(&self, path: &Path, meta: &ObjectMeta) {
        if self.disk.get().is_none() || (meta.e_tag.is_none() && meta.version.is_none()) {
            return;
        }
        self.seen
            .lock()
            .put(path.clone(), (Instant::now(), meta.clone()));
    }

    /// The store path of `url`'s key (empty for a signed URL, whose
    /// client is built for that one object).
    pub(crate) fn path(url: &RemoteUrl) -> Result<Path, RemoteError> {
        if url.is_signed() {
            return Ok(Path::default());
        }
        Path::from_url_path(url.key()).map_err(|e| RemoteError::BadUrl {
            url: url.redacted(),
            detail: redact_text(&e.to_string()),
        })
    }

    fn fail(&self, kind: RequestKind, shown: &str, e: object_store::Error) -> RemoteError {
        self.stats.error();
        self.stats.failed(kind);
        let url = shown.to_string();
        let text = e.to_string();
        // The HTTP store reports statuses only in its message.
        let status = |code: u16| text.contains(&format!("status code: {code}"));
        let not_found = matches!(e, object_store::Error::NotFound { .. }) || status(404);
        let unauthenticated =
            matches!(e, object_store::Error::Unauthenticated { .. }) || status(401);
        let forbidden = matches!(e, object_store::Error::PermissionDenied { .. }) || status(403);
        if not_found {
            RemoteError::NotFound { url }
        } else if status(401) && text.contains(caterva2::session::LOGIN_HINT) {
            RemoteError::Denied {
                url,
                detail: format!(
                    "HTTP 401: a login is needed: {}",
                    caterva2::session::LOGIN_HINT
                ),
            }
        } else if unauthenticated {
            RemoteError::Denied {
                url,
                detail: "HTTP 401: missing or refused credentials".into(),
            }
        } else if forbidden {
            RemoteError::Denied {
                url,
                detail: "HTTP 403: the store refused the request".into(),
            }
        } else if status(416) {
            // Only sources ask for ranges, always inside the object as opened.
            RemoteError::Changed {
                url,
                detail: "it no longer holds the bytes asked for (HTTP 416)".into(),
            }
        } else if text.contains("timed out") {
            RemoteError::Timeout {
                url,
                after: self.timeout,
            }
        } else {
            RemoteError::Request {
                url,
                detail: redact_text(&text),
            }
        }
    }

    /// Wait for `fut` (a request of `kind`) at most the timeout. A panic
    /// inside the client (it has panicked on answers it did not expect) is
    /// this request's error, never the caller's.
    fn wait<T: Send>(
        &self,
        kind: RequestKind,
        shown: &str,
        fut: impl std::future::Future<Output = Result<T, RemoteError>> + Send,
    ) -> Result<T, RemoteError> {
        use futures::FutureExt;
        let guarded = std::panic::AssertUnwindSafe(fut).catch_unwind();
        match runtime::run(guarded, crate::read_deadline::limit(self.timeout)) {
            Ok(Ok(answer)) => answer,
            Ok(Err(panic)) => {
                self.stats.error();
                self.stats.failed(kind);
                let what = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("a panic");
                log::error!("{shown}: the client failed: {what}");
                Err(RemoteError::Request {
                    url: shown.to_string(),
                    detail: format!("the client failed: {}", redact_text(what)),
                })
            }
            Err(Wait::TimedOut) => {
                self.stats.error();
                self.stats.failed(kind);
                self.stats.attempt_failed(kind, true);
                Err(RemoteError::Timeout {
                    url: shown.to_string(),
                    after: self.timeout,
                })
            }
            Err(Wait::NoRuntime(why)) => Err(RemoteError::Setup {
                url: shown.to_string(),
                detail: why,
            }),
        }
    }

    /// HEAD: the size and identity of the object at `path` now (`shown`
    /// is its redacted URL, for messages).
    pub(crate) fn head(&self, path: &Path, shown: &str) -> Result<ObjectMeta, RemoteError> {
        self.stats.head();
        let meta = self.wait(RequestKind::Head, shown, async {
            self.store
                .head(path)
                .await
                .map_err(|e| self.fail(RequestKind::Head, shown, e))
        })?;
        self.saw(path, &meta);
        Ok(meta)
    }

    /// One ranged GET (`range` is clamped to the object's end by the
    /// store): the object's identity as the answer gave it, and exactly
    /// the bytes of the range (checked: never a short or wrong body).
    pub(crate) async fn get_range(
        &self,
        path: &Path,
        shown: &str,
        range: Range<u64>,
        version: Option<String>,
    ) -> Result<(ObjectMeta, bytes::Bytes), RemoteError> {
        log::debug!("GET {shown} bytes {range:?}");
        self.stats.get(0);
        let opts = GetOptions {
            range: Some(range.clone().into()),
            version,
            ..GetOptions::default()
        };
        let answer = self
            .store
            .get_opts(path, opts)
            .await
            .map_err(|e| self.fail(RequestKind::Get, shown, e))?;
        let (meta, got) = (answer.meta.clone(), answer.range.clone());
        let body = answer
            .bytes()
            .await
            .map_err(|e| self.fail(RequestKind::Get, shown, e))?;
        self.stats.get_bytes(body.len() as u64);
        let expected = range.start..range.end.min(meta.size);
        if got != expected || body.len() as u64 != expected.end.saturating_sub(expected.start) {
            self.stats.error();
            self.stats.failed(RequestKind::Get);
            return Err(RemoteError::WrongLength {
                url: shown.to_string(),
                start: expected.start,
                end: expected.end,
                got: body.len() as u64,
            });
        }
        Ok((meta, body))
    }

    /// [`Self::get_range`] waited for from a synchronous caller.
    pub(crate) fn get(
        &self,
        path: &Path,
        shown: &str,
        range: Range<u64>,
        version: Option<String>,
    ) -> Result<(ObjectMeta, bytes::Bytes), RemoteError> {
        self.wait(
            RequestKind::Get,
            shown,
            self.get_range(path, shown, range, version),
        )
    }

    /// Several GETs at once (at most `parallel` in flight), answers in order.
    pub(crate) fn get_many(
        &self,
        path: &Path,
        shown: &str,
        ranges: Vec<Range<u64>>,
        version: Option<String>,
        parallel: usize,
    ) -> Result<Vec<(ObjectMeta, bytes::Bytes)>, RemoteError> {
        use futures::stream::{StreamExt, TryStreamExt};
        let all = futures::stream::iter(
            ranges
                .into_iter()
                .map(|r| self.get_range(path, shown, r, version.clone())),
        )
        .buffered(parallel.max(1))
        .try_collect::<Vec<_>>();
        self.wait(RequestKind::Get, shown, all)
    }

    /// The Caterva2 session, or the error saying this is no Caterva2 server.
    fn session(&self, shown: &str) -> Result<&Arc<Session>, RemoteError> {
        self.c2.as_ref().ok_or_else(|| RemoteError::Unsupported {
            url: shown.to_string(),
            detail: "not a Caterva2 server".into(),
        })
    }

    /// A Caterva2 failure as the error of a request for `path`.
    fn c2_fail(&self, path: &Path, shown: &str, failure: Failure) -> RemoteError {
        self.fail(
            RequestKind::Get,
            shown,
            caterva2::store::store_error(path, failure),
        )
    }

    /// `GET /api/info/PATH` of a Caterva2 server, with its ETag.
    pub(crate) fn c2_info(&self, path: &Path, shown: &str) -> Result<DatasetInfo, RemoteError> {
        let session = self.session(shown)?.clone();
        let asked = std::time::Instant::now();
        self.wait(RequestKind::Get, shown, async move {
            let (json, etag) = session
                .get_json(Endpoint::Info, path.as_ref(), 16 << 20, "info")
                .await
                .map_err(|f| self.c2_fail(path, shown, f))?;
            Ok(DatasetInfo::parse(&json, etag, asked))
        })
    }

    /// `GET /api/fetch/PATH?slice_=SLICE` of a Caterva2 server (no
    /// `slice_` for the whole of a 0-d dataset): the frame it builds, at
    /// most `limit` bytes.
    pub(crate) fn c2_slice(
        &self,
        path: &Path,
        shown: &str,
        slice: Option<&str>,
        limit: u64,
    ) -> Result<bytes::Bytes, RemoteError> {
        let session = self.session(shown)?.clone();
        self.wait(RequestKind::Get, shown, async move {
            let fail = |f| self.c2_fail(path, shown, f);
            let mut url = session.url("fetch", path.as_ref()).map_err(fail)?;
            if let Some(slice) = slice {
                url.query_pairs_mut().append_pair("slice_", slice);
            }
            let answer = session
                .get(Endpoint::Slice, &url, None)
                .await
                .map_err(fail)?;
            let body = Session::body(answer, limit).await.map_err(fail)?;
            self.stats.get_bytes(body.len() as u64);
            Ok(body)
        })
    }

    /// `GET /api/roots` of a Caterva2 server: the roots this login reaches.
    pub(crate) fn c2_roots(&self, shown: &str) -> Result<Vec<String>, RemoteError> {
        let session = self.session(shown)?.clone();
        self.wait(RequestKind::Get, shown, async move {
            let (json, _) = session
                .get_json(Endpoint::Roots, "", 1 << 20, "roots")
                .await
                .map_err(|f| self.c2_fail(&Path::default(), shown, f))?;
            Ok(json
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default())
        })
    }

    /// One delimiter listing under `prefix` (`None`: the bucket's top).
    pub(crate) fn list(
        &self,
        prefix: Option<&Path>,
        shown: &str,
    ) -> Result<object_store::ListResult, RemoteError> {
        self.stats.list();
        let result = self.wait(RequestKind::List, shown, async {
            self.store
                .list_with_delimiter(prefix)
                .await
                .map_err(|e| self.fail(RequestKind::List, shown, e))
        })?;
        if let Some(detail) = outside(prefix, &result) {
            self.stats.error();
            self.stats.failed(RequestKind::List);
            self.stats.forged_listing();
            log::warn!("LIST {shown}: refused: {detail}");
            return Err(RemoteError::Forged {
                url: shown.to_string(),
                detail,
            });
        }
        if self.c2.is_none() {
            result
                .objects
                .iter()
                .for_each(|meta| self.saw(&meta.location, meta));
        }
        Ok(result)
    }
}

/// What in a listing of `prefix` is not one level below it (a child that
/// is the prefix itself, or a key elsewhere), said for a message; `None`
/// when every entry is a child of the prefix.
fn outside(prefix: Option<&Path>, result: &object_store::ListResult) -> Option<String> {
    let depth = prefix.map_or(0, |p| p.parts().count());
    let is_child =
        |p: &Path| p.parts().count() == depth + 1 && prefix.is_none_or(|pre| p.prefix_matches(pre));
    let objects = result.objects.iter().map(|o| &o.location);
    let mut all = result.common_prefixes.iter().chain(objects);
    all.find(|p| !is_child(p))
        .map(|p| format!("it names {:?}, not a child of the prefix", p.as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(dirs: &[&str], objects: &[&str]) -> object_store::ListResult {
        let meta = |k: &&str| ObjectMeta {
            location: Path::parse(k).unwrap(),
            last_modified: chrono::DateTime::UNIX_EPOCH,
            size: 1,
            e_tag: None,
            version: None,
        };
        object_store::ListResult {
            common_prefixes: dirs.iter().map(|d| Path::parse(d).unwrap()).collect(),
            objects: objects.iter().map(meta).collect(),
            extensions: Default::default(),
        }
    }

    /// A listing naming its own prefix, a grandchild or a key elsewhere is
    /// forged; children are not.
    #[test]
    fn listings_name_only_children_of_their_prefix() {
        let a = Path::parse("a").unwrap();
        assert_eq!(outside(Some(&a), &listing(&["a/b"], &["a/c.b2nd"])), None);
        assert_eq!(outside(None, &listing(&["a"], &["c.b2nd"])), None);
        assert!(outside(Some(&a), &listing(&["a"], &[])).is_some());
        assert!(outside(None, &listing(&[""], &[])).is_some());
        assert!(outside(Some(&a), &listing(&[], &["b/c"])).is_some());
        assert!(outside(Some(&a), &listing(&[], &["a/b/c"])).is_some());
        assert!(outside(None, &listing(&[], &["a/b"])).is_some());
    }
}
