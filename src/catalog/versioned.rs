//! The one state machine of a presented entry that loads a version of its
//! source: an array ([`super::entry`]) or a store ([`super::store`]).
//!
//! An entry remembers the stamp (the source's identity: device, inode,
//! size, mtime, permissions) of the version it presents, and holds that
//! version only weakly: the [`MetaCache`] and open files hold it. So:
//!
//! - **used while held**: the version is returned (a mount root first
//!   checks its source and reloads in place when it changed);
//! - **used after eviction**: the source is loaded again, if it still has
//!   the stamp the entry presents; if it changed, ESTALE (the tree gives
//!   the path a new node, whose version is the new one: never a mix);
//! - **retired** (a newer node presents the path): the version lives on
//!   only in the open files holding it; otherwise ESTALE.

use parking_lot::Mutex;
use std::sync::{Arc, Weak};

use super::meta_cache::MetaCache;

/// Why a version is being loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reload {
    /// Never loaded before.
    First,
    /// Loaded again after the cache let go of it: same stamp, same version.
    Again,
    /// A mount root whose source changed: a new version in place.
    Changed,
}

/// A version of a source, loaded on demand and kept within the cache's budget.
pub struct Versioned<S, T> {
    id: u64,
    in_place: bool,
    cache: Arc<MetaCache>,
    state: Mutex<State<S, T>>,
    /// Held while a version loads (one load at a time).
    loading: Mutex<()>,
}

struct State<S, T> {
    /// The stamp of the version presented (`None` until first loaded).
    stamp: Option<S>,
    /// The number of the version presented: the same when it is loaded
    /// again after eviction, a new one when the source changed.
    number: u64,
    held: Weak<T>,
    retired: bool,
}

/// A number no version had before.
fn next_number() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The error of an entry whose version is gone (ESTALE: see `FsError::Stale`).
pub(crate) fn stale() -> std::io::Error {
    std::io::Error::from_raw_os_error(libc::ESTALE)
}

impl<S: PartialEq + Clone, T: Send + Sync + 'static> Versioned<S, T> {
    /// An entry not loaded yet; `in_place` for a mount root (reloaded in
    /// place when its source changes, since its node cannot be replaced).
    pub fn new(cache: Arc<MetaCache>, in_place: bool) -> Versioned<S, T> {
        Versioned {
            id: cache.new_id(),
            in_place,
            cache,
            state: Mutex::new(State {
                stamp: None,
                number: 0,
                held: Weak::new(),
                retired: false,
            }),
            loading: Mutex::new(()),
        }
    }

    /// Whether the source changed (or vanished) since this entry loaded it,
    /// or the entry was retired. `now` stats the source. Never waits for a
    /// load in progress (one stalled on a server): until it ends, the entry
    /// presents what it presented before.
    pub fn is_stale(&self, now: impl FnOnce() -> std::io::Result<S>) -> bool {
        let stamp = {
            let state = self.state.lock();
            if state.retired {
                return true;
            }
            state.stamp.clone()
        };
        match stamp {
            None => false,
            Some(stamp) => now().map_or(true, |n| n != stamp),
        }
    }

    /// The version held now, if any (no load, no check).
    pub fn held(&self) -> Option<Arc<T>> {
        self.state.lock().held.upgrade()
    }

    /// A newer node presents the path: let go of this version (open files
    /// keep it as long as they need it). Returns its number (0: never loaded).
    pub fn retire(&self) -> u64 {
        let mut state = self.state.lock();
        state.retired = true;
        self.cache.forget(self.id);
        state.number
    }

    /// The version presented: held, or loaded now by `load` (given the
    /// stamp `now` found, why it loads and the version's number: distinct
    /// for every version of every entry, kept when the same version is
    /// loaded again), then kept by the cache at the
    /// weight `weigh` gives it. When a mount root reloads in place, the
    /// version it replaced comes back too.
    pub fn current(
        &self,
        now: impl Fn() -> std::io::Result<S>,
        load: impl FnOnce(&S, Reload, u64) -> T,
        weigh: impl Fn(&T) -> usize,
    ) -> std::io::Result<(Arc<T>, Option<Arc<T>>)> {
        {
            let state = self.state.lock();
            if let Some(held) = state.held.upgrade() {
                if state.retired || !self.in_place {
                    self.cache.touch(self.id);
                    return Ok((held, None));
                }
            }
        }
        // One load at a time per entry; the state is locked only between
        // the steps, so a load stalled on a server holds up only the
        // callers that need this entry's version.
        let _loading = self.loading.lock();
        let (held, retired, old) = {
            let state = self.state.lock();
            (state.held.upgrade(), state.retired, state.stamp.clone())
        };
        let mut replaced = None;
        let (stamp, why) = match held {
            Some(held) if retired || !self.in_place => {
                self.cache.touch(self.id);
                return Ok((held, None));
            }
            Some(held) => {
                let stamp = now()?;
                if old.as_ref() == Some(&stamp) {
                    self.cache.touch(self.id);
                    return Ok((held, None));
                }
                replaced = Some(held);
                (stamp, Reload::Changed)
            }
            None if retired => return Err(stale()),
            None => {
                let stamp = now()?;
                match &old {
                    None => (stamp, Reload::First),
                    Some(old) if *old == stamp => (stamp, Reload::Again),
                    Some(_) if self.in_place => (stamp, Reload::Changed),
                    // Changed while nothing held it: the tree makes a new node.
                    Some(_) => return Err(stale()),
                }
            }
        };
        let number = {
            let mut state = self.state.lock();
            if why != Reload::Again {
                state.number = next_number();
            }
            state.number
        };
        let value = Arc::new(load(&stamp, why, number));
        let mut state = self.state.lock();
        // Retired while it loaded: open files may use it, the cache keeps it not.
        if !state.retired {
            self.cache.keep(self.id, value.clone(), weigh(&value));
        }
        state.held = Arc::downgrade(&value);
        state.stamp = Some(stamp);
        Ok((value, replaced))
    }
}

