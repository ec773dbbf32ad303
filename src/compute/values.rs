//! Columns of values in native form, and the conversions at the edges:
//! operand bytes (any byte order) in, little-endian result bytes out, and
//! numpy's casts between dtypes.
//!
//! Integers narrower than 64 bits are held as `i64` and wrapped back to
//! their dtype after every operation, which gives numpy's wrapping results
//! with one kernel per operation instead of one per width; `uint64` has its
//! own column.

use super::dtype::{ByteOrder, DType};

/// A complex number (numpy's layout: real then imaginary).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Cx<T> {
    pub re: T,
    pub im: T,
}

/// A column of values; its dtype is kept beside it.
#[derive(Debug, Clone, PartialEq)]
pub enum Col {
    Bool(Vec<bool>),
    /// int8 ... int64, uint8 ... uint32.
    Int(Vec<i64>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    C64(Vec<Cx<f32>>),
    C128(Vec<Cx<f64>>),
}

impl Col {
    pub fn len(&self) -> usize {
        match self {
            Col::Bool(v) => v.len(),
            Col::Int(v) => v.len(),
            Col::U64(v) => v.len(),
            Col::F32(v) => v.len(),
            Col::F64(v) => v.len(),
            Col::C64(v) => v.len(),
            Col::C128(v) => v.len(),
        }
    }
}

/// Wrap an integer to the range of `d` (two's complement), as numpy's
/// fixed-width arithmetic does.
#[inline(always)]
pub fn wrap(v: i64, d: DType) -> i64 {
    match d {
        DType::I8 => v as i8 as i64,
        DType::I16 => v as i16 as i64,
        DType::I32 => v as i32 as i64,
        DType::U8 => v as u8 as i64,
        DType::U16 => v as u16 as i64,
        DType::U32 => v as u32 as i64,
        _ => v,
    }
}

/// Wrap every value of a column to `d`.
pub fn wrap_all(v: &mut [i64], d: DType) {
    match d {
        DType::I8 => v.iter_mut().for_each(|x| *x = *x as i8 as i64),
        DType::I16 => v.iter_mut().for_each(|x| *x = *x as i16 as i64),
        DType::I32 => v.iter_mut().for_each(|x| *x = *x as i32 as i64),
        DType::U8 => v.iter_mut().for_each(|x| *x = *x as u8 as i64),
        DType::U16 => v.iter_mut().for_each(|x| *x = *x as u16 as i64),
        DType::U32 => v.iter_mut().for_each(|x| *x = *x as u32 as i64),
        _ => {}
    }
}

fn decode<const N: usize, T>(bytes: &[u8], order: ByteOrder, f: impl Fn([u8; N]) -> T) -> Vec<T> {
    let it = bytes
        .chunks_exact(N)
        .map(|c| <[u8; N]>::try_from(c).expect("chunk of N"));
    match order {
        ByteOrder::Little => it.map(f).collect(),
        ByteOrder::Big => it
            .map(|mut a| {
                a.reverse();
                f(a)
            })
            .collect(),
    }
}

/// Decode `bytes` (whole items of `d` in `order`) into a column.
pub fn load(bytes: &[u8], d: DType, order: ByteOrder) -> Col {
    use DType::*;
    match d {
        Bool => Col::Bool(bytes.iter().map(|&b| b != 0).collect()),
        I8 => Col::Int(bytes.iter().map(|&b| b as i8 as i64).collect()),
        U8 => Col::Int(bytes.iter().map(|&b| b as i64).collect()),
        I16 => Col::Int(decode(bytes, order, |a| i16::from_le_bytes(a) as i64)),
        U16 => Col::Int(decode(bytes, order, |a| u16::from_le_bytes(a) as i64)),
        I32 => Col::Int(decode(bytes, order, |a| i32::from_le_bytes(a) as i64)),
        U32 => Col::Int(decode(bytes, order, |a| u32::from_le_bytes(a) as i64)),
        I64 => Col::Int(decode(bytes, order, i64::from_le_bytes)),
        U64 => Col::U64(decode(bytes, order, u64::from_le_bytes)),
        F32 => Col::F32(decode(bytes, order, f32::from_le_bytes)),
        F64 => Col::F64(decode(bytes, order, f64::from_le_bytes)),
        // A big-endian complex swaps each component on its own.
        C64 => {
            let parts = decode(bytes, order, f32::from_le_bytes);
            Col::C64(
                parts
                    .chunks_exact(2)
                    .map(|p| Cx { re: p[0], im: p[1] })
                    .collect(),
            )
        }
        C128 => {
            let parts = decode(bytes, order, f64::from_le_bytes);
            Col::C128(
                parts
                    .chunks_exact(2)
                    .map(|p| Cx { re: p[0], im: p[1] })
                    .collect(),
            )
        }
    }
}

fn put<const N: usize, T: Copy>(out: &mut [u8], v: &[T], f: impl Fn(T) -> [u8; N]) {
    for (o, &x) in out.chunks_exact_mut(N).zip(v) {
        o.copy_from_slice(&f(x));
    }
}

/// Write a column of dtype `d` as little-endian bytes; `out` holds exactly
/// `col.len()` items (a one-value column fills every item).
pub fn store(col: &Col, d: DType, out: &mut [u8]) {
    use DType::*;
    let n = out.len() / d.itemsize();
    if col.len() == 1 && n != 1 {
        let mut one = vec![0u8; d.itemsize()];
        store(col, d, &mut one);
        for o in out.chunks_exact_mut(d.itemsize()) {
            o.copy_from_slice(&one);
        }
        return;
    }
    match (col, d) {
        (Col::Bool(v), _) => out.iter_mut().zip(v).for_each(|(o, &b)| *o = b as u8),
        (Col::Int(v), I8 | U8) => out.iter_mut().zip(v).for_each(|(o, &x)| *o = x as u8),
        (Col::Int(v), I16 | U16) => put(out, v, |x| (x as u16).to_le_bytes()),
        (Col::Int(v), I32 | U32) => put(out, v, |x| (x as u32).to_le_bytes()),
        (Col::Int(v), _) => put(out, v, |x| x.to_le_bytes()),
        (Col::U64(v), _) => put(out, v, |x| x.to_le_bytes()),
        (Col::F32(v), _) => put(out, v, |x| x.to_le_bytes()),
        (Col::F64(v), _) => put(out, v, |x| x.to_le_bytes()),
        (Col::C64(v), _) => put(out, v, |x| {
            let mut b = [0u8; 8];
            b[..4].copy_from_slice(&x.re.to_le_bytes());
            b[4..].copy_from_slice(&x.im.to_le_bytes());
            b
        }),
        (Col::C128(v), _) => put(out, v, |x| {
            let mut b = [0u8; 16];
            b[..8].copy_from_slice(&x.re.to_le_bytes());
            b[8..].copy_from_slice(&x.im.to_le_bytes());
            b
        }),
    }
}

fn map<T: Copy, U>(v: &[T], f: impl Fn(T) -> U) -> Vec<U> {
    v.iter().map(|&x| f(x)).collect()
}

/// numpy's cast of a column from dtype `from` to dtype `to` (`astype`,
/// default unsafe casting: integers wrap, floats round to nearest, complex
/// to real keeps the real part). Only widening casts and int/bool → float
/// occur implicitly in an expression; the rest are here for completeness.
pub fn cast(col: &Col, to: DType) -> Col {
    use DType::*;
    match (col, to) {
        (Col::Bool(v), Bool) => Col::Bool(v.clone()),
        (Col::Bool(v), U64) => Col::U64(map(v, |b| b as u64)),
        (Col::Bool(v), F32) => Col::F32(map(v, |b| b as u8 as f32)),
        (Col::Bool(v), F64) => Col::F64(map(v, |b| b as u8 as f64)),
        (Col::Bool(v), C64) => Col::C64(map(v, |b| Cx {
            re: b as u8 as f32,
            im: 0.0,
        })),
        (Col::Bool(v), C128) => Col::C128(map(v, |b| Cx {
            re: b as u8 as f64,
            im: 0.0,
        })),
        (Col::Bool(v), _) => Col::Int(map(v, |b| b as i64)),

        (Col::Int(v), Bool) => Col::Bool(map(v, |x| x != 0)),
        (Col::Int(v), U64) => Col::U64(map(v, |x| x as u64)),
        (Col::Int(v), F32) => Col::F32(map(v, |x| x as f32)),
        (Col::Int(v), F64) => Col::F64(map(v, |x| x as f64)),
        (Col::Int(v), C64) => Col::C64(map(v, |x| Cx {
            re: x as f32,
            im: 0.0,
        })),
        (Col::Int(v), C128) => Col::C128(map(v, |x| Cx {
            re: x as f64,
            im: 0.0,
        })),
        (Col::Int(v), d) => Col::Int(map(v, |x| wrap(x, d))),

        (Col::U64(v), Bool) => Col::Bool(map(v, |x| x != 0)),
        (Col::U64(v), U64) => Col::U64(v.clone()),
        (Col::U64(v), F32) => Col::F32(map(v, |x| x as f32)),
        (Col::U64(v), F64) => Col::F64(map(v, |x| x as f64)),
        (Col::U64(v), C64) => Col::C64(map(v, |x| Cx {
            re: x as f32,
            im: 0.0,
        })),
        (Col::U64(v), C128) => Col::C128(map(v, |x| Cx {
            re: x as f64,
            im: 0.0,
        })),
        (Col::U64(v), d) => Col::Int(map(v, |x| wrap(x as i64, d))),

        (Col::F32(v), Bool) => Col::Bool(map(v, |x| x != 0.0)),
        (Col::F32(v), F32) => Col::F32(v.clone()),
        (Col::F32(v), F64) => Col::F64(map(v, |x| x as f64)),
        (Col::F32(v), C64) => Col::C64(map(v, |x| Cx { re: x, im: 0.0 })),
        (Col::F32(v), C128) => Col::C128(map(v, |x| Cx {
            re: x as f64,
            im: 0.0,
        })),
        (Col::F32(v), U64) => Col::U64(map(v, |x| x as u64)),
        (Col::F32(v), d) => Col::Int(map(v, |x| wrap(x as i64, d))),

        (Col::F64(v), Bool) => Col::Bool(map(v, |x| x != 0.0)),
        (Col::F64(v), F32) => Col::F32(map(v, |x| x as f32)),
        (Col::F64(v), F64) => Col::F64(v.clone()),
        (Col::F64(v), C64) => Col::C64(map(v, |x| Cx {
            re: x as f32,
            im: 0.0,
        })),
        (Col::F64(v), C128) => Col::C128(map(v, |x| Cx { re: x, im: 0.0 })),
        (Col::F64(v), U64) => Col::U64(map(v, |x| x as u64)),
        (Col::F64(v), d) => Col::Int(map(v, |x| wrap(x as i64, d))),

        (Col::C64(v), Bool) => Col::Bool(map(v, |x| x.re != 0.0 || x.im != 0.0)),
        (Col::C64(v), C64) => Col::C64(v.clone()),
        (Col::C64(v), C128) => Col::C128(map(v, |x| Cx {
            re: x.re as f64,
            im: x.im as f64,
        })),
        (Col::C64(v), d) => cast(&Col::F32(map(v, |x| x.re)), d),

        (Col::C128(v), Bool) => Col::Bool(map(v, |x| x.re != 0.0 || x.im != 0.0)),
        (Col::C128(v), C64) => Col::C64(map(v, |x| Cx {
            re: x.re as f32,
            im: x.im as f32,
        })),
        (Col::C128(v), C128) => Col::C128(v.clone()),
        (Col::C128(v), d) => cast(&Col::F64(map(v, |x| x.re)), d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_both_byte_orders() {
        assert_eq!(
            load(&[0x01, 0x02, 0xff, 0xff], DType::I16, ByteOrder::Big),
            Col::Int(vec![0x0102, -1])
        );
        assert_eq!(
            load(&[0x01, 0x02], DType::U16, ByteOrder::Little),
            Col::Int(vec![0x0201])
        );
        assert_eq!(
            load(&1.5f64.to_be_bytes(), DType::F64, ByteOrder::Big),
            Col::F64(vec![1.5])
        );
        let mut c = Vec::new();
        c.extend_from_slice(&2.0f32.to_be_bytes());
        c.extend_from_slice(&(-3.0f32).to_be_bytes());
        assert_eq!(
            load(&c, DType::C64, ByteOrder::Big),
            Col::C64(vec![Cx { re: 2.0, im: -3.0 }])
        );
        assert_eq!(
            load(&[0, 1, 2], DType::Bool, ByteOrder::Little),
            Col::Bool(vec![false, true, true])
        );
        assert_eq!(
            load(&[0xff], DType::I8, ByteOrder::Little),
            Col::Int(vec![-1])
        );
        assert_eq!(
            load(&[0xff], DType::U8, ByteOrder::Little),
            Col::Int(vec![255])
        );
    }

    #[test]
    fn store_little_endian() {
        let mut out = [0u8; 4];
        store(&Col::Int(vec![-2, 300]), DType::I16, &mut out);
        assert_eq!(out, [0xfe, 0xff, 0x2c, 0x01]);
        let mut out = [0u8; 3];
        store(&Col::Bool(vec![true]), DType::Bool, &mut out);
        assert_eq!(out, [1, 1, 1]);
    }

    #[test]
    fn casts_wrap_and_round() {
        assert_eq!(
            cast(&Col::Int(vec![300, -1]), DType::I8),
            Col::Int(vec![44, -1])
        );
        assert_eq!(
            cast(&Col::Int(vec![-1]), DType::U64),
            Col::U64(vec![u64::MAX])
        );
        assert_eq!(
            cast(&Col::Int(vec![16_777_217]), DType::F32),
            Col::F32(vec![16_777_216.0])
        );
        assert_eq!(
            cast(&Col::F64(vec![0.1]), DType::F32),
            Col::F32(vec![0.1f32])
        );
        assert_eq!(
            cast(&Col::F64(vec![f64::NAN, 0.0]), DType::Bool),
            Col::Bool(vec![true, false])
        );
        assert_eq!(wrap(-129, DType::I8), 127);
        assert_eq!(wrap(-1, DType::U32), 4_294_967_295);
    }
}
