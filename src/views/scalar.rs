//! How one item of a plain dtype is read as a number and written as text:
//! [`ScalarFormat`], built from the [`Scalar`] the format layer's dtype
//! parser reads. `data.txt` and `table.csv` write items with it,
//! `preview.png` reads them as numbers, and the imaging headers take their
//! element types from it.
//!
//! Every value of a dtype is written in one width chosen from the dtype
//! alone ([`ScalarFormat::width`]), so a text's size is known before any
//! value is read. Floats are written with the fewest digits that read back
//! to the same value, with an exponent outside `1e-4 <= |x| < 10^digits`,
//! so `numpy.loadtxt` returns the stored values exactly (`nan` keeps no
//! sign or payload). Complex values read `re+imj`, booleans `0`/`1`.
//!
//! Strings are written as double-quoted literals that Python's
//! `ast.literal_eval` reads back exactly (with a `b` prefix added for
//! bytes): `\\`, `\"`, `\n`, `\r`, `\t`, and `\xNN` for every other byte
//! outside printable ASCII (`S`, `V`); for `U`, printable characters as
//! UTF-8 and the rest as `\xNN`, `\uNNNN` or `\UNNNNNNNN`. `S` and `U`
//! values lose their trailing NULs as NumPy's do (`V` keeps every byte).
//! They are left-aligned, padded after the closing quote to the width of
//! the longest possible literal. Datetimes and timedeltas are their integer
//! count of the dtype's unit (meta.json names the unit), `NaT` for NumPy's
//! not-a-time.

use crate::format::dtype::{ItemKind, NumpyDtype, Scalar};

/// The kind of a plain NumPy dtype this module can write as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarKind {
    /// `?` / `b1`: written `0` or `1`.
    Bool,
    /// `u1`..`u8` (`signed` false) or `i1`..`i8`.
    Int {
        /// Whether negative values exist.
        signed: bool,
    },
    /// `f2`, `f4`, `f8`.
    Float,
    /// `c8`, `c16`: two floats of half the size.
    Complex,
    /// `S` (NUL-padded: trailing NULs are not part of the value) or `V`
    /// (raw: every byte is): a quoted bytes literal.
    Bytes {
        /// Drop trailing NULs (`S`), as NumPy does.
        trim_nuls: bool,
    },
    /// `U`: UCS-4 code points, NUL-padded; a quoted string literal.
    Unicode,
    /// `M8[unit]`, `m8[unit]`: a signed count of the unit, `NaT` at its minimum.
    Time,
}

/// How to write one scalar value of a dtype: its kind, size and byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScalarFormat {
    /// What the value is.
    pub kind: ScalarKind,
    /// Item size in bytes.
    pub size: usize,
    /// Stored big-endian (`>`).
    pub big_endian: bool,
}

/// Significant decimal digits that always suffice to read a float of
/// `size` bytes back exactly.
fn float_digits(size: usize) -> usize {
    match size {
        2 => 5,
        4 => 9,
        _ => 17,
    }
}

/// Digits of the largest decimal exponent of a float of `size` bytes.
fn exponent_digits(size: usize) -> usize {
    match size {
        2 => 1,
        4 => 2,
        _ => 3,
    }
}

/// Width of a float of `size` bytes: the longer of `-0.000ddd` (plain, for
/// exponents down to -4) and `-d.ddde-XXX` (scientific).
fn float_width(size: usize) -> usize {
    let p = float_digits(size);
    (p + 6).max(p + 4 + exponent_digits(size))
}

