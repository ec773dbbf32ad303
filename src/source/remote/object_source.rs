//! One remote object as a [`ByteSource`]: ranged GETs through a
//! [`Connection`], shaped for round trips, with every answer checked
//! against the identity the object had when opened (ETag, version id, or
//! modification time and size), so bytes of a replaced object are never
//! served.
//!
//! Request shapes: opening fetches the first [`HINT`] bytes (a frame's
//! header and metalayers); a small read nobody announced fetches a
//! [`HINT`]-sized span that later small reads share (the offsets index and
//! trailer); a read the caller sized ([`ByteSource::read_needed`]: a
//! chunk's header and block starts, one block) fetches exactly its bytes;
//! [`ByteSource::will_need`] hints start GETs ahead of reads, in parallel,
//! neighbours merged; several ranges read at once are coalesced. Spans and
//! hinted bytes live in the connection's [`Pool`](super::pool::Pool),
//! whose budget bounds bytes held plus bytes in flight; a read finding its
//! bytes in flight waits for them.
//!
//! With the mount's disk cache, [`RemoteSource::open_cached`] opens the
//! object under a [`CachedObject`] (the remote tier,
//! `crate::disk_cache::stored_objects`), keyed by its identity as a listing
//! or HEAD gave it: an object whose first MiB the cache holds for that
//! identity opens with no GET, and its reads fetch only the granules the
//! cache lacks.

use parking_lot::Mutex;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use object_store::path::Path;
use object_store::ObjectMeta;

use super::error::RemoteError;
use super::pool::{Ledger, PoolLookup};
use super::runtime;
use super::store::Connection;
use crate::disk_cache::stored_objects::CachedObject;
use crate::disk_cache::DiskCache;
use crate::format::byte_source::{range_len, ByteSource, Need, Version, VersionTag};
use crate::format::{PResult, Problem};

/// Speculative read size: a frame's header and metalayers, or its offsets
/// index and trailer, in one GET (opening, and small reads nobody sized).
pub const HINT: usize = 1 << 20;
/// Ranges closer than this are fetched with one GET (a round trip costs
/// more than this many bytes of transfer).
const COALESCE_GAP: u64 = 256 << 10;
/// The first read of a chunk's layout when its size is not known (the
/// format layer asks for more when the geometry says so).
const FIRST_READ: usize = 8 << 10;
/// Ids telling sources apart in their connection's pool.
static NEXT_SOURCE: AtomicU64 = AtomicU64::new(1);
/// Hinted ranges closer than this are fetched with one GET.
const HINT_GAP: u64 = 16 << 10;
/// GETs in flight for one [`ByteSource::read_ranges`] call.
const PARALLEL: usize = 8;
/// How long an identity seen in an answer counts as the current one for
/// [`ByteSource::version`] (no HEAD within this time after a GET).
const FRESH: Duration = Duration::from_secs(1);

/// What names one state of an object.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    size: u64,
    etag: Option<String>,
    version: Option<String>,
    modified: String,
}

impl Identity {
    fn of(meta: &ObjectMeta) -> Identity {
        Identity {
            size: meta.size,
            etag: meta.e_tag.clone(),
            version: meta.version.clone(),
            modified: meta.last_modified.to_rfc3339(),
        }
    }

    fn version(&self) -> Version {
        let tag = match (&self.version, &self.etag) {
            (Some(v), _) => format!("version {v}"),
            (None, Some(e)) => format!("etag {e}"),
            (None, None) => format!("modified {}", self.modified),
        };
        Version {
            len: self.size,
            tag: VersionTag::Token(tag),
        }
    }

    /// What names this state in the disk cache's key: the size with the
    /// ETag (a strong one: equal ETags are equal bytes, whether a listing,
    /// a HEAD or a GET gave it), else the version id, else the
    /// modification time (with a weak ETag, if any).
    fn cache_tag(&self) -> String {
        match (&self.etag, &self.version) {
            (Some(e), _) if !e.starts_with("W/") => format!("size {} etag {e}", self.size),
            (_, Some(v)) => format!("size {} version {v}", self.size),
            (e, None) => format!(
                "size {} modified {} etag {}",
                self.size,
                self.modified,
                e.as_deref().unwrap_or("none")
            ),
        }
    }

