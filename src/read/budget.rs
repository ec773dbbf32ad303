//! One least-recently-used map bounded by a byte budget, for every cache
//! of the daemon that holds things of different sizes: decoded blocks
//! ([`super::block_cache`]), chunk layouts ([`super::layouts`]) and the state
//! array and store entries build when they load (`catalog::meta_cache`).
//!
//! Each value is put with its weight (its bytes plus whatever bookkeeping
//! its owner charges); putting a value pops the least recently used ones
//! until the total fits the budget again. Popped values are handed back to
//! the caller, so it can drop them (or recycle their buffers) outside its
//! lock. The map is not synchronised: owners keep it behind their lock.

use std::hash::Hash;

/// A least-recently-used map whose values' weights sum to at most a budget.
pub struct ByteLru<K: Hash + Eq, V> {
    map: lru::LruCache<K, (V, usize)>,
    bytes: usize,
    budget: usize,
}

impl<K: Hash + Eq, V> ByteLru<K, V> {
    /// An empty map holding at most `budget` bytes of weight.
    pub fn new(budget: usize) -> ByteLru<K, V> {
        ByteLru {
            map: lru::LruCache::unbounded(),
            bytes: 0,
            budget,
        }
    }

    /// The budget in bytes.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Weight held now and number of values.
    pub fn usage(&self) -> (usize, usize) {
        (self.bytes, self.map.len())
    }

    /// The value under `key`, now the most recently used.
    pub fn get(&mut self, key: &K) -> Option<&V> {
        self.map.get(key).map(|(v, _)| v)
    }

    /// Whether `key` is held (its recency is left alone).
    pub fn contains(&self, key: &K) -> bool {
        self.map.contains(key)
    }

    /// Every value with its key, most recent first (recency left alone).
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.map.iter().map(|(k, (v, _))| (k, v))
    }

    /// Take `key` out.
    pub fn remove(&mut self, key: &K) -> Option<V> {
        let (value, weight) = self.map.pop(key)?;
        self.bytes -= weight;
        Some(value)
    }

    /// Put `value` under `key` with `weight` bytes, then pop the least
    /// recently used values until the total fits the budget. A value heavier
    /// than the whole budget is not kept (it comes back among the popped).
    /// Returns what was popped or replaced, for the caller to drop.
    pub fn put(&mut self, key: K, value: V, weight: usize) -> Vec<V> {
        if weight > self.budget {
            return vec![value];
        }
        let mut out = Vec::new();
        if let Some((old, old_weight)) = self.map.put(key, (value, weight)) {
            self.bytes -= old_weight;
            out.push(old);
        }
        self.bytes += weight;
        out.extend(self.shrink_to(self.budget));
        out
    }

    /// [`Self::put`], except that a value heavier than the whole budget is
    /// kept too, alone (everything else is popped): for caches where a
    /// value dropped at once would be built again at once.
    pub fn put_even_alone(&mut self, key: K, value: V, weight: usize) -> Vec<V> {
        if weight <= self.budget {
            return self.put(key, value, weight);
        }
        let mut out = self.shrink_to(0);
        if let Some((old, old_weight)) = self.map.put(key, (value, weight)) {
            self.bytes -= old_weight;
            out.push(old);
        }
        self.bytes += weight;
        out
    }

    /// Pop least recently used values until at most `bytes` are held.
    pub fn shrink_to(&mut self, bytes: usize) -> Vec<V> {
        let mut out = Vec::new();
        while self.bytes > bytes {
            match self.map.pop_lru() {
                Some((_, (value, weight))) => {
                    self.bytes -= weight;
                    out.push(value);
                }
                None => break,
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_least_recently_used_until_the_budget_fits() {
        let mut lru: ByteLru<u32, &str> = ByteLru::new(100);
        assert!(lru.put(1, "a", 40).is_empty());
        assert!(lru.put(2, "b", 40).is_empty());
        assert_eq!(lru.get(&1), Some(&"a"), "1 is now the most recent");
        assert_eq!(lru.put(3, "c", 40), vec!["b"], "2 was the least recent");
        assert_eq!(lru.usage(), (80, 2));
        assert_eq!(
            lru.put(3, "C", 10),
            vec!["c"],
            "a replaced value comes back"
        );
        assert_eq!(lru.usage(), (50, 2));
        assert_eq!(
            lru.put(9, "huge", 101),
            vec!["huge"],
            "heavier than the budget: not kept"
        );
        assert!(!lru.contains(&9));
        assert_eq!(lru.remove(&1), Some("a"));
        assert_eq!(lru.usage(), (10, 1));
        assert_eq!(lru.shrink_to(0), vec!["C"]);
        assert_eq!(lru.usage(), (0, 0));
        lru.put(1, "a", 40);
        assert_eq!(lru.put_even_alone(2, "big", 150), vec!["a"], "kept alone");
        assert_eq!(lru.usage(), (150, 1));
        assert_eq!(
            lru.put_even_alone(3, "c", 10),
            vec!["big"],
            "and the next one pushes it out"
        );
        assert_eq!(lru.usage(), (10, 1));
    }
}
