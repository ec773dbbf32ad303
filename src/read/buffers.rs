//! Recycled byte buffers for decoded blocks.
//!
//! A scan decodes one block after another into buffers of the same size
//! and the cache evicts old ones at the same pace. Freeing and allocating
//! them costs more than the copies around them: a fresh allocation is
//! zero-filled and its pages are faulted in again (measured with `perf` on
//! `blosc2fs cat`: about a third of its CPU time went to `memset` and
//! `clear_page`). So buffers that leave the cache unshared come back here
//! and the next decode of that size takes one.
//!
//! A recycled buffer holds old bytes: it is only handed to code that
//! overwrites every byte of it (the format layer's block decoders do; a
//! test decodes every fixture into poisoned buffers to keep it so).

use parking_lot::Mutex;

/// Buffers kept at most.
const KEEP: usize = 16;
/// Bytes kept at most (spare buffers count against the daemon's memory
/// beside the cache budget).
const KEEP_BYTES: usize = 16 << 20;

/// A small stack of spare buffers, taken by length.
#[derive(Debug, Default)]
pub struct BufferPool {
    spare: Mutex<Vec<Vec<u8>>>,
}

impl BufferPool {
    /// A buffer of exactly `len` bytes: a recycled one of that length when
    /// there is one (its contents are stale), else a new zeroed one.
    pub fn take(&self, len: usize) -> Vec<u8> {
        let mut spare = self.spare.lock();
        match spare.iter().rposition(|b| b.len() == len) {
            Some(i) => spare.swap_remove(i),
            None => {
                drop(spare);
                vec![0u8; len]
            }
        }
    }

    /// Give a buffer back for reuse (dropped when the pool is full).
    pub fn give(&self, buffer: Vec<u8>) {
        if buffer.is_empty() {
            return;
        }
        let mut spare = self.spare.lock();
        let held: usize = spare.iter().map(Vec::len).sum();
        if spare.len() < KEEP && held + buffer.len() <= KEEP_BYTES {
            spare.push(buffer);
        }
    }

    /// Bytes held by spare buffers.
    pub fn held(&self) -> usize {
        self.spare.lock().iter().map(Vec::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_back_by_length_and_the_pool_is_bounded() {
        let pool = BufferPool::default();
        let a = pool.take(100);
        assert_eq!(a, vec![0u8; 100], "a new buffer is zeroed");
        let ptr = a.as_ptr();
        pool.give(a);
        assert_eq!(pool.take(50).len(), 50, "no buffer of 50 bytes: a new one");
        let again = pool.take(100);
        assert_eq!(again.as_ptr(), ptr, "the buffer of 100 bytes is reused");
        for _ in 0..KEEP + 5 {
            pool.give(vec![1u8; 10]);
        }
        assert_eq!(pool.held(), KEEP * 10);
        let pool = BufferPool::default();
        pool.give(vec![0u8; KEEP_BYTES]);
        pool.give(vec![0u8; 1]);
        assert_eq!(pool.held(), KEEP_BYTES, "the byte bound holds");
    }
}
