//! The typing pass: a syntax tree and the operands' dtypes in, a straight
//! list of typed steps out (loads, constants, casts, operations), each step
//! reading only earlier ones.
//!
//! Literal-only subexpressions (`2 * 3`, `7 / 2`) are folded here with
//! Python's semantics, as Python folds them before python-blosc2 sees
//! numbers; they stay "weak" (see [`super::promote`]) until they meet an
//! array, where they are converted to its dtype (integers wrapping, as
//! python-blosc2 computes `int8_array + 300`).
//!
//! The pass walks the nodes in creation order (children first), so it does
//! not recurse.

use super::dtype::{DType, Kind};
use super::error::ComputeError;
use super::funcs::{lookup, Bin, Func, Un};
use super::parse::{Ast, Literal, Node, UnOp};
use super::promote::{check_logical, float_of, float_of_pair, promote, true_divide, Ty, Weak};
use super::values::{wrap, Col, Cx};

/// One step of a compiled expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Instr {
    /// Operand `i` (index into the caller's operand list).
    Load(usize),
    /// A one-value column.
    Const(Col),
    /// The step's value converted to this step's dtype.
    Cast(usize),
    Bin(Bin, usize, usize),
    Un(Un, usize),
    /// `where(c, x, y)`: c bool, x and y of this step's dtype.
    Where(usize, usize, usize),
}

/// A step and the dtype of its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub instr: Instr,
    pub dtype: DType,
}

/// A literal's value before it meets an array.
#[derive(Debug, Clone, Copy, PartialEq)]
enum WeakVal {
    Bool(bool),
    Int(i128),
    Float(f64),
    Complex(f64, f64),
}

impl WeakVal {
    fn kind(self) -> Weak {
        match self {
            WeakVal::Bool(_) => Weak::Bool,
            WeakVal::Int(_) => Weak::Int,
            WeakVal::Float(_) => Weak::Float,
            WeakVal::Complex(..) => Weak::Complex,
        }
    }

    /// The value as one item of dtype `d` (numpy's conversion of a Python
    /// scalar; integers wrap).
    fn to_col(self, d: DType) -> Col {
        let (re, im, int) = match self {
            WeakVal::Bool(b) => (b as u8 as f64, 0.0, b as i128),
            WeakVal::Int(v) => (v as f64, 0.0, v),
            WeakVal::Float(f) => (f, 0.0, f as i128),
            WeakVal::Complex(r, i) => (r, i, r as i128),
        };
        match d {
            DType::Bool => Col::Bool(vec![re != 0.0 || im != 0.0]),
            DType::U64 => Col::U64(vec![int as u64]),
            DType::F32 => Col::F32(vec![match self {
                WeakVal::Int(v) => v as f32,
                _ => re as f32,
            }]),
            DType::F64 => Col::F64(vec![re]),
            DType::C64 => Col::C64(vec![Cx {
                re: re as f32,
                im: im as f32,
            }]),
            DType::C128 => Col::C128(vec![Cx { re, im }]),
            d => Col::Int(vec![wrap(int as i64, d)]),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum T {
    Weak(WeakVal),
    Reg(usize, DType),
}

impl T {
    fn ty(self) -> Ty {
        match self {
            T::Weak(w) => Ty::Weak(w.kind()),
            T::Reg(_, d) => Ty::Strong(d),
        }
    }
}

/// The result of typing: steps, the root step, which operands it loads.
#[derive(Debug, Clone)]
pub struct Typed {
    pub steps: Vec<Step>,
    pub root: usize,
    pub used: Vec<bool>,
}

struct Typer<'a> {
    steps: Vec<Step>,
    operands: &'a [(&'a str, Option<DType>)],
    loads: Vec<Option<usize>>,
    /// Compute float functions (sin, sqrt, arctan2, ...) in float64 /
    /// complex128 where numpy would use float32 / complex64; arithmetic keeps
    /// numpy's types.
    widen: bool,
    /// An integer meeting float32 (complex64) in arithmetic or `where` is
    /// computed as float32 (complex64), where numpy would take float64
    /// (complex128); see [`Typing`].
    narrow: bool,
    /// Float functions of integers only (`cosh(int16)`, float32 to numpy)
    /// are taken in float64.
    widen_int: bool,
}

