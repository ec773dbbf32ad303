//! What this process knows of the cache directory's entries (the bytes
//! each takes, its data file's inode, its last use), so that writing a
//! batch of fills costs a few `stat`s, not one per file of the directory:
//! a tree of 10,000 remote objects is 20,000 files, and stat'ing them all
//! for every batch made the first walk of such a tree quadratic.
//!
//! The view is read whole from the directory, then kept current by this
//! process's own changes: each change made under the lock names the entry
//! it touched, whose files are stat'ed again. Other mounts sharing the
//! directory are seen through a change count kept in `DIR/lock`: every
//! holder of the lock adds one to it, so finding a count other than the
//! one this process wrote last means another mount held the lock since
//! (and may have changed anything), and the view is read again. The bytes
//! still come from the file system alone (allocated blocks); the count
//! only says "someone else was here". The view is also read again after
//! [`REREAD_EVERY`], whatever the count says.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime};

/// One entry as found on disk.
#[derive(Debug, Clone)]
pub struct EntryOnDisk {
    /// File name stem (the key's name).
    pub name: String,
    /// Bytes its files take on disk (allocated blocks).
    pub bytes: u64,
    /// Inode of its data file (0 when it has none).
    pub data_ino: u64,
    /// Length of its data file.
    pub data_len: u64,
    /// When it was last filled or opened (its data file's mtime).
    pub last_used: SystemTime,
    /// Its map file exists.
    pub has_map: bool,
}

/// The longest a view is trusted without reading the directory again.
const REREAD_EVERY: Duration = Duration::from_secs(60);

/// The entries of the directory as this process last knew them.
#[derive(Debug)]
pub(super) struct DirView {
    /// The change count of `DIR/lock` this view is current at.
    count: u64,
    entries: HashMap<String, EntryOnDisk>,
    /// Bytes all entries take.
    used: u64,
    read: Instant,
}

impl DirView {
    /// The view of what a whole reading of the directory found, current
    /// at change count `count`.
    pub(super) fn of(found: Vec<EntryOnDisk>, count: u64) -> DirView {
        let used = found.iter().map(|f| f.bytes).sum();
        DirView {
            count,
            entries: found.into_iter().map(|f| (f.name.clone(), f)).collect(),
            used,
            read: Instant::now(),
        }
    }

    /// Whether the view is still current when the lock's change count
    /// was `before` as this process took the lock (and not too old).
    pub(super) fn current(&self, before: u64) -> bool {
        self.count == before && self.read.elapsed() < REREAD_EVERY
    }

    /// This process holds the lock at change count `count` now.
    pub(super) fn advance(&mut self, count: u64) {
        self.count = count;
    }

    /// Bytes all entries take.
    pub(super) fn used(&self) -> u64 {
        self.used
    }

    /// How many entries there are.
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The inode of entry `name`'s data file, if it has one.
    pub(super) fn data_ino(&self, name: &str) -> Option<u64> {
        self.entries
            .get(name)
            .map(|f| f.data_ino)
            .filter(|&ino| ino != 0)
    }

    /// Entry `name` is now as `found` says (`None`: gone).
    pub(super) fn set(&mut self, name: &str, found: Option<EntryOnDisk>) {
        if let Some(old) = self.entries.remove(name) {
            self.used -= old.bytes;
        }
        if let Some(f) = found {
            self.used += f.bytes;
            self.entries.insert(name.to_string(), f);
        }
    }

    /// The entries to evict, least recently used first (never those in
    /// `keep`), so that `need` more bytes fit in `budget`; they are gone
    /// from the view. `None` when even evicting every other entry would
    /// not make room.
    pub(super) fn evict_for(
        &mut self,
        need: u64,
        budget: u64,
        keep: &[&str],
    ) -> Option<Vec<String>> {
        if self.used + need <= budget {
            return Some(Vec::new());
        }
        let mut candidates: Vec<&EntryOnDisk> = self
            .entries
            .values()
            .filter(|f| !keep.contains(&f.name.as_str()))
            .collect();
        let freeable: u64 = candidates.iter().map(|f| f.bytes).sum();
        if self.used - freeable + need > budget {
            return None;
        }
        candidates.sort_by_key(|f| (f.last_used, f.name.clone()));
        let mut used = self.used;
        let mut names = Vec::new();
        for f in candidates {
            if used + need <= budget {
                break;
            }
            used -= f.bytes;
            names.push(f.name.clone());
        }
        for name in &names {
            self.set(name, None);
        }
        Some(names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(name: &str, bytes: u64, age_s: u64) -> EntryOnDisk {
        EntryOnDisk {
            name: name.into(),
            bytes,
            data_ino: 7,
            data_len: bytes,
            last_used: SystemTime::UNIX_EPOCH + Duration::from_secs(1000 - age_s),
            has_map: true,
        }
    }

    #[test]
    fn changes_are_counted_in_and_eviction_goes_oldest_first() {
        let mut view = DirView::of(vec![found("a", 10, 30), found("b", 20, 20)], 5);
        assert!(view.current(5) && !view.current(4));
        assert_eq!((view.used(), view.len()), (30, 2));
        view.set("c", Some(found("c", 5, 10)));
        view.set("b", Some(found("b", 25, 1)));
        assert_eq!(view.used(), 40);
        assert_eq!(view.evict_for(0, 40, &[]), Some(vec![]));
        // Room for 10 more within 40: "a" (the oldest) goes, not "c" (kept).
        assert_eq!(view.evict_for(10, 40, &["c"]), Some(vec!["a".to_string()]));
        assert_eq!((view.used(), view.data_ino("a")), (30, None));
        assert_eq!(view.evict_for(100, 40, &["c"]), None, "cannot fit");
        assert_eq!(view.used(), 30, "nothing evicted when it cannot fit");
        view.set("c", None);
        assert_eq!((view.used(), view.len()), (25, 1));
        view.advance(9);
        assert!(view.current(9));
    }
}