impl<S, T> Drop for Versioned<S, T> {
    fn drop(&mut self) {
        self.cache.forget(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn reloads_after_eviction_only_the_same_stamp() {
        let cache = Arc::new(MetaCache::new(100));
        let entry: Versioned<u32, String> = Versioned::new(cache.clone(), false);
        let stamp = Cell::new(1);
        let loads = Cell::new(Vec::new());
        let load = |s: &u32, why: Reload, _n: u64| {
            let mut l = loads.take();
            l.push((*s, why));
            loads.set(l);
            format!("v{s}")
        };
        let (v, _) = entry.current(|| Ok(stamp.get()), load, |_| 60).unwrap();
        assert_eq!(*v, "v1");
        drop(v);
        // Another entry's version pushes this one out of the cache.
        let other: Versioned<u32, String> = Versioned::new(cache.clone(), false);
        let (_keep, _) = other
            .current(|| Ok(9), |_, _, _| "x".into(), |_| 60)
            .unwrap();
        assert!(entry.held().is_none(), "evicted and nothing holds it");
        let (v, _) = entry.current(|| Ok(stamp.get()), load, |_| 60).unwrap();
        assert_eq!(*v, "v1");
        assert_eq!(loads.take(), vec![(1, Reload::First), (1, Reload::Again)]);
        drop(v);
        let (_keep2, _) = other
            .current(|| Ok(9), |_, _, _| "x".into(), |_| 60)
            .unwrap();
        drop(_keep);
        let third: Versioned<u32, String> = Versioned::new(cache.clone(), false);
        let (_k3, _) = third
            .current(|| Ok(3), |_, _, _| "y".into(), |_| 60)
            .unwrap();
        stamp.set(2);
        assert!(entry.is_stale(|| Ok(stamp.get())));
        let err = entry
            .current(
                || Ok(stamp.get()),
                |_, _, _| unreachable!("never a mix"),
                |_| 60,
            )
            .unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ESTALE));
    }

    #[test]
    fn a_retired_version_lives_only_where_held() {
        let cache = Arc::new(MetaCache::new(1000));
        let entry: Versioned<u32, String> = Versioned::new(cache.clone(), false);
        let (held, _) = entry
            .current(|| Ok(1), |_, _, n| format!("v1 #{n}"), |_| 10)
            .unwrap();
        let number = entry.retire();
        assert_ne!(number, 0);
        assert_eq!(cache.stats().entries, 0);
        let (again, _) = entry
            .current(|| Ok(1), |_, _, _| unreachable!(), |_| 10)
            .unwrap();
        assert!(
            Arc::ptr_eq(&held, &again),
            "an open file's version is still served"
        );
        assert_eq!(*again, format!("v1 #{number}"));
        drop((held, again));
        assert_eq!(
            entry
                .current(|| Ok(1), |_, _, _| unreachable!(), |_| 10)
                .unwrap_err()
                .raw_os_error(),
            Some(libc::ESTALE)
        );
    }

    #[test]
    fn a_mount_root_reloads_in_place() {
        let cache = Arc::new(MetaCache::new(1000));
        let entry: Versioned<u32, String> = Versioned::new(cache, true);
        let (v1, _) = entry
            .current(|| Ok(1), |s, _, _| format!("v{s}"), |_| 10)
            .unwrap();
        let (v2, replaced) = entry
            .current(|| Ok(2), |s, why, _| format!("v{s} {why:?}"), |_| 10)
            .unwrap();
        assert_eq!(*v2, "v2 Changed");
        assert!(Arc::ptr_eq(&replaced.unwrap(), &v1));
    }
}
