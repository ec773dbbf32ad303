//! Codecs: turn one compressed Blosc2 stream into its raw bytes.
//!
//! Each codec lives in its own file with one entry point that decodes `src`
//! into exactly `dst.len()` bytes. Callers always know the raw size of a
//! stream (from the chunk header), so every decoder fills `dst` completely
//! or fails: a short or long output is corruption, never "partial success".

pub mod blosclz;
pub mod lz4;
pub mod zlib;
pub mod zstd;

/// What can go wrong inside one codec stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    /// The stream ended before the output was complete, or a token read past it.
    #[error("{codec} stream truncated")]
    Truncated { codec: &'static str },
    /// A match referred to bytes before the start of the output (or dictionary).
    #[error("{codec} match offset {offset} points before the start of the output")]
    BadOffset { codec: &'static str, offset: usize },
    /// The decoded length differs from what the chunk header promised.
    #[error("{codec} produced {got} bytes where {expected} were expected")]
    WrongLength { codec: &'static str, expected: usize, got: usize },
    /// The underlying library reported a corrupt stream.
    #[error("{codec} stream corrupt: {detail}")]
    Corrupt { codec: &'static str, detail: String },
}

/// A small deterministic generator (xorshift) for the codec tests' inputs.
#[cfg(test)]
pub(crate) mod test_rng {
    pub struct Rng(pub u64);

    impl Rng {
        pub fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        pub fn bytes(&mut self, n: usize) -> Vec<u8> {
            (0..n).map(|_| self.next() as u8).collect()
        }
    }
}