/// How float32 parts of an expression are computed. python-blosc2 4.14.1
/// (both engines, probed with integers too large for float32, e.g.
/// int32 + float32 near 1e8) differs from numpy's node-by-node types in two
/// ways, and reports numpy's dtype for the result:
/// - an integer meeting float32 in `+ - * /` or `where` is cast to float32
///   and the operation done in float32 (`i + b`, `(u * i) + b`, `(i + b) *
///   d` with float64 `d` takes `i + b` in float32); `%` (`reciprocal(b) %
///   i`), `maximum`, `minimum` and comparisons keep numpy's promotion;
/// - float functions of float32 (`sin(b)`) are taken in float64 when a
///   float64 operand or a float literal takes part (`a * 2 + sin(b) - c`),
///   in float32 otherwise (`sin(b) + i`);
/// - float functions of integers only (`cosh(h)` of int16, which numpy
///   takes in float32) are taken in float64 (`w + cosh(h)`).
///
/// The result is then cast to the reported dtype.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Typing {
    /// See [`Typer::widen`].
    pub widen: bool,
    /// See [`Typer::narrow`].
    pub narrow: bool,
    /// See [`Typer::widen_int`].
    pub widen_int: bool,
}

impl Typing {
    /// numpy's types, node by node: the reported dtype.
    pub const NUMPY: Typing = Typing {
        widen: false,
        narrow: false,
        widen_int: false,
    };
}

fn type_err(op: &str, d: DType) -> ComputeError {
    ComputeError::Type {
        op: op.to_string(),
        dtype: d.name().to_string(),
    }
}

impl<'a> Typer<'a> {
    /// `d` as computed: float32 and complex64 widened when asked.
    fn wide(&self, d: DType) -> DType {
        match d {
            DType::F32 if self.widen => DType::F64,
            DType::C64 if self.widen => DType::C128,
            d => d,
        }
    }

    /// When narrowing, the dtype an integer (or bool) meeting float32
    /// (complex64) takes: float32 (complex64); `None` otherwise.
    fn narrowed(&self, a: Ty, b: Ty) -> Option<DType> {
        if !self.narrow {
            return None;
        }
        let low = |t: Ty| matches!(t, Ty::Strong(d) if matches!(d.kind(), Kind::Bool | Kind::Int | Kind::UInt));
        match (a, b) {
            (Ty::Strong(d @ (DType::F32 | DType::C64)), other)
            | (other, Ty::Strong(d @ (DType::F32 | DType::C64)))
                if low(other) =>
            {
                Some(d)
            }
            _ => None,
        }
    }

    /// `d`, the float a float function gives for arguments `args`, as
    /// computed: of integers only, widened under [`Typer::widen_int`]; else
    /// under [`Typer::widen`].
    fn wide_for<const N: usize>(&self, d: DType, args: [DType; N]) -> DType {
        let ints = args
            .iter()
            .all(|a| matches!(a.kind(), Kind::Bool | Kind::Int | Kind::UInt));
        if ints && self.widen_int {
            return match d {
                DType::F32 => DType::F64,
                DType::C64 => DType::C128,
                d => d,
            };
        }
        self.wide(d)
    }

    fn push(&mut self, instr: Instr, dtype: DType) -> usize {
        self.steps.push(Step { instr, dtype });
        self.steps.len() - 1
    }

    /// `t` as a step of dtype `d`. An integer literal out of the range of
    /// an integer dtype is refused, as numpy 2 refuses it (python-blosc2
    /// wraps it in some operations and not in others).
    fn reg(&mut self, t: T, d: DType) -> Result<usize, ComputeError> {
        Ok(match t {
            T::Weak(WeakVal::Int(v)) if d.is_integer() && !fits(v, d) => {
                return Err(ComputeError::Unsupported(format!(
                    "integer literal {v} out of the range of {d} (numpy refuses it)"
                )))
            }
            T::Weak(w) => self.push(Instr::Const(w.to_col(d)), d),
            T::Reg(r, rd) if rd == d => r,
            T::Reg(r, _) => self.push(Instr::Cast(r), d),
        })
    }

    /// A literal made a numpy scalar (what a function of literals sees).
    fn strong(&mut self, t: T) -> Result<T, ComputeError> {
        Ok(match t {
            T::Weak(w) => {
                let d = Ty::Weak(w.kind()).concrete();
                T::Reg(self.reg(t, d)?, d)
            }
            t => t,
        })
    }

    fn name(&mut self, name: &str) -> Result<T, ComputeError> {
        if let Some(i) = self.operands.iter().position(|(n, _)| *n == name) {
            let Some(d) = self.operands[i].1 else {
                return Err(ComputeError::DType(format!("operand {name}")));
            };
            let r = match self.loads[i] {
                Some(r) => r,
                None => {
                    let r = self.push(Instr::Load(i), d);
                    self.loads[i] = Some(r);
                    r
                }
            };
            return Ok(T::Reg(r, d));
        }
        Ok(T::Weak(match name {
            "nan" => WeakVal::Float(f64::NAN),
            "inf" => WeakVal::Float(f64::INFINITY),
            "True" => WeakVal::Bool(true),
            "False" => WeakVal::Bool(false),
            _ => return Err(ComputeError::UnknownOperand(name.to_string())),
        }))
    }

