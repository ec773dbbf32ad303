//! Running the typed steps over a block: each step is one pass over whole
//! columns (a kernel per operation and dtype class, chosen once per step,
//! not per element), so a step's loop is simple enough for the compiler to
//! vectorise. A value that is one item for the whole block (a literal, an
//! operand broadcast along every axis) stays one item.
//!
//! Semantics that differ between numpy and python-blosc2, and what is done
//! here (see `promote.rs` for dtypes):
//! - integer `//` and `%` by zero give 0 (numpy; python-blosc2's
//!   chunked engine agrees, its miniexpr engine crashes or gives INT_MIN);
//! - integer `%` and `//` round toward negative infinity (numpy, Python);
//! - float `//` is numpy's (from the fmod remainder: `-0.5 // inf` is -1,
//!   as both python-blosc2 engines say too; `inf // 2` is NaN where they
//!   say inf); float `%` is numpy's (C's fmod moved
//!   to the divisor's sign; python-blosc2's miniexpr engine keeps fmod's
//!   sign, its chunked engine computes `a - floor(a / b) * b`, NaN for
//!   `5 % inf` and +0 for `-0.0 % -2`);
//! - integer `**` is computed in float64 and converted back the way x86
//!   converts (both python-blosc2 engines): results out of the int32 range
//!   (int64 for int64/uint32) become the minimum integer, `2 ** -1` is 0,
//!   `0 ** -1` is the minimum integer (numpy refuses negative powers);
//! - shifts by at least the bit width give 0 (`<<`) or the sign (`>>`).

use super::dtype::DType;
use super::error::ComputeError;
use super::funcs::{Bin, Un};
use super::math::{self, Float};
use super::typed::{Instr, Step};
use super::values::{cast, wrap, wrap_all, Col, Cx};

/// A step's value: a column of the block's length, or one item standing
/// for all of them.
#[derive(Debug, Clone, PartialEq)]
pub struct Val {
    pub col: Col,
    pub scalar: bool,
}

#[derive(Clone, Copy)]
enum V<'a, T> {
    S(&'a [T]),
    C(T),
}

fn v<T: Copy>(s: &[T], scalar: bool) -> V<'_, T> {
    if scalar {
        V::C(s[0])
    } else {
        V::S(s)
    }
}

#[inline(always)]
fn map1<T: Copy, U>(a: V<T>, f: impl Fn(T) -> U) -> Vec<U> {
    match a {
        V::S(x) => x.iter().map(|&p| f(p)).collect(),
        V::C(p) => vec![f(p)],
    }
}

#[inline(always)]
fn map2<T: Copy, U>(a: V<T>, b: V<T>, f: impl Fn(T, T) -> U) -> Vec<U> {
    match (a, b) {
        (V::S(x), V::S(y)) => x.iter().zip(y).map(|(&p, &q)| f(p, q)).collect(),
        (V::S(x), V::C(q)) => x.iter().map(|&p| f(p, q)).collect(),
        (V::C(p), V::S(y)) => y.iter().map(|&q| f(p, q)).collect(),
        (V::C(p), V::C(q)) => vec![f(p, q)],
    }
}

fn internal(what: &str) -> ComputeError {
    ComputeError::Unsupported(format!("internal: {what}"))
}

