//! When a served dataset's ETag is asked again. A region the server builds
//! (`/api/fetch?slice_=`) carries no validator: no ETag, no Last-Modified,
//! and the server honours no `If-Match` (Caterva2 2026.9.2). Asking
//! `/api/info` after every region would double the requests, so a region
//! is served on the strength of the last answer when it arrived less than
//! the attribute TTL after that answer was asked for; past that, one
//! `/api/info` is asked (by one reader, the others wait for its answer)
//! before the region is served. Once the ETag was seen changed, every
//! region is refused.
//!
//! The trade: a file replaced on the server may show its new bytes to a
//! handle opened before, in regions it reads within one TTL of the last
//! answer; never later. With a TTL of zero every region is checked after
//! it arrived, and an open handle never reads new bytes.

use parking_lot::Mutex;
use std::time::{Duration, Instant};

/// Why a region may not be served.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refusal<E> {
    /// The ETag is no longer the one opened (the text says what it is now).
    Changed(String),
    /// Asking for the ETag failed.
    Unasked(E),
}

#[derive(Debug)]
enum Seen {
    /// The ETag was the opened one when the request that said so was sent.
    Same(Instant),
    /// The ETag changed (to this, or `absent`).
    Changed(String),
}

/// The ETag a served dataset was opened with, and when it was last seen.
#[derive(Debug)]
pub(crate) struct Recheck {
    opened: String,
    ttl: Duration,
    seen: Mutex<Seen>,
}

impl Recheck {
    /// ETag `opened`, as the `/api/info` request sent at `asked` gave it;
    /// asked again at most once per `ttl`.
    pub(crate) fn new(opened: String, asked: Instant, ttl: Duration) -> Recheck {
        Recheck {
            opened,
            ttl,
            seen: Mutex::new(Seen::Same(asked)),
        }
    }

    /// Whether a region whose answer came at `arrived` may be served:
    /// at once when that is less than a TTL after the last answer was asked
    /// for, else after `etag_now` (the ETag now, from `/api/info`) says the
    /// dataset is the one opened.
    pub(crate) fn region<E>(
        &self,
        arrived: Instant,
        etag_now: impl FnOnce() -> Result<Option<String>, E>,
    ) -> Result<(), Refusal<E>> {
        // Held while asking: readers whose regions arrive meanwhile wait for
        // this answer instead of asking again.
        let mut seen = self.seen.lock();
        match &*seen {
            Seen::Changed(now) => return Err(Refusal::Changed(self.detail(now))),
            Seen::Same(asked) if arrived.saturating_duration_since(*asked) < self.ttl => {
                return Ok(())
            }
            Seen::Same(_) => {}
        }
        let asked = Instant::now();
        let now = etag_now().map_err(Refusal::Unasked)?;
        if now.as_deref() == Some(self.opened.as_str()) {
            *seen = Seen::Same(asked);
            return Ok(());
        }
        let now = now.unwrap_or_else(|| "absent".into());
        let detail = self.detail(&now);
        *seen = Seen::Changed(now);
        Err(Refusal::Changed(detail))
    }

    /// Once the ETag was seen changed, why (regions are then refused
    /// before they are asked for).
    pub(crate) fn changed(&self) -> Option<String> {
        match &*self.seen.lock() {
            Seen::Changed(now) => Some(self.detail(now)),
            Seen::Same(_) => None,
        }
    }

    fn detail(&self, now: &str) -> String {
        format!("ETag {} is now {now}", self.opened)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn etag(e: &str) -> Result<Option<String>, ()> {
        Ok(Some(e.to_string()))
    }

    /// Regions within a TTL of the last answer are served unasked; the
    /// first one past it asks, and the answer starts a new TTL.
    #[test]
    fn asks_at_most_once_per_ttl() {
        let t0 = Instant::now();
        let ttl = Duration::from_secs(10);
        let r = Recheck::new("\"a\"".into(), t0, ttl);
        let mut asked = 0;
        for s in [0, 3, 9] {
            r.region(t0 + Duration::from_secs(s), || {
                asked += 1;
                etag("\"a\"")
            })
            .unwrap();
        }
        assert_eq!(asked, 0, "within the TTL of the open's answer");
        r.region(t0 + ttl, || {
            asked += 1;
            etag("\"a\"")
        })
        .unwrap();
        assert_eq!(asked, 1);
        // The answer counts from when it was asked for: a region arriving
        // within a TTL of that is served unasked.
        r.region(Instant::now(), || -> Result<_, ()> {
            panic!("asked again within the TTL")
        })
        .unwrap();
    }

    /// A changed ETag refuses that region and every later one, unasked.
    #[test]
    fn a_changed_etag_refuses_every_region_after() {
        let t0 = Instant::now();
        let r = Recheck::new("\"a\"".into(), t0, Duration::ZERO);
        assert_eq!(
            r.region(t0, || etag("\"b\"")),
            Err(Refusal::Changed("ETag \"a\" is now \"b\"".into()))
        );
        assert!(matches!(
            r.region(t0, || -> Result<_, ()> { panic!("asked after a change") }),
            Err(Refusal::Changed(_))
        ));
        assert_eq!(r.changed().as_deref(), Some("ETag \"a\" is now \"b\""));
        assert_eq!(
            Recheck::new("\"a\"".into(), t0, Duration::ZERO).changed(),
            None
        );
        let gone = Recheck::new("\"a\"".into(), t0, Duration::ZERO);
        assert_eq!(
            gone.region(t0, || Ok::<_, ()>(None)),
            Err(Refusal::Changed("ETag \"a\" is now absent".into()))
        );
    }

    /// A TTL of zero asks after every region; a failed answer refuses the
    /// region and leaves the next one to ask again.
    #[test]
    fn a_zero_ttl_asks_every_time_and_failures_ask_again() {
        let t0 = Instant::now();
        let r = Recheck::new("\"a\"".into(), t0, Duration::ZERO);
        let mut asked = 0;
        for _ in 0..3 {
            r.region(Instant::now(), || {
                asked += 1;
                etag("\"a\"")
            })
            .unwrap();
        }
        assert_eq!(asked, 3);
        assert_eq!(
            r.region(Instant::now(), || Err("down")),
            Err(Refusal::Unasked("down"))
        );
        r.region(Instant::now(), || etag("\"a\"")).unwrap();
    }
}
