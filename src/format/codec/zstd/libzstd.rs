//! The zstd decoder of the default build: libzstd (C, vendored by
//! `zstd-sys`), the fastest one measured (docs/design.md).
//!
//! Decompression contexts are kept per thread: one without dictionary, and
//! one for the most recently used dictionary (loading a dictionary builds its
//! entropy tables, so it is worth not repeating for every block).

use std::cell::RefCell;

use ::zstd::bulk::Decompressor;

use super::corrupt::{corrupt, CODEC};
use crate::format::codec::CodecError;

thread_local! {
    static PLAIN: RefCell<Option<Decompressor<'static>>> = const { RefCell::new(None) };
    static WITH_DICT: RefCell<Option<(Vec<u8>, Decompressor<'static>)>> = const { RefCell::new(None) };
}

/// See [`super::decompress`].
pub(super) fn decompress(src: &[u8], dst: &mut [u8], dict: &[u8]) -> Result<(), CodecError> {
    if dict.is_empty() {
        PLAIN.with(|cell| match cell.try_borrow_mut() {
            Ok(mut slot) => {
                if slot.is_none() {
                    *slot = Some(Decompressor::new().map_err(corrupt)?);
                }
                let d = slot.as_mut().expect("just filled");
                run(d, src, dst)
            }
            Err(_) => run(&mut Decompressor::new().map_err(corrupt)?, src, dst),
        })
    } else {
        WITH_DICT.with(|cell| match cell.try_borrow_mut() {
            Ok(mut slot) => {
                let reuse = matches!(slot.as_ref(), Some((cached, _)) if cached.as_slice() == dict);
                if !reuse {
                    // Drop the old context first so we never hold two.
                    *slot = None;
                    let d = Decompressor::with_dictionary(dict)
                        .map_err(|e| corrupt(format!("bad dictionary: {e}")))?;
                    *slot = Some((dict.to_vec(), d));
                }
                let (_, d) = slot.as_mut().expect("just filled");
                run(d, src, dst)
            }
            Err(_) => {
                let mut d = Decompressor::with_dictionary(dict)
                    .map_err(|e| corrupt(format!("bad dictionary: {e}")))?;
                run(&mut d, src, dst)
            }
        })
    }
}

fn run(d: &mut Decompressor<'_>, src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
    let expected = dst.len();
    match d.decompress_to_buffer(src, dst) {
        Ok(got) if got == expected => Ok(()),
        Ok(got) => Err(CodecError::WrongLength {
            codec: CODEC,
            expected,
            got,
        }),
        Err(e) => {
            // Give a length error when the frame header says so (typically
            // "destination buffer too small"); otherwise report zstd's words.
            if let Ok(Some(size)) = ::zstd::zstd_safe::get_frame_content_size(src) {
                if size != expected as u64 {
                    return Err(CodecError::WrongLength {
                        codec: CODEC,
                        expected,
                        got: usize::try_from(size).unwrap_or(usize::MAX),
                    });
                }
            }
            Err(corrupt(e))
        }
    }
}