    /// How `now` differs from this identity, if it does (by the strongest
    /// identity the store gives: version id, else ETag, else time).
    fn change_to(&self, now: &Identity) -> Option<String> {
        if self.size != now.size {
            return Some(format!("size {} is now {}", self.size, now.size));
        }
        match (&self.version, &now.version, &self.etag, &now.etag) {
            (Some(a), Some(b), _, _) if a != b => Some(format!("version {a} is now {b}")),
            (Some(_), Some(_), _, _) => None,
            (_, _, Some(a), b) if Some(a) != b.as_ref() => Some(format!(
                "ETag {a} is now {}",
                b.as_deref().unwrap_or("absent")
            )),
            (_, _, Some(_), _) => None,
            _ if self.modified != now.modified => Some(format!(
                "modified {} is now {}",
                self.modified, now.modified
            )),
            _ => None,
        }
    }
}

/// A remote object opened for reading.
#[derive(Debug)]
pub struct RemoteSource {
    conn: Arc<Connection>,
    path: Path,
    shown: String,
    opened: Identity,
    /// The identity the last answer (GET or HEAD) gave, and when.
    seen: Mutex<(Identity, Instant)>,
    /// This source's key in the connection's pool.
    id: u64,
    /// The span of the last request that timed out, and when: asked again
    /// within [`STALL_MEMORY`], it fails at once (see [`Self::unless_stalled`]).
    stalled: Mutex<Option<(Range<u64>, Instant)>>,
}

/// How long a range whose request timed out answers the same timeout at
/// once. The kernel asks again, page by page, for a readahead that failed:
/// without it one `read()` would wait for the store two or three times.
const STALL_MEMORY: Duration = Duration::from_secs(1);

impl Drop for RemoteSource {
    fn drop(&mut self) {
        let id = self.id;
        self.ledger(|l| l.forget(id));
    }
}

impl RemoteSource {
    /// Open the object at `path`: one GET of its first [`HINT`] bytes gives
    /// its size and identity and serves the reads of a frame's header.
    pub(crate) fn open(
        conn: Arc<Connection>,
        path: Path,
        shown: String,
    ) -> Result<RemoteSource, RemoteError> {
        Self::open_with_head(conn, path, shown).map(|(source, _)| source)
    }

    /// [`Self::open`], and the bytes its GET brought (none for an empty object).
    fn open_with_head(
        conn: Arc<Connection>,
        path: Path,
        shown: String,
    ) -> Result<(RemoteSource, Option<bytes::Bytes>), RemoteError> {
        match conn.get(&path, &shown, 0..HINT as u64, None) {
            Ok((meta, body)) => {
                let source = RemoteSource::with_identity(conn, path, shown, Identity::of(&meta));
                source.remember(0, body.clone());
                Ok((source, Some(body)))
            }
            Err(
                e @ (RemoteError::NotFound { .. }
                | RemoteError::Denied { .. }
                | RemoteError::Timeout { .. }),
            ) => Err(e),
            Err(e) => {
                // An empty object has no byte 0 to ask for: look at it.
                match conn.head(&path, &shown) {
                    Ok(meta) if meta.size == 0 => Ok((
                        RemoteSource::with_identity(conn, path, shown, Identity::of(&meta)),
                        None,
                    )),
                    _ => Err(e),
                }
            }
        }
    }

