//! NDLZ decoder (codec id 32, C-Blosc2's `plugins/codecs/ndlz`).
//!
//! NDLZ compresses a 2-D block of bytes cell by cell (cells of 4×4 or 8×8
//! bytes, chosen by the chunk header's codec meta, 4 or 8). With typesize > 1
//! C-Blosc2 only accepts it on split blocks, so each stream holds one byte of
//! every item: a `blockshape[0] × blockshape[1]` byte matrix.
//!
//! A stream is a 9-byte header — ndim (always 2) and the block shape as two
//! little-endian i32 — then one record per cell, cells in row-major order.
//! Cells in the last row / column are clipped to the block (`p0 × p1` bytes
//! instead of `C × C`). Each record starts with a token byte:
//!
//! * `0`: literal, `p0 × p1` bytes follow (row by row).
//! * `0x40`: every byte of the cell is the one byte that follows.
//! * `0xC0`: cell match, a u16 `off` follows; the cell is the `p0 × p1`
//!   bytes of the *stream* starting `off` bytes before the token.
//! * other tokens: some rows come from earlier stream bytes, the others are
//!   literal; the token values differ between the 4×4 ([`super::ndlz4`]) and
//!   8×8 ([`super::ndlz8`]) variants.
//!
//! References always point into the compressed stream (earlier literal
//! bytes), never into the output. Row-match cells are assembled in a `C × C`
//! buffer; C-Blosc2 then copies *every* cell — buffer or stream bytes — into
//! the block with a row stride of `p1`, so a clipped row-match cell reads
//! its buffer at that stride too. We do exactly the same, so any stream C
//! decodes gives the same bytes here, and any stream C refuses is refused.

use super::CodecError;

pub(super) const CODEC: &str = "ndlz";

/// Length of the stream header: ndim byte and two i32 block dimensions.
const HEADER_LEN: usize = 9;

#[inline]
pub(super) fn truncated() -> CodecError {
    CodecError::Truncated { codec: CODEC }
}

#[inline]
pub(super) fn corrupt(detail: String) -> CodecError {
    CodecError::Corrupt {
        codec: CODEC,
        detail,
    }
}

/// `len` stream bytes at `pos` (which counts from the start of the stream and
/// may be negative for a bad back-reference), or an error.
#[inline]
pub(super) fn stream_bytes(src: &[u8], pos: i64, len: usize) -> Result<&[u8], CodecError> {
    if pos < 0 {
        return Err(corrupt(format!("reference to byte {pos} of the stream")));
    }
    let start = pos as usize;
    match start.checked_add(len) {
        Some(end) if end <= src.len() => Ok(&src[start..end]),
        _ => Err(truncated()),
    }
}

/// The little-endian u16 at `pos`.
#[inline]
pub(super) fn u16_at(src: &[u8], pos: usize) -> Result<u16, CodecError> {
    let b = stream_bytes(src, pos as i64, 2)?;
    Ok(u16::from_le_bytes([b[0], b[1]]))
}

/// Decode one NDLZ stream from `src` into exactly `dst.len()` bytes; `cell`
/// is the chunk header's codec meta (4 or 8: the cell edge).
///
/// Errors (never panics) on an unknown cell size or token, a header that
/// does not describe a 2-D block of `dst.len()` bytes, truncated input or a
/// reference outside the stream.
pub fn decompress(src: &[u8], dst: &mut [u8], cell: u8) -> Result<(), CodecError> {
    match cell {
        4 => decode::<4>(src, dst),
        8 => decode::<8>(src, dst),
        other => Err(corrupt(format!(
            "cell size (codec meta) {other}: only 4 and 8 exist"
        ))),
    }
}

fn decode<const C: usize>(src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
    if src.len() < HEADER_LEN {
        return Err(truncated());
    }
    if src[0] != 2 {
        return Err(corrupt(format!(
            "stream header says ndim {}, NDLZ blocks are 2-D",
            src[0]
        )));
    }
    let dim = |at: usize| i32::from_le_bytes([src[at], src[at + 1], src[at + 2], src[at + 3]]);
    let (rows, cols) = (dim(1), dim(5));
    if rows < 0 || cols < 0 {
        return Err(corrupt(format!("negative block shape {rows} × {cols}")));
    }
    let (rows, cols) = (rows as usize, cols as usize);
    if rows as u64 * cols as u64 != dst.len() as u64 {
        return Err(CodecError::WrongLength {
            codec: CODEC,
            expected: dst.len(),
            got: rows * cols,
        });
    }
    if dst.is_empty() {
        // C-Blosc2 never produces an empty stream; its decoder answers 0
        // bytes, which the caller treats as a failure for a non-empty block.
        return Err(corrupt("empty block".into()));
    }
    let cell_rows = rows.div_ceil(C);
    let cell_cols = cols.div_ceil(C);
    let clip = |n: usize| if n.is_multiple_of(C) { C } else { n % C };
    let mut buf = [0u8; 64];
    let mut pos = HEADER_LEN;
    for ci in 0..cell_rows {
        let p0 = if ci + 1 == cell_rows { clip(rows) } else { C };
        for cj in 0..cell_cols {
            let p1 = if cj + 1 == cell_cols { clip(cols) } else { C };
            let origin = ci * C * cols + cj * C;
            let cur = pos;
            let token = *src.get(cur).ok_or_else(truncated)?;
            let cell: &[u8] = match token {
                0 => {
                    pos = cur + 1 + p0 * p1;
                    stream_bytes(src, cur as i64 + 1, p0 * p1)?
                }
                0xC0 => {
                    let off = u16_at(src, cur + 1)?;
                    pos = cur + 3;
                    stream_bytes(src, cur as i64 - off as i64, p0 * p1)?
                }
                0x40 => {
                    let value = *src.get(cur + 1).ok_or_else(truncated)?;
                    pos = cur + 2;
                    for r in 0..p0 {
                        let at = origin + r * cols;
                        dst[at..at + p1].fill(value);
                    }
                    continue;
                }
                _ => {
                    pos = if C == 4 {
                        super::ndlz4::row_matches(src, cur, token, &mut buf)
                    } else {
                        super::ndlz8::row_matches(src, cur, token, &mut buf)
                    }
                    .map_err(|e| match e {
                        CodecError::Corrupt { codec, detail } => CodecError::Corrupt {
                            codec,
                            detail: format!("{detail} at cell ({ci}, {cj})"),
                        },
                        other => other,
                    })?;
                    &buf[..p0 * p1]
                }
            };
            if p1 == C {
                // Whole-width rows: fixed-size copies the compiler inlines.
                for (r, row) in cell.chunks_exact(C).enumerate() {
                    let at = origin + r * cols;
                    dst[at..at + C].copy_from_slice(row);
                }
            } else {
                for (r, row) in cell.chunks_exact(p1).enumerate() {
                    let at = origin + r * cols;
                    dst[at..at + p1].copy_from_slice(row);
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "ndlz_tests.rs"]
mod tests;