fn float_bin<T: Float>(op: Bin, a: V<T>, b: V<T>) -> Result<Col, ComputeError> {
    Ok(match op {
        Bin::Add => T::col(map2(a, b, |x, y| x + y)),
        Bin::Sub => T::col(map2(a, b, |x, y| x - y)),
        Bin::Mul => T::col(map2(a, b, |x, y| x * y)),
        Bin::Div => T::col(map2(a, b, |x, y| x / y)),
        Bin::FloorDiv => T::col(map2(a, b, math::py_floordiv)),
        Bin::Mod => T::col(map2(a, b, math::py_mod)),
        // numpy's fast paths for a scalar exponent (`fast_scalar_power`),
        // which python-blosc2's engines share: `x ** 0.5` is sqrt (-0.0 for
        // -0.0, NaN for -inf, where pow gives +0 and +inf).
        Bin::Pow => match b {
            V::C(y) if y == T::HALF => T::col(map1(a, |x| x.sqrt())),
            V::C(y) if y == T::TWO => T::col(map1(a, |x| x * x)),
            V::C(y) if y == -T::ONE => T::col(map1(a, |x| T::ONE / x)),
            V::C(y) if y == T::ONE => T::col(map1(a, |x| x)),
            V::C(y) if y == T::ZERO => T::col(map1(a, |_| T::ONE)),
            _ => T::col(map2(a, b, |x, y| x.powf(y))),
        },
        Bin::Lt => Col::Bool(map2(a, b, |x, y| x < y)),
        Bin::Le => Col::Bool(map2(a, b, |x, y| x <= y)),
        Bin::Gt => Col::Bool(map2(a, b, |x, y| x > y)),
        Bin::Ge => Col::Bool(map2(a, b, |x, y| x >= y)),
        Bin::Eq => Col::Bool(map2(a, b, |x, y| x == y)),
        Bin::Ne => Col::Bool(map2(a, b, |x, y| x != y)),
        Bin::Max => T::col(map2(a, b, math::maximum)),
        Bin::Min => T::col(map2(a, b, math::minimum)),
        Bin::Atan2 => T::col(map2(a, b, |x, y| x.atan2(y))),
        Bin::Hypot => T::col(map2(a, b, |x, y| x.hypot(y))),
        Bin::Copysign => T::col(map2(a, b, |x, y| x.copysign(y))),
        Bin::NextAfter => T::col(map2(a, b, |x, y| x.next_after(y))),
        Bin::LogAddExp => T::col(map2(a, b, math::logaddexp)),
        Bin::And | Bin::Or | Bin::Xor | Bin::Shl | Bin::Shr => {
            return Err(internal("bitwise op on floats"))
        }
    })
}

/// float64 to an integer dtype the way python-blosc2's engines do after
/// `pow`: x86's truncating conversion, whose out-of-range (and NaN) result
/// is the minimum integer of the conversion's width, then wrapped.
fn x86_to_int(v: f64, d: DType) -> i64 {
    match d {
        DType::I64 | DType::U32 => {
            // [-2^63, 2^63)
            if v.is_nan() || !(i64::MIN as f64..-(i64::MIN as f64)).contains(&v) {
                i64::MIN
            } else {
                v as i64
            }
        }
        _ => {
            let r = if v.is_nan() || !(-2_147_483_648.0..2_147_483_648.0).contains(&v) {
                i32::MIN
            } else {
                v as i32
            };
            wrap(r as i64, d)
        }
    }
}

/// `x ** e` modulo 2^64, numpy's integer power: square and multiply, so a
/// 64-bit exponent takes at most 128 multiplications.
fn wrapping_pow(mut x: u64, mut e: u64) -> u64 {
    let mut r: u64 = 1;
    while e > 0 {
        if e & 1 == 1 {
            r = r.wrapping_mul(x);
        }
        x = x.wrapping_mul(x);
        e >>= 1;
    }
    r
}

