//! NDLZ 4×4 cells: the row-match tokens (see [`super::ndlz`] for the stream).
//!
//! A row-match record rebuilds a 4×4 cell (rows of 4 bytes) from rows copied
//! out of earlier stream bytes plus literal rows. Offsets are u16 values
//! counted back from the token; C-Blosc2 adds the record's header length to
//! them in 16-bit arithmetic, so `0xFFFD..=0xFFFF` wrap and point just past
//! the token instead — reproduced here.
//!
//! * `224..=255` (three rows): u16 offset, then one literal row. The rows
//!   taken, in order, from 12 consecutive stream bytes are, by `token >> 3`:
//!   28 → 1,2,3; 29 → 0,1,2; 30 → 0,1,3; 31 → 0,2,3. The literal is the
//!   remaining row.
//! * `128..=191` (two rows): u16 offset, then literal rows for every row not
//!   named. Token 128 names rows 2 and 3; otherwise `t = token - 128` names
//!   `i = t >> 5` and `j = (t >> 3) - 4i` (which may equal `i`: the row is
//!   then written twice, the second copy winning, and three literals follow).
//! * `40..=63` (two pairs): two u16 offsets; row 0 and row
//!   `j = (token - 32) >> 3` come from the first reference, the two other
//!   rows (ascending) from the second.
//!
//! Any other token is invalid.

use super::ndlz::{corrupt, stream_bytes, u16_at};
use super::CodecError;

/// Fill `buf[..16]` from the row-match record whose token is at `cur`;
/// returns the position after the record.
pub(super) fn row_matches(
    src: &[u8],
    cur: usize,
    token: u8,
    buf: &mut [u8; 64],
) -> Result<usize, CodecError> {
    let mut row = |r: usize, bytes: &[u8]| buf[r * 4..r * 4 + 4].copy_from_slice(bytes);
    // Back-reference for a record whose header is `hlen` bytes.
    let back = |raw: u16, hlen: u16| cur as i64 + hlen as i64 - raw.wrapping_add(hlen) as i64;
    if token >= 224 {
        let (i, j, k) = match token >> 3 {
            28 => (1, 2, 3),
            29 => (0, 1, 2),
            30 => (0, 1, 3),
            _ => (0, 2, 3),
        };
        let reference = stream_bytes(src, back(u16_at(src, cur + 1)?, 3), 12)?;
        row(i, &reference[0..4]);
        row(j, &reference[4..8]);
        row(k, &reference[8..12]);
        let l = 6 - i - j - k;
        row(l, stream_bytes(src, cur as i64 + 3, 4)?);
        Ok(cur + 7)
    } else if (128..=191).contains(&token) {
        let (i, j) = if token == 128 {
            (2, 3)
        } else {
            let t = (token - 128) as usize;
            (t >> 5, (t >> 3) - ((t >> 5) << 2))
        };
        let reference = stream_bytes(src, back(u16_at(src, cur + 1)?, 3), 8)?;
        row(i, &reference[0..4]);
        row(j, &reference[4..8]);
        let mut pos = cur + 3;
        for k in (0..4).filter(|&k| k != i && k != j) {
            row(k, stream_bytes(src, pos as i64, 4)?);
            pos += 4;
        }
        Ok(pos)
    } else if (40..=63).contains(&token) {
        let first = u16_at(src, cur + 1)?;
        let second = u16_at(src, cur + 3)?;
        let j = ((token - 32) >> 3) as usize;
        let mut others = (1..4).filter(|&k| k != j);
        let (l, m) = (others.next().unwrap_or(1), others.next().unwrap_or(2));
        let r1 = stream_bytes(src, back(first, 5), 8)?;
        row(0, &r1[0..4]);
        row(j, &r1[4..8]);
        let r2 = stream_bytes(src, back(second, 5), 8)?;
        row(l, &r2[0..4]);
        row(m, &r2[4..8]);
        Ok(cur + 5)
    } else {
        Err(corrupt(format!("invalid 4x4 token {token}")))
    }
}