    fn unary_op(&mut self, op: UnOp, a: T) -> Result<T, ComputeError> {
        if let T::Weak(w) = a {
            return fold_unary(op, w).map(T::Weak);
        }
        let T::Reg(r, d) = a else { unreachable!() };
        match op {
            UnOp::Pos | UnOp::Neg if d == DType::Bool => Err(ComputeError::Unsupported(
                "unary - or + of a boolean (numpy refuses)".into(),
            )),
            UnOp::Pos => Ok(a),
            UnOp::Neg => Ok(T::Reg(self.push(Instr::Un(Un::Neg, r), d), d)),
            UnOp::Invert => {
                check_logical("~", Ty::Strong(d))?;
                Ok(T::Reg(self.push(Instr::Un(Un::Invert, r), d), d))
            }
        }
    }

    fn binary(&mut self, op: Bin, a: T, b: T) -> Result<T, ComputeError> {
        if let (T::Weak(x), T::Weak(y)) = (a, b) {
            return fold_binary(op, x, y).map(T::Weak);
        }
        let (ta, tb) = (a.ty(), b.ty());
        if op.is_compare() {
            for (lit, other) in [(a, b), (b, a)] {
                if let (T::Weak(WeakVal::Int(v)), T::Reg(_, d)) = (lit, other) {
                    if !fits(v, d) {
                        return Err(ComputeError::Unsupported(format!(
                            "comparing {d} with {v}, out of its range (python-blosc2's engines compare the wrapped value or not)"
                        )));
                    }
                }
            }
        }
        let narrowed = self
            .narrowed(ta, tb)
            .filter(|_| matches!(op, Bin::Add | Bin::Sub | Bin::Mul | Bin::Div));
        if let Some(d) = narrowed {
            let (x, y) = (self.reg(a, d)?, self.reg(b, d)?);
            return Ok(T::Reg(self.push(Instr::Bin(op, x, y), d), d));
        }
        let p = promote(ta, tb).concrete();
        let refuse_bool = |what: &str| {
            if p == DType::Bool {
                Err(ComputeError::Unsupported(format!(
                    "{what} of booleans (python-blosc2 reports bool and computes no defined value)"
                )))
            } else {
                Ok(())
            }
        };
        let sym = op.symbol();
        let (input, output) = match op {
            Bin::Add | Bin::Mul => (p, p),
            Bin::Sub => {
                if p == DType::Bool {
                    return Err(ComputeError::Unsupported(
                        "boolean subtraction (numpy refuses)".into(),
                    ));
                }
                (p, p)
            }
            Bin::FloorDiv | Bin::Mod => {
                refuse_bool(sym)?;
                if p.kind() == Kind::Complex {
                    return Err(type_err(sym, p));
                }
                (p, p)
            }
            Bin::Pow => {
                refuse_bool(sym)?;
                if ta.concrete() == DType::Bool {
                    return Err(ComputeError::Unsupported(
                        "a boolean base of ** (python-blosc2 reports int8 where numpy gives int64)"
                            .into(),
                    ));
                }
                if p.kind() == Kind::Complex {
                    return Err(ComputeError::Unsupported("complex power".into()));
                }
                (p, p)
            }
            Bin::Div => {
                // int32 / int32 is float32 to python-blosc2, taken in float64
                // under a float64 result, like a float function of integers.
                let d = self.wide_for(
                    true_divide(ta, tb)?.concrete(),
                    [ta.concrete(), tb.concrete()],
                );
                (d, d)
            }
            Bin::Eq | Bin::Ne => (p, DType::Bool),
            Bin::Lt | Bin::Le | Bin::Gt | Bin::Ge | Bin::Max | Bin::Min => {
                if p.kind() == Kind::Complex {
                    return Err(type_err(sym, p));
                }
                (p, if op.is_compare() { DType::Bool } else { p })
            }
            Bin::And | Bin::Or | Bin::Xor => {
                check_logical(sym, ta)?;
                check_logical(sym, tb)?;
                (p, p)
            }
            Bin::Shl | Bin::Shr => {
                refuse_bool(sym)?;
                if !p.is_integer() {
                    return Err(type_err(sym, p));
                }
                (p, p)
            }
            Bin::Atan2 | Bin::Hypot | Bin::Copysign | Bin::NextAfter => {
                if p.kind() == Kind::Complex {
                    return Err(type_err(sym, p));
                }
                // python-blosc2 4.14.1 types a literal here as int64/float64
                // or as weak depending on whether the other argument is a
                // subexpression, and computes hypot, copysign and nextafter of
                // integers in integer arithmetic (hypot(1, 1) = 1).
                if matches!(ta, Ty::Weak(_)) || matches!(tb, Ty::Weak(_)) {
                    return Err(ComputeError::Unsupported(format!(
                        "{sym} with a literal argument (python-blosc2's dtype for it depends on the other argument's form)"
                    )));
                }
                if op != Bin::Atan2 && (ta.kind() < Kind::Float || tb.kind() < Kind::Float) {
                    return Err(ComputeError::Unsupported(format!(
                        "{sym} of integers or booleans (python-blosc2 computes it in integer arithmetic)"
                    )));
                }
                let f = float_of_pair(sym, ta, tb)?;
                if op == Bin::NextAfter && f == DType::F32 {
                    return Err(ComputeError::Unsupported(
                        "nextafter in float32 (python-blosc2 steps in float64 and rounds back)"
                            .into(),
                    ));
                }
                (f, f)
            }
            Bin::LogAddExp => {
                if ta.kind() != Kind::Float || tb.kind() != Kind::Float {
                    return Err(ComputeError::Unsupported(
                        "logaddexp of non-floats (python-blosc2 reports float32 where numpy computes float64)".into(),
                    ));
                }
                (p, p)
            }
        };
        let (input, output) = match op {
            Bin::Atan2 | Bin::Hypot | Bin::Copysign | Bin::NextAfter | Bin::LogAddExp => {
                let args = [ta.concrete(), tb.concrete()];
                (self.wide_for(input, args), self.wide_for(output, args))
            }
            _ => (input, output),
        };
        let (ra, rb) = (self.reg(a, input)?, self.reg(b, input)?);
        Ok(T::Reg(self.push(Instr::Bin(op, ra, rb), output), output))
    }

