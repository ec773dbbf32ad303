//! The function names an expression may call, mapped to operations.
//!
//! The names are python-blosc2 4.14.1's `utils.elementwise_funcs` plus the
//! numpy aliases it resolves (`acos` for `arccos`, `pow`/`power`, ...).
//!
//! Supported, elementwise (`f(x)`):
//! `abs sqrt exp expm1 log log10 log1p log2 sin cos tan arcsin arccos arctan
//! sinh cosh tanh arcsinh arccosh arctanh` (and `asin acos atan asinh acosh
//! atanh`), `floor ceil trunc round isnan isinf isfinite real imag conj
//! negative positive square sign signbit reciprocal logical_not
//! bitwise_invert`;
//! `f(x, y)`: `add subtract multiply divide floor_divide remainder pow power
//! arctan2 atan2 maximum minimum hypot copysign nextafter logaddexp equal
//! not_equal less less_equal greater greater_equal logical_and logical_or
//! logical_xor bitwise_and bitwise_or bitwise_xor bitwise_left_shift
//! bitwise_right_shift`; `where(c, x, y)`, `clip(x, lo, hi)`.
//! On complex operands: `+ - * /`, `== !=`, `abs real imag conj negative
//! positive square reciprocal sqrt exp log sin cos sinh cosh tanh isnan
//! isinf isfinite`, `where`.
//!
//! `np.sin(a)` and other attribute forms are refused, as python-blosc2
//! refuses them ("Invalid method name"); so are `a.sum()`-style methods and
//! indexing (not elementwise).
//!
//! Refused: the string functions `contains startswith endswith lower upper`
//! (no string dtypes here); `broadcast_to` and every reduction,
//! linear-algebra function and constructor ([`ComputeError::NotElementwise`]);
//! `logaddexp` of integers (python-blosc2 reports float32 where numpy computes
//! float64), the remaining complex functions (`tan arcsin ... log10 ...`,
//! complex `**`), whose branch cuts python-blosc2's engines do not share.

use super::error::ComputeError;
use super::parse::{not_elementwise, BinOp, UnOp};

/// Two-argument operations, after typing: both arguments have one dtype.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Max,
    Min,
    Atan2,
    Hypot,
    Copysign,
    NextAfter,
    LogAddExp,
}

/// One-argument operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Un {
    Neg,
    Invert,
    Abs,
    Sqrt,
    Exp,
    Expm1,
    Log,
    Log10,
    Log1p,
    Log2,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Floor,
    Ceil,
    Trunc,
    Round,
    IsNan,
    IsInf,
    IsFinite,
    Real,
    Imag,
    Conj,
    Square,
    Sign,
    Signbit,
    Reciprocal,
    LogicalNot,
}

impl Un {
    /// Functions whose result is a float of the argument's float type.
    pub fn is_float_fn(self) -> bool {
        use Un::*;
        matches!(
            self,
            Sqrt | Exp
                | Expm1
                | Log
                | Log10
                | Log1p
                | Log2
                | Sin
                | Cos
                | Tan
                | Asin
                | Acos
                | Atan
                | Sinh
                | Cosh
                | Tanh
                | Asinh
                | Acosh
                | Atanh
        )
    }
}

impl Bin {
    pub fn from_op(op: BinOp) -> Bin {
        match op {
            BinOp::Add => Bin::Add,
            BinOp::Sub => Bin::Sub,
            BinOp::Mul => Bin::Mul,
            BinOp::Div => Bin::Div,
            BinOp::FloorDiv => Bin::FloorDiv,
            BinOp::Mod => Bin::Mod,
            BinOp::Pow => Bin::Pow,
            BinOp::Lt => Bin::Lt,
            BinOp::Le => Bin::Le,
            BinOp::Gt => Bin::Gt,
            BinOp::Ge => Bin::Ge,
            BinOp::Eq => Bin::Eq,
            BinOp::Ne => Bin::Ne,
            BinOp::And => Bin::And,
            BinOp::Or => Bin::Or,
            BinOp::Xor => Bin::Xor,
            BinOp::Shl => Bin::Shl,
            BinOp::Shr => Bin::Shr,
        }
    }

    /// Comparisons: the result is bool.
    pub fn is_compare(self) -> bool {
        matches!(
            self,
            Bin::Lt | Bin::Le | Bin::Gt | Bin::Ge | Bin::Eq | Bin::Ne
        )
    }

    /// The operator's spelling in messages.
    pub fn symbol(self) -> &'static str {
        match self {
            Bin::Add => "+",
            Bin::Sub => "-",
            Bin::Mul => "*",
            Bin::Div => "/",
            Bin::FloorDiv => "//",
            Bin::Mod => "%",
            Bin::Pow => "**",
            Bin::Lt => "<",
            Bin::Le => "<=",
            Bin::Gt => ">",
            Bin::Ge => ">=",
            Bin::Eq => "==",
            Bin::Ne => "!=",
            Bin::And => "&",
            Bin::Or => "|",
            Bin::Xor => "^",
            Bin::Shl => "<<",
            Bin::Shr => ">>",
            Bin::Max => "maximum",
            Bin::Min => "minimum",
            Bin::Atan2 => "arctan2",
            Bin::Hypot => "hypot",
            Bin::Copysign => "copysign",
            Bin::NextAfter => "nextafter",
            Bin::LogAddExp => "logaddexp",
        }
    }
}

