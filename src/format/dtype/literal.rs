//! The Python literals structured dtypes are written in (`str(dtype)` is
//! Python source): strings in either quote with Python's escapes,
//! non-negative integers, `True`/`False`/`None`, and lists, tuples and
//! dicts of those, with optional trailing commas. Nesting deeper than
//! [`MAX_DEPTH`] is refused before it is read, so no input recurses far.

use super::model::{DtypeError, MAX_DEPTH};

/// One Python value and where it starts in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Located {
    /// Byte offset of its first character.
    pub at: usize,
    /// The value.
    pub value: Literal,
}

/// One Python value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Literal {
    /// A string (`'a'`, `"it's"`).
    Str(String),
    /// A non-negative integer.
    Int(u64),
    /// `True` or `False`.
    Bool(bool),
    /// `None`.
    None,
    /// `[...]`.
    List(Vec<Located>),
    /// `(...)` with at least one comma (`(2,)`), or `()`.
    Tuple(Vec<Located>),
    /// `{key: value, ...}`, in the order written.
    Dict(Vec<(Located, Located)>),
}

/// Read `text` as exactly one literal (surrounding whitespace allowed).
pub(super) fn parse(text: &str) -> Result<Located, DtypeError> {
    let mut reader = Reader { text, at: 0 };
    let value = reader.value(0)?;
    reader.skip_space();
    if reader.at != text.len() {
        return Err(reader.error("the end"));
    }
    Ok(value)
}

struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl Reader<'_> {
    fn error(&self, what: &'static str) -> DtypeError {
        DtypeError::new(self.at, what)
    }

    fn peek(&self) -> Option<char> {
        self.text[self.at..].chars().next()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += c.len_utf8();
        Some(c)
    }

    fn skip_space(&mut self) {
        while self
            .peek()
            .is_some_and(|c| matches!(c, ' ' | '\t' | '\n' | '\r'))
        {
            self.at += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Located, DtypeError> {
        self.skip_space();
        let at = self.at;
        let value = match self.peek() {
            Some(q @ ('\'' | '"')) => self.string(q)?,
            Some('[') => Literal::List(self.items(depth, ']')?.0),
            Some('(') => return self.tuple(depth),
            Some('{') => self.dict(depth)?,
            Some('0'..='9') => self.int()?,
            Some(c) if c.is_ascii_alphabetic() => self.word()?,
            _ => return Err(self.error("a Python literal")),
        };
        Ok(Located { at, value })
    }

    /// Comma-separated values up to `close` (the opening bracket is next),
    /// and whether they ended with a comma (or were none).
    fn items(&mut self, depth: usize, close: char) -> Result<(Vec<Located>, bool), DtypeError> {
        if depth >= MAX_DEPTH {
            return Err(self.error("less nesting"));
        }
        self.at += 1;
        let mut items = Vec::new();
        loop {
            self.skip_space();
            if self.peek() == Some(close) {
                self.at += 1;
                return Ok((items, true));
            }
            items.push(self.value(depth + 1)?);
            self.skip_space();
            match self.next() {
                Some(',') => {}
                Some(c) if c == close => return Ok((items, false)),
                _ => return Err(self.error("a comma or a closing bracket")),
            }
        }
    }

    /// `(a, b)`, `(a,)` or `()`; `(a)` is `a` in Python.
    fn tuple(&mut self, depth: usize) -> Result<Located, DtypeError> {
        let at = self.at;
        let (mut items, comma) = self.items(depth, ')')?;
        match items.pop() {
            Some(only) if items.is_empty() && !comma => Ok(only),
            last => {
                items.extend(last);
                Ok(Located {
                    at,
                    value: Literal::Tuple(items),
                })
            }
        }
    }

    fn dict(&mut self, depth: usize) -> Result<Literal, DtypeError> {
        if depth >= MAX_DEPTH {
            return Err(self.error("less nesting"));
        }
        self.at += 1;
        let mut entries = Vec::new();
        loop {
            self.skip_space();
            if self.peek() == Some('}') {
                self.at += 1;
                return Ok(Literal::Dict(entries));
            }
            let key = self.value(depth + 1)?;
            self.skip_space();
            if self.next() != Some(':') {
                return Err(self.error("a colon"));
            }
            entries.push((key, self.value(depth + 1)?));
            self.skip_space();
            match self.next() {
                Some(',') => {}
                Some('}') => return Ok(Literal::Dict(entries)),
                _ => return Err(self.error("a comma or a closing brace")),
            }
        }
    }

    fn int(&mut self) -> Result<Literal, DtypeError> {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        self.text[start..self.at]
            .parse()
            .map(Literal::Int)
            .map_err(|_| DtypeError::new(start, "an integer below 2^64"))
    }

    fn word(&mut self) -> Result<Literal, DtypeError> {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric()) {
            self.at += 1;
        }
        match &self.text[start..self.at] {
            "True" => Ok(Literal::Bool(true)),
            "False" => Ok(Literal::Bool(false)),
            "None" => Ok(Literal::None),
            _ => Err(DtypeError::new(start, "True, False or None")),
        }
    }

    /// A string in `quote`s with Python's escapes (the quote is next).
    fn string(&mut self, quote: char) -> Result<Literal, DtypeError> {
        let open = self.at;
        self.at += 1;
        let mut out = String::new();
        loop {
            match self.next() {
                None | Some('\n') => return Err(DtypeError::new(open, "a closed string")),
                Some(c) if c == quote => return Ok(Literal::Str(out)),
                Some('\\') => self.escape(&mut out)?,
                Some(c) => out.push(c),
            }
        }
    }

    /// The escape after a backslash, appended to `out`.
    fn escape(&mut self, out: &mut String) -> Result<(), DtypeError> {
        let at = self.at;
        let c = self.next().ok_or(DtypeError::new(at, "an escape"))?;
        let simple = match c {
            '\\' | '\'' | '"' => Some(c),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'f' => Some('\x0c'),
            'v' => Some('\x0b'),
            '\n' => return Ok(()),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            return Ok(());
        }
        let digits = match c {
            'x' => 2,
            'u' => 4,
            'U' => 8,
            _ => {
                // Python keeps an unknown escape as written.
                out.push('\\');
                out.push(c);
                return Ok(());
            }
        };
        let hex = self
            .text
            .get(self.at..self.at + digits)
            .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or(DtypeError::new(at, "hex digits"))?;
        self.at += digits;
        let point = u32::from_str_radix(hex, 16).map_err(|_| DtypeError::new(at, "hex digits"))?;
        out.push(char::from_u32(point).ok_or(DtypeError::new(at, "a Unicode scalar value"))?);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value without positions, for comparing.
    fn plain(lit: &Located) -> String {
        match &lit.value {
            Literal::Str(s) => format!("{s:?}"),
            Literal::Int(n) => n.to_string(),
            Literal::Bool(b) => b.to_string(),
            Literal::None => "None".into(),
            Literal::List(items) => format!("[{}]", join(items)),
            Literal::Tuple(items) => format!("({})", join(items)),
            Literal::Dict(entries) => {
                let e: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("{}: {}", plain(k), plain(v)))
                    .collect();
                format!("{{{}}}", e.join(" "))
            }
        }
    }

    fn join(items: &[Located]) -> String {
        items.iter().map(plain).collect::<Vec<_>>().join(" ")
    }

    fn read(text: &str) -> String {
        plain(&parse(text).unwrap_or_else(|e| panic!("{text}: {e}")))
    }

    #[test]
    fn reads_what_numpy_writes() {
        assert_eq!(
            read("[('a', '<i4'), ('b', '<f8', (2, 3))]"),
            r#"[("a" "<i4") ("b" "<f8" (2 3))]"#
        );
        assert_eq!(read("('<i4', (2,))"), r#"("<i4" (2))"#);
        assert_eq!(
            read("{'names': ['a'], 'itemsize': 16, 'aligned': True, 'x': None}"),
            r#"{"names": ["a"] "itemsize": 16 "aligned": true "x": None}"#
        );
        assert_eq!(read(" [ ] "), "[]");
        assert_eq!(read("[1,]"), "[1]");
        assert_eq!(read("()"), "()");
        assert_eq!(read("(7)"), "7", "no comma: no tuple");
        assert_eq!(read("(7 , )"), "(7)");
        assert_eq!(read("((1,))"), "(1)", "parentheses around a tuple");
        let Literal::List(items) = parse("['a', \"b\"]").unwrap().value else {
            panic!()
        };
        assert_eq!((items[0].at, items[1].at), (1, 6));
    }

    #[test]
    fn strings_have_python_escapes() {
        let text = |lit: &str| match parse(lit).unwrap().value {
            Literal::Str(s) => s,
            other => panic!("{other:?}"),
        };
        assert_eq!(text(r#""it's""#), "it's");
        assert_eq!(text(r#"'x"y\''"#), "x\"y'");
        assert_eq!(text(r"'a\\b\n\t\x41\u00e9\U0001f600'"), "a\\b\n\tAé😀");
        assert_eq!(text(r"'\q'"), "\\q");
        assert_eq!(text("'é'"), "é");
    }

    #[test]
    fn malformed_literals_are_refused() {
        for bad in [
            "",
            "[",
            "]",
            "[1 2]",
            "[1,,]",
            "(1",
            "{'a' 1}",
            "{'a': 1",
            "'abc",
            "'a\nb'",
            r"'\x4'",
            r"'\ud800'",
            r"'\U00110000'",
            "Yes",
            "-1",
            "1.5",
            "[1] 2",
            "99999999999999999999",
            "{,}",
            "[,]",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(parse(&deep).is_err());
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(parse(&ok).is_ok());
        assert!(parse(&"(".repeat(100_000)).is_err());
        assert!(parse(&"{'a':".repeat(100_000)).is_err());
    }
}