    /// Open the object at `path` read through the disk cache `cache` (the
    /// remote tier). Its identity is the one a listing or HEAD gave less
    /// than the attribute TTL ago, else the one `validate` asks for (a
    /// HEAD); when the cache holds the bytes [`Self::open`] would fetch for
    /// that identity, no GET is sent. Otherwise the object is opened as
    /// usual (one GET, whose answer names the identity) and the bytes that
    /// GET brought are offered to the cache.
    pub(crate) fn open_cached(
        conn: Arc<Connection>,
        path: Path,
        shown: String,
        cache: &Arc<DiskCache>,
        validate: impl FnOnce() -> Result<ObjectMeta, RemoteError>,
    ) -> Result<Arc<dyn ByteSource>, RemoteError> {
        let known = match conn.known(&path) {
            Some(meta) => Some(meta),
            None => match validate() {
                Ok(meta) => Some(meta),
                Err(e @ (RemoteError::NotFound { .. } | RemoteError::Denied { .. })) => {
                    return Err(e)
                }
                Err(e) => {
                    log::debug!("{e}: opened with a GET");
                    None
                }
            },
        };
        // Kept until the end: an open of the same entry below finds it open.
        let mut candidate = None;
        if let Some(identity) = known.as_ref().map(Identity::of) {
            if identity.size == 0 {
                return Ok(Arc::new(RemoteSource::with_identity(
                    conn, path, shown, identity,
                )));
            }
            let head = 0..identity.size.min(HINT as u64);
            let tag = identity.cache_tag();
            let source =
                RemoteSource::with_identity(conn.clone(), path.clone(), shown.clone(), identity);
            if let Some(cached) = CachedObject::new(cache.clone(), Arc::new(source), &tag) {
                if cached.covers(&head) {
                    return Ok(Arc::new(cached));
                }
                candidate = Some(cached);
            }
        }
        let (source, body) = Self::open_with_head(conn, path, shown)?;
        let tag = source.opened.cache_tag();
        let source: Arc<dyn ByteSource> = Arc::new(source);
        let cached = CachedObject::new(cache.clone(), source.clone(), &tag);
        drop(candidate);
        match cached {
            Some(cached) => {
                if let Some(body) = body {
                    cached.keep(0, &body);
                }
                Ok(Arc::new(cached))
            }
            None => Ok(source),
        }
    }

    /// The first `len` bytes (fewer if it is shorter) of the object at
    /// `path` from the disk cache `cache`, when its identity is known from
    /// a listing or HEAD within the attribute TTL and the cache holds them
    /// for it; `None` otherwise (the caller asks the store).
    pub(crate) fn cached_head(
        conn: &Arc<Connection>,
        path: &Path,
        shown: &str,
        cache: &Arc<DiskCache>,
        len: u64,
    ) -> Option<Vec<u8>> {
        let identity = Identity::of(&conn.known(path)?);
        let tag = identity.cache_tag();
        let end = len.min(identity.size);
        let source =
            RemoteSource::with_identity(conn.clone(), path.clone(), shown.into(), identity);
        let cached = CachedObject::new(cache.clone(), Arc::new(source), &tag)?;
        if !cached.covers(&(0..end)) {
            return None;
        }
        let mut head = vec![0; usize::try_from(end).ok()?];
        cached.read_at(0, &mut head).ok()?;
        Some(head)
    }

    fn with_identity(
        conn: Arc<Connection>,
        path: Path,
        shown: String,
        opened: Identity,
    ) -> RemoteSource {
        RemoteSource {
            conn,
            path,
            shown,
            seen: Mutex::new((opened.clone(), Instant::now())),
            opened,
            id: NEXT_SOURCE.fetch_add(1, Ordering::Relaxed),
            stalled: Mutex::new(None),
        }
    }

    /// `request` for the bytes of `span`, unless a request for any of them
    /// timed out less than [`STALL_MEMORY`] ago (that timeout again, at
    /// once); a timeout it meets is remembered.
    fn unless_stalled<T>(
        &self,
        span: Range<u64>,
        request: impl FnOnce() -> Result<T, RemoteError>,
    ) -> Result<T, RemoteError> {
        if let Some((stalled, at)) = &*self.stalled.lock() {
            if at.elapsed() < STALL_MEMORY && span.start < stalled.end && stalled.start < span.end {
                log::debug!(
                    "{}: bytes {span:?} timed out just now; not asked again",
                    self.shown
                );
                return Err(RemoteError::Timeout {
                    url: self.shown.clone(),
                    after: self.conn.timeout,
                });
            }
        }
        let answer = request();
        if let Err(RemoteError::Timeout { .. }) = &answer {
            *self.stalled.lock() = Some((span, Instant::now()));
        }
        answer
    }

