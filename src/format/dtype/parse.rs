//! The one entry point: a dtype string as python-blosc2 stores it, read by
//! the parser its first byte calls for.

use super::model::{DtypeError, NumpyDtype};
use super::{record, scalar};

impl NumpyDtype {
    /// Read a dtype string as python-blosc2 stores it (see the module doc):
    /// a plain `dtype.str`, or a structured dtype's or subarray's Python
    /// literal. Whitespace is allowed between a literal's tokens and after
    /// it, nowhere else.
    pub fn parse(text: &str) -> Result<NumpyDtype, DtypeError> {
        match text.as_bytes().first() {
            Some(b'[' | b'(' | b'{') => record::parse(text),
            _ => scalar::parse(text, 0).map(NumpyDtype::Scalar),
        }
    }
}
