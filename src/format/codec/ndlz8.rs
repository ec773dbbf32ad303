//! NDLZ 8×8 cells: the row-match tokens (see [`super::ndlz`] for the stream).
//!
//! A row-match record rebuilds an 8×8 cell (rows of 8 bytes): a u16 offset
//! follows the token and names the stream bytes `offset` bytes before the
//! token; the low 3 bits of the token give the first matched row `r`.
//!
//! * `token >> 3 == 21` (168..=175): rows `r..r+3` are 24 consecutive stream
//!   bytes (`r <= 5`), the other five rows follow as literals, in order.
//! * `token >> 3 == 17` (136..=143): rows `r..r+2` are 16 consecutive stream
//!   bytes (`r <= 6`), the other six rows follow as literals.
//!
//! Any other token (or a row start past those limits) is invalid.

use super::ndlz::{corrupt, stream_bytes, u16_at};
use super::CodecError;

/// Fill `buf` (8 rows of 8) from the row-match record whose token is at
/// `cur`; returns the position after the record.
pub(super) fn row_matches(
    src: &[u8],
    cur: usize,
    token: u8,
    buf: &mut [u8; 64],
) -> Result<usize, CodecError> {
    let matched = match token >> 3 {
        21 => 3,
        17 => 2,
        _ => return Err(corrupt(format!("invalid 8x8 token {token}"))),
    };
    let first = (token & 7) as usize;
    if first + matched > 8 {
        return Err(corrupt(format!(
            "8x8 token {token} matches rows past the cell"
        )));
    }
    let offset = u16_at(src, cur + 1)?;
    let reference = stream_bytes(src, cur as i64 - offset as i64, matched * 8)?;
    buf[first * 8..(first + matched) * 8].copy_from_slice(reference);
    let mut pos = cur + 3;
    for r in (0..8).filter(|&r| r < first || r >= first + matched) {
        buf[r * 8..r * 8 + 8].copy_from_slice(stream_bytes(src, pos as i64, 8)?);
        pos += 8;
    }
    Ok(pos)
}