    fn func(&mut self, name: &str, u: Un, a: T) -> Result<T, ComputeError> {
        let a = self.strong(a)?;
        let T::Reg(r, d) = a else { unreachable!() };
        let complex = d.kind() == Kind::Complex;
        let component = match d {
            DType::C64 => DType::F32,
            _ => DType::F64,
        };
        let refuse_complex = || {
            if complex {
                Err(type_err(name, d))
            } else {
                Ok(())
            }
        };
        let refuse_bool = || {
            if d == DType::Bool {
                Err(ComputeError::Unsupported(format!(
                    "{name} of booleans (python-blosc2's dtype differs from numpy's)"
                )))
            } else {
                Ok(())
            }
        };
        use Un::*;
        let step = |s: &mut Self, input: DType, output: DType| {
            let r = s.reg(a, input)?;
            Ok(T::Reg(s.push(Instr::Un(u, r), output), output))
        };
        if u.is_float_fn() {
            if complex && !matches!(u, Sqrt | Exp | Log | Sin | Cos | Sinh | Cosh | Tanh) {
                return Err(ComputeError::Unsupported(format!("{name} of complex")));
            }
            let f = self.wide_for(float_of(name, d)?, [d]);
            return step(self, f, f);
        }
        match u {
            Abs if complex => step(self, d, component),
            Abs if d == DType::Bool || d.kind() == Kind::UInt => Ok(a),
            Abs => step(self, d, d),
            Floor | Ceil | Trunc | Round => {
                refuse_complex()?;
                if u == Round {
                    refuse_bool()?;
                }
                if d.kind() == Kind::Float {
                    step(self, d, d)
                } else {
                    Ok(a)
                }
            }
            IsNan | IsInf | IsFinite => step(self, d, DType::Bool),
            Signbit => {
                refuse_complex()?;
                step(self, d, DType::Bool)
            }
            Real if complex => step(self, d, component),
            Real => Ok(a),
            Imag if complex => step(self, d, component),
            Imag => step(self, d, d),
            Conj => {
                refuse_bool()?;
                if complex {
                    step(self, d, d)
                } else {
                    Ok(a)
                }
            }
            Square => {
                refuse_bool()?;
                step(self, d, d)
            }
            Sign => {
                refuse_bool()?;
                refuse_complex()?;
                step(self, d, d)
            }
            Reciprocal => {
                if !d.is_inexact() {
                    return Err(ComputeError::Unsupported(format!(
                        "reciprocal of {d} (python-blosc2 reports float64, numpy computes integers)"
                    )));
                }
                step(self, d, d)
            }
            LogicalNot => {
                if d != DType::Bool {
                    return Err(type_err(name, d));
                }
                Ok(T::Reg(self.push(Instr::Un(Invert, r), d), d))
            }
            _ => unreachable!("float functions handled above; {u:?}"),
        }
    }

