//! The zstd decoder of builds without the `zstd-c` feature: `ruzstd`, pure
//! Rust, so that the local-only build compiles no C. It is slower than
//! libzstd (figures in docs/design.md's cargo features).
//!
//! One decoder is kept per thread and rebuilt only when the dictionary
//! changes (parsing a dictionary builds its entropy tables). The frames are
//! walked here rather than through `FrameDecoder::decode_all`, so that a
//! dictionary also applies to a frame whose header names none (libzstd does
//! the same) and the content checksum, when a frame has one, is checked.
//! ruzstd reads only ZDICT-format dictionaries, which is what C-Blosc2's
//! trainer writes; plain "raw content" is refused with a named error.

use std::cell::RefCell;
use std::io::Read;

use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
use ruzstd::decoding::{BlockDecodingStrategy, Dictionary, FrameDecoder};

use super::corrupt::{corrupt, CODEC};
use crate::format::codec::CodecError;

/// The ZDICT magic number, little-endian, as the dictionary's first bytes.
const ZDICT_MAGIC: [u8; 4] = 0xEC30_A437u32.to_le_bytes();

/// Windows up to this size are always allowed (a streaming encoder that
/// does not know its input size uses up to 8 MiB at levels up to 19);
/// larger ones only up to twice the output (libzstd's one-shot encoder,
/// which C-Blosc2 uses, never sizes a window past the next power of two of
/// its input). ruzstd reserves the whole window up front, so this keeps a
/// hostile header from making it allocate what the chunk's sizes do not
/// justify.
const SMALL_WINDOW: u64 = 8 << 20;

/// A thread's decoder and the dictionary it was built with (empty: none).
struct Slot {
    dict: Vec<u8>,
    dict_id: Option<u32>,
    decoder: FrameDecoder,
}

thread_local! {
    static SLOT: RefCell<Option<Slot>> = const { RefCell::new(None) };
}

/// See [`super::decompress`].
pub(super) fn decompress(src: &[u8], dst: &mut [u8], dict: &[u8]) -> Result<(), CodecError> {
    SLOT.with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => {
            if !matches!(slot.as_ref(), Some(s) if s.dict == dict) {
                // Drop the old decoder first so a thread never holds two.
                *slot = None;
                *slot = Some(new_slot(dict)?);
            }
            let s = slot.as_mut().expect("just filled");
            run(&mut s.decoder, s.dict_id, src, dst)
        }
        Err(_) => {
            let mut s = new_slot(dict)?;
            run(&mut s.decoder, s.dict_id, src, dst)
        }
    })
}

fn new_slot(dict: &[u8]) -> Result<Slot, CodecError> {
    let mut decoder = FrameDecoder::new();
    let dict_id = if dict.is_empty() {
        None
    } else if !dict.starts_with(&ZDICT_MAGIC) {
        return Err(CodecError::Unsupported {
            codec: CODEC,
            detail: "a raw-content dictionary (no ZDICT magic) is read only by the libzstd decoder (cargo feature `zstd-c`)".into(),
        });
    } else {
        let parsed =
            Dictionary::decode_dict(dict).map_err(|e| corrupt(format!("bad dictionary: {e}")))?;
        let id = parsed.id;
        decoder
            .add_dict(parsed)
            .map_err(|e| corrupt(format!("bad dictionary: {e}")))?;
        Some(id)
    };
    Ok(Slot {
        dict: dict.to_vec(),
        dict_id,
        decoder,
    })
}

fn run(
    d: &mut FrameDecoder,
    dict_id: Option<u32>,
    src: &[u8],
    dst: &mut [u8],
) -> Result<(), CodecError> {
    let expected = dst.len();
    d.set_max_window_size((2 * expected as u64).max(SMALL_WINDOW));
    let mut input = src;
    let mut written = 0usize;
    let mut first_size = None;
    while !input.is_empty() {
        match d.init(&mut input) {
            Ok(()) => {}
            Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                length,
                ..
            })) => {
                input = input
                    .get(length as usize..)
                    .ok_or(CodecError::Truncated { codec: CODEC })?;
                continue;
            }
            Err(e) => return Err(frame_error(e, first_size, expected)),
        }
        if first_size.is_none() {
            first_size = Some(d.content_size());
        }
        if let Some(id) = dict_id {
            d.force_dict(id).map_err(corrupt)?;
        }
        loop {
            d.decode_blocks(&mut input, BlockDecodingStrategy::UptoBytes(1 << 20))
                .map_err(|e| frame_error(e, first_size, expected))?;
            written += d.read(&mut dst[written..]).map_err(corrupt)?;
            if d.can_collect() != 0 {
                // More output than `dst` holds.
                let size = first_size
                    .unwrap_or(0)
                    .max((written + d.can_collect()) as u64);
                return Err(CodecError::WrongLength {
                    codec: CODEC,
                    expected,
                    got: usize::try_from(size).unwrap_or(usize::MAX),
                });
            }
            if d.is_finished() {
                break;
            }
        }
        if let (Some(stored), Some(computed)) =
            (d.get_checksum_from_data(), d.get_calculated_checksum())
        {
            if stored != computed {
                return Err(corrupt(format!(
                    "content checksum {computed:#010x} where the frame stores {stored:#010x}"
                )));
            }
        }
    }
    if written != expected {
        return Err(CodecError::WrongLength {
            codec: CODEC,
            expected,
            got: written,
        });
    }
    Ok(())
}

/// A length error when the first frame's header gives a size other than
/// `expected`, else ruzstd's words as a corrupt stream: what the libzstd
/// decoder reports for the same input (a cut stream included).
fn frame_error(e: FrameDecoderError, first_size: Option<u64>, expected: usize) -> CodecError {
    match first_size {
        Some(size) if size != 0 && size != expected as u64 => CodecError::WrongLength {
            codec: CODEC,
            expected,
            got: usize::try_from(size).unwrap_or(usize::MAX),
        },
        _ => corrupt(e),
    }
}
