//! One cell of `table.csv` as pandas writes it (`DataFrame.to_csv`), so that
//! `pandas.read_csv` of the file gives back what `CTable.to_pandas()` holds:
//! floats as NumPy prints them (shortest digits, scientific outside its
//! range, NaN as an empty field), timestamps at the finest resolution the
//! column needs, bytes as Python's `b'…'`, and RFC 4180 quoting of any field
//! holding a comma, a quote or a line break. The table's layout (which
//! columns, which rows) is [`super::table_csv`]'s.

use std::io::Write as _;

/// The floats NumPy prints: each has its own range of positional notation
/// and its own shortest digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloatWidth {
    /// `float64`: positional from 1e-4 up to (not including) 1e16.
    F64,
    /// `float32`: positional from 1e-4 up to 1e6, digits of the f32.
    F32,
}

/// Write `x` as NumPy's `astype(str)` does (what pandas' `to_csv` writes):
/// `0.1`, `3.0`, `-0.0`, `1e+16`, `1.5e-05`, `inf`; NaN writes nothing
/// (pandas' empty `na_rep`).
pub fn write_float(out: &mut Vec<u8>, x: f64, width: FloatWidth) {
    if x.is_nan() {
        return;
    }
    if x.is_infinite() {
        out.extend_from_slice(if x > 0.0 { b"inf" } else { b"-inf" });
        return;
    }
    let upper = match width {
        FloatWidth::F64 => 1e16,
        FloatWidth::F32 => 1e6,
    };
    let magnitude = x.abs();
    let positional = magnitude == 0.0 || (1e-4..upper).contains(&magnitude);
    // Rust's shortest round-trip digits are NumPy's (both take the digits
    // closest to the value); only the notation differs.
    let text = match (width, positional) {
        // Debug is positional (with a `.0` for whole numbers) inside
        // [1e-4, 1e16), which holds both positional ranges.
        (FloatWidth::F64, true) => format!("{x:?}"),
        (FloatWidth::F32, true) => format!("{:?}", x as f32),
        (FloatWidth::F64, false) => format!("{x:e}"),
        (FloatWidth::F32, false) => format!("{:e}", x as f32),
    };
    match text.split_once('e') {
        // NumPy writes the exponent's sign always and at least two digits.
        Some((mantissa, exponent)) => {
            let exponent: i32 = exponent.parse().unwrap_or(0);
            let sign = if exponent < 0 { '-' } else { '+' };
            let _ = write!(out, "{mantissa}e{sign}{:02}", exponent.unsigned_abs());
        }
        None => out.extend_from_slice(text.as_bytes()),
    }
}

/// How finely a timestamp column is written: pandas writes every value of
/// a column at the finest resolution any of its values needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum TimeResolution {
    /// Every value is a midnight: `2020-09-13`.
    #[default]
    Day,
    /// `2020-09-13 12:26:42`.
    Second,
    /// `.123` after the seconds.
    Milli,
    /// `.123456`.
    Micro,
    /// `.123456789`.
    Nano,
}

impl TimeResolution {
    /// Bytes a value written at this resolution has beyond one written at
    /// [`TimeResolution::Second`] (negative for days).
    pub fn extra_len(self) -> i64 {
        match self {
            TimeResolution::Day => -9,
            TimeResolution::Second => 0,
            TimeResolution::Milli => 4,
            TimeResolution::Micro => 7,
            TimeResolution::Nano => 10,
        }
    }
}

/// Nanoseconds in one unit of a timestamp (`s`, `ms`, `us`, `ns`).
pub fn nanos_per_unit(unit: arrow_schema::TimeUnit) -> i64 {
    match unit {
        arrow_schema::TimeUnit::Second => 1_000_000_000,
        arrow_schema::TimeUnit::Millisecond => 1_000_000,
        arrow_schema::TimeUnit::Microsecond => 1_000,
        arrow_schema::TimeUnit::Nanosecond => 1,
    }
}

/// A timestamp of `value` units (`nanos_per_unit` nanoseconds each) since
/// the epoch, split into days since the epoch, seconds into the day and
/// nanoseconds into the second.
fn split_time(value: i64, nanos_per_unit: i64) -> (i64, i64, i64) {
    let units_per_second = 1_000_000_000 / nanos_per_unit;
    let seconds = value.div_euclid(units_per_second);
    let nanos = value.rem_euclid(units_per_second) * nanos_per_unit;
    (
        seconds.div_euclid(86_400),
        seconds.rem_euclid(86_400),
        nanos,
    )
}