fn int_bin(op: Bin, a: V<i64>, b: V<i64>, d: DType) -> Result<Col, ComputeError> {
    let bits = (d.itemsize() * 8) as i64;
    let mut out = match op {
        Bin::Add => map2(a, b, |x, y| x.wrapping_add(y)),
        Bin::Sub => map2(a, b, |x, y| x.wrapping_sub(y)),
        Bin::Mul => map2(a, b, |x, y| x.wrapping_mul(y)),
        Bin::FloorDiv => map2(a, b, |x, y| {
            if y == 0 {
                0
            } else {
                let q = x.wrapping_div(y);
                if x.wrapping_rem(y) != 0 && ((x < 0) != (y < 0)) {
                    q - 1
                } else {
                    q
                }
            }
        }),
        Bin::Mod => map2(a, b, |x, y| {
            if y == 0 {
                0
            } else {
                let r = x.wrapping_rem(y);
                if r != 0 && ((r < 0) != (y < 0)) {
                    r + y
                } else {
                    r
                }
            }
        }),
        // A literal exponent is numpy's exact wrapping power in every engine;
        // an array exponent goes through float64 as python-blosc2 does.
        Bin::Pow => match b {
            V::C(y) if y >= 0 => map1(a, |x| wrapping_pow(x as u64, y as u64) as i64),
            _ => map2(a, b, |x, y| x86_to_int((x as f64).powf(y as f64), d)),
        },
        Bin::And => map2(a, b, |x, y| x & y),
        Bin::Or => map2(a, b, |x, y| x | y),
        Bin::Xor => map2(a, b, |x, y| x ^ y),
        Bin::Shl => map2(a, b, |x, y| {
            if (0..bits).contains(&y) {
                x.wrapping_shl(y as u32)
            } else {
                0
            }
        }),
        Bin::Shr => map2(a, b, |x, y| {
            if (0..bits).contains(&y) {
                x >> y
            } else if x < 0 {
                -1
            } else {
                0
            }
        }),
        Bin::Max => map2(a, b, |x, y| x.max(y)),
        Bin::Min => map2(a, b, |x, y| x.min(y)),
        Bin::Lt => return Ok(Col::Bool(map2(a, b, |x, y| x < y))),
        Bin::Le => return Ok(Col::Bool(map2(a, b, |x, y| x <= y))),
        Bin::Gt => return Ok(Col::Bool(map2(a, b, |x, y| x > y))),
        Bin::Ge => return Ok(Col::Bool(map2(a, b, |x, y| x >= y))),
        Bin::Eq => return Ok(Col::Bool(map2(a, b, |x, y| x == y))),
        Bin::Ne => return Ok(Col::Bool(map2(a, b, |x, y| x != y))),
        Bin::Div | Bin::Atan2 | Bin::Hypot | Bin::Copysign | Bin::NextAfter | Bin::LogAddExp => {
            return Err(internal("float op on integers"))
        }
    };
    wrap_all(&mut out, d);
    Ok(Col::Int(out))
}

fn u64_bin(op: Bin, a: V<u64>, b: V<u64>) -> Result<Col, ComputeError> {
    Ok(Col::U64(match op {
        Bin::Add => map2(a, b, |x, y| x.wrapping_add(y)),
        Bin::Sub => map2(a, b, |x, y| x.wrapping_sub(y)),
        Bin::Mul => map2(a, b, |x, y| x.wrapping_mul(y)),
        Bin::FloorDiv => map2(a, b, |x, y| x.checked_div(y).unwrap_or(0)),
        Bin::Mod => map2(a, b, |x, y| x.checked_rem(y).unwrap_or(0)),
        Bin::Pow => match b {
            V::C(y) => map1(a, |x| wrapping_pow(x, y)),
            _ => map2(a, b, |x, y| {
                let v = (x as f64).powf(y as f64);
                if v.is_nan() || v >= 18_446_744_073_709_551_616.0 {
                    1 << 63
                } else {
                    v as u64
                }
            }),
        },
        Bin::And => map2(a, b, |x, y| x & y),
        Bin::Or => map2(a, b, |x, y| x | y),
        Bin::Xor => map2(a, b, |x, y| x ^ y),
        Bin::Shl => map2(a, b, |x, y| if y < 64 { x << y } else { 0 }),
        Bin::Shr => map2(a, b, |x, y| if y < 64 { x >> y } else { 0 }),
        Bin::Max => map2(a, b, |x, y| x.max(y)),
        Bin::Min => map2(a, b, |x, y| x.min(y)),
        Bin::Lt => return Ok(Col::Bool(map2(a, b, |x, y| x < y))),
        Bin::Le => return Ok(Col::Bool(map2(a, b, |x, y| x <= y))),
        Bin::Gt => return Ok(Col::Bool(map2(a, b, |x, y| x > y))),
        Bin::Ge => return Ok(Col::Bool(map2(a, b, |x, y| x >= y))),
        Bin::Eq => return Ok(Col::Bool(map2(a, b, |x, y| x == y))),
        Bin::Ne => return Ok(Col::Bool(map2(a, b, |x, y| x != y))),
        Bin::Div | Bin::Atan2 | Bin::Hypot | Bin::Copysign | Bin::NextAfter | Bin::LogAddExp => {
            return Err(internal("float op on integers"))
        }
    }))
}

