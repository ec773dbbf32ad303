//! numpy broadcasting: the result shape of operands of different shapes,
//! and which part of an operand a region of the result reads.

use super::error::ComputeError;

/// Most dimensions an operand or the result may have (numpy allows 64;
/// Blosc2 arrays have at most 8).
pub const MAX_NDIM: usize = 32;
/// Most elements a result may have: 2^48.
pub const MAX_ELEMENTS: u64 = 1 << 48;

/// The broadcast shape of `shapes` (numpy's rules: align on the right; each
/// axis must be equal or 1), refused beyond [`MAX_NDIM`] dimensions or
/// [`MAX_ELEMENTS`] elements.
pub fn broadcast_shapes<'a>(
    shapes: impl IntoIterator<Item = &'a [u64]>,
) -> Result<Vec<u64>, ComputeError> {
    let mut out: Vec<u64> = Vec::new();
    for s in shapes {
        if s.len() > MAX_NDIM {
            return Err(ComputeError::TooManyDims(s.len()));
        }
        if s.len() > out.len() {
            let mut grown = vec![1; s.len() - out.len()];
            grown.extend_from_slice(&out);
            out = grown;
        }
        let off = out.len() - s.len();
        for (i, &d) in s.iter().enumerate() {
            let o = &mut out[off + i];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return Err(ComputeError::Broadcast(out.clone(), s.to_vec()));
            }
        }
    }
    let mut n: u64 = 1;
    for &d in &out {
        n = match n.checked_mul(d) {
            Some(v) => v,
            None => return Err(ComputeError::TooLarge(out)),
        };
    }
    // A zero-length axis makes the product 0 whatever the others are; the
    // others must still be addressable.
    if n > MAX_ELEMENTS || out.iter().any(|&d| d > MAX_ELEMENTS) {
        return Err(ComputeError::TooLarge(out));
    }
    Ok(out)
}

/// The region of an operand of shape `operand` that the result region
/// `[start, start + shape)` reads: the same span on real axes, `[0, 1)` on
/// broadcast ones (operand dimension 1); leading result axes the operand
/// lacks are dropped.
pub fn operand_region(operand: &[u64], start: &[u64], shape: &[u64]) -> (Vec<u64>, Vec<u64>) {
    let off = start.len().saturating_sub(operand.len());
    operand
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            if d == 1 {
                (0, 1)
            } else {
                (start[off + i], shape[off + i])
            }
        })
        .unzip()
}

/// Spread `src`, an operand's region of shape `src_shape` (right-aligned to
/// `out_shape`, dimension 1 on broadcast axes), over the whole `out_shape`
/// region in C order.
pub fn expand<T: Copy>(src: &[T], src_shape: &[u64], out_shape: &[u64], out: &mut Vec<T>) {
    let n = out_shape.len();
    let total: usize = out_shape.iter().product::<u64>() as usize;
    out.clear();
    if total == 0 {
        return;
    }
    out.reserve(total);
    let off = n - src_shape.len();
    let dim = |i: usize| {
        if i < off {
            1
        } else {
            src_shape[i - off] as usize
        }
    };
    // Strides of src per output axis, 0 where src broadcasts.
    let mut strides = vec![0usize; n];
    let mut acc = 1usize;
    for i in (0..n).rev() {
        let d = dim(i);
        strides[i] = if d == 1 { 0 } else { acc };
        acc *= d;
    }
    if n == 0 {
        out.push(src[0]);
        return;
    }
    let inner = out_shape[n - 1] as usize;
    let inner_stride = strides[n - 1];
    let mut idx = vec![0usize; n - 1];
    loop {
        let base: usize = idx.iter().zip(&strides).map(|(i, s)| i * s).sum();
        if inner_stride == 0 {
            out.extend(std::iter::repeat_n(src[base], inner));
        } else {
            out.extend_from_slice(&src[base..base + inner]);
        }
        // Next row (odometer over the outer axes).
        let mut k = n - 1;
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            if (idx[k] as u64) < out_shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_rules() {
        assert_eq!(
            broadcast_shapes([&[3u64, 1][..], &[4][..]]).unwrap(),
            vec![3, 4]
        );
        assert_eq!(
            broadcast_shapes([&[2u64, 1, 5][..], &[7, 1][..], &[][..]]).unwrap(),
            vec![2, 7, 5]
        );
        assert_eq!(broadcast_shapes([&[0u64][..], &[1][..]]).unwrap(), vec![0]);
        assert!(matches!(
            broadcast_shapes([&[3u64][..], &[4][..]]),
            Err(ComputeError::Broadcast(..))
        ));
        assert!(matches!(
            broadcast_shapes([&[1u64 << 30][..], &[1 << 30, 1][..]]),
            Err(ComputeError::TooLarge(_))
        ));
        assert!(matches!(
            broadcast_shapes([&[u64::MAX, 2][..]]),
            Err(ComputeError::TooLarge(_))
        ));
        assert!(matches!(
            broadcast_shapes([&[1u64 << 60][..]]),
            Err(ComputeError::TooLarge(_))
        ));
        assert!(matches!(
            broadcast_shapes([&[1u64; 40][..]]),
            Err(ComputeError::TooManyDims(40))
        ));
    }

    #[test]
    fn regions_and_expansion() {
        // operand (3, 1) in a (2, 3, 4) result: region rows 1..3, column 0.
        assert_eq!(
            operand_region(&[3, 1], &[1, 1, 2], &[1, 2, 2]),
            (vec![1, 0], vec![2, 1])
        );
        let mut out = Vec::new();
        expand(&[10, 20], &[2, 1], &[2, 2, 3], &mut out);
        assert_eq!(out, vec![10, 10, 10, 20, 20, 20, 10, 10, 10, 20, 20, 20]);
        expand(&[1, 2, 3], &[3], &[2, 3], &mut out);
        assert_eq!(out, vec![1, 2, 3, 1, 2, 3]);
        expand(&[7], &[], &[2], &mut out);
        assert_eq!(out, vec![7, 7]);
        expand(&[7], &[], &[], &mut out);
        assert_eq!(out, vec![7]);
    }
}