/// The resolution one value needs.
pub fn time_resolution(value: i64, nanos_per_unit: i64) -> TimeResolution {
    let (_, second, nanos) = split_time(value, nanos_per_unit);
    if nanos % 1_000 != 0 {
        TimeResolution::Nano
    } else if nanos % 1_000_000 != 0 {
        TimeResolution::Micro
    } else if nanos != 0 {
        TimeResolution::Milli
    } else if second != 0 {
        TimeResolution::Second
    } else {
        TimeResolution::Day
    }
}

/// Year, month, day of the proleptic Gregorian calendar for `days` since
/// 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Write a timestamp as pandas does at resolution `resolution`
/// (`2020-09-13 12:26:42.500`), in UTC (pandas shows a CTable's timestamps
/// without their zone).
pub fn write_time(out: &mut Vec<u8>, value: i64, nanos_per_unit: i64, resolution: TimeResolution) {
    let (days, second, nanos) = split_time(value, nanos_per_unit);
    let (year, month, day) = civil_from_days(days);
    let _ = if year < 0 {
        write!(out, "-{:04}-{month:02}-{day:02}", -year)
    } else {
        write!(out, "{year:04}-{month:02}-{day:02}")
    };
    if resolution == TimeResolution::Day {
        return;
    }
    let _ = write!(
        out,
        " {:02}:{:02}:{:02}",
        second / 3_600,
        second / 60 % 60,
        second % 60
    );
    let _ = match resolution {
        TimeResolution::Milli => write!(out, ".{:03}", nanos / 1_000_000),
        TimeResolution::Micro => write!(out, ".{:06}", nanos / 1_000),
        TimeResolution::Nano => write!(out, ".{nanos:09}"),
        TimeResolution::Day | TimeResolution::Second => Ok(()),
    };
}