fn bool_bin(op: Bin, a: V<bool>, b: V<bool>) -> Result<Col, ComputeError> {
    Ok(Col::Bool(match op {
        Bin::Add | Bin::Or | Bin::Max => map2(a, b, |x, y| x | y),
        Bin::Mul | Bin::And | Bin::Min => map2(a, b, |x, y| x & y),
        Bin::Xor | Bin::Ne => map2(a, b, |x, y| x ^ y),
        Bin::Eq => map2(a, b, |x, y| x == y),
        Bin::Lt => map2(a, b, |x, y| !x & y),
        Bin::Le => map2(a, b, |x, y| !x | y),
        Bin::Gt => map2(a, b, |x, y| x & !y),
        Bin::Ge => map2(a, b, |x, y| x | !y),
        _ => return Err(internal("arithmetic on booleans")),
    }))
}

fn complex_bin<T: Float>(op: Bin, a: V<Cx<T>>, b: V<Cx<T>>) -> Result<Col, ComputeError> {
    Ok(match op {
        Bin::Add => T::ccol(map2(a, b, |x, y| Cx {
            re: x.re + y.re,
            im: x.im + y.im,
        })),
        Bin::Sub => T::ccol(map2(a, b, |x, y| Cx {
            re: x.re - y.re,
            im: x.im - y.im,
        })),
        Bin::Mul => T::ccol(map2(a, b, math::cmul)),
        Bin::Div => T::ccol(map2(a, b, math::cdiv)),
        Bin::Eq => Col::Bool(map2(a, b, |x, y| x.re == y.re && x.im == y.im)),
        Bin::Ne => Col::Bool(map2(a, b, |x, y| x.re != y.re || x.im != y.im)),
        _ => return Err(internal("unsupported complex op")),
    })
}

fn float_un<T: Float>(u: Un, a: V<T>) -> Result<Col, ComputeError> {
    use Un::*;
    Ok(match u {
        Neg => T::col(map1(a, |x| -x)),
        Abs => T::col(map1(a, |x| x.abs())),
        Sqrt => T::col(map1(a, |x| x.sqrt())),
        Exp => T::col(map1(a, |x| x.exp())),
        Expm1 => T::col(map1(a, |x| x.exp_m1())),
        Log => T::col(map1(a, |x| x.ln())),
        Log10 => T::col(map1(a, |x| x.log10())),
        Log1p => T::col(map1(a, |x| x.ln_1p())),
        Log2 => T::col(map1(a, |x| x.log2())),
        Sin => T::col(map1(a, |x| x.sin())),
        Cos => T::col(map1(a, |x| x.cos())),
        Tan => T::col(map1(a, |x| x.tan())),
        Asin => T::col(map1(a, |x| x.asin())),
        Acos => T::col(map1(a, |x| x.acos())),
        Atan => T::col(map1(a, |x| x.atan())),
        Sinh => T::col(map1(a, |x| x.sinh())),
        Cosh => T::col(map1(a, |x| x.cosh())),
        Tanh => T::col(map1(a, |x| x.tanh())),
        Asinh => T::col(map1(a, math::asinh)),
        Acosh => T::col(map1(a, math::acosh)),
        Atanh => T::col(map1(a, math::atanh)),
        Floor => T::col(map1(a, |x| x.floor())),
        Ceil => T::col(map1(a, |x| x.ceil())),
        Trunc => T::col(map1(a, |x| x.trunc())),
        Round => T::col(map1(a, |x| x.round_even())),
        IsNan => Col::Bool(map1(a, |x| x.is_nan())),
        IsInf => Col::Bool(map1(a, |x| x.is_infinite())),
        IsFinite => Col::Bool(map1(a, |x| x.is_finite())),
        Signbit => Col::Bool(map1(a, |x| x.is_sign_negative())),
        Imag => T::col(map1(a, |_| T::ZERO)),
        Square => T::col(map1(a, |x| x * x)),
        Sign => T::col(map1(a, math::sign)),
        Reciprocal => T::col(map1(a, |x| T::ONE / x)),
        Real | Conj | Invert | LogicalNot => return Err(internal("no-op or bitwise on floats")),
    })
}