impl ScalarFormat {
    /// How text writes a plain item of `scalar`: numbers, booleans, `S`,
    /// `U` and `V` of at least one byte, datetimes and timedeltas; `None`
    /// for the rest (objects, empty strings, x86's `f16` and `c32`).
    pub fn of(scalar: &Scalar) -> Option<ScalarFormat> {
        let kind = match (scalar.kind, scalar.size) {
            (ItemKind::Bool, 1) => ScalarKind::Bool,
            (ItemKind::Int, 1 | 2 | 4 | 8) => ScalarKind::Int { signed: true },
            (ItemKind::UInt, 1 | 2 | 4 | 8) => ScalarKind::Int { signed: false },
            (ItemKind::Float, 2 | 4 | 8) => ScalarKind::Float,
            (ItemKind::Complex, 8 | 16) => ScalarKind::Complex,
            (ItemKind::Bytes, 1..) => ScalarKind::Bytes { trim_nuls: true },
            (ItemKind::Void, 1..) => ScalarKind::Bytes { trim_nuls: false },
            (ItemKind::Unicode, 4..) => ScalarKind::Unicode,
            (ItemKind::Datetime | ItemKind::Timedelta, 8) => ScalarKind::Time,
            _ => return None,
        };
        Some(ScalarFormat {
            kind,
            size: usize::try_from(scalar.size).ok()?,
            big_endian: scalar.is_big_endian(),
        })
    }

    /// The format of a plain numeric NumPy dtype string (`<f8`, `|u1`,
    /// `?`, `>c8`); `None` for any other (strings, datetimes, voids,
    /// records).
    pub fn parse(dtype: &str) -> Option<ScalarFormat> {
        Self::parse_any(dtype).filter(|f| {
            matches!(
                f.kind,
                ScalarKind::Bool | ScalarKind::Int { .. } | ScalarKind::Float | ScalarKind::Complex
            )
        })
    }

    /// The format of any plain NumPy dtype string [`Self::of`] can write:
    /// the numeric ones, and also `S`, `U`, `V`, `M8[..]`, `m8[..]`.
    pub fn parse_any(dtype: &str) -> Option<ScalarFormat> {
        Self::of(NumpyDtype::parse(dtype).ok()?.as_scalar()?)
    }

    /// Bytes every value takes in the text (without its separator).
    pub fn width(&self) -> usize {
        match self.kind {
            ScalarKind::Bool => 1,
            ScalarKind::Int { signed } => match (self.size, signed) {
                (1, false) => 3,
                (1, true) => 4,
                (2, false) => 5,
                (2, true) => 6,
                (4, false) => 10,
                (4, true) => 11,
                _ => 20,
            },
            ScalarKind::Float => float_width(self.size),
            ScalarKind::Complex => 2 * float_width(self.size / 2) + 1,
            // Quotes and `\xNN` per byte; `\UNNNNNNNN` per code point.
            ScalarKind::Bytes { .. } => 2 + 4 * self.size,
            ScalarKind::Unicode => 2 + 10 * (self.size / 4),
            ScalarKind::Time => 20,
        }
    }

    /// Whether values are padded after (strings) rather than before (numbers).
    fn left_aligned(&self) -> bool {
        matches!(self.kind, ScalarKind::Bytes { .. } | ScalarKind::Unicode)
    }

    /// The value's bytes as a little-endian u64 (`bytes` holds `size` bytes).
    fn raw(&self, bytes: &[u8]) -> u64 {
        let mut v = 0u64;
        for i in 0..self.size.min(8) {
            let b = if self.big_endian {
                bytes[i]
            } else {
                bytes[self.size.min(8) - 1 - i]
            };
            v = (v << 8) | b as u64;
        }
        v
    }

    /// The text of the value in `bytes` (exactly `size` bytes), unpadded.
    pub fn text(&self, bytes: &[u8]) -> String {
        let mut out = String::new();
        self.text_into(bytes, &mut out);
        out
    }

