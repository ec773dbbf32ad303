//! Undo Blosc's DELTA filter (filter id 3), in place.
//!
//! DELTA works on machine words whose size follows the chunk's typesize:
//! typesizes 1, 2, 4 and 8 use words of that size, other multiples of 8 use
//! 8-byte words, everything else single bytes (C-Blosc2 `delta.c`). Only the
//! `len / word * word` leading bytes of a block take part; trailing bytes are
//! left as they are (C-Blosc2 does not touch them when decoding, nor write
//! them when encoding).
//!
//! - The block at offset 0 of a chunk (block 0) is a running XOR: each word
//!   was XORed with the word before it, so decoding XORs each word with the
//!   already decoded previous word.
//! - Every other block was XORed, word by word, with block 0 of the same
//!   chunk: decoding XORs it with the *decoded* block 0 (C-Blosc2 passes the
//!   start of the chunk's output buffer as the reference, and decodes block 0
//!   before any other block of the chunk). Random access to a block `b > 0`
//!   therefore needs block 0 of that chunk first: decode it once and keep it.
//!
//! The reference is block 0's final output, after every filter of the
//! pipeline has been undone — which is what C-Blosc2 reads when DELTA is the
//! last filter undone (the usual order: DELTA is applied before SHUFFLE when
//! encoding). Bytes of the reference past the block's length are ignored.

use super::FilterError;

/// Word size (in bytes) DELTA uses for a chunk typesize.
pub fn delta_word_size(typesize: usize) -> usize {
    match typesize {
        1 | 2 | 4 | 8 => typesize,
        t if t % 8 == 0 && t != 0 => 8,
        _ => 1,
    }
}

/// Undo DELTA on `block` in place.
///
/// `reference` is `None` for block 0 of a chunk and `Some(decoded block 0)`
/// for every other block of the same chunk. `typesize` is the chunk's
/// typesize (0 is treated like 1, as bytes).
///
/// Fails only if the reference is shorter than the part of `block` it must
/// cover.
pub fn undo_delta(
    reference: Option<&[u8]>,
    typesize: usize,
    block: &mut [u8],
) -> Result<(), FilterError> {
    let word = delta_word_size(typesize);
    let covered = block.len() - block.len() % word;
    match reference {
        None => {
            running_xor(word, &mut block[..covered]);
            Ok(())
        }
        Some(reference) => {
            if reference.len() < covered {
                return Err(FilterError::ShortDeltaReference {
                    reference: reference.len(),
                    block: block.len(),
                });
            }
            xor_into(&mut block[..covered], &reference[..covered]);
            Ok(())
        }
    }
}

/// `block[i] ^= reference[i]` for every byte.
fn xor_into(block: &mut [u8], reference: &[u8]) {
    let mut words = block.chunks_exact_mut(8);
    let mut refs = reference.chunks_exact(8);
    for (w, r) in (&mut words).zip(&mut refs) {
        let v =
            u64::from_le_bytes(w.try_into().unwrap()) ^ u64::from_le_bytes(r.try_into().unwrap());
        w.copy_from_slice(&v.to_le_bytes());
    }
    for (b, r) in words.into_remainder().iter_mut().zip(refs.remainder()) {
        *b ^= r;
    }
}

