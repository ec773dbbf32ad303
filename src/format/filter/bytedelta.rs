//! Undo the BYTEDELTA filter (filter id 35, and the buggy id 34), in place.
//!
//! BYTEDELTA is meant to follow SHUFFLE: it sees a block as `typesize`
//! streams of `len / typesize` bytes and stores each byte minus the previous
//! byte of its stream (the first byte of a stream minus 0), modulo 256.
//! Decoding is a running sum per stream. The `len % typesize` trailing bytes
//! belong to no stream and are left as they are (C-Blosc2 copies them).
//!
//! The filter's meta byte is the typesize to use; a meta of 0 means the
//! typesize of the super-chunk (C-Blosc2 refuses 0 outside a super-chunk).
//! Callers resolve that and pass the result here.
//!
//! Filter id 34 (`BLOSC_FILTER_BYTEDELTA_BUGGY`) is the first version, kept
//! by C-Blosc2 for old data. Its SIMD encoder (the one every x86-64 and ARM64
//! build used: SSE/NEON code paths were always on there) worked on whole
//! 16-byte groups chained correctly, but restarted the scalar tail (the last
//! `stream_len % 16` bytes of each stream, when the stream has 16 bytes or
//! more) from 0 instead of from the last decoded byte. Its decoder mirrors
//! that, and so does [`undo_bytedelta_buggy`]. (A build without SIMD used the
//! scalar loop for the whole stream, i.e. the correct sum; data written by
//! such builds cannot be told apart and decodes correctly only with
//! [`undo_bytedelta`].)

use super::FilterError;

/// Undo BYTEDELTA (id 35) on `block` in place, with `typesize` streams.
///
/// Fails if `typesize` is 0.
pub fn undo_bytedelta(typesize: usize, block: &mut [u8]) -> Result<(), FilterError> {
    for_each_stream(typesize, block, |stream| prefix_sum(stream, 0))
}

/// Undo the buggy first BYTEDELTA (id 34) on `block` in place: the running
/// sum restarts from 0 for the last `stream_len % 16` bytes of each stream
/// of at least 16 bytes (see the module docs).
///
/// Fails if `typesize` is 0.
pub fn undo_bytedelta_buggy(typesize: usize, block: &mut [u8]) -> Result<(), FilterError> {
    for_each_stream(typesize, block, |stream| {
        let groups = stream.len() - stream.len() % 16;
        let (head, tail) = stream.split_at_mut(groups);
        prefix_sum(head, 0);
        prefix_sum(tail, 0);
    })
}

fn for_each_stream(
    typesize: usize,
    block: &mut [u8],
    mut undo: impl FnMut(&mut [u8]),
) -> Result<(), FilterError> {
    if typesize == 0 {
        return Err(FilterError::InvalidTypesize(0));
    }
    let stream_len = block.len() / typesize;
    if stream_len == 0 {
        return Ok(());
    }
    for stream in block[..stream_len * typesize].chunks_exact_mut(stream_len) {
        undo(stream);
    }
    Ok(())
}

/// In-place running sum modulo 256, starting from `start`.
fn prefix_sum(stream: &mut [u8], start: u8) {
    let mut acc = start;
    for b in stream {
        acc = acc.wrapping_add(*b);
        *b = acc;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Forward BYTEDELTA (id 35) as in C-Blosc2's bytedelta_forward.
    fn encode(typesize: usize, src: &[u8]) -> Vec<u8> {
        let mut out = src.to_vec();
        let n = src.len() / typesize;
        for j in 0..typesize {
            let mut prev = 0u8;
            for i in 0..n {
                let v = src[j * n + i];
                out[j * n + i] = v.wrapping_sub(prev);
                prev = v;
            }
        }
        out
    }

    /// Forward buggy BYTEDELTA (id 34) with the SIMD encoder's behaviour:
    /// 16-byte groups chained, the scalar tail restarting from 0.
    fn encode_buggy(typesize: usize, src: &[u8]) -> Vec<u8> {
        let mut out = src.to_vec();
        let n = src.len() / typesize;
        for j in 0..typesize {
            let groups = n - n % 16;
            let mut prev = 0u8;
            for i in 0..n {
                if i == groups {
                    prev = 0;
                }
                let v = src[j * n + i];
                out[j * n + i] = v.wrapping_sub(prev);
                prev = v;
            }
        }
        out
    }

    #[test]
    fn hand_example_typesize4_with_leftover() {
        // 3 elements' worth per stream (12 bytes) + 2 trailing bytes.
        let encoded = [1u8, 1, 1, 10, 0xF6, 0, 0xFF, 0, 0, 5, 5, 5, 9, 9];
        let want = [1u8, 2, 3, 10, 0, 0, 0xFF, 0xFF, 0xFF, 5, 10, 15, 9, 9];
        let mut block = encoded;
        undo_bytedelta(4, &mut block).unwrap();
        assert_eq!(block, want);
        assert_eq!(encode(4, &want), encoded);
    }

    #[test]
    fn buggy_differs_only_in_the_tail() {
        // One stream of 20 bytes: 16 chained, then 4 restarted.
        let data: Vec<u8> = (1..=20).collect();
        let enc = encode_buggy(1, &data);
        assert_eq!(&enc[..16], &[1; 16]);
        assert_eq!(&enc[16..], &[17, 1, 1, 1]);
        let mut block = enc.clone();
        undo_bytedelta_buggy(1, &mut block).unwrap();
        assert_eq!(block, data);
        let mut block = enc;
        undo_bytedelta(1, &mut block).unwrap();
        assert_ne!(block, data);
        // Streams shorter than 16 bytes: both versions agree.
        let short: Vec<u8> = (0..30).collect(); // 2 streams of 15
        assert_eq!(encode(2, &short), encode_buggy(2, &short));
    }

    #[test]
    fn zero_typesize_is_an_error() {
        assert_eq!(
            undo_bytedelta(0, &mut [1, 2]),
            Err(FilterError::InvalidTypesize(0))
        );
        assert_eq!(
            undo_bytedelta_buggy(0, &mut [1, 2]),
            Err(FilterError::InvalidTypesize(0))
        );
    }

    proptest! {
        #[test]
        fn round_trips(ts in 1usize..40, data in proptest::collection::vec(any::<u8>(), 0..600)) {
            let mut block = encode(ts, &data);
            undo_bytedelta(ts, &mut block).unwrap();
            prop_assert_eq!(&block, &data);
            let mut block = encode_buggy(ts, &data);
            undo_bytedelta_buggy(ts, &mut block).unwrap();
            prop_assert_eq!(&block, &data);
        }
    }
}