    /// Append the text of the value in `bytes` to `out`, unpadded.
    pub fn text_into(&self, bytes: &[u8], out: &mut String) {
        use std::fmt::Write;
        match self.kind {
            ScalarKind::Bool => out.push(if bytes[0] != 0 { '1' } else { '0' }),
            ScalarKind::Int { signed } => {
                let v = self.raw(bytes);
                let _ = if signed {
                    let shift = 64 - 8 * self.size as u32;
                    write!(out, "{}", ((v << shift) as i64) >> shift)
                } else {
                    write!(out, "{v}")
                };
            }
            ScalarKind::Float => float_into(self.size, self.raw(bytes), out),
            ScalarKind::Time => {
                let v = self.raw(bytes) as i64;
                let _ = if v == i64::MIN {
                    write!(out, "NaT")
                } else {
                    write!(out, "{v}")
                };
            }
            ScalarKind::Bytes { trim_nuls } => {
                let bytes = &bytes[..self.size];
                let len = if trim_nuls {
                    bytes.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1)
                } else {
                    bytes.len()
                };
                out.push('"');
                for &b in &bytes[..len] {
                    escape_into(b as u32, true, out);
                }
                out.push('"');
            }
            ScalarKind::Unicode => {
                let points: Vec<u32> = bytes[..self.size]
                    .chunks_exact(4)
                    .map(|c| {
                        let c = [c[0], c[1], c[2], c[3]];
                        if self.big_endian {
                            u32::from_be_bytes(c)
                        } else {
                            u32::from_le_bytes(c)
                        }
                    })
                    .collect();
                let len = points.iter().rposition(|p| *p != 0).map_or(0, |i| i + 1);
                out.push('"');
                for &p in &points[..len] {
                    escape_into(p, false, out);
                }
                out.push('"');
            }
            ScalarKind::Complex => {
                let half = ScalarFormat {
                    kind: ScalarKind::Float,
                    size: self.size / 2,
                    big_endian: self.big_endian,
                };
                half.text_into(&bytes[..half.size], out);
                let im_at = out.len();
                half.text_into(&bytes[half.size..self.size], out);
                if !out[im_at..].starts_with('-') {
                    out.insert(im_at, '+');
                }
                out.push('j');
            }
        }
    }

    /// Append the value in `bytes`, right-aligned in [`Self::width`] bytes.
    pub fn write(&self, bytes: &[u8], out: &mut Vec<u8>) {
        self.write_with(bytes, &mut String::new(), out);
    }

    /// [`Self::write`] with a scratch string the caller reuses.
    pub fn write_with(&self, bytes: &[u8], scratch: &mut String, out: &mut Vec<u8>) {
        scratch.clear();
        self.text_into(bytes, scratch);
        let pad = std::iter::repeat_n(b' ', self.width().saturating_sub(scratch.len()));
        if self.left_aligned() {
            out.extend_from_slice(scratch.as_bytes());
            out.extend(pad);
        } else {
            out.extend(pad);
            out.extend_from_slice(scratch.as_bytes());
        }
    }

    /// The value as a float (complex: its magnitude), for pictures.
    pub fn value(&self, bytes: &[u8]) -> f64 {
        match self.kind {
            ScalarKind::Bool => (bytes[0] != 0) as u8 as f64,
            ScalarKind::Int { signed: true } => {
                let shift = 64 - 8 * self.size as u32;
                (((self.raw(bytes) << shift) as i64) >> shift) as f64
            }
            ScalarKind::Int { signed: false } => self.raw(bytes) as f64,
            ScalarKind::Time => match self.raw(bytes) as i64 {
                i64::MIN => f64::NAN,
                v => v as f64,
            },
            ScalarKind::Bytes { .. } | ScalarKind::Unicode => f64::NAN,
            ScalarKind::Float => float_value(self.size, self.raw(bytes)),
            ScalarKind::Complex => {
                let half = ScalarFormat {
                    kind: ScalarKind::Float,
                    size: self.size / 2,
                    big_endian: self.big_endian,
                };
                half.value(&bytes[..half.size])
                    .hypot(half.value(&bytes[half.size..self.size]))
            }
        }
    }
}