/// Write bytes as Python's `repr` of a `bytes` object (what pandas writes
/// for a cell holding one): `b'\x02\x00\xff'`, in double quotes when the
/// bytes hold a single quote and no double one.
pub fn write_bytes_repr(out: &mut Vec<u8>, bytes: &[u8]) {
    let quote = if bytes.contains(&b'\'') && !bytes.contains(&b'"') {
        b'"'
    } else {
        b'\''
    };
    out.push(b'b');
    out.push(quote);
    for &b in bytes {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b if b == quote => {
                out.push(b'\\');
                out.push(b);
            }
            0x20..=0x7e => out.push(b),
            b => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
    out.push(quote);
}

/// Write `text` as one CSV field (RFC 4180): in double quotes, with its
/// quotes doubled, when it holds a comma, a quote, a CR or a LF, or is
/// empty (so an empty string differs from a null, an empty field).
pub fn write_field(out: &mut Vec<u8>, text: &[u8]) {
    let quoted = text.is_empty()
        || text
            .iter()
            .any(|b| matches!(b, b',' | b'"' | b'\r' | b'\n'));
    if !quoted {
        out.extend_from_slice(text);
        return;
    }
    out.push(b'"');
    for piece in text.split_inclusive(|&b| b == b'"') {
        out.extend_from_slice(piece);
        if piece.last() == Some(&b'"') {
            out.push(b'"');
        }
    }
    out.push(b'"');
}

/// Write a header name: quoted only when it needs to be (an empty name
/// too).
pub fn write_name(out: &mut Vec<u8>, name: &str) {
    write_field(out, name.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn float(x: f64, width: FloatWidth) -> String {
        let mut out = Vec::new();
        write_float(&mut out, x, width);
        String::from_utf8(out).unwrap()
    }

    /// Expected strings: `numpy.array([...], dtype).astype(str)` with
    /// NumPy 2.4.6 (what pandas 3.1.1's `to_csv` writes).
    #[test]
    fn floats_are_written_as_numpy_prints_them() {
        let f64_cases = [
            (1e300, "1e+300"),
            (1.5e-5, "1.5e-05"),
            (1e-4, "0.0001"),
            (9.99e-5, "9.99e-05"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (9999999999999998.0, "9999999999999998.0"),
            (0.1, "0.1"),
            (-0.0, "-0.0"),
            (3.0, "3.0"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, ""),
            (123456789.123, "123456789.123"),
            (2.5e-310, "2.5e-310"),
            (0.30000000000000004, "0.30000000000000004"),
            (1.2345e-4, "0.00012345"),
        ];
        for (x, want) in f64_cases {
            assert_eq!(float(x, FloatWidth::F64), want, "{x:e}");
        }
        let f32_cases: [(f32, &str); 14] = [
            (1e7, "1e+07"),
            (9999999.0, "9.999999e+06"),
            (16777216.0, "1.6777216e+07"),
            (12345678.0, "1.2345678e+07"),
            (1.5e-4, "0.00015"),
            (1e-4, "1e-04"),
            (0.00010001, "0.00010001"),
            (1.23456, "1.23456"),
            (0.1, "0.1"),
            (1e-5, "1e-05"),
            (65504.0, "65504.0"),
            (999999.94, "999999.94"),
            (1e6, "1e+06"),
            (123456789.123, "1.2345679e+08"),
        ];
        for (x, want) in f32_cases {
            assert_eq!(float(f64::from(x), FloatWidth::F32), want, "{x:e}");
        }
    }

    fn time(value: i64, unit: arrow_schema::TimeUnit) -> (String, TimeResolution) {
        let per = nanos_per_unit(unit);
        let resolution = time_resolution(value, per);
        let mut out = Vec::new();
        write_time(&mut out, value, per, resolution);
        (String::from_utf8(out).unwrap(), resolution)
    }

    /// Expected strings: pandas 3.1.1's `Series(values.view("M8[unit]")).to_csv()`.
    #[test]
    fn timestamps_are_written_as_pandas_writes_them() {
        use arrow_schema::TimeUnit::*;
        assert_eq!(time(86_400, Second).0, "1970-01-02");
        assert_eq!(time(1, Second).0, "1970-01-01 00:00:01");
        assert_eq!(time(86_400, Millisecond).0, "1970-01-01 00:01:26.400");
        assert_eq!(time(1, Millisecond).0, "1970-01-01 00:00:00.001");
        assert_eq!(time(-1, Millisecond).0, "1969-12-31 23:59:59.999");
        assert_eq!(time(86_400, Microsecond).0, "1970-01-01 00:00:00.086400");
        assert_eq!(time(1_000, Microsecond).0, "1970-01-01 00:00:00.001");
        assert_eq!(time(1, Nanosecond).0, "1970-01-01 00:00:00.000000001");
        assert_eq!(time(3_600_000_000_000, Nanosecond).0, "1970-01-01 01:00:00");
        assert_eq!(time(253_402_300_799, Second).0, "9999-12-31 23:59:59");
        assert_eq!(time(-94_608_000_000, Second).0, "-1029-12-29");
        assert_eq!(
            time(1_600_000_002_000, Millisecond),
            ("2020-09-13 12:26:42".into(), TimeResolution::Second)
        );
        // A column at a finer resolution than a value needs: zeros.
        let mut out = Vec::new();
        write_time(&mut out, 0, 1_000_000, TimeResolution::Milli);
        assert_eq!(out, b"1970-01-01 00:00:00.000");
        for r in [
            TimeResolution::Day,
            TimeResolution::Milli,
            TimeResolution::Micro,
            TimeResolution::Nano,
        ] {
            let (mut at_r, mut at_s) = (Vec::new(), Vec::new());
            write_time(&mut at_r, 1_234_567, 1, r);
            write_time(&mut at_s, 1_234_567, 1, TimeResolution::Second);
            assert_eq!(
                at_r.len() as i64 - at_s.len() as i64,
                r.extra_len(),
                "{r:?}"
            );
        }
    }

    #[test]
    fn bytes_are_written_as_python_reprs() {
        let repr = |b: &[u8]| {
            let mut out = Vec::new();
            write_bytes_repr(&mut out, b);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(repr(b"\x02\x00\xff"), r"b'\x02\x00\xff'");
        assert_eq!(repr(b"\n\x00\xff"), r"b'\n\x00\xff'");
        assert_eq!(repr(b""), "b''");
        assert_eq!(repr(b"it's"), "b\"it's\"");
        assert_eq!(repr(b"'\""), r#"b'\'"'"#);
        assert_eq!(repr(b"a\\b\t\r\x7f"), r"b'a\\b\t\r\x7f'");
    }

    #[test]
    fn fields_are_quoted_only_when_needed() {
        let field = |t: &str| {
            let mut out = Vec::new();
            write_field(&mut out, t.as_bytes());
            String::from_utf8(out).unwrap()
        };
        assert_eq!(field("alpha"), "alpha");
        assert_eq!(field("héllo ✓ 日本"), "héllo ✓ 日本");
        assert_eq!(field(" padded "), " padded ");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("line1\nline2"), "\"line1\nline2\"");
        assert_eq!(field("cr\r\nlf"), "\"cr\r\nlf\"");
        assert_eq!(field("\""), "\"\"\"\"");
        assert_eq!(field(""), "\"\"");
    }
}
