//! Counters of what remote reading cost: requests by kind and bytes
//! received, for the read layer's statistics and the request-shaping tests.
//!
//! The names are stable (`.stats` shows them): `gets`, `heads`, `lists`,
//! `bytes`, `errors`, `span_hits` (reads served by spans earlier reads
//! fetched), `hint_gets` and `hint_bytes` (GETs started ahead of reads on
//! `will_need` hints, and their bytes), `hint_hits` (reads served from
//! hinted bytes), `hints_dropped` (hinted GETs not started: budget full
//! or too many in flight), `inflight` / `inflight_peak` (bytes of hinted
//! GETs in flight now / at most), `pool` / `pool_peak` (bytes held plus in
//! flight now / at most, never above `budget`). Per request kind
//! ([`RequestKind`]: `list`, `get`, `head`): `retried` (attempts that failed
//! with a cause the client retries: 5xx, 429, a reset or a timeout),
//! `timeouts` (of those, the attempts cut by the timeout) and `failed`
//! (requests that ended in an error, after their retries). `skipped_keys`
//! counts listed keys no folder can show; `forged_listings` listings
//! refused for naming keys outside their prefix.

use std::sync::atomic::{AtomicU64, Ordering};

/// The API endpoints of a Caterva2 server, as `.stats` counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// `GET /api/roots`.
    Roots,
    /// `GET /api/list/...`.
    List,
    /// `GET /api/info/...`.
    Info,
    /// `GET /api/fetch/...` with a byte range.
    Fetch,
    /// `GET /api/fetch/...?slice_=`: a region built by the server.
    Slice,
    /// `POST /auth/jwt/login`.
    Login,
}

impl Endpoint {
    /// Every endpoint, in the order of [`Self::index`].
    pub const ALL: [Endpoint; 6] = [
        Endpoint::Roots,
        Endpoint::List,
        Endpoint::Info,
        Endpoint::Fetch,
        Endpoint::Slice,
        Endpoint::Login,
    ];

    /// Its position in [`Self::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Its name in `.stats`.
    pub fn name(self) -> &'static str {
        match self {
            Endpoint::Roots => "roots",
            Endpoint::List => "list",
            Endpoint::Info => "info",
            Endpoint::Fetch => "fetch",
            Endpoint::Slice => "slice",
            Endpoint::Login => "login",
        }
    }
}

/// The kinds of request counted apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// A listing page.
    List,
    /// A GET (ranged or whole).
    Get,
    /// A HEAD.
    Head,
}

impl RequestKind {
    /// Every kind, in the order of [`Self::index`].
    pub const ALL: [RequestKind; 3] = [RequestKind::List, RequestKind::Get, RequestKind::Head];

    /// Its position in [`Self::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Its name in `.stats` and in log lines.
    pub fn name(self) -> &'static str {
        match self {
            RequestKind::List => "LIST",
            RequestKind::Get => "GET",
            RequestKind::Head => "HEAD",
        }
    }
}

/// Live counters, shared by every source opened through one connection.
#[derive(Debug, Default)]
pub struct RemoteStats {
    gets: AtomicU64,
    heads: AtomicU64,
    lists: AtomicU64,
    bytes: AtomicU64,
    errors: AtomicU64,
    span_hits: AtomicU64,
    hint_gets: AtomicU64,
    hint_bytes: AtomicU64,
    hint_hits: AtomicU64,
    hints_dropped: AtomicU64,
    inflight: AtomicU64,
    inflight_peak: AtomicU64,
    pool: AtomicU64,
    pool_peak: AtomicU64,
    budget: AtomicU64,
    endpoints: [AtomicU64; 6],
    retried: [AtomicU64; 3],
    timeouts: [AtomicU64; 3],
    failed: [AtomicU64; 3],
    skipped_keys: AtomicU64,
    forged_listings: AtomicU64,
}

/// A copy of [`RemoteStats`] at one moment.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct StatsSnapshot {
    /// Ranged GET requests issued (retries inside the client not counted).
    pub gets: u64,
    /// HEAD requests issued.
    pub heads: u64,
    /// LIST requests issued (one per page).
    pub lists: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// Requests that ended in an error.
    pub errors: u64,
    /// Small reads answered from bytes already fetched (no request).
    pub span_hits: u64,
    /// GETs started ahead of reads, on hints (also counted in `gets`).
    pub hint_gets: u64,
    /// Bytes those GETs asked for.
    pub hint_bytes: u64,
    /// Reads answered (wholly or partly) from hinted bytes.
    pub hint_hits: u64,
    /// Hinted GETs not started because the budget or the GET limit was full.
    pub hints_dropped: u64,
    /// Bytes of hinted GETs in flight at the snapshot (a gauge).
    pub inflight: u64,
    /// Most bytes of hinted GETs in flight at once since the start.
    pub inflight_peak: u64,
    /// Bytes held for reads plus bytes in flight at the snapshot (a gauge).
    pub pool: u64,
    /// Most bytes held plus in flight at once since the start (≤ `budget`).
    pub pool_peak: u64,
    /// The byte budget of held plus in-flight bytes.
    pub budget: u64,
    /// Requests to a Caterva2 server by endpoint, in the order of
    /// [`Endpoint::ALL`], retries included
    /// (all zero for other stores).
    pub endpoints: [u64; 6],
    /// Attempts that failed with a retriable cause, by [`RequestKind::ALL`].
    pub retried: [u64; 3],
    /// Attempts cut by the timeout, by [`RequestKind::ALL`].
    pub timeouts: [u64; 3],
    /// Requests that ended in an error, by [`RequestKind::ALL`].
    pub failed: [u64; 3],
    /// Listed keys left out of their folder (no folder can show them).
    pub skipped_keys: u64,
    /// Listings refused for naming keys outside the prefix listed.
    pub forged_listings: u64,
}