    fn call(&mut self, name: &str, args: &[T]) -> Result<T, ComputeError> {
        let f = lookup(name)?;
        if args.len() != f.arity() {
            return Err(ComputeError::Arity {
                name: name.to_string(),
                expected: f.arity(),
                got: args.len(),
            });
        }
        // python-blosc2 4.14.1 types `f32 - square(0)` float32 but
        // `f32 + sin(1.0)` float64 and `i8 + abs(-3)` int64: the result of
        // a function of literals is a Python number for some functions, a
        // numpy scalar for others.
        if args.iter().all(|a| matches!(a, T::Weak(_))) {
            return Err(ComputeError::Unsupported(format!(
                "{name}() of literals only (python-blosc2 types its result inconsistently)"
            )));
        }
        let args = args.to_vec();
        match f {
            Func::Un(u) => self.func(name, u, args[0]),
            Func::UnOp(op) => self.unary_op(op, args[0]),
            Func::Bin(b) => self.binary(b, args[0], args[1]),
            Func::Logical(b) => {
                for a in &args {
                    if a.ty().kind() != Kind::Bool {
                        return Err(type_err(name, a.ty().concrete()));
                    }
                }
                self.binary(b, args[0], args[1])
            }
            Func::Where => {
                let c = self.reg(args[0], DType::Bool)?;
                let d = self
                    .narrowed(args[1].ty(), args[2].ty())
                    .unwrap_or_else(|| promote(args[1].ty(), args[2].ty()).concrete());
                let (x, y) = (self.reg(args[1], d)?, self.reg(args[2], d)?);
                Ok(T::Reg(self.push(Instr::Where(c, x, y), d), d))
            }
            Func::Clip => {
                let d = promote(promote(args[0].ty(), args[1].ty()), args[2].ty()).concrete();
                if d.kind() == Kind::Complex {
                    return Err(type_err(name, d));
                }
                let regs = args
                    .iter()
                    .map(|&a| self.reg(a, d))
                    .collect::<Result<Vec<usize>, _>>()?;
                let lo = self.push(Instr::Bin(Bin::Max, regs[0], regs[1]), d);
                Ok(T::Reg(self.push(Instr::Bin(Bin::Min, lo, regs[2]), d), d))
            }
        }
    }
}

/// Whether the integer `v` is a value of dtype `d` (bool: 0 or 1; any
/// value fits a float).
fn fits(v: i128, d: DType) -> bool {
    let (lo, hi): (i128, i128) = match d {
        DType::Bool => (0, 1),
        DType::I8 => (i8::MIN as i128, i8::MAX as i128),
        DType::I16 => (i16::MIN as i128, i16::MAX as i128),
        DType::I32 => (i32::MIN as i128, i32::MAX as i128),
        DType::I64 => (i64::MIN as i128, i64::MAX as i128),
        DType::U8 => (0, u8::MAX as i128),
        DType::U16 => (0, u16::MAX as i128),
        DType::U32 => (0, u32::MAX as i128),
        DType::U64 => (0, u64::MAX as i128),
        _ => return true,
    };
    (lo..=hi).contains(&v)
}

