//! Why an expression cannot be compiled or evaluated.
//!
//! Every refusal is a distinct variant so a caller (meta.json, a log line, a
//! test) can say exactly what is wrong with a saved expression without parsing
//! a message.

use thiserror::Error;

/// An expression that does not compile, or a region that cannot be evaluated.
/// (Variant fields are named for what they hold.)
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ComputeError {
    /// The text is not an expression: `at` is the byte offset of the problem.
    #[error("malformed expression at byte {at}: {what}")]
    Syntax { at: usize, what: String },
    /// A call to a name that is no function python-blosc2 evaluates elementwise.
    #[error("unknown function: {0}")]
    UnknownFunction(String),
    /// A name that is neither an operand nor a constant.
    #[error("unknown operand: {0}")]
    UnknownOperand(String),
    /// A function called with the wrong number of arguments.
    #[error("{name} takes {expected} argument(s), got {got}")]
    Arity {
        name: String,
        expected: usize,
        got: usize,
    },
    /// Operand shapes that numpy's broadcasting rules cannot reconcile.
    #[error("shapes {0:?} and {1:?} cannot broadcast")]
    Broadcast(Vec<u64>, Vec<u64>),
    /// The broadcast result has more elements than [`super::broadcast::MAX_ELEMENTS`].
    #[error("result too large: shape {0:?}")]
    TooLarge(Vec<u64>),
    /// More nodes than [`super::parse::MAX_NODES`].
    #[error("expression too long: more than {0} terms")]
    TooManyTerms(usize),
    /// Nesting deeper than [`super::parse::MAX_DEPTH`].
    #[error("expression nested deeper than {0}")]
    TooDeep(usize),
    /// More dimensions than [`super::broadcast::MAX_NDIM`].
    #[error("too many dimensions: {0}")]
    TooManyDims(usize),
    /// A reduction, linear-algebra or other function that is not elementwise.
    #[error("not elementwise: {0}")]
    NotElementwise(String),
    /// Something python-blosc2 accepts (or crashes on) that is deliberately
    /// not evaluated here; the text says why.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// An operation on a dtype it is not defined for (e.g. `&` on floats).
    #[error("invalid operand type for {op}: {dtype}")]
    Type { op: String, dtype: String },
    /// An operand's numpy dtype string that is not a supported numeric dtype.
    #[error("unsupported dtype {0:?}")]
    DType(String),
    /// A literal that cannot be represented (e.g. an integer beyond 64 bits).
    #[error("bad literal {0:?}")]
    Literal(String),
    /// `evaluate` called with a region outside the result or of the wrong rank.
    #[error("region {start:?}+{shape:?} outside result shape {result:?}")]
    Region {
        start: Vec<u64>,
        shape: Vec<u64>,
        result: Vec<u64>,
    },
    /// `evaluate` called with an input or output buffer of the wrong length.
    #[error("buffer {which}: {got} bytes, expected {expected}")]
    BufferLength {
        which: String,
        got: usize,
        expected: usize,
    },
    /// `evaluate` called with the wrong number of inputs.
    #[error("{got} inputs, expected {expected}")]
    InputCount { got: usize, expected: usize },
    /// A region larger than this process is willing to evaluate at once.
    #[error("region of {0} elements too large to evaluate at once")]
    RegionTooLarge(u64),
}
