//! Codecs: turn one compressed Blosc2 stream into its raw bytes.
//!
//! Each codec lives in its own file with one entry point that decodes `src`
//! into exactly `dst.len()` bytes. Callers always know the raw size of a
//! stream (from the chunk header), so every decoder fills `dst` completely
//! or fails: a short or long output is corruption, never "partial success".

pub mod blosclz;
pub mod lz4;
#[cfg(test)]
mod test_chunks;
pub mod zfp;
pub mod zlib;
pub mod zstd;

/// Codec ids as C-Blosc2 numbers them (`BLOSC_BLOSCLZ` = 0, ...; plugins
/// from 32): the one table of ids and names. The frame header stores these
/// ids; a chunk header stores a 3-bit format code that maps onto them
/// (see `chunk::header::Codec`).
pub mod codec_id {
    pub const BLOSCLZ: u8 = 0;
    pub const LZ4: u8 = 1;
    pub const LZ4HC: u8 = 2;
    pub const SNAPPY: u8 = 3;
    pub const ZLIB: u8 = 4;
    pub const ZSTD: u8 = 5;
    pub const NDLZ: u8 = 32;
    pub const ZFP_ACC: u8 = 33;
    pub const ZFP_PREC: u8 = 34;
    pub const ZFP_RATE: u8 = 35;
}

/// The name C-Blosc2 gives codec `id` (user-defined ids get a descriptive name).
pub fn codec_name(id: u8) -> String {
    let known = match id {
        codec_id::BLOSCLZ => "blosclz",
        codec_id::LZ4 => "lz4",
        codec_id::LZ4HC => "lz4hc",
        codec_id::SNAPPY => "snappy",
        codec_id::ZLIB => "zlib",
        codec_id::ZSTD => "zstd",
        codec_id::NDLZ => "ndlz",
        codec_id::ZFP_ACC => "zfp_acc",
        codec_id::ZFP_PREC => "zfp_prec",
        codec_id::ZFP_RATE => "zfp_rate",
        36 => "openhtj2k",
        37 => "grok",
        38 => "openzl",
        39 => "j2k",
        40 => "htj2k",
        other => return format!("user-defined codec {other}"),
    };
    known.to_string()
}

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