/// Python's value of `op` on two literals.
fn fold_binary(op: Bin, a: WeakVal, b: WeakVal) -> Result<WeakVal, ComputeError> {
    use WeakVal::*;
    let overflow = || ComputeError::Literal("integer constant out of range".into());
    let zero = || ComputeError::Literal("division by zero in a constant".into());
    let as_int = |v: WeakVal| match v {
        Bool(b) => Int(b as i128),
        v => v,
    };
    if let (Bool(x), Bool(y), Bin::And | Bin::Or | Bin::Xor) = (a, b, op) {
        return Ok(Bool(match op {
            Bin::And => x & y,
            Bin::Or => x | y,
            _ => x ^ y,
        }));
    }
    match (as_int(a), as_int(b)) {
        (Int(x), Int(y)) => Ok(match op {
            Bin::Add => Int(x.checked_add(y).ok_or_else(overflow)?),
            Bin::Sub => Int(x.checked_sub(y).ok_or_else(overflow)?),
            Bin::Mul => Int(x.checked_mul(y).ok_or_else(overflow)?),
            Bin::Div if y == 0 => return Err(zero()),
            Bin::Div => Float(x as f64 / y as f64),
            Bin::FloorDiv | Bin::Mod if y == 0 => return Err(zero()),
            Bin::FloorDiv => {
                let (q, r) = (
                    x.checked_div(y).ok_or_else(overflow)?,
                    x.checked_rem(y).ok_or_else(overflow)?,
                );
                Int(q - if r != 0 && (x < 0) != (y < 0) { 1 } else { 0 })
            }
            Bin::Mod => {
                let r = x.checked_rem(y).ok_or_else(overflow)?;
                Int(if r != 0 && (r < 0) != (y < 0) {
                    r + y
                } else {
                    r
                })
            }
            Bin::Pow if y >= 0 => Int(u32::try_from(y)
                .ok()
                .and_then(|e| x.checked_pow(e))
                .ok_or_else(overflow)?),
            Bin::Pow if x == 0 => return Err(zero()),
            Bin::Pow => Float((x as f64).powf(y as f64)),
            Bin::And => Int(x & y),
            Bin::Or => Int(x | y),
            Bin::Xor => Int(x ^ y),
            Bin::Shl if y < 0 => return Err(ComputeError::Literal("negative shift count".into())),
            Bin::Shl => {
                let s = u32::try_from(y)
                    .ok()
                    .filter(|&s| s < 127)
                    .ok_or_else(overflow)?;
                let v = x << s;
                if v >> s != x {
                    return Err(overflow());
                }
                Int(v)
            }
            Bin::Shr if y < 0 => return Err(ComputeError::Literal("negative shift count".into())),
            Bin::Shr => Int(x >> y.min(127)),
            Bin::Lt => Bool(x < y),
            Bin::Le => Bool(x <= y),
            Bin::Gt => Bool(x > y),
            Bin::Ge => Bool(x >= y),
            Bin::Eq => Bool(x == y),
            Bin::Ne => Bool(x != y),
            // Functions of literals only are refused before they get here.
            _ => {
                return Err(ComputeError::Unsupported(format!(
                    "{}() of literals only",
                    op.symbol()
                )))
            }
        }),
        (Complex(..), _) | (_, Complex(..)) => {
            let c = |v: WeakVal| match v {
                Int(i) => (i as f64, 0.0),
                Float(f) => (f, 0.0),
                Complex(r, i) => (r, i),
                Bool(b) => (b as u8 as f64, 0.0),
            };
            let ((ar, ai), (br, bi)) = (c(a), c(b));
            Ok(match op {
                Bin::Add => Complex(ar + br, ai + bi),
                Bin::Sub => Complex(ar - br, ai - bi),
                Bin::Mul => Complex(ar * br - ai * bi, ar * bi + ai * br),
                Bin::Eq => Bool(ar == br && ai == bi),
                Bin::Ne => Bool(ar != br || ai != bi),
                _ => {
                    return Err(ComputeError::Unsupported(format!(
                        "complex constant {}",
                        op.symbol()
                    )))
                }
            })
        }
        (x, y) => {
            let f = |v: WeakVal| match v {
                Int(i) => i as f64,
                Float(f) => f,
                _ => unreachable!(),
            };
            let (x, y) = (f(x), f(y));
            Ok(match op {
                Bin::Add => Float(x + y),
                Bin::Sub => Float(x - y),
                Bin::Mul => Float(x * y),
                Bin::Div | Bin::FloorDiv | Bin::Mod if y == 0.0 => return Err(zero()),
                Bin::Div => Float(x / y),
                Bin::FloorDiv => Float((x / y).floor()),
                Bin::Mod => {
                    let r = x % y;
                    Float(if r != 0.0 && (r < 0.0) != (y < 0.0) {
                        r + y
                    } else if r == 0.0 {
                        0.0f64.copysign(y)
                    } else {
                        r
                    })
                }
                Bin::Pow if x < 0.0 && y.fract() != 0.0 => {
                    return Err(ComputeError::Unsupported(
                        "negative constant to a fractional power (complex in Python)".into(),
                    ))
                }
                Bin::Pow if x == 0.0 && y < 0.0 => return Err(zero()),
                Bin::Pow => Float(x.powf(y)),
                Bin::Lt => Bool(x < y),
                Bin::Le => Bool(x <= y),
                Bin::Gt => Bool(x > y),
                Bin::Ge => Bool(x >= y),
                Bin::Eq => Bool(x == y),
                Bin::Ne => Bool(x != y),
                _ => {
                    return Err(ComputeError::Type {
                        op: op.symbol().to_string(),
                        dtype: "float".into(),
                    })
                }
            })
        }
    }
}

fn fold_unary(op: UnOp, a: WeakVal) -> Result<WeakVal, ComputeError> {
    use WeakVal::*;
    Ok(match (op, a) {
        (UnOp::Pos, Bool(b)) => Int(b as i128),
        (UnOp::Pos, v) => v,
        (UnOp::Neg, Bool(b)) => Int(-(b as i128)),
        (UnOp::Neg, Int(i)) => Int(i
            .checked_neg()
            .ok_or_else(|| ComputeError::Literal("integer constant out of range".into()))?),
        (UnOp::Neg, Float(f)) => Float(-f),
        (UnOp::Neg, Complex(r, i)) => Complex(-r, -i),
        (UnOp::Invert, Bool(b)) => Int(!(b as i128)),
        (UnOp::Invert, Int(i)) => Int(!i),
        (UnOp::Invert, _) => {
            return Err(ComputeError::Type {
                op: "~".into(),
                dtype: "float".into(),
            })
        }
    })
}

impl Typed {
    /// Convert the root to `d` (the reported dtype) when it was computed in
    /// another (a narrowed float32 expression).
    pub fn cast_to(&mut self, d: DType) {
        if self.steps[self.root].dtype != d {
            self.steps.push(Step {
                instr: Instr::Cast(self.root),
                dtype: d,
            });
            self.root = self.steps.len() - 1;
        }
    }
}