fn int_un(u: Un, a: V<i64>, d: DType) -> Result<Col, ComputeError> {
    use Un::*;
    let mut out = match u {
        Neg => map1(a, |x| x.wrapping_neg()),
        Invert => map1(a, |x| !x),
        Abs => map1(a, |x| x.wrapping_abs()),
        Square => map1(a, |x| x.wrapping_mul(x)),
        Sign => map1(a, |x| x.signum()),
        Imag => map1(a, |_| 0),
        IsNan | IsInf => return Ok(Col::Bool(map1(a, |_| false))),
        IsFinite => return Ok(Col::Bool(map1(a, |_| true))),
        Signbit => return Ok(Col::Bool(map1(a, |x| x < 0))),
        _ => return Err(internal("float function on integers")),
    };
    wrap_all(&mut out, d);
    Ok(Col::Int(out))
}

fn u64_un(u: Un, a: V<u64>) -> Result<Col, ComputeError> {
    use Un::*;
    Ok(Col::U64(match u {
        Neg => map1(a, |x| x.wrapping_neg()),
        Invert => map1(a, |x| !x),
        Square => map1(a, |x| x.wrapping_mul(x)),
        Sign => map1(a, |x| (x > 0) as u64),
        Imag => map1(a, |_| 0),
        IsNan | IsInf | Signbit => return Ok(Col::Bool(map1(a, |_| false))),
        IsFinite => return Ok(Col::Bool(map1(a, |_| true))),
        _ => return Err(internal("float function on integers")),
    }))
}

fn bool_un(u: Un, a: V<bool>) -> Result<Col, ComputeError> {
    use Un::*;
    Ok(Col::Bool(match u {
        Invert => map1(a, |x| !x),
        IsNan | IsInf | Signbit | Imag => map1(a, |_| false),
        IsFinite => map1(a, |_| true),
        _ => return Err(internal("arithmetic on booleans")),
    }))
}

fn complex_un<T: Float>(u: Un, a: V<Cx<T>>) -> Result<Col, ComputeError> {
    use Un::*;
    Ok(match u {
        Neg => T::ccol(map1(a, |x| Cx {
            re: -x.re,
            im: -x.im,
        })),
        Conj => T::ccol(map1(a, |x| Cx {
            re: x.re,
            im: -x.im,
        })),
        Square => T::ccol(map1(a, |x| math::cmul(x, x))),
        Sqrt => T::ccol(map1(a, math::csqrt)),
        Exp => T::ccol(map1(a, math::cexp)),
        Log => T::ccol(map1(a, math::clog)),
        Sin => T::ccol(map1(a, math::csin)),
        Cos => T::ccol(map1(a, math::ccos)),
        Sinh => T::ccol(map1(a, math::csinh)),
        Cosh => T::ccol(map1(a, math::ccosh)),
        Tanh => T::ccol(map1(a, math::ctanh)),
        Reciprocal => T::ccol(map1(a, |x| {
            math::cdiv(
                Cx {
                    re: T::ONE,
                    im: T::ZERO,
                },
                x,
            )
        })),
        Abs => T::col(map1(a, math::cabs)),
        Real => T::col(map1(a, |x| x.re)),
        Imag => T::col(map1(a, |x| x.im)),
        IsNan => Col::Bool(map1(a, |x| x.re.is_nan() || x.im.is_nan())),
        IsInf => Col::Bool(map1(a, |x| x.re.is_infinite() || x.im.is_infinite())),
        IsFinite => Col::Bool(map1(a, |x| x.re.is_finite() && x.im.is_finite())),
        _ => return Err(internal("unsupported complex function")),
    })
}

fn bin(op: Bin, a: &Val, b: &Val, input: DType) -> Result<Col, ComputeError> {
    let (sa, sb) = (a.scalar, b.scalar);
    match (&a.col, &b.col) {
        (Col::F64(x), Col::F64(y)) => float_bin(op, v(x, sa), v(y, sb)),
        (Col::F32(x), Col::F32(y)) => float_bin(op, v(x, sa), v(y, sb)),
        (Col::Int(x), Col::Int(y)) => int_bin(op, v(x, sa), v(y, sb), input),
        (Col::U64(x), Col::U64(y)) => u64_bin(op, v(x, sa), v(y, sb)),
        (Col::Bool(x), Col::Bool(y)) => bool_bin(op, v(x, sa), v(y, sb)),
        (Col::C64(x), Col::C64(y)) => complex_bin(op, v(x, sa), v(y, sb)),
        (Col::C128(x), Col::C128(y)) => complex_bin(op, v(x, sa), v(y, sb)),
        _ => Err(internal("mismatched operand columns")),
    }
}