/// Decode a running XOR with a lag of `word` bytes (1, 2, 4 or 8):
/// `block[b] ^= block[b - word]` in increasing `b`, using decoded values.
/// `block.len()` is a multiple of `word`.
fn running_xor(word: usize, block: &mut [u8]) {
    // Eight bytes at a time: a prefix XOR of the word-sized lanes inside the
    // u64, then XOR in the last decoded lane of the previous u64 (every lane
    // at the same position within a word shares the same chain).
    let lane_bits = 8 * word as u32;
    let replicate: u64 = match word {
        1 => 0x0101_0101_0101_0101,
        2 => 0x0001_0001_0001_0001,
        4 => 0x0000_0001_0000_0001,
        _ => 1,
    };
    let mut carry = 0u64; // last decoded lane, replicated over the u64
    for chunk in block.chunks_exact_mut(8) {
        let mut x = u64::from_le_bytes((&*chunk).try_into().unwrap());
        let mut shift = lane_bits;
        while shift < 64 {
            x ^= x << shift;
            shift *= 2;
        }
        x ^= carry;
        chunk.copy_from_slice(&x.to_le_bytes());
        carry = if word == 8 {
            x
        } else {
            (x >> (64 - lane_bits)) * replicate
        };
    }
    // Fewer than 8 bytes left: finish byte by byte against decoded bytes
    // (the first word of the block stays as it is).
    let start = block.len() - block.len() % 8;
    for b in start.max(word)..block.len() {
        block[b] ^= block[b - word];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Forward DELTA as C-Blosc2's delta_encoder does it, for block 0
    /// (`reference == None`, XOR with the previous word of the source) or
    /// another block (XOR with block 0's source bytes). Bytes past the last
    /// whole word are not written by C; we copy them.
    fn encode(reference: Option<&[u8]>, typesize: usize, src: &[u8]) -> Vec<u8> {
        let w = delta_word_size(typesize);
        let words = src.len() / w;
        let mut out = src.to_vec();
        for i in 0..words {
            for k in 0..w {
                let b = i * w + k;
                out[b] = match reference {
                    None if i == 0 => src[b],
                    None => src[b] ^ src[b - w],
                    Some(r) => src[b] ^ r[b],
                };
            }
        }
        out
    }

    #[test]
    fn word_sizes() {
        let expect = [
            (1, 1),
            (2, 2),
            (3, 1),
            (4, 4),
            (5, 1),
            (8, 8),
            (12, 1),
            (16, 8),
            (24, 8),
            (255, 1),
            (0, 1),
        ];
        for (ts, w) in expect {
            assert_eq!(delta_word_size(ts), w, "typesize {ts}");
        }
    }

    #[test]
    fn hand_example_block0_typesize4_with_leftover() {
        // 3 words of 4 bytes + 2 trailing bytes.
        let decoded = [1u8, 2, 3, 4, 1, 2, 3, 5, 0xFF, 0, 0, 0, 0xAA, 0xBB];
        let encoded = [1u8, 2, 3, 4, 0, 0, 0, 1, 0xFE, 2, 3, 5, 0xAA, 0xBB];
        assert_eq!(encode(None, 4, &decoded), encoded);
        let mut block = encoded;
        undo_delta(None, 4, &mut block).unwrap();
        assert_eq!(block, decoded);
    }

    #[test]
    fn hand_example_other_block() {
        let block0 = [0x10u8, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70];
        let mut block = [0x11u8, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77];
        undo_delta(Some(&block0), 2, &mut block).unwrap();
        // Three 2-byte words XORed, the odd trailing byte left alone.
        assert_eq!(block, [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x77]);
    }

    #[test]
    fn typesize_16_uses_8_byte_words() {
        // Running XOR with a lag of 8 bytes, not 16.
        let decoded: Vec<u8> = (0..32).collect();
        let enc = encode(None, 16, &decoded);
        assert_eq!(&enc[8..16], &[8, 8, 8, 8, 8, 8, 8, 8]);
        let mut block = enc;
        undo_delta(None, 16, &mut block).unwrap();
        assert_eq!(block, decoded);
    }

    #[test]
    fn short_reference_is_an_error() {
        let mut block = [0u8; 16];
        assert_eq!(
            undo_delta(Some(&[0u8; 8]), 4, &mut block),
            Err(FilterError::ShortDeltaReference {
                reference: 8,
                block: 16
            })
        );
        // Trailing bytes need no reference.
        let mut block = [0u8; 10];
        assert!(undo_delta(Some(&[0u8; 8]), 4, &mut block).is_ok());
    }

    #[test]
    fn whole_chunk_round_trip() {
        // A chunk of 3 blocks of 96 bytes + a leftover block of 40.
        let chunk: Vec<u8> = (0..328u32)
            .map(|k| (k.wrapping_mul(2_654_435_761) >> 7) as u8)
            .collect();
        for ts in [1, 2, 3, 4, 8, 12, 16] {
            let blocks: Vec<&[u8]> = chunk.chunks(96).collect();
            let block0 = blocks[0];
            let mut decoded0 = encode(None, ts, block0);
            undo_delta(None, ts, &mut decoded0).unwrap();
            assert_eq!(decoded0, block0, "ts {ts}");
            for b in &blocks[1..] {
                let mut dec = encode(Some(block0), ts, b);
                undo_delta(Some(&decoded0), ts, &mut dec).unwrap();
                assert_eq!(&dec, b, "ts {ts}");
            }
        }
    }

    proptest! {
        #[test]
        fn round_trips(ts in 0usize..40, data in proptest::collection::vec(any::<u8>(), 0..300), other in proptest::collection::vec(any::<u8>(), 300)) {
            let mut block = encode(None, ts, &data);
            undo_delta(None, ts, &mut block).unwrap();
            prop_assert_eq!(&block, &data);
            let mut block = encode(Some(&other), ts, &data);
            undo_delta(Some(&other), ts, &mut block).unwrap();
            prop_assert_eq!(&block, &data);
        }
    }
}
