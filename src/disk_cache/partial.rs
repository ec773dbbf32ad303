//! One granule a re-read handed over in parts: reads that do not line up
//! with granules (a `data.npy` header in front, a chunk file's run starting
//! mid-granule) each bring some of its bytes, and the granule goes to the
//! writer once they add up to all of it.

use std::time::Instant;

/// The bytes of one granule gathered so far.
pub(super) struct Partial {
    /// The granule's bytes (zeros where not yet given).
    bytes: Vec<u8>,
    /// The byte ranges of `bytes` given so far, sorted and disjoint.
    have: Vec<(usize, usize)>,
    /// When its first part came (the oldest goes first when room is short).
    pub(super) since: Instant,
}

impl Partial {
    /// An empty granule of `len` bytes.
    pub(super) fn new(len: usize) -> Partial {
        Partial {
            bytes: vec![0; len],
            have: Vec::new(),
            since: Instant::now(),
        }
    }

    /// Take what `bytes` (at `offset` of `data`) hold of this granule, which
    /// starts at `granule_start`.
    pub(super) fn add(&mut self, granule_start: u64, offset: u64, bytes: &[u8]) {
        let len = self.bytes.len() as u64;
        let a = offset.max(granule_start);
        let b = (offset + bytes.len() as u64).min(granule_start + len);
        if a >= b {
            return;
        }
        let (from, to) = ((a - offset) as usize, (b - offset) as usize);
        let at = (a - granule_start) as usize;
        self.bytes[at..at + (to - from)].copy_from_slice(&bytes[from..to]);
        self.have.push((at, at + (to - from)));
        self.have.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(self.have.len());
        for &(s, e) in &self.have {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        self.have = merged;
    }

    /// Every byte of the granule was given.
    pub(super) fn is_complete(&self) -> bool {
        self.have == [(0, self.bytes.len())]
    }

    /// The granule's bytes (complete or not).
    pub(super) fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_in_any_order_and_overlapping_add_up_to_the_granule() {
        let source: Vec<u8> = (0..100u32).map(|i| i as u8).collect();
        // The granule is bytes 40..60 of the data.
        let mut p = Partial::new(20);
        p.add(40, 50, &source[50..70]);
        assert!(!p.is_complete());
        p.add(40, 30, &source[30..45]);
        assert!(!p.is_complete(), "45..50 missing");
        p.add(40, 0, &source[0..10]);
        p.add(40, 44, &source[44..52]);
        assert!(p.is_complete());
        assert_eq!(p.into_bytes(), source[40..60]);
    }
}
