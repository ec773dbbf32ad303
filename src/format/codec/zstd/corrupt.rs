//! The one error both zstd decoders give for a stream they cannot decode,
//! so libzstd and ruzstd builds report a bad chunk the same way.

use crate::format::codec::CodecError;

/// The codec's name in messages.
pub(super) const CODEC: &str = "zstd";

/// A corrupt zstd stream, with the decoder's `detail`.
pub(super) fn corrupt(detail: impl ToString) -> CodecError {
    CodecError::Corrupt {
        codec: CODEC,
        detail: detail.to_string(),
    }
}