    /// The redacted URL.
    pub fn url(&self) -> &str {
        &self.shown
    }

    /// Record the identity an answer gave; an error if it is not the one opened.
    fn check(&self, meta: &ObjectMeta) -> Result<(), RemoteError> {
        let now = Identity::of(meta);
        let change = self.opened.change_to(&now);
        *self.seen.lock() = (now, Instant::now());
        match change {
            Some(detail) => Err(RemoteError::Changed {
                url: self.shown.clone(),
                detail,
            }),
            None => Ok(()),
        }
    }

    /// Run `f` on the connection's pool ledger, then update the gauges.
    fn ledger<T>(&self, f: impl FnOnce(&mut Ledger) -> T) -> T {
        let (answer, held, inflight) = self.conn.pool.with(|l| (f(&mut *l), l.held, l.inflight));
        self.conn.stats.pool(held, inflight);
        answer
    }

    /// Keep `bytes`, fetched at `start`, for the reads that follow.
    fn remember(&self, start: u64, bytes: bytes::Bytes) {
        let id = self.id;
        self.ledger(|l| l.keep(id, start, bytes));
    }

    /// The bytes of `range` if the pool holds all of them, waiting for
    /// those in flight; the error of a hinted GET that failed.
    fn held(&self, range: &Range<u64>) -> Result<Option<bytes::Bytes>, RemoteError> {
        let deadline = Instant::now()
            + crate::read_deadline::limit(self.conn.timeout + Duration::from_secs(1));
        let found = self.conn.pool.find(self.id, range, deadline);
        self.ledger(|_| ());
        match found {
            None => {
                self.conn.stats.error();
                Err(RemoteError::Timeout {
                    url: self.shown.clone(),
                    after: self.conn.timeout,
                })
            }
            Some(PoolLookup::Hit { bytes, hinted }) => {
                if hinted {
                    self.conn.stats.hint_hit();
                } else {
                    self.conn.stats.span_hit();
                }
                Ok(Some(bytes))
            }
            Some(PoolLookup::Failed(e)) => Err(e),
            Some(PoolLookup::Miss | PoolLookup::Wait) => Ok(None),
        }
    }

    /// Start the GET of `range` (admitted by the pool) on the runtime; its
    /// answer, checked like any other, goes to the pool.
    fn start_get(&self, range: Range<u64>) {
        let (conn, path, shown, opened, version, id) = (
            self.conn.clone(),
            self.path.clone(),
            self.shown.clone(),
            self.opened.clone(),
            self.opened.version.clone(),
            self.id,
        );
        let timeout = conn.timeout;
        let task_conn = conn.clone();
        let task_range = range.clone();
        let task = async move {
            let conn = task_conn;
            let answer = match tokio::time::timeout(
                timeout,
                conn.get_range(&path, &shown, task_range.clone(), version),
            )
            .await
            {
                Err(_) => {
                    conn.stats.error();
                    Err(RemoteError::Timeout {
                        url: shown.clone(),
                        after: timeout,
                    })
                }
                Ok(Err(e)) => Err(e),
                Ok(Ok((meta, body))) => match opened.change_to(&Identity::of(&meta)) {
                    Some(detail) => Err(RemoteError::Changed {
                        url: shown.clone(),
                        detail,
                    }),
                    None => Ok(body),
                },
            };
            conn.pool.complete(id, task_range, answer);
            let (held, inflight) = conn.pool.with(|l| (l.held, l.inflight));
            conn.stats.pool(held, inflight);
        };
        if let Err(why) = runtime::spawn(task) {
            let detail = match why {
                runtime::Wait::NoRuntime(d) => d,
                runtime::Wait::TimedOut => "timed out".into(),
            };
            conn.pool.complete(
                id,
                range,
                Err(RemoteError::Setup {
                    url: self.shown.clone(),
                    detail,
                }),
            );
        }
    }

    fn bounds(&self, range: &Range<u64>) -> PResult<()> {
        if range.start > range.end || range.end > self.opened.size {
            return Err(Problem::truncated(
                "read",
                range.start,
                range.end,
                self.opened.size,
            ));
        }
        Ok(())
    }

