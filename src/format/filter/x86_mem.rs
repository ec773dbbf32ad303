//! Bounds-checked SIMD loads and stores shared by the x86 filter kernels.
//!
//! Every raw access goes through a fixed-size array reference cut from a
//! bounds-checked slice, so the only `unsafe` is the intrinsic itself, in
//! bounds by construction.

use std::arch::x86_64::*;

#[inline]
#[target_feature(enable = "sse2")]
pub(super) fn load128(s: &[u8; 16]) -> __m128i {
    // SAFETY: `s` is 16 readable bytes; loadu has no alignment needs.
    unsafe { _mm_loadu_si128(s.as_ptr().cast()) }
}
#[inline]
#[target_feature(enable = "sse2")]
pub(super) fn store128(d: &mut [u8; 16], v: __m128i) {
    // SAFETY: `d` is 16 writable bytes; storeu has no alignment needs.
    unsafe { _mm_storeu_si128(d.as_mut_ptr().cast(), v) }
}
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn load256(s: &[u8; 32]) -> __m256i {
    // SAFETY: `s` is 32 readable bytes; loadu has no alignment needs.
    unsafe { _mm256_loadu_si256(s.as_ptr().cast()) }
}
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn store256(d: &mut [u8; 32], v: __m256i) {
    // SAFETY: `d` is 32 writable bytes; storeu has no alignment needs.
    unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast(), v) }
}

#[inline(always)]
pub(super) fn at16(s: &[u8], at: usize) -> &[u8; 16] {
    s[at..at + 16].try_into().unwrap()
}
#[inline(always)]
pub(super) fn at16_mut(s: &mut [u8], at: usize) -> &mut [u8; 16] {
    (&mut s[at..at + 16]).try_into().unwrap()
}
#[inline(always)]
pub(super) fn at32(s: &[u8], at: usize) -> &[u8; 32] {
    s[at..at + 32].try_into().unwrap()
}
#[inline(always)]
pub(super) fn at32_mut(s: &mut [u8], at: usize) -> &mut [u8; 32] {
    (&mut s[at..at + 32]).try_into().unwrap()
}