fn un(u: Un, a: &Val, d: DType) -> Result<Col, ComputeError> {
    let s = a.scalar;
    match &a.col {
        Col::F64(x) => float_un(u, v(x, s)),
        Col::F32(x) => float_un(u, v(x, s)),
        Col::Int(x) => int_un(u, v(x, s), d),
        Col::U64(x) => u64_un(u, v(x, s)),
        Col::Bool(x) => bool_un(u, v(x, s)),
        Col::C64(x) => complex_un(u, v(x, s)),
        Col::C128(x) => complex_un(u, v(x, s)),
    }
}

fn select<T: Copy>(c: V<bool>, x: V<T>, y: V<T>, n: usize) -> Vec<T> {
    let get = |a: &V<T>, i: usize| match a {
        V::S(s) => s[i],
        V::C(c) => *c,
    };
    match (c, x, y) {
        (V::S(c), V::S(x), V::S(y)) => c
            .iter()
            .zip(x.iter().zip(y))
            .map(|(&c, (&p, &q))| if c { p } else { q })
            .collect(),
        (V::C(c), _, _) => {
            let src = if c { x } else { y };
            (0..n).map(|i| get(&src, i)).collect()
        }
        (V::S(c), x, y) => c
            .iter()
            .enumerate()
            .map(|(i, &c)| if c { get(&x, i) } else { get(&y, i) })
            .collect(),
    }
}

fn where_(c: &Val, x: &Val, y: &Val) -> Result<Col, ComputeError> {
    let Col::Bool(cv) = &c.col else {
        return Err(internal("where condition not bool"));
    };
    let scalar = c.scalar && x.scalar && y.scalar;
    let n = if scalar {
        1
    } else {
        [c, x, y]
            .iter()
            .filter(|a| !a.scalar)
            .map(|a| a.col.len())
            .next()
            .unwrap_or(1)
    };
    let cc = v(cv, c.scalar);
    macro_rules! sel {
        ($variant:ident, $a:expr, $b:expr) => {
            Ok(Col::$variant(select(
                cc,
                v($a, x.scalar),
                v($b, y.scalar),
                n,
            )))
        };
    }
    match (&x.col, &y.col) {
        (Col::Bool(a), Col::Bool(b)) => sel!(Bool, a, b),
        (Col::Int(a), Col::Int(b)) => sel!(Int, a, b),
        (Col::U64(a), Col::U64(b)) => sel!(U64, a, b),
        (Col::F32(a), Col::F32(b)) => sel!(F32, a, b),
        (Col::F64(a), Col::F64(b)) => sel!(F64, a, b),
        (Col::C64(a), Col::C64(b)) => sel!(C64, a, b),
        (Col::C128(a), Col::C128(b)) => sel!(C128, a, b),
        _ => Err(internal("where branches of different columns")),
    }
}

/// For each step, the last step that reads it (the root is never freed).
pub fn last_uses(steps: &[Step], root: usize) -> Vec<usize> {
    let mut last = vec![0usize; steps.len()];
    for (k, s) in steps.iter().enumerate() {
        let mut mark = |j: usize| last[j] = k;
        match s.instr {
            Instr::Load(_) | Instr::Const(_) => {}
            Instr::Cast(a) | Instr::Un(_, a) => mark(a),
            Instr::Bin(_, a, b) => {
                mark(a);
                mark(b);
            }
            Instr::Where(c, x, y) => {
                mark(c);
                mark(x);
                mark(y);
            }
        }
    }
    last[root] = usize::MAX;
    last
}

