//! The one deterministic generator the tests use for their inputs (an
//! xorshift64), so that a failing case replays from its seed and no test
//! hand-rolls its own. It imports nothing, so every layer's unit tests may
//! use it (`crate::test_rng::Rng`, compiled for tests only); the integration
//! suites include this same file as `common::rng`.
//!
//! Not for anything but test inputs: it is small and fast, not random in any
//! stronger sense.

/// An xorshift64 generator (shifts 13, 7, 17).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator starting from `seed` (0, which xorshift cannot leave,
    /// starts from a fixed odd constant instead).
    pub fn new(seed: u64) -> Rng {
        Rng(if seed == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            seed
        })
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// An index in `0..n` (0 when `n` is 0).
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// `n` bytes, the low byte of each step.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    /// The first steps from seed 1, worked by hand from the three shifts:
    /// 1 ^ 1<<13 = 0x2001; ^ >>7 (0x40) = 0x2041; ^ <<17 (0x4082_0000)
    /// = 0x4082_2041.
    #[test]
    fn steps_are_xorshift64() {
        let mut rng = Rng::new(1);
        assert_eq!(rng.next_u64(), 0x4082_2041);
        let mut zero = Rng::new(0);
        assert_ne!(zero.next_u64(), 0);
        assert_eq!(Rng::new(5).below(0), 0);
        assert!((0..1000).all(|_| rng.below(7) < 7));
    }
}