/// Append character or byte `c` of a quoted literal: itself when it is
/// printable (ASCII for bytes, any valid non-control character for text),
/// else an escape Python reads back to it.
fn escape_into(c: u32, bytes: bool, out: &mut String) {
    use std::fmt::Write;
    match c {
        0x5c => out.push_str("\\\\"),
        0x22 => out.push_str("\\\""),
        0x0a => out.push_str("\\n"),
        0x0d => out.push_str("\\r"),
        0x09 => out.push_str("\\t"),
        0x20..=0x7e => out.push(c as u8 as char),
        _ if bytes || c < 0xa0 => {
            let _ = write!(out, "\\x{c:02x}");
        }
        _ => match char::from_u32(c) {
            Some(ch) if !ch.is_control() && !ch.is_whitespace() => out.push(ch),
            _ if c <= 0xffff => {
                let _ = write!(out, "\\u{c:04x}");
            }
            _ => {
                let _ = write!(out, "\\U{c:08x}");
            }
        },
    }
}

/// The float of `size` bytes whose bits are `raw`, widened exactly to f64.
fn float_value(size: usize, raw: u64) -> f64 {
    match size {
        2 => f16_to_f32(raw as u16) as f64,
        4 => f32::from_bits(raw as u32) as f64,
        _ => f64::from_bits(raw),
    }
}

/// A binary16 value widened exactly to f32.
pub fn f16_to_f32(bits: u16) -> f32 {
    let sign = if bits & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let exp = ((bits >> 10) & 0x1f) as i32;
    let mant = (bits & 0x3ff) as f32;
    match exp {
        0 => sign * mant * 2f32.powi(-24),
        31 if mant == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        _ => sign * (1.0 + mant / 1024.0) * 2f32.powi(exp - 15),
    }
}

/// `x` rounded to the nearest binary16 (ties to even), as NumPy converts.
pub fn f64_to_f16(x: f64) -> u16 {
    let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    if a.is_nan() {
        return 0x7e00;
    }
    if a < 2f64.powi(-14) {
        // Subnormal range: units of 2^-24 (the scaling is exact).
        return sign | (a * 2f64.powi(24)).round_ties_even() as u16;
    }
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    let mut e = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let frac = a / 2f64.powi(e) - 1.0;
    let mut m = (frac * 1024.0).round_ties_even() as u32;
    if m == 1024 {
        m = 0;
        e += 1;
    }
    if e > 15 {
        return sign | 0x7c00;
    }
    sign | (((e + 15) as u16) << 10) | m as u16
}

/// A formatting buffer on the stack (Rust's `{:e}` of any float fits).
struct StackText {
    buf: [u8; 48],
    len: usize,
}