/// Run `steps` up to `root`; `load(i)` gives operand `i`'s value over the
/// block.
pub fn execute(
    steps: &[Step],
    root: usize,
    last: &[usize],
    load: &mut dyn FnMut(usize) -> Val,
) -> Result<Val, ComputeError> {
    let mut regs: Vec<Option<Val>> = vec![None; steps.len()];
    for (k, step) in steps.iter().enumerate().take(root + 1) {
        fn get(regs: &[Option<Val>], j: usize) -> Result<&Val, ComputeError> {
            regs[j].as_ref().ok_or_else(|| internal("freed value read"))
        }
        let val = match &step.instr {
            Instr::Load(i) => load(*i),
            Instr::Const(c) => Val {
                col: c.clone(),
                scalar: true,
            },
            Instr::Cast(a) => {
                let a = get(&regs, *a)?;
                Val {
                    col: cast(&a.col, step.dtype),
                    scalar: a.scalar,
                }
            }
            Instr::Bin(op, ai, bi) => {
                let (a, b) = (get(&regs, *ai)?, get(&regs, *bi)?);
                Val {
                    col: bin(*op, a, b, steps[*ai].dtype)?,
                    scalar: a.scalar && b.scalar,
                }
            }
            Instr::Un(u, a) => {
                let a = get(&regs, *a)?;
                Val {
                    col: un(*u, a, step.dtype)?,
                    scalar: a.scalar,
                }
            }
            Instr::Where(c, x, y) => {
                let (c, x, y) = (get(&regs, *c)?, get(&regs, *x)?, get(&regs, *y)?);
                Val {
                    col: where_(c, x, y)?,
                    scalar: c.scalar && x.scalar && y.scalar,
                }
            }
        };
        regs[k] = Some(val);
        let mut free = |j: usize| {
            if last[j] == k {
                regs[j] = None;
            }
        };
        match step.instr {
            Instr::Load(_) | Instr::Const(_) => {}
            Instr::Cast(a) | Instr::Un(_, a) => free(a),
            Instr::Bin(_, a, b) => {
                free(a);
                free(b);
            }
            Instr::Where(c, x, y) => {
                free(c);
                free(x);
                free(y);
            }
        }
    }
    regs[root]
        .take()
        .ok_or_else(|| internal("root not computed"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(op: Bin, a: &[i64], b: &[i64], d: DType) -> Vec<i64> {
        match int_bin(op, V::S(a), V::S(b), d).unwrap() {
            Col::Int(v) => v,
            other => panic!("{other:?}"),
        }
    }

    /// Expected values: numpy 2.4.6 / python-blosc2 4.14.1 (probe output
    /// quoted in promote.rs and the module doc).
    #[test]
    fn integer_division_semantics() {
        let a = [7, -7, 0, 5, 3, 100, -128];
        let b = [0, 0, 0, 2, -2, 7, -1];
        assert_eq!(
            ints(Bin::FloorDiv, &a, &b, DType::I8),
            vec![0, 0, 0, 2, -2, 14, -128]
        );
        assert_eq!(
            ints(Bin::Mod, &a, &b, DType::I8),
            vec![0, 0, 0, 1, -1, 2, 0]
        );
    }

    #[test]
    fn integer_power_as_python_blosc2() {
        let a = [2, 3, -2, 0, 10, 7, 2, 1];
        let b = [3, 2, 3, 0, 12, -1, 40, 5];
        assert_eq!(
            ints(Bin::Pow, &a, &b, DType::I32),
            vec![8, 9, -8, 1, -2147483648, 0, -2147483648, 1]
        );
        let a = [2, 3, 200, 0, 10, 7, 2];
        let b = [3, 2, 3, 0, 5, 1, 8];
        assert_eq!(
            ints(Bin::Pow, &a, &b, DType::U8),
            vec![8, 9, 0, 1, 160, 7, 0]
        );
        assert_eq!(ints(Bin::Pow, &[0], &[-1], DType::I32), vec![-2147483648]);
    }

    #[test]
    fn a_literal_integer_exponent_is_numpys_exact_wrapping_power() {
        // Values printed by numpy 2 and both python-blosc2 4.14.1 engines for
        // `b ** 3` and `(b - 7) ** 1` on uint64 (float64 would round these).
        let b = [0, 1, 6, 7, 8, (1 << 63) + 5, u64::MAX, (1 << 53) + 1];
        let Col::U64(r) = u64_bin(Bin::Pow, V::S(&b), V::C(3)).unwrap() else {
            panic!()
        };
        assert_eq!(
            r,
            [
                0,
                1,
                216,
                343,
                512,
                9223372036854775933,
                18446744073709551615,
                27021597764222977
            ]
        );
        let wrapped = [u64::MAX - 6, (1 << 63) - 2];
        let Col::U64(r) = u64_bin(Bin::Pow, V::S(&wrapped), V::C(1)).unwrap() else {
            panic!()
        };
        assert_eq!(r, wrapped);
        // int64 past 2^53 and int8 wrapping (13 ** 4 = 28561 = 145 - 256 mod 256).
        let Col::Int(r) =
            int_bin(Bin::Pow, V::S(&[i64::MIN + 1, 13]), V::C(1), DType::I64).unwrap()
        else {
            panic!()
        };
        assert_eq!(r, [i64::MIN + 1, 13]);
        let Col::Int(r) = int_bin(Bin::Pow, V::S(&[13, -3]), V::C(4), DType::I8).unwrap() else {
            panic!()
        };
        assert_eq!(r, [-111, 81]);
    }

    #[test]
    fn wrapping_and_shifts() {
        assert_eq!(
            ints(Bin::Add, &[127, -128], &[1, -1], DType::I8),
            vec![-128, 127]
        );
        assert_eq!(ints(Bin::Sub, &[0], &[1], DType::U8), vec![255]);
        assert_eq!(
            ints(Bin::Shl, &[1, 1, 3], &[7, 8, -1], DType::I8),
            vec![-128, 0, 0]
        );
        assert_eq!(
            ints(Bin::Shr, &[-8, -8, 8], &[1, 9, 70], DType::I8),
            vec![-4, -1, 0]
        );
    }

    #[test]
    fn float_floor_division_and_modulo() {
        let f = [1.5, -1.5, 0.0, -0.0, f64::INFINITY, 5.0, -7.5, 2.0];
        let g = [0.0, 0.0, 0.0, -2.0, 2.0, f64::INFINITY, 2.0, -0.0];
        let Col::F64(q) = float_bin(Bin::FloorDiv, V::S(&f), V::S(&g)).unwrap() else {
            panic!()
        };
        let want_q = [
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            0.0,
            f64::NAN,
            0.0,
            -4.0,
            f64::NEG_INFINITY,
        ];
        let Col::F64(r) = float_bin(Bin::Mod, V::S(&f), V::S(&g)).unwrap() else {
            panic!()
        };
        let want_r = [
            f64::NAN,
            f64::NAN,
            f64::NAN,
            -0.0,
            f64::NAN,
            5.0,
            0.5,
            f64::NAN,
        ];
        for i in 0..f.len() {
            assert!(
                q[i].to_bits() == want_q[i].to_bits() || q[i].is_nan() && want_q[i].is_nan(),
                "{i}: {}",
                q[i]
            );
            assert!(
                r[i].to_bits() == want_r[i].to_bits() || r[i].is_nan() && want_r[i].is_nan(),
                "{i}: {}",
                r[i]
            );
        }
    }

    #[test]
    fn scalar_exponents_take_numpy_fast_paths() {
        let x = [-0.0f64, f64::NEG_INFINITY, 4.0];
        let Col::F64(r) = float_bin(Bin::Pow, V::S(&x), V::C(0.5)).unwrap() else {
            panic!()
        };
        assert_eq!(r[0].to_bits(), (-0.0f64).to_bits());
        assert!(r[1].is_nan());
        assert_eq!(r[2], 2.0);
        // An array exponent is pow: pow(-0.0, 0.5) = +0, pow(-inf, 0.5) = +inf.
        let Col::F64(r) = float_bin(Bin::Pow, V::S(&x), V::S(&[0.5, 0.5, 0.5])).unwrap() else {
            panic!()
        };
        assert_eq!(r, vec![0.0, f64::INFINITY, 2.0]);
        assert_eq!(r[0].to_bits(), 0.0f64.to_bits());
    }

    #[test]
    fn where_with_scalars() {
        let c = Val {
            col: Col::Bool(vec![true, false, true]),
            scalar: false,
        };
        let x = Val {
            col: Col::F64(vec![1.0, 2.0, 3.0]),
            scalar: false,
        };
        let y = Val {
            col: Col::F64(vec![-1.0]),
            scalar: true,
        };
        assert_eq!(where_(&c, &x, &y).unwrap(), Col::F64(vec![1.0, -1.0, 3.0]));
        let c1 = Val {
            col: Col::Bool(vec![false]),
            scalar: true,
        };
        assert_eq!(
            where_(&c1, &x, &y).unwrap(),
            Col::F64(vec![-1.0, -1.0, -1.0])
        );
    }
}