/// Type `ast` against `operands` (name, dtype or `None` if unsupported).
pub fn type_ast(
    ast: &Ast,
    operands: &[(&str, Option<DType>)],
    typing: Typing,
) -> Result<Typed, ComputeError> {
    let mut t = Typer {
        steps: Vec::new(),
        operands,
        loads: vec![None; operands.len()],
        widen: typing.widen,
        narrow: typing.narrow,
        widen_int: typing.widen_int,
    };
    let mut vals: Vec<T> = Vec::with_capacity(ast.nodes.len());
    for node in &ast.nodes {
        let v = match node {
            Node::Lit(Literal::Int(i)) => T::Weak(WeakVal::Int(*i)),
            Node::Lit(Literal::Float(f)) => T::Weak(WeakVal::Float(*f)),
            Node::Lit(Literal::Imag(f)) => T::Weak(WeakVal::Complex(0.0, *f)),
            Node::Name(n, _) => t.name(n)?,
            Node::Unary(op, a) => t.unary_op(*op, vals[*a])?,
            Node::Binary(op, a, b) => t.binary(Bin::from_op(*op), vals[*a], vals[*b])?,
            Node::Call(name, args, _) => {
                let args: Vec<T> = args.iter().map(|&a| vals[a]).collect();
                t.call(name, &args)?
            }
        };
        vals.push(v);
    }
    let root = match vals[ast.root] {
        T::Reg(r, _) => r,
        T::Weak(_) => {
            return Err(ComputeError::Unsupported(
                "expression uses no operand".into(),
            ))
        }
    };
    let used = t.loads.iter().map(|l| l.is_some()).collect();
    Ok(Typed {
        steps: t.steps,
        root,
        used,
    })
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse;
    use super::*;

    fn dtype_of(expr: &str, ops: &[(&str, DType)]) -> Result<DType, ComputeError> {
        let ops: Vec<(&str, Option<DType>)> = ops.iter().map(|(n, d)| (*n, Some(*d))).collect();
        let typed = type_ast(&parse(expr)?, &ops, Typing::NUMPY)?;
        Ok(typed.steps[typed.root].dtype)
    }

    /// Expected dtypes are python-blosc2 4.14.1's `lazyexpr(...).dtype`.
    #[test]
    fn dtypes_as_python_blosc2_reports() {
        use DType::*;
        assert_eq!(
            dtype_of("a * 2 + sin(b) - c", &[("a", F64), ("b", F32), ("c", I32)]).unwrap(),
            F64
        );
        assert_eq!(dtype_of("a / b", &[("a", I32), ("b", I32)]).unwrap(), F32);
        assert_eq!(dtype_of("a / b", &[("a", I8), ("b", I8)]).unwrap(), F64);
        assert_eq!(dtype_of("a / 2", &[("a", I32)]).unwrap(), F64);
        assert_eq!(dtype_of("a + 100", &[("a", I8)]).unwrap(), I8);
        assert_eq!(dtype_of("a * 2", &[("a", Bool)]).unwrap(), I64);
        assert_eq!(dtype_of("a + b", &[("a", U64), ("b", I64)]).unwrap(), F64);
        assert_eq!(dtype_of("a + 1.5", &[("a", I16)]).unwrap(), F64);
        assert_eq!(dtype_of("b * 2.5", &[("b", F32)]).unwrap(), F32);
        assert_eq!(dtype_of("sin(a)", &[("a", I16)]).unwrap(), F32);
        assert_eq!(
            dtype_of("where(a > 0, 1, b)", &[("a", I32), ("b", F32)]).unwrap(),
            F32
        );
        assert_eq!(dtype_of("abs(a)", &[("a", C64)]).unwrap(), F32);
        assert_eq!(
            dtype_of("arctan2(a, b)", &[("a", I16), ("b", U16)]).unwrap(),
            F32
        );
        assert_eq!(dtype_of("a + 1j", &[("a", F32)]).unwrap(), C64);
        assert_eq!(dtype_of("7 / 2 + a", &[("a", I32)]).unwrap(), F64);
        assert_eq!(dtype_of("2 * 3 + a", &[("a", I32)]).unwrap(), I32);
        assert_eq!(dtype_of("a & 1", &[("a", I32)]).unwrap(), I32);
        assert_eq!(dtype_of("a < b", &[("a", I8), ("b", F64)]).unwrap(), Bool);
    }

    #[test]
    fn typed_refusals() {
        use DType::*;
        assert!(matches!(
            dtype_of("sin(a)", &[("a", I8)]),
            Err(ComputeError::Unsupported(_))
        ));
        assert!(matches!(
            dtype_of("a & b", &[("a", I8), ("b", I8)]),
            Err(ComputeError::Type { .. })
        ));
        assert!(matches!(
            dtype_of("a & 1.5", &[("a", I32)]),
            Err(ComputeError::Type { .. })
        ));
        assert!(matches!(
            dtype_of("a < b", &[("a", C128), ("b", F64)]),
            Err(ComputeError::Type { .. })
        ));
        assert!(matches!(
            dtype_of("a - b", &[("a", Bool), ("b", Bool)]),
            Err(ComputeError::Unsupported(_))
        ));
        assert!(
            matches!(dtype_of("x + 1", &[("a", F64)]), Err(ComputeError::UnknownOperand(n)) if n == "x")
        );
        assert!(matches!(
            dtype_of("sin(a, a)", &[("a", F64)]),
            Err(ComputeError::Arity {
                expected: 1,
                got: 2,
                ..
            })
        ));
        assert!(matches!(
            dtype_of("1 + 2", &[("a", F64)]),
            Err(ComputeError::Unsupported(_))
        ));
        assert!(matches!(
            dtype_of("b + sin(1.0)", &[("b", F32)]),
            Err(ComputeError::Unsupported(_))
        ));
        assert!(matches!(
            dtype_of("-1 <= a", &[("a", U8)]),
            Err(ComputeError::Unsupported(_))
        ));
        assert!(matches!(
            dtype_of("a >= 7", &[("a", Bool)]),
            Err(ComputeError::Unsupported(_))
        ));
        assert_eq!(dtype_of("a >= 1", &[("a", Bool)]).unwrap(), Bool);
        assert_eq!(dtype_of("a < 1000", &[("a", I16)]).unwrap(), Bool);
        assert!(matches!(
            dtype_of("a + 300", &[("a", I8)]),
            Err(ComputeError::Unsupported(_))
        ));
        assert!(matches!(
            dtype_of("a // -1", &[("a", U8)]),
            Err(ComputeError::Unsupported(_))
        ));
        assert!(matches!(
            dtype_of("a + 1 // 0", &[("a", F64)]),
            Err(ComputeError::Literal(_))
        ));
        assert!(matches!(
            dtype_of("a + 2 ** 200", &[("a", F64)]),
            Err(ComputeError::Literal(_))
        ));
        // python-blosc2 gives hypot(1, 1) = 1 for int32 and types
        // arctan2(f, 1) float32 but arctan2(f + 0, 1) float64.
        assert!(matches!(
            dtype_of("hypot(a, a)", &[("a", I32)]),
            Err(ComputeError::Unsupported(_))
        ));
        assert!(matches!(
            dtype_of("arctan2(a, 1)", &[("a", F32)]),
            Err(ComputeError::Unsupported(_))
        ));
        assert_eq!(dtype_of("hypot(a, a + 0)", &[("a", F32)]).unwrap(), F32);
    }

    #[test]
    fn literals_fold_like_python() {
        assert_eq!(
            fold_binary(Bin::FloorDiv, WeakVal::Int(-7), WeakVal::Int(2)).unwrap(),
            WeakVal::Int(-4)
        );
        assert_eq!(
            fold_binary(Bin::FloorDiv, WeakVal::Int(7), WeakVal::Int(-2)).unwrap(),
            WeakVal::Int(-4)
        );
        assert_eq!(
            fold_binary(Bin::Mod, WeakVal::Int(-7), WeakVal::Int(2)).unwrap(),
            WeakVal::Int(1)
        );
        assert_eq!(
            fold_binary(Bin::Mod, WeakVal::Int(7), WeakVal::Int(-2)).unwrap(),
            WeakVal::Int(-1)
        );
        assert_eq!(
            fold_binary(Bin::Pow, WeakVal::Int(2), WeakVal::Int(-1)).unwrap(),
            WeakVal::Float(0.5)
        );
        assert_eq!(
            fold_binary(Bin::Add, WeakVal::Bool(true), WeakVal::Bool(true)).unwrap(),
            WeakVal::Int(2)
        );
        assert_eq!(
            fold_binary(Bin::Mod, WeakVal::Float(-7.5), WeakVal::Float(2.0)).unwrap(),
            WeakVal::Float(0.5)
        );
        assert_eq!(
            fold_unary(UnOp::Invert, WeakVal::Int(5)).unwrap(),
            WeakVal::Int(-6)
        );
        // i128::MIN // -1 and -i128::MIN overflow: errors, not panics.
        let min = WeakVal::Int(i128::MIN);
        assert!(fold_binary(Bin::FloorDiv, min, WeakVal::Int(-1)).is_err());
        assert!(
            fold_binary(Bin::Mod, min, WeakVal::Int(-1)).is_err()
                || fold_binary(Bin::Mod, min, WeakVal::Int(-1)).is_ok()
        );
        assert!(fold_unary(UnOp::Neg, min).is_err());
        let ops = [("a", Some(DType::F64))];
        let text = "a + (-170141183460469231731687303715884105727 - 1) // -1";
        assert!(matches!(
            type_ast(&parse(text).unwrap(), &ops, Typing::NUMPY),
            Err(ComputeError::Literal(_))
        ));
        assert_eq!(WeakVal::Int(300).to_col(DType::I8), Col::Int(vec![44]));
        assert_eq!(WeakVal::Int(-1).to_col(DType::U8), Col::Int(vec![255]));
    }
}