    fn fetch(&self, range: Range<u64>) -> Result<bytes::Bytes, RemoteError> {
        let (meta, body) = self.unless_stalled(range.clone(), || {
            self.conn
                .get(&self.path, &self.shown, range, self.opened.version.clone())
        })?;
        self.check(&meta)?;
        Ok(body)
    }

    /// `buf.len()` bytes at `offset` into `buf` (checked against the
    /// object's size; an empty read reads nothing): the bytes held or in
    /// flight for them, else what `missed` fetches for their range.
    fn read_held_or(
        &self,
        offset: u64,
        buf: &mut [u8],
        missed: impl FnOnce(Range<u64>, &mut [u8]) -> PResult<()>,
    ) -> PResult<()> {
        let range = offset
            ..offset
                .checked_add(buf.len() as u64)
                .ok_or_else(|| Problem::corrupt("read", "offset overflows"))?;
        self.bounds(&range)?;
        if buf.is_empty() {
            return Ok(());
        }
        match self.unless_stalled(range.clone(), || self.held(&range))? {
            Some(bytes) => buf.copy_from_slice(&bytes),
            None => missed(range, buf)?,
        }
        Ok(())
    }
}

impl ByteSource for RemoteSource {
    fn len(&self) -> u64 {
        self.opened.size
    }

    /// Every read is a round trip, and a stalled server holds it up to the timeout.
    fn may_wait(&self) -> bool {
        true
    }

    fn opened_version(&self) -> Version {
        self.opened.version()
    }

