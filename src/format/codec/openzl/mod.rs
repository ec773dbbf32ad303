//! OpenZL (plugin codec 38, `blosc2-openzl`): one OpenZL frame per Blosc2
//! block stream, decoded by OpenZL's own C library.
//!
//! What the plugin writes (blosc2-openzl 0.0.1's C source): each stream is
//! one whole OpenZL frame (magic `d7 a5 b1 d7`) whose single output is the
//! stream's raw bytes, typed as structs of the chunk's item size (as serial
//! bytes when the stream's length is not a multiple of it). Nothing comes
//! before or after the frame, and struct outputs are the items in memory
//! order, so the output is the stream exactly as Blosc2 laid it out.
//! `codec_meta` picks the compression graph (bit 0 LZ4 rather than Zstd,
//! bit 1 shuffle, bit 2 delta, bit 3 one lane per byte, bit 4 checksums);
//! an OpenZL frame describes its own graph, so decoding needs none of them.
//! Checksums a frame carries are always verified here (OpenZL's default);
//! the plugin verifies them when bit 4 is set, and without it writes none.
//!
//! Stricter than the plugin, never looser: the size the frame header claims
//! is read before decoding and must be the stream's raw size (from the
//! Blosc2 block): a larger claim is refused before anything is allocated
//! for it, and a smaller one too, since it would leave part of the block
//! unwritten (the plugin would return the buffer as it was). OpenZL's
//! internal streams are sized from the frame's graph, not from that claim,
//! so its own allocations are capped too (eight times the stream plus
//! 4 MiB; an honest frame needs far less). The output's type must be what
//! the plugin asks for (structs of the item size, or serial bytes).
//!
//! OpenZL is C, so it sits behind the default cargo feature `openzl-c`;
//! without it (the local-only build, no C) the codec stays refused with the
//! plugin named, and [`decompress`] answers [`CodecError::Unsupported`].
//! All `unsafe` lives in `ffi.rs`.

use super::CodecError;

#[cfg(feature = "openzl-c")]
mod ffi;

/// The codec's name in errors.
const CODEC: &str = "openzl";

/// Whether this build decodes OpenZL (the `openzl-c` feature).
pub const AVAILABLE: bool = cfg!(feature = "openzl-c");

/// What decodes OpenZL in this build, as `blosc2fs --version` says: the C
/// library's version and the frame format versions it reads.
pub fn backend() -> String {
    #[cfg(feature = "openzl-c")]
    {
        let ((major, minor, patch), (oldest, newest)) =
            (ffi::LIBRARY_VERSION, ffi::FORMAT_VERSIONS);
        format!("OpenZL {major}.{minor}.{patch} (C), frame formats {oldest}-{newest}")
    }
    #[cfg(not(feature = "openzl-c"))]
    {
        "none (built without the cargo feature `openzl-c`)".to_string()
    }
}

/// Decode the OpenZL frame in `src` (one Blosc2 stream) into exactly
/// `dst.len()` bytes; `typesize` is the chunk header's item size.
pub fn decompress(src: &[u8], dst: &mut [u8], typesize: usize) -> Result<(), CodecError> {
    #[cfg(feature = "openzl-c")]
    {
        backend::decompress(src, dst, typesize)
    }
    #[cfg(not(feature = "openzl-c"))]
    {
        let _ = (src, dst, typesize);
        Err(CodecError::Unsupported {
            codec: CODEC,
            detail: "this build has no OpenZL decoder (cargo feature `openzl-c`)".into(),
        })
    }
}

#[cfg(feature = "openzl-c")]
mod backend {
    use super::ffi::{self, DecompressionContext, OpenZlError};
    use super::{CodecError, CODEC};
    use std::cell::RefCell;

    thread_local! {
        /// One context per decoding thread, made on first use and reused:
        /// creating one per block costs more than small blocks' decoding.
        static CONTEXT: RefCell<Option<DecompressionContext>> = const { RefCell::new(None) };
    }

    /// The frame magic (`ZL_MAGIC_NUMBER` family: `d7 a5 b1 d7`, then the
    /// format version in the low byte of the little-endian word).
    const MAGIC_PREFIX: [u8; 3] = [0xa5, 0xb1, 0xd7];

    pub(super) fn decompress(
        src: &[u8],
        dst: &mut [u8],
        typesize: usize,
    ) -> Result<(), CodecError> {
        if src.len() < 4 {
            return Err(CodecError::Truncated { codec: CODEC });
        }
        if src[1..4] != MAGIC_PREFIX {
            return Err(corrupt(format!(
                "not an OpenZL frame (starts {:02x} {:02x} {:02x} {:02x})",
                src[0], src[1], src[2], src[3]
            )));
        }
        // The header's claim, checked against the block before decoding.
        let claimed = ffi::decompressed_size(src).map_err(from_ffi)?;
        if claimed != dst.len() as u64 {
            return Err(corrupt(format!(
                "frame claims {claimed} bytes for a stream of {} bytes",
                dst.len()
            )));
        }
        let decoded = CONTEXT.with(|cell| {
            let mut slot = cell.borrow_mut();
            let ctx = match slot.as_mut() {
                Some(ctx) => ctx,
                None => slot.insert(DecompressionContext::new()?),
            };
            let result = ctx.decompress_into(src, dst, budget(dst.len()));
            if result.is_err() {
                // A fresh context after a failure: nothing of a bad frame
                // stays in the one the next block uses.
                *slot = None;
            }
            result
        });
        let decoded = decoded.map_err(from_ffi)?;
        let want = (typesize > 0 && dst.len().is_multiple_of(typesize)).then_some(typesize);
        if decoded.struct_width != want {
            let kind = |w: Option<usize>| match w {
                Some(w) => format!("{w}-byte structs"),
                None => "serial bytes".to_string(),
            };
            return Err(corrupt(format!(
                "frame holds {} where the plugin writes {}",
                kind(decoded.struct_width),
                kind(want)
            )));
        }
        if decoded.len != dst.len() {
            return Err(CodecError::WrongLength {
                codec: CODEC,
                expected: dst.len(),
                got: decoded.len,
            });
        }
        Ok(())
    }

    /// OpenZL's working memory allowed for a stream of `raw_len` bytes:
    /// its internal streams are sized from the frame's graph, which a
    /// hostile frame can make huge, while an honest frame of the plugin's
    /// graphs needs a few times the stream (measured in the tests).
    pub(super) fn budget(raw_len: usize) -> usize {
        raw_len.saturating_mul(8).saturating_add(4 << 20)
    }

    fn corrupt(detail: String) -> CodecError {
        CodecError::Corrupt {
            codec: CODEC,
            detail,
        }
    }

    fn from_ffi(e: OpenZlError) -> CodecError {
        corrupt(e.to_string())
    }
}

#[cfg(test)]
mod tests;