/// What a function name means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    Un(Un),
    /// A unary operator spelled as a function (`negative`, `bitwise_invert`).
    UnOp(UnOp),
    Bin(Bin),
    /// `logical_and` / `logical_or` / `logical_xor`: booleans only.
    Logical(Bin),
    Where,
    Clip,
}

impl Func {
    pub fn arity(self) -> usize {
        match self {
            Func::Un(_) | Func::UnOp(_) => 1,
            Func::Bin(_) | Func::Logical(_) => 2,
            Func::Where | Func::Clip => 3,
        }
    }
}

/// Resolve a called name.
pub fn lookup(name: &str) -> Result<Func, ComputeError> {
    use Un::*;
    let f = match name {
        "abs" => Func::Un(Abs),
        "sqrt" => Func::Un(Sqrt),
        "exp" => Func::Un(Exp),
        "expm1" => Func::Un(Expm1),
        "log" => Func::Un(Log),
        "log10" => Func::Un(Log10),
        "log1p" => Func::Un(Log1p),
        "log2" => Func::Un(Log2),
        "sin" => Func::Un(Sin),
        "cos" => Func::Un(Cos),
        "tan" => Func::Un(Tan),
        "arcsin" | "asin" => Func::Un(Asin),
        "arccos" | "acos" => Func::Un(Acos),
        "arctan" | "atan" => Func::Un(Atan),
        "sinh" => Func::Un(Sinh),
        "cosh" => Func::Un(Cosh),
        "tanh" => Func::Un(Tanh),
        "arcsinh" | "asinh" => Func::Un(Asinh),
        "arccosh" | "acosh" => Func::Un(Acosh),
        "arctanh" | "atanh" => Func::Un(Atanh),
        "floor" => Func::Un(Floor),
        "ceil" => Func::Un(Ceil),
        "trunc" => Func::Un(Trunc),
        "round" => Func::Un(Round),
        "isnan" => Func::Un(IsNan),
        "isinf" => Func::Un(IsInf),
        "isfinite" => Func::Un(IsFinite),
        "real" => Func::Un(Real),
        "imag" => Func::Un(Imag),
        "conj" => Func::Un(Conj),
        "square" => Func::Un(Square),
        "sign" => Func::Un(Sign),
        "signbit" => Func::Un(Signbit),
        "reciprocal" => Func::Un(Reciprocal),
        "logical_not" => Func::Un(LogicalNot),
        "negative" => Func::UnOp(UnOp::Neg),
        "positive" => Func::UnOp(UnOp::Pos),
        "bitwise_invert" => Func::UnOp(UnOp::Invert),
        "add" => Func::Bin(Bin::Add),
        "subtract" => Func::Bin(Bin::Sub),
        "multiply" => Func::Bin(Bin::Mul),
        "divide" => Func::Bin(Bin::Div),
        "floor_divide" => Func::Bin(Bin::FloorDiv),
        "remainder" => Func::Bin(Bin::Mod),
        "pow" | "power" => Func::Bin(Bin::Pow),
        "arctan2" | "atan2" => Func::Bin(Bin::Atan2),
        "maximum" => Func::Bin(Bin::Max),
        "minimum" => Func::Bin(Bin::Min),
        "hypot" => Func::Bin(Bin::Hypot),
        "copysign" => Func::Bin(Bin::Copysign),
        "nextafter" => Func::Bin(Bin::NextAfter),
        "logaddexp" => Func::Bin(Bin::LogAddExp),
        "equal" => Func::Bin(Bin::Eq),
        "not_equal" => Func::Bin(Bin::Ne),
        "less" => Func::Bin(Bin::Lt),
        "less_equal" => Func::Bin(Bin::Le),
        "greater" => Func::Bin(Bin::Gt),
        "greater_equal" => Func::Bin(Bin::Ge),
        "logical_and" => Func::Logical(Bin::And),
        "logical_or" => Func::Logical(Bin::Or),
        "logical_xor" => Func::Logical(Bin::Xor),
        "bitwise_and" => Func::Bin(Bin::And),
        "bitwise_or" => Func::Bin(Bin::Or),
        "bitwise_xor" => Func::Bin(Bin::Xor),
        "bitwise_left_shift" => Func::Bin(Bin::Shl),
        "bitwise_right_shift" => Func::Bin(Bin::Shr),
        "where" => Func::Where,
        "clip" => Func::Clip,
        "contains" | "startswith" | "endswith" | "lower" | "upper" => {
            return Err(ComputeError::Unsupported(format!("string function {name}")))
        }
        _ if not_elementwise(name) => return Err(ComputeError::NotElementwise(name.to_string())),
        _ => return Err(ComputeError::UnknownFunction(name.to_string())),
    };
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve() {
        assert_eq!(lookup("asin").unwrap(), lookup("arcsin").unwrap());
        assert_eq!(lookup("pow").unwrap(), Func::Bin(Bin::Pow));
        assert_eq!(lookup("where").unwrap().arity(), 3);
        assert!(matches!(
            lookup("sum"),
            Err(ComputeError::NotElementwise(_))
        ));
        assert!(matches!(
            lookup("matmul"),
            Err(ComputeError::NotElementwise(_))
        ));
        assert!(matches!(
            lookup("startswith"),
            Err(ComputeError::Unsupported(_))
        ));
        assert!(matches!(
            lookup("frobnicate"),
            Err(ComputeError::UnknownFunction(_))
        ));
    }
}