    /// The identity the last answer gave if it is under a second old, else
    /// a HEAD request's.
    fn version(&self) -> PResult<Version> {
        {
            let seen = self.seen.lock();
            if seen.1.elapsed() < FRESH {
                return Ok(seen.0.version());
            }
        }
        let meta = self.conn.head(&self.path, &self.shown)?;
        let now = Identity::of(&meta);
        *self.seen.lock() = (now.clone(), Instant::now());
        Ok(now.version())
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> PResult<()> {
        self.read_held_or(offset, buf, |range, buf| {
            if buf.len() < HINT {
                let span = offset..(offset + HINT as u64).min(self.opened.size);
                let bytes = self.fetch(span)?;
                buf.copy_from_slice(&bytes[..buf.len()]);
                self.remember(offset, bytes);
            } else {
                buf.copy_from_slice(&self.fetch(range)?);
            }
            Ok(())
        })
    }

    /// Held or in-flight bytes, else exactly the range: no span around it.
    fn read_needed(&self, offset: u64, buf: &mut [u8]) -> PResult<()> {
        self.read_held_or(offset, buf, |range, buf| {
            buf.copy_from_slice(&self.fetch(range)?);
            Ok(())
        })
    }

    /// Start GETs for the parts of `ranges` not held or in flight
    /// (neighbours under 256 KiB apart merged, cut in parts), as far as
    /// the budget and the limit of GETs in flight allow; never waits.
    /// [`Need::Now`] hints are not held back by the limit of GETs in flight
    /// (the read under way would otherwise fetch block by block); both
    /// obey the budget. Neighbours closer than 16 KiB are merged (the parts
    /// are fetched in parallel: merging saves requests, not round trips).
    fn will_need(&self, ranges: &[Range<u64>], need: Need) {
        let size = self.opened.size;
        let ranges: Vec<Range<u64>> = ranges
            .iter()
            .filter(|r| r.start < r.end && r.end <= size)
            .cloned()
            .collect();
        if ranges.is_empty() {
            return;
        }
        let id = self.id;
        let (parts, dropped) = self.ledger(|l| l.plan(id, &ranges, HINT_GAP, need == Need::Now));
        let bytes: u64 = parts.iter().map(|r| r.end - r.start).sum();
        self.conn
            .stats
            .hint(parts.len() as u64, bytes, dropped as u64);
        for part in parts {
            self.start_get(part);
        }
    }

    fn takes_hints(&self) -> bool {
        true
    }

    /// Ranges already fetched are served from memory; the others are
    /// grouped (gaps under 256 KiB) into GETs, up to 8 in flight.
    fn read_ranges(&self, ranges: &[Range<u64>]) -> PResult<Vec<Vec<u8>>> {
        let mut out: Vec<Option<Vec<u8>>> = vec![None; ranges.len()];
        let mut missing = Vec::new();
        for (i, r) in ranges.iter().enumerate() {
            self.bounds(r)?;
            if r.is_empty() {
                out[i] = Some(Vec::new());
            } else if let Some(bytes) = self.held(r)? {
                out[i] = Some(bytes.to_vec());
            } else {
                missing.push(i);
            }
        }
        missing.sort_by_key(|&i| ranges[i].start);
        let mut groups: Vec<(Range<u64>, Vec<usize>)> = Vec::new();
        for i in missing {
            let r = &ranges[i];
            match groups.last_mut() {
                Some((span, members)) if r.start <= span.end.saturating_add(COALESCE_GAP) => {
                    span.end = span.end.max(r.end);
                    members.push(i);
                }
                _ => groups.push((r.clone(), vec![i])),
            }
        }
        if !groups.is_empty() {
            let spans: Vec<Range<u64>> = groups.iter().map(|(s, _)| s.clone()).collect();
            let whole = spans[0].start..spans[spans.len() - 1].end;
            let answers = self.unless_stalled(whole, || {
                self.conn.get_many(
                    &self.path,
                    &self.shown,
                    spans,
                    self.opened.version.clone(),
                    PARALLEL,
                )
            })?;
            for ((span, members), (meta, body)) in groups.iter().zip(answers) {
                self.check(&meta)?;
                for &i in members {
                    let r = &ranges[i];
                    let at = (r.start - span.start) as usize;
                    out[i] = Some(body[at..at + range_len(r)?].to_vec());
                }
            }
        }
        Ok(out.into_iter().map(Option::unwrap_or_default).collect())
    }

    /// Small: a frame's header comes with the open's span, and a chunk's
    /// layout read is sized by the format layer from its geometry.
    fn prefetch_hint(&self) -> usize {
        FIRST_READ
    }

    /// A HEAD, and the object in the state it gave (nothing fetched yet).
    fn current(&self) -> PResult<Option<Arc<dyn ByteSource>>> {
        let meta = self.conn.head(&self.path, &self.shown)?;
        let now = Identity::of(&meta);
        *self.seen.lock() = (now.clone(), Instant::now());
        Ok(Some(Arc::new(RemoteSource::with_identity(
            self.conn.clone(),
            self.path.clone(),
            self.shown.clone(),
            now,
        ))))
    }

    fn describe(&self) -> String {
        self.shown.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(size: u64, etag: Option<&str>, version: Option<&str>, modified: &str) -> Identity {
        Identity {
            size,
            etag: etag.map(Into::into),
            version: version.map(Into::into),
            modified: modified.into(),
        }
    }

    #[test]
    fn identities_compare_by_the_strongest_token() {
        let a = id(10, Some("\"e1\""), None, "t1");
        assert_eq!(
            a.change_to(&id(10, Some("\"e1\""), None, "t2")),
            None,
            "same ETag, touched"
        );
        assert!(a.change_to(&id(10, Some("\"e2\""), None, "t1")).is_some());
        assert!(a.change_to(&id(11, Some("\"e1\""), None, "t1")).is_some());
        assert!(
            a.change_to(&id(10, None, None, "t1")).is_some(),
            "an ETag that disappears is a change"
        );
        let v = id(10, Some("\"e1\""), Some("v1"), "t1");
        assert_eq!(v.change_to(&id(10, Some("\"e1\""), Some("v1"), "t1")), None);
        assert!(v
            .change_to(&id(10, Some("\"e1\""), Some("v2"), "t1"))
            .is_some());
        let m = id(10, None, None, "t1");
        assert_eq!(m.change_to(&id(10, None, None, "t1")), None);
        assert!(m.change_to(&id(10, None, None, "t2")).is_some());
        assert_ne!(a.version(), id(10, Some("\"e2\""), None, "t1").version());
        assert_eq!(v.version().tag, VersionTag::Token("version v1".into()));
    }
}
