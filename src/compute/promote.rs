//! The dtype of each operation, as python-blosc2 4.14.1 reports it.
//!
//! python-blosc2 types an expression by evaluating it on one-element dummy
//! operands (`LazyExpr._new_expr(guess=True)`): numpy's promotion
//! (`np.result_type`, NEP 50: Python literals are "weak" and take the array's
//! type) plus `lazyexpr.check_dtype`'s own rules. The rules below were
//! learned by probing python-blosc2 4.14.1 / numpy 2.4.6 (every function and
//! operator against every pair of the 13 dtypes, `e.dtype` of
//! `blosc2.lazyexpr(...)`, see `scripts/check/compute_oracle.py probe-dtypes`):
//!
//! | operation | result dtype |
//! |---|---|
//! | `+ * - // % **`, `maximum`, `minimum`, `where` | numpy promotion of the operands ([`promote`]) |
//! | `/` with both sides integer (not bool) | `float32` if both are `int32` arrays, else `float64` (a Python int counts as `int64`) |
//! | `/` otherwise | numpy promotion, at least float |
//! | comparisons, `isnan isinf isfinite signbit` | `bool` |
//! | `sqrt exp log sin ...` (float functions), `arctan2 hypot copysign nextafter` | [`float_of`]: int8/uint8/bool → float16 (refused), int16/uint16 → float32, wider ints → float64, floats and complex unchanged |
//! | `abs real imag` of complex | the component float |
//! | `& \| ^ ~` | operands must be bool, int32 or int64 (python-blosc2 refuses the rest); numpy promotion |
//! | Python literals | weak: `int8_array + 300` stays int8 (300 wraps to 44, as python-blosc2 computes it); `int_array * 2.5` is float64; `float32_array * 2.5` float32; `bool_array * 2` int64 |
//! | a function of literals only (`sin(1.0)`) | a numpy scalar, not weak: float64 |
//!
//! Refused although python-blosc2 reports a dtype, because its values are
//! not well defined there: results of dtype float16 (blosc2fs has no float16),
//! `bool - bool` and `-bool` (numpy refuses), `/` and `**` and `//` and `%`
//! between booleans (python-blosc2 reports bool and crashes or computes
//! nonsense), ordering comparisons, `maximum`/`minimum` on complex.

use super::dtype::{DType, Kind};
use super::error::ComputeError;

/// A Python literal's kind before it meets an array ("weak" in NEP 50).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Weak {
    Bool,
    Int,
    Float,
    Complex,
}

/// The type of a subexpression: a concrete dtype, or a Python literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Strong(DType),
    Weak(Weak),
}

impl Ty {
    /// The concrete dtype numpy gives a lone Python scalar.
    pub fn concrete(self) -> DType {
        match self {
            Ty::Strong(d) => d,
            Ty::Weak(Weak::Bool) => DType::Bool,
            Ty::Weak(Weak::Int) => DType::I64,
            Ty::Weak(Weak::Float) => DType::F64,
            Ty::Weak(Weak::Complex) => DType::C128,
        }
    }

    /// numpy's kind of the concrete dtype.
    pub fn kind(self) -> Kind {
        self.concrete().kind()
    }
}

fn int_size(d: DType) -> usize {
    if d == DType::Bool {
        0
    } else {
        d.itemsize()
    }
}

fn signed(size: usize) -> DType {
    match size {
        1 => DType::I8,
        2 => DType::I16,
        4 => DType::I32,
        _ => DType::I64,
    }
}

/// numpy's `result_type` of two array dtypes.
pub fn promote_strong(a: DType, b: DType) -> DType {
    use Kind::*;
    if a == b {
        return a;
    }
    let (a, b) = if a.kind() <= b.kind() { (a, b) } else { (b, a) };
    match (a.kind(), b.kind()) {
        (Bool, _) => b,
        (Int, Int) | (UInt, UInt) => {
            if a.itemsize() >= b.itemsize() {
                a
            } else {
                b
            }
        }
        (Int, UInt) => {
            if b.itemsize() < a.itemsize() {
                a
            } else if b.itemsize() < 8 {
                signed(b.itemsize() * 2)
            } else {
                DType::F64
            }
        }
        (Int | UInt, Float) => {
            if b == DType::F64 || int_size(a) >= 4 {
                DType::F64
            } else {
                DType::F32
            }
        }
        (Float, Float) => DType::F64,
        (_, Complex) => {
            if b == DType::C128 {
                return DType::C128;
            }
            let real = if a.kind() == Complex {
                DType::F64
            } else {
                promote_strong(a, DType::F32)
            };
            if real == DType::F64 {
                DType::C128
            } else {
                DType::C64
            }
        }
        _ => unreachable!("kinds ordered"),
    }
}

