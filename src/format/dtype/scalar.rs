//! Plain dtype strings, NumPy's `dtype.str`: a byte-order prefix (`<`, `>`,
//! `=`, `|` or none), a kind letter and a size (`<f8`, `|S5`, `<U8`), or a
//! datetime with its unit (`<M8[ns]`, `>m8[25s]`), or `?`.
//!
//! Only the sizes NumPy has are accepted (`<i3` is no dtype), so a size
//! read here is one NumPy would give the same string.

use super::model::{ByteOrder, DtypeError, ItemKind, Scalar, TimeBase, TimeUnit, MAX_ITEMSIZE};

/// The byte order `=`, `|` and no prefix mean for a value that has one.
const NATIVE: ByteOrder = if cfg!(target_endian = "big") {
    ByteOrder::Big
} else {
    ByteOrder::Little
};

/// Read `text` as a plain dtype string; `at` is where `text` starts in the
/// whole dtype string (for the error's position).
pub(super) fn parse(text: &str, at: usize) -> Result<Scalar, DtypeError> {
    let bad = |offset: usize, what| Err(DtypeError::new(at + offset, what));
    let (prefix, body) = match text.as_bytes().first() {
        Some(&p @ (b'<' | b'>' | b'=' | b'|')) => (Some(p), &text[1..]),
        _ => (None, text),
    };
    let start = usize::from(prefix.is_some());
    let Some(letter) = body.chars().next() else {
        return bad(start, "a kind letter");
    };
    let rest = &body[letter.len_utf8()..];
    let rest_at = start + letter.len_utf8();
    let (kind, size, unit) = match letter {
        '?' if rest.is_empty() => (ItemKind::Bool, 1, None),
        'M' | 'm' => {
            let Some(unit) = rest.strip_prefix('8') else {
                return bad(rest_at, "8 (datetimes are 8 bytes)");
            };
            let kind = if letter == 'M' {
                ItemKind::Datetime
            } else {
                ItemKind::Timedelta
            };
            (kind, 8, time_unit(unit, at + rest_at + 1)?)
        }
        'O' if rest.is_empty() || rest == "8" => (ItemKind::Object, 8, None),
        'b' | 'i' | 'u' | 'f' | 'c' | 'S' | 'V' | 'U' => {
            let Some(n) = count(rest) else {
                return bad(rest_at, "a size in decimal digits");
            };
            let kind = match letter {
                'b' => ItemKind::Bool,
                'i' => ItemKind::Int,
                'u' => ItemKind::UInt,
                'f' => ItemKind::Float,
                'c' => ItemKind::Complex,
                'S' => ItemKind::Bytes,
                'V' => ItemKind::Void,
                _ => ItemKind::Unicode,
            };
            let size = match kind {
                ItemKind::Unicode => n.saturating_mul(4),
                _ => n,
            };
            let fits = match kind {
                ItemKind::Bool => size == 1,
                ItemKind::Int | ItemKind::UInt => matches!(size, 1 | 2 | 4 | 8),
                ItemKind::Float => matches!(size, 2 | 4 | 8 | 16),
                ItemKind::Complex => matches!(size, 8 | 16 | 32),
                _ => size <= MAX_ITEMSIZE,
            };
            if !fits {
                return bad(rest_at, "a size NumPy has for this kind");
            }
            (kind, size, None)
        }
        _ => return bad(start, "a kind letter NumPy has"),
    };
    let has_order = match kind {
        ItemKind::Bool | ItemKind::Bytes | ItemKind::Void | ItemKind::Object => false,
        ItemKind::Int | ItemKind::UInt => size > 1,
        _ => true,
    };
    let order = match (has_order, prefix) {
        (false, _) => ByteOrder::NotApplicable,
        (true, Some(b'<')) => ByteOrder::Little,
        (true, Some(b'>')) => ByteOrder::Big,
        (true, _) => NATIVE,
    };
    Ok(Scalar {
        kind,
        size,
        order,
        unit,
    })
}

/// A size: 1 to 10 decimal digits, nothing else.
fn count(digits: &str) -> Option<u64> {
    let ok = (1..=10).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit());
    ok.then(|| digits.parse().ok()).flatten()
}

/// The unit after `M8` / `m8`: nothing or `[generic]` (NumPy's generic
/// unit: `None`), or `[<count>?<base>]`; `at` is where `text` starts.
fn time_unit(text: &str, at: usize) -> Result<Option<TimeUnit>, DtypeError> {
    if text.is_empty() {
        return Ok(None);
    }
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .ok_or(DtypeError::new(at, "a unit in brackets, or the end"))?;
    if inner == "generic" {
        return Ok(None);
    }
    let digits = inner.bytes().take_while(u8::is_ascii_digit).count();
    let count = match digits {
        0 => 1,
        _ => inner[..digits]
            .parse()
            .map_err(|_| DtypeError::new(at + 1, "a unit count below 2^32"))?,
    };
    let base = match &inner[digits..] {
        "Y" => TimeBase::Year,
        "M" => TimeBase::Month,
        "W" => TimeBase::Week,
        "D" => TimeBase::Day,
        "h" => TimeBase::Hour,
        "m" => TimeBase::Minute,
        "s" => TimeBase::Second,
        "ms" => TimeBase::Milli,
        "us" | "μs" => TimeBase::Micro,
        "ns" => TimeBase::Nano,
        "ps" => TimeBase::Pico,
        "fs" => TimeBase::Femto,
        "as" => TimeBase::Atto,
        _ => return Err(DtypeError::new(at + 1 + digits, "a datetime unit")),
    };
    Ok(Some(TimeUnit { count, base }))
}

