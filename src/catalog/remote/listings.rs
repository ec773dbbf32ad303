//! The folders under a remote root as its store lists them: delimiter
//! listings kept for the attribute TTL, and whether an object of unknown
//! extension starts like a frame (one 11-byte GET per key, size and ETag,
//! the answers of the most recent [`SNIFFS_KEPT`] kept). The root, its
//! objects and the member files of a remote `.b2d` store all read the
//! same listings through one client.

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::format::looks_like_frame;
use crate::source::listing_filter::MAX_KEY_BYTES;
use crate::source::remote::{ListedObject, Listing, RemoteError, RemoteLocation};

/// Sniff answers kept (forgetting one costs one 11-byte GET, so a prefix
/// of a million objects keeps this small).
const SNIFFS_KEPT: usize = 16_384;

/// The deepest prefix listed (levels below the root): S3 keys are at most
/// 1024 bytes, so a deeper folder can only come from a server that lies.
const MAX_DEPTH: usize = 256;

/// A listing is kept at least this many times as long as it took to
/// fetch: a prefix of many thousand keys, whose listing takes seconds, is
/// not listed again every TTL (the store spends at most about a tenth of
/// the time listing it), while a small one is asked again each TTL.
const LISTING_COST_FACTOR: u32 = 10;

/// The longest a listing is kept, however long it took.
const LISTING_KEPT_MOST: Duration = Duration::from_secs(60);

/// A listing, when it was made, and how long it stays fresh.
#[derive(Debug)]
struct Kept {
    at: Instant,
    fresh_for: Duration,
    listing: Arc<Listing>,
}

impl Kept {
    fn is_fresh(&self) -> bool {
        self.at.elapsed() < self.fresh_for
    }
}

/// How long a listing that took `took` to fetch stays fresh: the TTL, or
/// [`LISTING_COST_FACTOR`] times `took` (at most [`LISTING_KEPT_MOST`])
/// when that is longer.
fn freshness(ttl: Duration, took: Duration) -> Duration {
    ttl.max(
        took.saturating_mul(LISTING_COST_FACTOR)
            .min(LISTING_KEPT_MOST),
    )
}

/// An object's key, size and ETag: what a sniff's answer holds for.
type ObjectId = (String, u64, Option<String>);

/// The listings and sniffs of one remote root.
#[derive(Debug)]
pub struct Listings {
    root: RemoteLocation,
    ttl: Duration,
    listings: Mutex<HashMap<String, Kept>>,
    sniffed: Mutex<lru::LruCache<ObjectId, bool>>,
}

impl Listings {
    /// The listings under `root`, each kept for `ttl`.
    pub fn new(root: RemoteLocation, ttl: Duration) -> Listings {
        let kept = NonZeroUsize::new(SNIFFS_KEPT).unwrap_or(NonZeroUsize::MIN);
        Listings {
            root,
            ttl,
            listings: Mutex::new(HashMap::new()),
            sniffed: Mutex::new(lru::LruCache::new(kept)),
        }
    }

    /// The root location.
    pub fn root(&self) -> &RemoteLocation {
        &self.root
    }

    /// How long a listing (or anything else learnt of the root) is kept.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The location of `key` (`/`-separated names under the root).
    pub fn location(&self, key: &str) -> RemoteLocation {
        self.root.descendant(key)
    }

    /// The listing of prefix `key`, if one is kept and fresh (see
    /// [`freshness`]).
    pub fn cached(&self, key: &str) -> Option<Arc<Listing>> {
        self.listings
            .lock()
            .get(key)
            .filter(|k| k.is_fresh())
            .map(|k| k.listing.clone())
    }

    /// The listing of prefix `key`, from the cache while fresh.
    pub fn listing(&self, key: &str) -> Result<Arc<Listing>, RemoteError> {
        if let Some(l) = self.cached(key) {
            return Ok(l);
        }
        let depth = key.split('/').filter(|s| !s.is_empty()).count();
        if key.len() > MAX_KEY_BYTES || depth > MAX_DEPTH {
            let url = self.root.redacted();
            log::warn!(
                "{url}: prefix {depth} levels, {} bytes deep not listed",
                key.len()
            );
            return Err(RemoteError::Unsupported {
                url,
                detail: format!(
                    "a prefix deeper than {MAX_DEPTH} levels or {MAX_KEY_BYTES} bytes is not listed"
                ),
            });
        }
        let started = Instant::now();
        let listing = Arc::new(self.location(key).list()?);
        let fresh_for = freshness(self.ttl, started.elapsed());
        if fresh_for > self.ttl {
            log::debug!(
                "{}: listing {key:?} took {:?}; kept {fresh_for:?}",
                self.root.redacted(),
                started.elapsed()
            );
        }
        let mut listings = self.listings.lock();
        listings.retain(|_, k| k.is_fresh());
        listings.insert(
            key.to_string(),
            Kept {
                at: Instant::now(),
                fresh_for,
                listing: listing.clone(),
            },
        );
        Ok(listing)
    }

    /// Whether the object `key` (listed as `object`) starts like a frame:
    /// one 11-byte GET the first time each (key, size, ETag) is seen. An
    /// object listed shorter than a frame header is none (where listings
    /// give sizes).
    pub fn sniff(&self, key: &str, object: &ListedObject) -> bool {
        if object.size < 11 && self.root.lists_sizes() {
            return false;
        }
        let id = (key.to_string(), object.size, object.etag.clone());
        if let Some(&known) = self.sniffed.lock().get(&id) {
            return known;
        }
        let frame = match self.location(key).read_head(11) {
            Ok(head) => looks_like_frame(&head),
            Err(e) => {
                log::warn!("{e}");
                return false;
            }
        };
        self.sniffed.lock().put(id, frame);
        frame
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_is_kept_ten_times_what_it_cost_within_bounds() {
        let ttl = Duration::from_secs(1);
        assert_eq!(
            freshness(ttl, Duration::from_millis(20)),
            ttl,
            "small: the TTL"
        );
        assert_eq!(
            freshness(ttl, Duration::from_millis(300)),
            Duration::from_secs(3)
        );
        assert_eq!(freshness(ttl, Duration::from_secs(30)), LISTING_KEPT_MOST);
        let long_ttl = Duration::from_secs(120);
        assert_eq!(
            freshness(long_ttl, Duration::from_secs(3)),
            long_ttl,
            "never below the TTL"
        );
    }
}
