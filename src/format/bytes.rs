//! Bounds-checked readers of little- and big-endian integers in byte slices:
//! every read of a parsed structure goes through these, so a short buffer is
//! a [`Problem::Truncated`] naming what was being read, never a panic.

use super::error::{PResult, Problem};

/// Read `len` bytes at `start` of `bytes`, or say what is missing.
pub fn slice_at<'a>(bytes: &'a [u8], start: usize, len: usize, what: &str) -> PResult<&'a [u8]> {
    let end = start
        .checked_add(len)
        .ok_or_else(|| Problem::corrupt(what, "size overflows"))?;
    bytes
        .get(start..end)
        .ok_or_else(|| Problem::truncated(what, start as u64, end as u64, bytes.len() as u64))
}

pub fn read_u8(bytes: &[u8], at: usize, what: &str) -> PResult<u8> {
    Ok(slice_at(bytes, at, 1, what)?[0])
}

pub fn read_i32_le(bytes: &[u8], at: usize, what: &str) -> PResult<i32> {
    let b = slice_at(bytes, at, 4, what)?;
    Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

pub fn read_u16_be(bytes: &[u8], at: usize, what: &str) -> PResult<u16> {
    let b = slice_at(bytes, at, 2, what)?;
    Ok(u16::from_be_bytes([b[0], b[1]]))
}

pub fn read_i32_be(bytes: &[u8], at: usize, what: &str) -> PResult<i32> {
    let b = slice_at(bytes, at, 4, what)?;
    Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

pub fn read_u32_be(bytes: &[u8], at: usize, what: &str) -> PResult<u32> {
    let b = slice_at(bytes, at, 4, what)?;
    Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

pub fn read_i64_be(bytes: &[u8], at: usize, what: &str) -> PResult<i64> {
    let b = slice_at(bytes, at, 8, what)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    Ok(i64::from_be_bytes(a))
}