/// NEP 50 promotion of two subexpression types: a weak literal takes the
/// array's dtype unless its kind is higher (a float literal with an int
/// array gives float64; a complex one with float32 gives complex64).
pub fn promote(a: Ty, b: Ty) -> Ty {
    match (a, b) {
        (Ty::Strong(x), Ty::Strong(y)) => Ty::Strong(promote_strong(x, y)),
        (Ty::Weak(x), Ty::Weak(y)) => Ty::Weak(x.max(y)),
        (Ty::Strong(s), Ty::Weak(w)) | (Ty::Weak(w), Ty::Strong(s)) => Ty::Strong(weak_with(s, w)),
    }
}

fn weak_with(s: DType, w: Weak) -> DType {
    match (w, s.kind()) {
        (Weak::Bool, _) => s,
        (Weak::Int, Kind::Bool) => DType::I64,
        (Weak::Int, _) => s,
        (Weak::Float, Kind::Bool | Kind::Int | Kind::UInt) => DType::F64,
        (Weak::Float, _) => s,
        (Weak::Complex, Kind::Complex) => s,
        (Weak::Complex, _) if s == DType::F32 => DType::C64,
        (Weak::Complex, _) => DType::C128,
    }
}

/// The float dtype numpy's float functions (`sin`, `sqrt`, ...) give an
/// input dtype; float16 results are refused.
pub fn float_of(op: &str, d: DType) -> Result<DType, ComputeError> {
    match d {
        DType::Bool | DType::I8 | DType::U8 => Err(ComputeError::Unsupported(format!(
            "{op} of {d} is float16 in numpy, which blosc2fs does not compute"
        ))),
        DType::I16 | DType::U16 => Ok(DType::F32),
        DType::I32 | DType::I64 | DType::U32 | DType::U64 => Ok(DType::F64),
        other => Ok(other),
    }
}

/// The float dtype of `arctan2`, `hypot`, `copysign`, `nextafter`: numpy
/// picks the first float loop both arrays cast to safely, so `int16` with
/// `uint16` is float32 (not float64, the float of their promotion int32);
/// a literal takes the other side's type first.
pub fn float_of_pair(op: &str, a: Ty, b: Ty) -> Result<DType, ComputeError> {
    let (Ty::Strong(x), Ty::Strong(y)) = (a, b) else {
        return float_of(op, promote(a, b).concrete());
    };
    // float16 for bool/int8/uint8 ranks below float32.
    let rank = |d: DType| match d {
        DType::Bool | DType::I8 | DType::U8 => 0,
        DType::I16 | DType::U16 | DType::F32 => 1,
        _ => 2,
    };
    let widest = if rank(x) >= rank(y) { x } else { y };
    float_of(op, widest)
}

/// The dtype of `a / b` (python-blosc2's `check_dtype` for `/`).
pub fn true_divide(a: Ty, b: Ty) -> Result<Ty, ComputeError> {
    let integral =
        |t: Ty| matches!(t, Ty::Weak(Weak::Int)) || matches!(t, Ty::Strong(d) if d.is_integer());
    let boolean = |t: Ty| t.kind() == Kind::Bool;
    if let (Ty::Weak(x), Ty::Weak(y)) = (a, b) {
        return Ok(Ty::Weak(x.max(y).max(Weak::Float)));
    }
    if integral(a) && integral(b) {
        return Ok(Ty::Strong(
            if a == Ty::Strong(DType::I32) && b == Ty::Strong(DType::I32) {
                DType::F32
            } else {
                DType::F64
            },
        ));
    }
    let p = promote(a, b);
    if p.kind() < Kind::Float || boolean(a) && boolean(b) {
        return Err(ComputeError::Unsupported(
            "true division of booleans (python-blosc2 types it as bool or int and crashes or truncates)".into(),
        ));
    }
    Ok(p)
}