impl TimeBase {
    /// The unit's name as NumPy writes it (`ns`, `D`).
    pub fn name(self) -> &'static str {
        match self {
            TimeBase::Year => "Y",
            TimeBase::Month => "M",
            TimeBase::Week => "W",
            TimeBase::Day => "D",
            TimeBase::Hour => "h",
            TimeBase::Minute => "m",
            TimeBase::Second => "s",
            TimeBase::Milli => "ms",
            TimeBase::Micro => "us",
            TimeBase::Nano => "ns",
            TimeBase::Pico => "ps",
            TimeBase::Femto => "fs",
            TimeBase::Atto => "as",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(text: &str) -> Scalar {
        parse(text, 0).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn every_kind_and_size() {
        let cases: &[(&str, ItemKind, &[u64])] = &[
            ("i", ItemKind::Int, &[1, 2, 4, 8]),
            ("u", ItemKind::UInt, &[1, 2, 4, 8]),
            ("f", ItemKind::Float, &[2, 4, 8, 16]),
            ("c", ItemKind::Complex, &[8, 16, 32]),
        ];
        for &(letter, kind, sizes) in cases {
            for n in 0..40u64 {
                let got = parse(&format!("<{letter}{n}"), 0);
                if sizes.contains(&n) {
                    let s = got.unwrap();
                    assert_eq!((s.kind, s.size, s.unit), (kind, n, None));
                } else {
                    assert!(got.is_err(), "{letter}{n}");
                }
            }
        }
        for (text, kind, size) in [
            ("|b1", ItemKind::Bool, 1),
            ("?", ItemKind::Bool, 1),
            ("<?", ItemKind::Bool, 1),
            ("|S5", ItemKind::Bytes, 5),
            ("S300", ItemKind::Bytes, 300),
            ("|V16", ItemKind::Void, 16),
            ("<U8", ItemKind::Unicode, 32),
            ("|S0", ItemKind::Bytes, 0),
            ("|O", ItemKind::Object, 8),
            ("O8", ItemKind::Object, 8),
            ("<M8", ItemKind::Datetime, 8),
            ("<m8[us]", ItemKind::Timedelta, 8),
            ("|S2147483647", ItemKind::Bytes, MAX_ITEMSIZE),
            ("<U536870911", ItemKind::Unicode, 2147483644),
        ] {
            let s = scalar(text);
            assert_eq!((s.kind, s.size), (kind, size), "{text}");
        }
    }

    #[test]
    fn byte_orders() {
        let order = |text: &str| scalar(text).order;
        assert_eq!(order("<f8"), ByteOrder::Little);
        assert_eq!(order(">f8"), ByteOrder::Big);
        assert_eq!(order("=f8"), NATIVE);
        assert_eq!(order("|i4"), NATIVE);
        assert_eq!(order("f8"), NATIVE);
        assert_eq!(order(">U3"), ByteOrder::Big);
        assert_eq!(order(">M8[s]"), ByteOrder::Big);
        for none in [">u1", "<i1", ">b1", "?", ">S3", "<V4", "|O", "|u1"] {
            assert_eq!(order(none), ByteOrder::NotApplicable, "{none}");
        }
        assert!(scalar(">i8").is_big_endian());
        assert!(!scalar(">i1").is_big_endian());
    }

    #[test]
    fn datetime_units() {
        let unit = |text: &str| scalar(text).unit;
        let u = |count, base| Some(TimeUnit { count, base });
        assert_eq!(unit("<M8[ns]"), u(1, TimeBase::Nano));
        assert_eq!(unit(">M8[s]"), u(1, TimeBase::Second));
        assert_eq!(unit("<M8[2s]"), u(2, TimeBase::Second));
        assert_eq!(unit("<M8[25ns]"), u(25, TimeBase::Nano));
        assert_eq!(unit("<M8[D]"), u(1, TimeBase::Day));
        assert_eq!(unit("<m8[M]"), u(1, TimeBase::Month));
        assert_eq!(unit("<m8[m]"), u(1, TimeBase::Minute));
        assert_eq!(unit("<M8[μs]"), u(1, TimeBase::Micro));
        assert_eq!(unit("<M8"), None);
        assert_eq!(unit("<M8[generic]"), None);
        for base in [
            "Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as",
        ] {
            assert_eq!(
                scalar(&format!("<M8[{base}]")).unit.unwrap().base.name(),
                base
            );
        }
    }

    #[test]
    fn malformed_strings_are_refused() {
        for bad in [
            "",
            "<",
            "|",
            "<<f8",
            "<i3",
            "<f",
            "<f+8",
            "<f 8",
            " <f8",
            "<f8 ",
            "<b2",
            "<?1",
            "<M4",
            "<M8[",
            "<M8[]",
            "<M8[B]",
            "<M8[2]",
            "<M8[ns ]",
            "<M8[1 s]",
            "<M8ns",
            "<M8[ns]x",
            "<U536870912",
            "|S2147483648",
            "|S12345678901",
            "float64",
            "d",
            "<x4",
            "<é4",
            "<O4",
            "<M8[99999999999s]",
        ] {
            assert!(parse(bad, 0).is_err(), "{bad:?}");
        }
        assert_eq!(parse("<i3", 5).unwrap_err().at, 7);
    }
}