impl std::fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        self.buf
            .get_mut(self.len..end)
            .ok_or(std::fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl StackText {
    fn new() -> StackText {
        StackText {
            buf: [0; 48],
            len: 0,
        }
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

/// Append the shortest text of a float of `size` bytes (bits `raw`) that
/// reads back (decimal → nearest f64 → nearest float of that size) to it.
fn float_into(size: usize, raw: u64, out: &mut String) {
    use std::fmt::Write;
    let value = float_value(size, raw);
    if value.is_nan() {
        return out.push_str("nan");
    }
    if value.is_infinite() {
        return out.push_str(if value < 0.0 { "-inf" } else { "inf" });
    }
    let mut sci = StackText::new();
    let _ = match size {
        2 => {
            let v = value as f32;
            let mut found = false;
            for p in 0..5 {
                sci.len = 0;
                let _ = write!(sci, "{v:.p$e}");
                if sci
                    .as_str()
                    .parse::<f64>()
                    .is_ok_and(|back| f64_to_f16(back) == raw as u16)
                {
                    found = true;
                    break;
                }
            }
            if !found {
                sci.len = 0;
                let _ = write!(sci, "{v:e}");
            }
            Ok(())
        }
        4 => write!(sci, "{:e}", value as f32),
        _ => write!(sci, "{value:e}"),
    };
    layout_float(sci.as_str(), float_digits(size), out);
}

/// Append Rust's `{:e}` text (`-1.25e-7`) in plain notation when its
/// exponent lies in `[-4, max_digits)`, else as `-1.25e-7` unchanged.
fn layout_float(sci: &str, max_digits: usize, out: &mut String) {
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let mut digits = [b'0'; 40];
    let mut n = 0;
    for &b in mantissa.as_bytes().iter().filter(|b| **b != b'.').take(40) {
        digits[n] = b;
        n += 1;
    }
    while n > 1 && digits[n - 1] == b'0' {
        n -= 1;
    }
    let n = n.max(1);
    let digits = std::str::from_utf8(&digits[..n]).unwrap_or("0");
    if neg {
        out.push('-');
    }
    if !(-4..max_digits as i32).contains(&exp) {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        let mut e = StackText::new();
        let _ = std::fmt::Write::write_fmt(&mut e, format_args!("{exp}"));
        out.push_str(e.as_str());
        return;
    }
    if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(digits);
        return;
    }
    let int_len = exp as usize + 1;
    if n <= int_len {
        out.push_str(digits);
        for _ in n..int_len {
            out.push('0');
        }
    } else {
        out.push_str(&digits[..int_len]);
        out.push('.');
        out.push_str(&digits[int_len..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(dtype: &str) -> ScalarFormat {
        ScalarFormat::parse(dtype).unwrap()
    }

    #[test]
    fn widths_fit_every_dtype_extreme() {
        let cases: [(&str, Vec<u8>, &str); 12] = [
            ("|u1", vec![255], "255"),
            ("|i1", vec![0x80], "-128"),
            ("<u2", 65535u16.to_le_bytes().to_vec(), "65535"),
            ("<i2", i16::MIN.to_le_bytes().to_vec(), "-32768"),
            ("<u4", u32::MAX.to_le_bytes().to_vec(), "4294967295"),
            ("<i4", i32::MIN.to_le_bytes().to_vec(), "-2147483648"),
            (
                "<u8",
                u64::MAX.to_le_bytes().to_vec(),
                "18446744073709551615",
            ),
            (
                "<i8",
                i64::MIN.to_le_bytes().to_vec(),
                "-9223372036854775808",
            ),
            (
                ">i8",
                i64::MIN.to_be_bytes().to_vec(),
                "-9223372036854775808",
            ),
            (
                "<f8",
                (-f64::MIN_POSITIVE).to_le_bytes().to_vec(),
                "-2.2250738585072014e-308",
            ),
            (
                "<f4",
                (-1.1754942e-38f32).to_le_bytes().to_vec(),
                "-1.1754942e-38",
            ),
            ("|b1", vec![7], "1"),
        ];
        for (dtype, bytes, want) in cases {
            let f = fmt(dtype);
            assert_eq!(f.text(&bytes), want, "{dtype}");
            assert!(want.len() <= f.width(), "{dtype}");
            let mut out = Vec::new();
            f.write(&bytes, &mut out);
            assert_eq!(out.len(), f.width());
            assert!(out.ends_with(want.as_bytes()));
        }
        assert_eq!(fmt("<f8").width(), 24);
        assert_eq!(fmt("<f4").width(), 15);
        assert_eq!(fmt("<f2").width(), 11);
        assert_eq!(fmt("<c16").width(), 49);
        for bad in [
            "<U3",
            "|S2",
            "<M8[s]",
            "|V8",
            "<f16",
            "<i3",
            "",
            "[('a', '<i4')]",
        ] {
            assert_eq!(ScalarFormat::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn floats_are_shortest_and_switch_to_exponents() {
        let f8 = |v: f64| fmt("<f8").text(&v.to_le_bytes());
        assert_eq!(f8(1.0), "1");
        assert_eq!(f8(-0.0), "-0");
        assert_eq!(f8(0.1), "0.1");
        assert_eq!(f8(1e300), "1e300");
        assert_eq!(f8(1e-5), "1e-5");
        assert_eq!(f8(0.00012), "0.00012");
        assert_eq!(f8(123456.75), "123456.75");
        assert_eq!(f8(1e16), "10000000000000000");
        assert_eq!(f8(1e17), "1e17");
        assert_eq!(f8(5e-324), "5e-324");
        assert_eq!(f8(f64::MAX), "1.7976931348623157e308");
        assert_eq!(f8(f64::NAN), "nan");
        assert_eq!(f8(-f64::NAN), "nan");
        assert_eq!(f8(f64::NEG_INFINITY), "-inf");
        let f4 = |v: f32| fmt("<f4").text(&v.to_le_bytes());
        assert_eq!(f4(0.1), "0.1");
        assert_eq!(f4(16777216.0), "16777216");
        assert_eq!(f4(f32::MAX), "3.4028235e38");
        assert_eq!(f4(1e-45), "1e-45");
        let c = fmt("<c8");
        let bytes: Vec<u8> = [1.5f32, -2.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(c.text(&bytes), "1.5-2j");
        let bytes: Vec<u8> = [f32::NAN, f32::INFINITY]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(c.text(&bytes), "nan+infj");
    }

    #[test]
    fn every_half_float_reads_back_and_fits() {
        let f = fmt("<f2");
        for bits in 0..=u16::MAX {
            let text = f.text(&bits.to_le_bytes());
            assert!(text.len() <= f.width(), "{bits:#x}: {text}");
            let exp = (bits >> 10) & 0x1f;
            if exp == 31 && bits & 0x3ff != 0 {
                assert_eq!(text, "nan");
                continue;
            }
            let back: f64 = text.parse().unwrap_or_else(|_| panic!("{bits:#x}: {text}"));
            assert_eq!(f64_to_f16(back), bits, "{bits:#x}: {text}");
            assert_eq!(f64_to_f16(f16_to_f32(bits) as f64), bits);
        }
        assert_eq!(f.text(&0x3c00u16.to_le_bytes()), "1");
        assert_eq!(f.text(&0x2e66u16.to_le_bytes()), "0.1");
        assert_eq!(
            f.text(&0x7bffu16.to_le_bytes()),
            "65500",
            "65500 reads back as 65504"
        );
        assert_eq!(f.text(&0x0001u16.to_le_bytes()), "6e-8");
        // Rounding to half: ties to even, overflow to infinity.
        assert_eq!(f64_to_f16(65519.0), 0x7bff);
        assert_eq!(f64_to_f16(65520.0), 0x7c00);
        assert_eq!(f64_to_f16(1.0 + 1.0 / 2048.0), 0x3c00);
        assert_eq!(f64_to_f16(1.0 + 3.0 / 2048.0), 0x3c02);
        assert_eq!(f64_to_f16(2f64.powi(-25)), 0);
        assert_eq!(f64_to_f16(-1e-30), 0x8000);
    }

    #[test]
    fn floats_read_back_exactly_and_fit() {
        // A deterministic spread of bit patterns (every exponent, random mantissas).
        let mut rng = crate::test_rng::Rng::new(0x9e37_79b9_7f4a_7c15);
        let mut next = || rng.next_u64();
        let (f4, f8) = (fmt("<f4"), fmt("<f8"));
        for _ in 0..200_000 {
            let bits = next();
            let v = f64::from_bits(bits);
            let text = f8.text(&bits.to_le_bytes());
            assert!(text.len() <= f8.width(), "{text}");
            if !v.is_nan() {
                assert_eq!(text.parse::<f64>().unwrap().to_bits(), bits, "{text}");
            }
            let b4 = bits as u32;
            let v4 = f32::from_bits(b4);
            let text = f4.text(&b4.to_le_bytes());
            assert!(text.len() <= f4.width(), "{text}");
            if !v4.is_nan() {
                assert_eq!(
                    (text.parse::<f64>().unwrap() as f32).to_bits(),
                    b4,
                    "{text}"
                );
            }
        }
    }

    /// Each string is the literal Python reads back to the stored value
    /// (`b` prefix added for bytes), left-aligned in the widest literal's width.
    #[test]
    fn strings_are_quoted_literals_that_read_back() {
        let s = fmt_any("|S5");
        assert_eq!(s.width(), 22);
        assert_eq!(s.text(b"ab\0\0\0"), r#""ab""#, "trailing NULs are padding");
        assert_eq!(s.text(b"a\0b\0\0"), r#""a\x00b""#, "inner NULs are not");
        assert_eq!(s.text(b"\"\\\n\xff\t"), r#""\"\\\n\xff\t""#);
        assert_eq!(s.text(&[0u8; 5]), r#""""#);
        let mut out = Vec::new();
        s.write(b"hi\0\0\0", &mut out);
        assert_eq!(out, format!("{:<22}", "\"hi\"").as_bytes());
        // Void keeps every byte.
        assert_eq!(fmt_any("|V3").text(&[0x41, 0, 0]), r#""A\x00\x00""#);
        let u = |dtype: &str, points: &[u32]| {
            let f = fmt_any(dtype);
            let bytes: Vec<u8> = points
                .iter()
                .flat_map(|p| {
                    if f.big_endian {
                        p.to_be_bytes()
                    } else {
                        p.to_le_bytes()
                    }
                })
                .collect();
            f.text(&bytes)
        };
        assert_eq!(fmt_any("<U3").width(), 32);
        assert_eq!(u("<U3", &[0x68, 0xe9, 0]), "\"hé\"");
        assert_eq!(u(">U3", &[0x1f600, 0x22, 0x5c]), "\"😀\\\"\\\\\"");
        // Controls, line separators, surrogates and non-characters beyond Unicode are escaped.
        assert_eq!(
            u("<U4", &[0x07, 0x85, 0x2028, 0xd800]),
            r#""\x07\x85\u2028\ud800""#
        );
        assert_eq!(u("<U2", &[0x110000, 0x41]), r#""\U00110000A""#);
        // Datetimes: the count of the unit; NaT.
        let t = fmt_any("<M8[ns]");
        assert_eq!(
            (
                t.text(&(-5i64).to_le_bytes()),
                t.text(&i64::MIN.to_le_bytes())
            ),
            ("-5".to_string(), "NaT".to_string())
        );
        assert_eq!(fmt_any(">m8").text(&7i64.to_be_bytes()), "7");
        assert_eq!(fmt_any("<M8[s]").width(), (i64::MIN + 1).to_string().len());
    }

    fn fmt_any(dtype: &str) -> ScalarFormat {
        ScalarFormat::parse_any(dtype).unwrap()
    }

    /// Every byte value of an `S` item, and a sample of code points of a `U`
    /// item, fit the width and read back (by an independent unescaper).
    #[test]
    fn every_byte_and_code_point_fits_and_reads_back() {
        let s = fmt_any("|S2");
        for b in 1..=255u8 {
            let text = s.text(&[b, b]);
            assert!(text.len() <= s.width(), "{b}");
            assert_eq!(unescape(&text), vec![b as u32, b as u32], "{text}");
        }
        let u = fmt_any("<U1");
        for p in (1..0x11_0000u32)
            .step_by(97)
            .chain([0x7f, 0xa0, 0xad, 0xfeff, 0x10ffff, u32::MAX])
        {
            let text = u.text(&p.to_le_bytes());
            assert!(text.len() <= u.width(), "{p:#x}: {text}");
            assert_eq!(unescape(&text), vec![p], "{p:#x}: {text}");
        }
    }

    /// Python's reading of a double-quoted literal, for the escapes the
    /// writer uses: code points (or bytes) in order.
    fn unescape(text: &str) -> Vec<u32> {
        let inner = text
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .expect("quoted");
        let mut out = Vec::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c as u32);
                continue;
            }
            let hex = |n: usize, chars: &mut std::str::Chars| {
                u32::from_str_radix(&chars.by_ref().take(n).collect::<String>(), 16).unwrap()
            };
            out.push(match chars.next().unwrap() {
                'n' => 10,
                'r' => 13,
                't' => 9,
                'x' => hex(2, &mut chars),
                'u' => hex(4, &mut chars),
                'U' => hex(8, &mut chars),
                other => other as u32,
            });
        }
        out
    }
}
