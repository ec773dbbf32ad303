//! Scalar math shared by the float32 and float64 kernels: the functions
//! numpy applies elementwise, and complex arithmetic in numpy's formulas.
//!
//! Transcendental functions come from Rust's std (the platform libm, as
//! numpy's); `asinh`, `acosh` and `atanh` follow glibc's algorithms instead
//! of std's shortcuts, which lose digits near 1 and 0.

use super::values::{Col, Cx};
use std::ops::{Add, Div, Mul, Neg, Sub};

/// What the kernels need from `f32` and `f64`.
pub trait Float:
    Copy
    + PartialOrd
    + PartialEq
    + Default
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + 'static
{
    const ZERO: Self;
    const ONE: Self;
    const TWO: Self;
    const HALF: Self;
    const NAN: Self;
    const LN_2: Self;
    /// 2^28: beyond it `asinh`/`acosh` are `ln(x) + ln 2`.
    const BIG: Self;
    /// 2^-28: below it `asinh(x)` is `x`.
    const TINY: Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn trunc(self) -> Self;
    fn round_even(self) -> Self;
    fn abs(self) -> Self;
    fn sqrt(self) -> Self;
    fn exp(self) -> Self;
    fn exp_m1(self) -> Self;
    fn ln(self) -> Self;
    fn log10(self) -> Self;
    fn ln_1p(self) -> Self;
    fn log2(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tan(self) -> Self;
    fn asin(self) -> Self;
    fn acos(self) -> Self;
    fn atan(self) -> Self;
    fn sinh(self) -> Self;
    fn cosh(self) -> Self;
    fn tanh(self) -> Self;
    fn atan2(self, o: Self) -> Self;
    fn hypot(self, o: Self) -> Self;
    fn copysign(self, o: Self) -> Self;
    fn powf(self, o: Self) -> Self;
    /// C's `fmod`.
    fn fmod(self, o: Self) -> Self;
    fn is_nan(self) -> bool;
    fn is_infinite(self) -> bool;
    fn is_finite(self) -> bool;
    fn is_sign_negative(self) -> bool;
    fn next_after(self, o: Self) -> Self;
    fn col(v: Vec<Self>) -> Col;
    fn ccol(v: Vec<Cx<Self>>) -> Col;
}

macro_rules! float_impl {
    ($t:ty, $real:ident, $complex:ident, $big:expr, $tiny:expr) => {
        impl Float for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const TWO: Self = 2.0;
            const HALF: Self = 0.5;
            const NAN: Self = <$t>::NAN;
            const LN_2: Self = std::f64::consts::LN_2 as $t;
            const BIG: Self = $big;
            const TINY: Self = $tiny;
            #[inline(always)]
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                <$t>::ceil(self)
            }
            #[inline(always)]
            fn trunc(self) -> Self {
                <$t>::trunc(self)
            }
            #[inline(always)]
            fn round_even(self) -> Self {
                <$t>::round_ties_even(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            fn exp_m1(self) -> Self {
                <$t>::exp_m1(self)
            }
            fn ln(self) -> Self {
                <$t>::ln(self)
            }
            fn log10(self) -> Self {
                <$t>::log10(self)
            }
            fn ln_1p(self) -> Self {
                <$t>::ln_1p(self)
            }
            fn log2(self) -> Self {
                <$t>::log2(self)
            }
            fn sin(self) -> Self {
                <$t>::sin(self)
            }
            fn cos(self) -> Self {
                <$t>::cos(self)
            }
            fn tan(self) -> Self {
                <$t>::tan(self)
            }
            fn asin(self) -> Self {
                <$t>::asin(self)
            }
            fn acos(self) -> Self {
                <$t>::acos(self)
            }
            fn atan(self) -> Self {
                <$t>::atan(self)
            }
            fn sinh(self) -> Self {
                <$t>::sinh(self)
            }
            fn cosh(self) -> Self {
                <$t>::cosh(self)
            }
            fn tanh(self) -> Self {
                <$t>::tanh(self)
            }
            fn atan2(self, o: Self) -> Self {
                <$t>::atan2(self, o)
            }
            fn hypot(self, o: Self) -> Self {
                <$t>::hypot(self, o)
            }
            #[inline(always)]
            fn copysign(self, o: Self) -> Self {
                <$t>::copysign(self, o)
            }
            fn powf(self, o: Self) -> Self {
                <$t>::powf(self, o)
            }
            #[inline(always)]
            fn fmod(self, o: Self) -> Self {
                self % o
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline(always)]
            fn is_infinite(self) -> bool {
                <$t>::is_infinite(self)
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline(always)]
            fn is_sign_negative(self) -> bool {
                <$t>::is_sign_negative(self)
            }
            /// C's `nextafter`.
            fn next_after(self, o: Self) -> Self {
                if self.is_nan() || o.is_nan() {
                    return <$t>::NAN;
                }
                if self == o {
                    return o;
                }
                if self == 0.0 {
                    let tiny = <$t>::from_bits(1);
                    return if o > 0.0 { tiny } else { -tiny };
                }
                let bits = self.to_bits();
                let up = (o > self) == (self > 0.0);
                <$t>::from_bits(if up { bits + 1 } else { bits - 1 })
            }
            fn col(v: Vec<Self>) -> Col {
                Col::$real(v)
            }
            fn ccol(v: Vec<Cx<Self>>) -> Col {
                Col::$complex(v)
            }
        }
    };
}

float_impl!(f32, F32, C64, 268_435_456.0, 3.725_290_3e-9);
float_impl!(f64, F64, C128, 268_435_456.0, 3.725_290_298_461_914e-9);

/// glibc's `asinh`.
pub fn asinh<T: Float>(x: T) -> T {
    let a = x.abs();
    if !a.is_finite() || a < T::TINY {
        return x;
    }
    let r = if a > T::BIG {
        a.ln() + T::LN_2
    } else if a > T::TWO {
        (T::TWO * a + T::ONE / ((x * x + T::ONE).sqrt() + a)).ln()
    } else {
        let t = x * x;
        (a + t / (T::ONE + (T::ONE + t).sqrt())).ln_1p()
    };
    r.copysign(x)
}

/// glibc's `acosh`.
pub fn acosh<T: Float>(x: T) -> T {
    if x.is_nan() || x < T::ONE {
        return T::NAN;
    }
    if x >= T::BIG {
        if x.is_infinite() {
            return x;
        }
        return x.ln() + T::LN_2;
    }
    if x == T::ONE {
        return T::ZERO;
    }
    if x > T::TWO {
        let t = x * x;
        (T::TWO * x - T::ONE / (x + (t - T::ONE).sqrt())).ln()
    } else {
        let t = x - T::ONE;
        (t + (T::TWO * t + t * t).sqrt()).ln_1p()
    }
}

/// glibc's `atanh`.
pub fn atanh<T: Float>(x: T) -> T {
    let a = x.abs();
    if a.is_nan() || a > T::ONE {
        return T::NAN;
    }
    let r = if a < T::HALF {
        let t = a + a;
        T::HALF * (t + t * a / (T::ONE - a)).ln_1p()
    } else {
        T::HALF * ((a + a) / (T::ONE - a)).ln_1p()
    };
    r.copysign(x)
}

/// numpy's `logaddexp`.
pub fn logaddexp<T: Float>(x: T, y: T) -> T {
    if x == y {
        return x + T::LN_2;
    }
    let t = x - y;
    if t > T::ZERO {
        x + (-t).exp().ln_1p()
    } else if t <= T::ZERO {
        y + t.exp().ln_1p()
    } else {
        t
    }
}

/// numpy's float `%` (`npy_divmod`): C's `fmod`, moved to the divisor's
/// sign as Python does, a zero result carrying the divisor's sign.
#[inline(always)]
pub fn py_mod<T: Float>(a: T, b: T) -> T {
    let m = a.fmod(b);
    if b == T::ZERO {
        return m;
    }
    if m != T::ZERO {
        if (b < T::ZERO) != (m < T::ZERO) {
            m + b
        } else {
            m
        }
    } else {
        T::ZERO.copysign(b)
    }
}

/// numpy's float `//` (`npy_floor_divide`): from the fmod remainder, so
/// `-0.5 // inf` is -1 and `inf // 2` NaN.
#[inline(always)]
pub fn py_floordiv<T: Float>(a: T, b: T) -> T {
    if b == T::ZERO {
        return a / b;
    }
    let m = a.fmod(b);
    let mut div = (a - m) / b;
    if m != T::ZERO && (b < T::ZERO) != (m < T::ZERO) {
        div = div - T::ONE;
    }
    if div != T::ZERO {
        let f = div.floor();
        if div - f > T::HALF {
            f + T::ONE
        } else {
            f
        }
    } else {
        T::ZERO.copysign(a / b)
    }
}

/// numpy's `maximum`: NaN from either side wins; of equal values (-0.0
/// and 0.0) the second.
#[inline(always)]
pub fn maximum<T: Float>(a: T, b: T) -> T {
    if a > b || a.is_nan() {
        a
    } else {
        b
    }
}

/// numpy's `minimum`: as [`maximum`].
#[inline(always)]
pub fn minimum<T: Float>(a: T, b: T) -> T {
    if a < b || a.is_nan() {
        a
    } else {
        b
    }
}

/// numpy's `sign`: NaN stays NaN, zeros give +0.
#[inline(always)]
pub fn sign<T: Float>(a: T) -> T {
    if a > T::ZERO {
        T::ONE
    } else if a < T::ZERO {
        -T::ONE
    } else if a == T::ZERO {
        T::ZERO
    } else {
        a
    }
}

#[inline(always)]
pub fn cmul<T: Float>(a: Cx<T>, b: Cx<T>) -> Cx<T> {
    Cx {
        re: a.re * b.re - a.im * b.im,
        im: a.re * b.im + a.im * b.re,
    }
}

/// numpy's complex division (Smith's method).
pub fn cdiv<T: Float>(a: Cx<T>, b: Cx<T>) -> Cx<T> {
    let (br, bi) = (b.re.abs(), b.im.abs());
    if br >= bi {
        if br == T::ZERO && bi == T::ZERO {
            return Cx {
                re: a.re / br,
                im: a.im / br,
            };
        }
        let rat = b.im / b.re;
        let scl = T::ONE / (b.re + b.im * rat);
        Cx {
            re: (a.re + a.im * rat) * scl,
            im: (a.im - a.re * rat) * scl,
        }
    } else {
        let rat = b.re / b.im;
        let scl = T::ONE / (b.im + b.re * rat);
        Cx {
            re: (a.re * rat + a.im) * scl,
            im: (a.im * rat - a.re) * scl,
        }
    }
}

pub fn cabs<T: Float>(a: Cx<T>) -> T {
    a.re.hypot(a.im)
}

/// Principal square root (C99 `csqrt` for finite values).
pub fn csqrt<T: Float>(a: Cx<T>) -> Cx<T> {
    if a.re == T::ZERO && a.im == T::ZERO {
        return Cx {
            re: T::ZERO,
            im: a.im,
        };
    }
    if a.im.is_infinite() {
        return Cx {
            re: a.im.abs(),
            im: a.im,
        };
    }
    let t = ((a.re.abs() + cabs(a)) * T::HALF).sqrt();
    if a.re >= T::ZERO {
        Cx {
            re: t,
            im: a.im / (T::TWO * t),
        }
    } else {
        Cx {
            re: a.im.abs() / (T::TWO * t),
            im: t.copysign(a.im),
        }
    }
}

pub fn cexp<T: Float>(a: Cx<T>) -> Cx<T> {
    let e = a.re.exp();
    if a.im == T::ZERO {
        return Cx { re: e, im: a.im };
    }
    Cx {
        re: e * a.im.cos(),
        im: e * a.im.sin(),
    }
}

pub fn clog<T: Float>(a: Cx<T>) -> Cx<T> {
    Cx {
        re: cabs(a).ln(),
        im: a.im.atan2(a.re),
    }
}

pub fn csin<T: Float>(a: Cx<T>) -> Cx<T> {
    Cx {
        re: a.re.sin() * a.im.cosh(),
        im: a.re.cos() * a.im.sinh(),
    }
}

pub fn ccos<T: Float>(a: Cx<T>) -> Cx<T> {
    Cx {
        re: a.re.cos() * a.im.cosh(),
        im: -(a.re.sin() * a.im.sinh()),
    }
}

pub fn csinh<T: Float>(a: Cx<T>) -> Cx<T> {
    Cx {
        re: a.re.sinh() * a.im.cos(),
        im: a.re.cosh() * a.im.sin(),
    }
}

pub fn ccosh<T: Float>(a: Cx<T>) -> Cx<T> {
    Cx {
        re: a.re.cosh() * a.im.cos(),
        im: a.re.sinh() * a.im.sin(),
    }
}

pub fn ctanh<T: Float>(a: Cx<T>) -> Cx<T> {
    let (x2, y2) = (a.re + a.re, a.im + a.im);
    let d = x2.cosh() + y2.cos();
    Cx {
        re: x2.sinh() / d,
        im: y2.sin() / d,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_hyperbolics_near_their_edges() {
        // Values from mpmath at 50 digits, rounded to f64; libm's own are
        // within one unit in the last place of them, and so are these.
        let ulps = |a: f64, b: f64| (a.to_bits() as i64 - b.to_bits() as i64).abs();
        assert!(ulps(acosh(1.0000000001f64), 1.4142136208675862e-5) <= 1);
        assert_eq!(asinh(1e-10f64), 1e-10);
        assert!(ulps(asinh(-3.0f64), -1.8184464592320668) <= 1);
        assert!(ulps(atanh(0.5f64), 0.5493061443340549) <= 1);
        assert_eq!(atanh(1e-300f64), 1e-300);
        assert!(acosh(0.5f64).is_nan());
        assert!(ulps(acosh(1e300f64), 691.4686750787737) <= 1);
        // std's acosh loses half the digits here (ln of a value near 1).
        assert!(ulps(1.0000000001f64.acosh(), 1.4142136208675862e-5) > 1);
    }

    #[test]
    fn numpy_edge_semantics() {
        assert!(maximum(f64::NAN, 1.0).is_nan());
        assert!(maximum(1.0, f64::NAN).is_nan());
        // numpy 2.4.6: maximum([-0., 0.], [0., -0.]) is [0., -0.].
        assert_eq!(maximum(-0.0f64, 0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(maximum(0.0f64, -0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(minimum(-0.0f64, 0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(sign(-0.0f64).to_bits(), 0.0f64.to_bits());
        assert!(sign(f64::NAN).is_nan());
        assert_eq!(logaddexp(0.0f64, 0.0), std::f64::consts::LN_2);
        assert_eq!(1.0f64.next_after(2.0), 1.0000000000000002);
        assert_eq!(0.0f64.next_after(-1.0), -5e-324);
        assert_eq!((-1.0f64).next_after(0.0), -0.9999999999999999);
    }

    #[test]
    fn complex_arithmetic() {
        let a = Cx {
            re: 1.0f64,
            im: 2.0,
        };
        let b = Cx {
            re: 3.0f64,
            im: -4.0,
        };
        assert_eq!(cmul(a, b), Cx { re: 11.0, im: 2.0 });
        assert_eq!(cdiv(Cx { re: 11.0, im: 2.0 }, b), a);
        assert_eq!(
            csqrt(Cx {
                re: -4.0f64,
                im: 0.0
            }),
            Cx { re: 0.0, im: 2.0 }
        );
        assert_eq!(
            csqrt(Cx {
                re: 3.0f64,
                im: 4.0
            }),
            Cx { re: 2.0, im: 1.0 }
        );
        assert_eq!(cabs(b), 5.0);
    }
}