impl RemoteStats {
    pub(crate) fn get(&self, bytes: u64) {
        self.gets.fetch_add(1, Ordering::Relaxed);
        self.get_bytes(bytes);
    }

    pub(crate) fn get_bytes(&self, bytes: u64) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    pub(crate) fn head(&self) {
        self.heads.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn list(&self) {
        self.lists.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn error(&self) {
        self.errors.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn span_hit(&self) {
        self.span_hits.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn hint(&self, gets: u64, bytes: u64, dropped: u64) {
        self.hint_gets.fetch_add(gets, Ordering::Relaxed);
        self.hint_bytes.fetch_add(bytes, Ordering::Relaxed);
        self.hints_dropped.fetch_add(dropped, Ordering::Relaxed);
    }

    pub(crate) fn hint_hit(&self) {
        self.hint_hits.fetch_add(1, Ordering::Relaxed);
    }

    /// Record the pool's state: `held` bytes held, `inflight` in flight.
    pub(crate) fn pool(&self, held: u64, inflight: u64) {
        self.inflight.store(inflight, Ordering::Relaxed);
        self.inflight_peak.fetch_max(inflight, Ordering::Relaxed);
        self.pool.store(held + inflight, Ordering::Relaxed);
        self.pool_peak.fetch_max(held + inflight, Ordering::Relaxed);
    }

    /// Count one request to a Caterva2 endpoint.
    pub(crate) fn endpoint(&self, endpoint: Endpoint) {
        self.endpoints[endpoint.index()].fetch_add(1, Ordering::Relaxed);
    }

    /// Count one failed attempt of `kind` (`timeout`: cut by the timeout).
    pub(crate) fn attempt_failed(&self, kind: RequestKind, timeout: bool) {
        self.retried[kind.index()].fetch_add(1, Ordering::Relaxed);
        if timeout {
            self.timeouts[kind.index()].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Count one request of `kind` that ended in an error.
    pub(crate) fn failed(&self, kind: RequestKind) {
        self.failed[kind.index()].fetch_add(1, Ordering::Relaxed);
    }

    /// Count one listed key left out of its folder.
    pub(crate) fn skipped_key(&self) {
        self.skipped_keys.fetch_add(1, Ordering::Relaxed);
    }

    /// Count one listing refused as forged.
    pub(crate) fn forged_listing(&self) {
        self.forged_listings.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn set_budget(&self, budget: u64) {
        self.budget.store(budget, Ordering::Relaxed);
    }

    /// The counters now.
    pub fn snapshot(&self) -> StatsSnapshot {
        StatsSnapshot {
            gets: self.gets.load(Ordering::Relaxed),
            heads: self.heads.load(Ordering::Relaxed),
            lists: self.lists.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            span_hits: self.span_hits.load(Ordering::Relaxed),
            hint_gets: self.hint_gets.load(Ordering::Relaxed),
            hint_bytes: self.hint_bytes.load(Ordering::Relaxed),
            hint_hits: self.hint_hits.load(Ordering::Relaxed),
            hints_dropped: self.hints_dropped.load(Ordering::Relaxed),
            inflight: self.inflight.load(Ordering::Relaxed),
            inflight_peak: self.inflight_peak.load(Ordering::Relaxed),
            pool: self.pool.load(Ordering::Relaxed),
            pool_peak: self.pool_peak.load(Ordering::Relaxed),
            budget: self.budget.load(Ordering::Relaxed),
            endpoints: std::array::from_fn(|i| self.endpoints[i].load(Ordering::Relaxed)),
            retried: std::array::from_fn(|i| self.retried[i].load(Ordering::Relaxed)),
            timeouts: std::array::from_fn(|i| self.timeouts[i].load(Ordering::Relaxed)),
            failed: std::array::from_fn(|i| self.failed[i].load(Ordering::Relaxed)),
            skipped_keys: self.skipped_keys.load(Ordering::Relaxed),
            forged_listings: self.forged_listings.load(Ordering::Relaxed),
        }
    }
}

impl StatsSnapshot {
    /// What happened between `earlier` and this snapshot (gauges, peaks
    /// and the budget are this snapshot's).
    pub fn since(&self, earlier: &StatsSnapshot) -> StatsSnapshot {
        StatsSnapshot {
            gets: self.gets - earlier.gets,
            heads: self.heads - earlier.heads,
            lists: self.lists - earlier.lists,
            bytes: self.bytes - earlier.bytes,
            errors: self.errors - earlier.errors,
            span_hits: self.span_hits - earlier.span_hits,
            hint_gets: self.hint_gets - earlier.hint_gets,
            hint_bytes: self.hint_bytes - earlier.hint_bytes,
            hint_hits: self.hint_hits - earlier.hint_hits,
            hints_dropped: self.hints_dropped - earlier.hints_dropped,
            endpoints: std::array::from_fn(|i| self.endpoints[i] - earlier.endpoints[i]),
            retried: std::array::from_fn(|i| self.retried[i] - earlier.retried[i]),
            timeouts: std::array::from_fn(|i| self.timeouts[i] - earlier.timeouts[i]),
            failed: std::array::from_fn(|i| self.failed[i] - earlier.failed[i]),
            skipped_keys: self.skipped_keys - earlier.skipped_keys,
            forged_listings: self.forged_listings - earlier.forged_listings,
            ..*self
        }
    }

    /// All requests of any kind (for a Caterva2 server, every request to
    /// its API, retries and logins included).
    pub fn requests(&self) -> u64 {
        let c2: u64 = self.endpoints.iter().sum();
        if c2 > 0 {
            c2
        } else {
            self.gets + self.heads + self.lists
        }
    }
}
