//! The numeric dtypes an expression's operands and result may have, named
//! the way numpy spells them (`"<f8"`, `"|b1"`, `">i4"`, `"float64"`), and
//! built from the format layer's reading of a dtype string.
//!
//! Byte order is kept apart from the dtype: an operand may be stored
//! big-endian, but every computation (and the result) is in native values
//! written out little-endian.

use crate::format::dtype::{ByteOrder as Stored, ItemKind, NumpyDtype, Scalar};

use super::error::ComputeError;

/// An elementwise dtype python-blosc2 evaluates (float16, strings, datetimes
/// and structured dtypes are not among them here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// bool, one byte 0 or 1.
    Bool,
    /// int8.
    I8,
    /// int16.
    I16,
    /// int32.
    I32,
    /// int64.
    I64,
    /// uint8.
    U8,
    /// uint16.
    U16,
    /// uint32.
    U32,
    /// uint64.
    U64,
    /// float32.
    F32,
    /// float64.
    F64,
    /// complex64: two float32.
    C64,
    /// complex128: two float64.
    C128,
}

/// The broad class of a dtype, as numpy's `dtype.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// `b`
    Bool,
    /// `i`
    Int,
    /// `u`
    UInt,
    /// `f`
    Float,
    /// `c`
    Complex,
}

/// How the bytes of a multi-byte item are ordered in storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    /// `<`, `=`, `|` or none.
    Little,
    /// `>`.
    Big,
}

impl DType {
    /// All dtypes, in numpy's promotion order within each kind.
    pub const ALL: [DType; 13] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F32,
        DType::F64,
        DType::C64,
        DType::C128,
    ];

    /// Bytes per item.
    pub fn itemsize(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }

    /// numpy's kind.
    pub fn kind(self) -> Kind {
        match self {
            DType::Bool => Kind::Bool,
            DType::I8 | DType::I16 | DType::I32 | DType::I64 => Kind::Int,
            DType::U8 | DType::U16 | DType::U32 | DType::U64 => Kind::UInt,
            DType::F32 | DType::F64 => Kind::Float,
            DType::C64 | DType::C128 => Kind::Complex,
        }
    }

    /// True for the signed and unsigned integers (not bool).
    pub fn is_integer(self) -> bool {
        matches!(self.kind(), Kind::Int | Kind::UInt)
    }

    /// True for float and complex.
    pub fn is_inexact(self) -> bool {
        matches!(self.kind(), Kind::Float | Kind::Complex)
    }

    /// The numpy name (`"float64"`).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
        }
    }

    /// numpy's `dtype.str` for the little-endian form: `"<f8"`, `"|b1"`.
    pub fn numpy_str(self) -> &'static str {
        match self {
            DType::Bool => "|b1",
            DType::I8 => "|i1",
            DType::I16 => "<i2",
            DType::I32 => "<i4",
            DType::I64 => "<i8",
            DType::U8 => "|u1",
            DType::U16 => "<u2",
            DType::U32 => "<u4",
            DType::U64 => "<u8",
            DType::F32 => "<f4",
            DType::F64 => "<f8",
            DType::C64 => "<c8",
            DType::C128 => "<c16",
        }
    }

    /// Parse a numpy dtype string (as [`NumpyDtype::parse`] reads it: a
    /// byte-order prefix and a type code, `<f8`, `|b1`, `>c16`, `?`) or a
    /// numpy name (`"float64"`); `Err` for any dtype computing has no type
    /// for. `=`, `|` and no prefix mean native, little-endian on every
    /// platform blosc2fs runs on.
    pub fn parse(s: &str) -> Result<(DType, ByteOrder), ComputeError> {
        if let Some(d) = DType::ALL.iter().copied().find(|d| d.name() == s) {
            return Ok((d, ByteOrder::Little));
        }
        NumpyDtype::parse(s)
            .ok()
            .as_ref()
            .and_then(NumpyDtype::as_scalar)
            .and_then(DType::of)
            .ok_or_else(|| ComputeError::DType(s.to_string()))
    }

    /// The dtype computing uses for a plain item, and its stored byte order
    /// (little for one-byte items); `None` for a kind or size it has no
    /// type for (float16, strings, datetimes, objects).
    pub fn of(scalar: &Scalar) -> Option<(DType, ByteOrder)> {
        let d = match (scalar.kind, scalar.size) {
            (ItemKind::Bool, 1) => DType::Bool,
            (ItemKind::Int, 1) => DType::I8,
            (ItemKind::Int, 2) => DType::I16,
            (ItemKind::Int, 4) => DType::I32,
            (ItemKind::Int, 8) => DType::I64,
            (ItemKind::UInt, 1) => DType::U8,
            (ItemKind::UInt, 2) => DType::U16,
            (ItemKind::UInt, 4) => DType::U32,
            (ItemKind::UInt, 8) => DType::U64,
            (ItemKind::Float, 4) => DType::F32,
            (ItemKind::Float, 8) => DType::F64,
            (ItemKind::Complex, 8) => DType::C64,
            (ItemKind::Complex, 16) => DType::C128,
            _ => return None,
        };
        let order = match scalar.order {
            Stored::Big => ByteOrder::Big,
            Stored::Little | Stored::NotApplicable => ByteOrder::Little,
        };
        Some((d, order))
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_numpy_strings() {
        assert_eq!(
            DType::parse("<f8").unwrap(),
            (DType::F64, ByteOrder::Little)
        );
        assert_eq!(DType::parse(">i2").unwrap(), (DType::I16, ByteOrder::Big));
        assert_eq!(
            DType::parse("|b1").unwrap(),
            (DType::Bool, ByteOrder::Little)
        );
        assert_eq!(DType::parse("?").unwrap(), (DType::Bool, ByteOrder::Little));
        assert_eq!(
            DType::parse("=u4").unwrap(),
            (DType::U32, ByteOrder::Little)
        );
        assert_eq!(DType::parse(">c16").unwrap(), (DType::C128, ByteOrder::Big));
        assert_eq!(DType::parse(">u1").unwrap(), (DType::U8, ByteOrder::Little));
        assert_eq!(
            DType::parse("float32").unwrap(),
            (DType::F32, ByteOrder::Little)
        );
        for bad in [
            "<f2",
            "<U8",
            "|S3",
            "",
            "<",
            "<m8[s]",
            "f16",
            "<f16",
            "|O",
            "[('a', '<f8')]",
        ] {
            assert!(DType::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn itemsize_and_str_agree() {
        for d in DType::ALL {
            let code = &d.numpy_str()[2..];
            let n: usize = code.parse().unwrap();
            assert_eq!(n, d.itemsize(), "{d}");
            assert_eq!(DType::parse(d.numpy_str()).unwrap().0, d);
        }
    }
}