/// The dtypes `&`, `|`, `^`, `~` accept in python-blosc2 (`check_dtype`'s
/// logical_ops): bool, int32, int64 (a Python int is int64; a Python bool
/// is bool).
pub fn check_logical(op: &str, t: Ty) -> Result<(), ComputeError> {
    match t.concrete() {
        DType::Bool | DType::I32 | DType::I64 => Ok(()),
        d => Err(ComputeError::Type {
            op: op.to_string(),
            dtype: d.name().to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    /// Rows of numpy 2.4.6's `np.result_type(a, b)` (printed by the probe),
    /// for a few rows of the 13 × 13 table.
    #[test]
    fn strong_table_rows() {
        let cols = [
            Bool, I8, I16, I32, I64, U8, U16, U32, U64, F32, F64, C64, C128,
        ];
        let rows: [(DType, [DType; 13]); 5] = [
            (
                I8,
                [
                    I8, I8, I16, I32, I64, I16, I32, I64, F64, F32, F64, C64, C128,
                ],
            ),
            (
                U16,
                [
                    U16, I32, I32, I32, I64, U16, U16, U32, U64, F32, F64, C64, C128,
                ],
            ),
            (
                U64,
                [
                    U64, F64, F64, F64, F64, U64, U64, U64, U64, F64, F64, C128, C128,
                ],
            ),
            (
                F32,
                [
                    F32, F32, F32, F64, F64, F32, F32, F64, F64, F32, F64, C64, C128,
                ],
            ),
            (
                C64,
                [
                    C64, C64, C64, C128, C128, C64, C64, C128, C128, C64, C128, C64, C128,
                ],
            ),
        ];
        for (row, expected) in rows {
            for (col, want) in cols.iter().zip(expected) {
                assert_eq!(promote_strong(row, *col), want, "{row} {col}");
                assert_eq!(promote_strong(*col, row), want, "{col} {row}");
            }
        }
    }

    #[test]
    fn weak_literals() {
        assert_eq!(promote(Ty::Strong(I8), Ty::Weak(Weak::Int)), Ty::Strong(I8));
        assert_eq!(
            promote(Ty::Strong(Bool), Ty::Weak(Weak::Int)),
            Ty::Strong(I64)
        );
        assert_eq!(
            promote(Ty::Strong(I16), Ty::Weak(Weak::Float)),
            Ty::Strong(F64)
        );
        assert_eq!(
            promote(Ty::Strong(F32), Ty::Weak(Weak::Float)),
            Ty::Strong(F32)
        );
        assert_eq!(
            promote(Ty::Strong(F32), Ty::Weak(Weak::Complex)),
            Ty::Strong(C64)
        );
        assert_eq!(
            promote(Ty::Strong(I8), Ty::Weak(Weak::Bool)),
            Ty::Strong(I8)
        );
        assert_eq!(
            promote(Ty::Weak(Weak::Int), Ty::Weak(Weak::Float)),
            Ty::Weak(Weak::Float)
        );
    }

    #[test]
    fn division_quirks() {
        let s = Ty::Strong;
        assert_eq!(true_divide(s(I32), s(I32)).unwrap(), s(F32));
        assert_eq!(true_divide(s(I8), s(I8)).unwrap(), s(F64));
        assert_eq!(true_divide(s(I32), Ty::Weak(Weak::Int)).unwrap(), s(F64));
        assert_eq!(true_divide(s(F32), s(I16)).unwrap(), s(F32));
        assert_eq!(true_divide(s(Bool), s(F32)).unwrap(), s(F32));
        assert!(true_divide(s(Bool), s(Bool)).is_err());
        assert!(true_divide(s(Bool), s(I8)).is_err());
    }

    #[test]
    fn float_functions() {
        assert!(float_of("sin", I8).is_err());
        assert_eq!(float_of("sin", I16).unwrap(), F32);
        assert_eq!(float_of("sin", U32).unwrap(), F64);
        assert_eq!(float_of("sin", C64).unwrap(), C64);
        let s = Ty::Strong;
        assert_eq!(float_of_pair("arctan2", s(I16), s(U16)).unwrap(), F32);
        assert_eq!(float_of_pair("arctan2", s(Bool), s(I16)).unwrap(), F32);
        assert_eq!(float_of_pair("arctan2", s(I32), s(F32)).unwrap(), F64);
        assert!(float_of_pair("arctan2", s(I8), s(U8)).is_err());
        assert_eq!(
            float_of_pair("arctan2", s(F32), Ty::Weak(Weak::Int)).unwrap(),
            F32
        );
    }
}
