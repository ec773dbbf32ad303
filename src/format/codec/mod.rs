//! Codecs: turn one compressed Blosc2 stream into its raw bytes.
//!
//! Each codec lives in its own file with one entry point that decodes `src`
//! into exactly `dst.len()` bytes. Callers always know the raw size of a
//! stream (from the chunk header), so every decoder fills `dst` completely
//! or fails: a short or long output is corruption, never "partial success".

pub mod blosclz;
pub mod jpeg2000;
pub mod lz4;
pub mod ndlz;
mod ndlz4;
mod ndlz8;
pub mod openzl;
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
    pub const OPENHTJ2K: u8 = 36;
    pub const GROK: u8 = 37;
    pub const OPENZL: u8 = 38;
    pub const J2K: u8 = 39;
    pub const HTJ2K: u8 = 40;
}

/// The name C-Blosc2 gives codec `id` ("user-defined" for ids it does not define).
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
        codec_id::OPENHTJ2K => "openhtj2k",
        codec_id::GROK => "grok",
        codec_id::OPENZL => "openzl",
        codec_id::J2K => "j2k",
        codec_id::HTJ2K => "htj2k",
        _ => "user-defined",
    };
    known.to_string()
}

/// Whether blosc2fs decodes a codec or filter id, and if not, why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// blosc2fs decodes it.
    Decoded,
    /// C-Blosc2 decodes it only with a separate plugin package (named here,
    /// as pip knows it), which blosc2fs does not include.
    Plugin(&'static str),
    /// A user-registered id (160-255) or one no release of C-Blosc2 defines.
    Unknown,
}

impl Support {
    /// Whether blosc2fs can decode it.
    pub fn decoded(self) -> bool {
        self == Support::Decoded
    }
}

impl std::fmt::Display for Support {
    /// The end of a sentence that starts with the codec or filter's name and id.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Support::Decoded => write!(f, "is decoded by blosc2fs"),
            Support::Plugin(package) => write!(
                f,
                "needs the {package} plugin, which blosc2fs does not include"
            ),
            Support::Unknown => write!(
                f,
                "is not one C-Blosc2 ships (a user-registered id?), so blosc2fs cannot decode it"
            ),
        }
    }
}

/// Whether blosc2fs decodes codec `id` (C-Blosc2's codec ids).
pub fn codec_support(id: u8) -> Support {
    match id {
        codec_id::BLOSCLZ | codec_id::LZ4 | codec_id::LZ4HC | codec_id::ZLIB | codec_id::ZSTD => {
            Support::Decoded
        }
        codec_id::NDLZ | codec_id::ZFP_ACC | codec_id::ZFP_PREC | codec_id::ZFP_RATE => {
            Support::Decoded
        }
        // JPEG 2000 and HTJ2K, in pure Rust (jpeg2000.rs).
        codec_id::OPENHTJ2K | codec_id::GROK | codec_id::J2K | codec_id::HTJ2K => Support::Decoded,
        // OpenZL through its C library, under the default feature `openzl-c`.
        codec_id::OPENZL if openzl::AVAILABLE => Support::Decoded,
        codec_id::OPENZL => Support::Plugin("blosc2-openzl"),
        _ => Support::Unknown,
    }
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
    WrongLength {
        codec: &'static str,
        expected: usize,
        got: usize,
    },
    /// The underlying library reported a corrupt stream.
    #[error("{codec} stream corrupt: {detail}")]
    Corrupt { codec: &'static str, detail: String },
    /// A well-formed stream this build cannot decode (the detail says which
    /// build can).
    #[error("{codec}: {detail}")]
    Unsupported { codec: &'static str, detail: String },
}
