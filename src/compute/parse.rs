//! Expression text to a syntax tree: a tokenizer and a precedence-climbing
//! parser over Python's operator grammar, the subset python-blosc2 accepts
//! for elementwise expressions.
//!
//! Hostile text is bounded: the parser recurses only once per nesting level
//! (parentheses, call arguments, unary operators, exponents) and stops with
//! [`ComputeError::TooDeep`] past [`MAX_DEPTH`]; it stops with
//! [`ComputeError::TooManyTerms`] once [`MAX_NODES`] nodes exist, so neither
//! the stack nor the heap grows with the length of the text beyond that.
//!
//! Precedence, loosest first, as Python: a single comparison (`<` `<=` `>`
//! `>=` `==` `!=`); `|`; `^`; `&`; `<<` `>>`; `+` `-`; `*` `/` `//` `%`;
//! unary `-` `+` `~`; `**` (right-associative, its exponent may be unary).
//! Refused because python-blosc2 reads them differently from Python:
//! chained comparisons (`a < b < c` is `(a < b) < c` there) and a unary
//! operator on an unparenthesized power (`-a**2` is `(-a)**2` there).

use super::error::ComputeError;

/// Deepest nesting accepted (parentheses, calls, unary operators, powers).
pub const MAX_DEPTH: usize = 64;
/// Most syntax-tree nodes accepted (operands, literals, operators, calls).
pub const MAX_NODES: usize = 2048;

/// Index of a node in [`Ast::nodes`].
pub type NodeId = usize;

/// A literal as written, before typing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Literal {
    /// A Python int (any size that fits 128 bits).
    Int(i128),
    /// A Python float (including `nan` and `inf`).
    Float(f64),
    /// An imaginary literal `2j` (real part 0).
    Imag(f64),
}

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
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
}

/// Unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Pos,
    Invert,
}

/// One node of the syntax tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Lit(Literal),
    /// An operand or constant name, with its byte offset.
    Name(String, usize),
    Unary(UnOp, NodeId),
    Binary(BinOp, NodeId, NodeId),
    /// A function call: name, arguments, byte offset of the name.
    Call(String, Vec<NodeId>, usize),
}

/// A parsed expression: nodes in creation order (children before parents),
/// the root last.
#[derive(Debug, Clone)]
pub struct Ast {
    pub nodes: Vec<Node>,
    pub root: NodeId,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(Literal),
    Name(String),
    Op(&'static str),
    LParen,
    RParen,
    Comma,
    Dot,
    LBracket,
    End,
}

struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
}

const OPS: [&str; 22] = [
    "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "+", "-", "*", "/", "%", "<", ">", "&", "|",
    "^", "~", "=", "!", ":",
];

impl<'a> Lexer<'a> {
    fn syntax(&self, at: usize, what: impl Into<String>) -> ComputeError {
        ComputeError::Syntax {
            at,
            what: what.into(),
        }
    }

    /// The next token and its byte offset.
    fn next(&mut self) -> Result<(Tok, usize), ComputeError> {
        while self.pos < self.s.len() && matches!(self.s[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
        let start = self.pos;
        let Some(&c) = self.s.get(self.pos) else {
            return Ok((Tok::End, start));
        };
        if c.is_ascii_digit()
            || (c == b'.' && self.s.get(self.pos + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            return self.number().map(|t| (t, start));
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            while self.pos < self.s.len()
                && (self.s[self.pos].is_ascii_alphanumeric() || self.s[self.pos] == b'_')
            {
                self.pos += 1;
            }
            let name = std::str::from_utf8(&self.s[start..self.pos])
                .expect("ASCII")
                .to_string();
            return Ok((Tok::Name(name), start));
        }
        let single = match c {
            b'(' => Some(Tok::LParen),
            b')' => Some(Tok::RParen),
            b',' => Some(Tok::Comma),
            b'.' => Some(Tok::Dot),
            b'[' => Some(Tok::LBracket),
            _ => None,
        };
        if let Some(t) = single {
            self.pos += 1;
            return Ok((t, start));
        }
        for op in OPS {
            if self.s[self.pos..].starts_with(op.as_bytes()) {
                self.pos += op.len();
                return match op {
                    "!" | ":" => Err(self.syntax(start, format!("unexpected {op:?}"))),
                    _ => Ok((Tok::Op(op), start)),
                };
            }
        }
        Err(self.syntax(start, "unexpected character"))
    }

    /// A Python numeric literal: decimal, hex, octal or binary int (with `_`
    /// separators), float with optional exponent, optional `j` suffix.
    fn number(&mut self) -> Result<Tok, ComputeError> {
        let start = self.pos;
        let s = self.s;
        let radix = if s[start] == b'0'
            && s.get(start + 1)
                .is_some_and(|c| matches!(c | 0x20, b'x' | b'o' | b'b'))
        {
            match s[start + 1] | 0x20 {
                b'x' => 16,
                b'o' => 8,
                _ => 2,
            }
        } else {
            10
        };
        if radix != 10 {
            self.pos += 2;
            let digits_start = self.pos;
            while self.pos < s.len() && (s[self.pos].is_ascii_alphanumeric() || s[self.pos] == b'_')
            {
                self.pos += 1;
            }
            let text: String = s[digits_start..self.pos]
                .iter()
                .filter(|&&c| c != b'_')
                .map(|&c| c as char)
                .collect();
            return i128::from_str_radix(&text, radix)
                .map(|v| Tok::Num(Literal::Int(v)))
                .map_err(|_| {
                    ComputeError::Literal(String::from_utf8_lossy(&s[start..self.pos]).into_owned())
                });
        }
        let mut is_float = false;
        let digits = |p: &mut usize| {
            while *p < s.len() && (s[*p].is_ascii_digit() || s[*p] == b'_') {
                *p += 1;
            }
        };
        digits(&mut self.pos);
        if self.pos < s.len() && s[self.pos] == b'.' {
            is_float = true;
            self.pos += 1;
            digits(&mut self.pos);
        }
        if self.pos < s.len() && (s[self.pos] | 0x20) == b'e' {
            let mut p = self.pos + 1;
            if p < s.len() && (s[p] == b'+' || s[p] == b'-') {
                p += 1;
            }
            if p < s.len() && s[p].is_ascii_digit() {
                digits(&mut p);
                self.pos = p;
                is_float = true;
            }
        }
        let text: String = s[start..self.pos]
            .iter()
            .filter(|&&c| c != b'_')
            .map(|&c| c as char)
            .collect();
        let end = self.pos;
        let bad = || ComputeError::Literal(String::from_utf8_lossy(&s[start..end]).into_owned());
        if self.pos < s.len() && (s[self.pos] | 0x20) == b'j' {
            self.pos += 1;
            return text
                .parse::<f64>()
                .map(|v| Tok::Num(Literal::Imag(v)))
                .map_err(|_| bad());
        }
        if self.pos < s.len() && (s[self.pos].is_ascii_alphabetic() || s[self.pos] == b'_') {
            return Err(self.syntax(self.pos, "letter after a number"));
        }
        if is_float {
            text.parse::<f64>()
                .map(|v| Tok::Num(Literal::Float(v)))
                .map_err(|_| bad())
        } else {
            text.parse::<i128>()
                .map(|v| Tok::Num(Literal::Int(v)))
                .map_err(|_| bad())
        }
    }
}

struct Parser<'a> {
    lex: Lexer<'a>,
    tok: Tok,
    at: usize,
    nodes: Vec<Node>,
}

/// Reductions, linear algebra, constructors and shape functions: valid
/// python-blosc2 but not elementwise.
pub(crate) fn not_elementwise(name: &str) -> bool {
    const NAMES: &[&str] = &[
        // reducers
        "sum",
        "prod",
        "min",
        "max",
        "std",
        "mean",
        "var",
        "any",
        "all",
        "count_nonzero",
        "argmax",
        "argmin",
        "cumulative_sum",
        "cumulative_prod",
        "cumsum",
        "cumprod",
        // linear algebra
        "concat",
        "diagonal",
        "expand_dims",
        "matmul",
        "matrix_transpose",
        "outer",
        "permute_dims",
        "squeeze",
        "stack",
        "tensordot",
        "transpose",
        "vecdot",
        "T",
        "mT",
        // constructors and shape changes
        "asarray",
        "arange",
        "copy",
        "linspace",
        "fromiter",
        "zeros",
        "ones",
        "empty",
        "full",
        "frombuffer",
        "full_like",
        "zeros_like",
        "ones_like",
        "empty_like",
        "eye",
        "nans",
        "ndarray_from_cframe",
        "uninit",
        "meshgrid",
        "reshape",
        "broadcast_to",
        "slice",
    ];
    NAMES.contains(&name)
}

impl<'a> Parser<'a> {
    fn bump(&mut self) -> Result<(), ComputeError> {
        let (t, at) = self.lex.next()?;
        self.tok = t;
        self.at = at;
        Ok(())
    }

    fn push(&mut self, n: Node) -> Result<NodeId, ComputeError> {
        if self.nodes.len() >= MAX_NODES {
            return Err(ComputeError::TooManyTerms(MAX_NODES));
        }
        self.nodes.push(n);
        Ok(self.nodes.len() - 1)
    }

    fn syntax(&self, what: impl Into<String>) -> ComputeError {
        ComputeError::Syntax {
            at: self.at,
            what: what.into(),
        }
    }

    fn deeper(depth: usize) -> Result<usize, ComputeError> {
        if depth >= MAX_DEPTH {
            Err(ComputeError::TooDeep(MAX_DEPTH))
        } else {
            Ok(depth + 1)
        }
    }

    /// expression := bits [compare bits]
    fn expr(&mut self, depth: usize) -> Result<NodeId, ComputeError> {
        let depth = Self::deeper(depth)?;
        let left = self.binary(1, depth)?;
        let Some(op) = self.compare_op() else {
            return Ok(left);
        };
        self.bump()?;
        let right = self.binary(1, depth)?;
        if self.compare_op().is_some() {
            return Err(ComputeError::Unsupported(
                "chained comparison (python-blosc2 reads a < b < c as (a < b) < c, Python as (a < b) and (b < c))".into(),
            ));
        }
        self.push(Node::Binary(op, left, right))
    }

    fn compare_op(&self) -> Option<BinOp> {
        match self.tok {
            Tok::Op("<") => Some(BinOp::Lt),
            Tok::Op("<=") => Some(BinOp::Le),
            Tok::Op(">") => Some(BinOp::Gt),
            Tok::Op(">=") => Some(BinOp::Ge),
            Tok::Op("==") => Some(BinOp::Eq),
            Tok::Op("!=") => Some(BinOp::Ne),
            _ => None,
        }
    }

    fn binary_op(&self) -> Option<(BinOp, u8)> {
        let Tok::Op(op) = self.tok else { return None };
        Some(match op {
            "|" => (BinOp::Or, 1),
            "^" => (BinOp::Xor, 2),
            "&" => (BinOp::And, 3),
            "<<" => (BinOp::Shl, 4),
            ">>" => (BinOp::Shr, 4),
            "+" => (BinOp::Add, 5),
            "-" => (BinOp::Sub, 5),
            "*" => (BinOp::Mul, 6),
            "/" => (BinOp::Div, 6),
            "//" => (BinOp::FloorDiv, 6),
            "%" => (BinOp::Mod, 6),
            _ => return None,
        })
    }

    /// Precedence climbing over the left-associative binary operators: one
    /// recursion per precedence level, loops along a chain.
    fn binary(&mut self, min_prec: u8, depth: usize) -> Result<NodeId, ComputeError> {
        let mut left = self.unary(depth)?;
        while let Some((op, prec)) = self.binary_op() {
            if prec < min_prec {
                break;
            }
            self.bump()?;
            let right = self.binary(prec + 1, depth)?;
            left = self.push(Node::Binary(op, left, right))?;
        }
        Ok(left)
    }

    fn unary(&mut self, depth: usize) -> Result<NodeId, ComputeError> {
        let op = match self.tok {
            Tok::Op("-") => UnOp::Neg,
            Tok::Op("+") => UnOp::Pos,
            Tok::Op("~") => UnOp::Invert,
            _ => return self.power(depth),
        };
        let depth = Self::deeper(depth)?;
        self.bump()?;
        let operand = self.unary(depth)?;
        // `(a**2)` comes back wrapped in a unary plus, so a bare power here
        // was written `-a**2`.
        if let Node::Binary(BinOp::Pow, ..) = self.nodes[operand] {
            return Err(ComputeError::Unsupported(
                "unary operator on a power (python-blosc2 reads -a**2 as (-a)**2, Python as -(a**2)): add parentheses".into(),
            ));
        }
        self.push(Node::Unary(op, operand))
    }

    /// power := primary ['**' unary]
    fn power(&mut self, depth: usize) -> Result<NodeId, ComputeError> {
        let base = self.primary(depth)?;
        if self.tok != Tok::Op("**") {
            return Ok(base);
        }
        let depth = Self::deeper(depth)?;
        self.bump()?;
        let exp = self.unary(depth)?;
        self.push(Node::Binary(BinOp::Pow, base, exp))
    }

    fn primary(&mut self, depth: usize) -> Result<NodeId, ComputeError> {
        let at = self.at;
        let node = match std::mem::replace(&mut self.tok, Tok::End) {
            Tok::Num(l) => {
                self.bump()?;
                self.push(Node::Lit(l))?
            }
            Tok::LParen => {
                self.bump()?;
                let inner = self.expr(depth)?;
                if self.tok != Tok::RParen {
                    return Err(self.syntax("expected ')'"));
                }
                self.bump()?;
                // A parenthesized power is a primary: wrap it so `-(a**2)` is
                // told apart from `-a**2`.
                if let Node::Binary(BinOp::Pow, ..) = self.nodes[inner] {
                    self.push(Node::Unary(UnOp::Pos, inner))?
                } else {
                    inner
                }
            }
            Tok::Name(name) => {
                self.bump()?;
                match name.as_str() {
                    "not" | "and" | "or" | "if" | "else" | "in" | "is" | "lambda" | "for" => {
                        return Err(ComputeError::Unsupported(format!(
                            "Python keyword {name:?}"
                        )));
                    }
                    _ => {}
                }
                if self.tok == Tok::LParen {
                    if not_elementwise(&name) {
                        return Err(ComputeError::NotElementwise(name));
                    }
                    let depth = Self::deeper(depth)?;
                    self.bump()?;
                    let mut args = Vec::new();
                    if self.tok != Tok::RParen {
                        loop {
                            if let Tok::Name(n) = &self.tok {
                                // keyword argument `axis=0`
                                let (save_pos, save_at) = (self.lex.pos, self.at);
                                let n = n.clone();
                                let (t, _) = self.lex.next()?;
                                if t == Tok::Op("=") {
                                    return Err(ComputeError::Unsupported(format!(
                                        "keyword argument {n:?} in {name}()"
                                    )));
                                }
                                self.lex.pos = save_pos;
                                self.at = save_at;
                            }
                            args.push(self.expr(depth)?);
                            if self.tok == Tok::Comma {
                                self.bump()?;
                                if self.tok == Tok::RParen {
                                    break;
                                }
                                continue;
                            }
                            break;
                        }
                    }
                    if self.tok != Tok::RParen {
                        return Err(self.syntax("expected ',' or ')'"));
                    }
                    self.bump()?;
                    self.push(Node::Call(name, args, at))?
                } else {
                    self.push(Node::Name(name, at))?
                }
            }
            Tok::End => {
                return Err(ComputeError::Syntax {
                    at,
                    what: "unexpected end of expression".into(),
                })
            }
            other => {
                return Err(ComputeError::Syntax {
                    at,
                    what: format!("unexpected {}", describe(&other)),
                })
            }
        };
        match &self.tok {
            Tok::Dot => {
                self.bump()?;
                let what = match &self.tok {
                    Tok::Name(n) if not_elementwise(n) => {
                        return Err(ComputeError::NotElementwise(n.clone()))
                    }
                    Tok::Name(n) => n.clone(),
                    _ => String::new(),
                };
                Err(ComputeError::Unsupported(format!(
                    "attribute or method access .{what}"
                )))
            }
            Tok::LBracket => Err(ComputeError::NotElementwise("indexing (a[...])".into())),
            _ => Ok(node),
        }
    }
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Num(_) => "number".into(),
        Tok::Name(n) => format!("name {n:?}"),
        Tok::Op(o) => format!("{o:?}"),
        Tok::LParen => "'('".into(),
        Tok::RParen => "')'".into(),
        Tok::Comma => "','".into(),
        Tok::Dot => "'.'".into(),
        Tok::LBracket => "'['".into(),
        Tok::End => "end".into(),
    }
}

/// Parse `text` into a syntax tree.
pub fn parse(text: &str) -> Result<Ast, ComputeError> {
    let mut p = Parser {
        lex: Lexer {
            s: text.as_bytes(),
            pos: 0,
        },
        tok: Tok::End,
        at: 0,
        nodes: Vec::new(),
    };
    p.bump()?;
    let root = p.expr(0)?;
    if p.tok != Tok::End {
        return Err(p.syntax(format!(
            "unexpected {} after the expression",
            describe(&p.tok)
        )));
    }
    Ok(Ast {
        nodes: p.nodes,
        root,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree as a fully parenthesized string, to assert precedence.
    fn show(ast: &Ast, id: NodeId) -> String {
        match &ast.nodes[id] {
            Node::Lit(Literal::Int(v)) => v.to_string(),
            Node::Lit(Literal::Float(v)) => format!("{v:?}"),
            Node::Lit(Literal::Imag(v)) => format!("{v:?}j"),
            Node::Name(n, _) => n.clone(),
            Node::Unary(op, a) => format!("{op:?}({})", show(ast, *a)),
            Node::Binary(op, a, b) => format!("{op:?}({}, {})", show(ast, *a), show(ast, *b)),
            Node::Call(n, args, _) => format!(
                "{n}[{}]",
                args.iter()
                    .map(|a| show(ast, *a))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    fn p(s: &str) -> String {
        let ast = parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        show(&ast, ast.root)
    }

    #[test]
    fn precedence_follows_python() {
        assert_eq!(p("a * 2 + sin(b) - c"), "Sub(Add(Mul(a, 2), sin[b]), c)");
        assert_eq!(p("a | b & c ^ d"), "Or(a, Xor(And(b, c), d))");
        assert_eq!(p("a + b < c * d"), "Lt(Add(a, b), Mul(c, d))");
        assert_eq!(p("a ** b ** c"), "Pow(a, Pow(b, c))");
        assert_eq!(p("2 ** -1"), "Pow(2, Neg(1))");
        assert_eq!(p("a // b % c / d"), "Div(Mod(FloorDiv(a, b), c), d)");
        assert_eq!(p("a << 1 + 2"), "Shl(a, Add(1, 2))");
        assert_eq!(p("-a + ~b"), "Add(Neg(a), Invert(b))");
        assert_eq!(p("-(a ** 2)"), "Neg(Pos(Pow(a, 2)))");
        assert_eq!(p("where(a > 0, a, 1.5e-3)"), "where[Gt(a, 0), a, 0.0015]");
        assert_eq!(
            p("0x1F + 1_000 + .5 + 2j"),
            "Add(Add(Add(31, 1000), 0.5), 2.0j)"
        );
        assert_eq!(p("f(a,)"), "f[a]");
    }

    #[test]
    fn refusals_are_typed() {
        assert!(matches!(
            parse("a < b < c"),
            Err(ComputeError::Unsupported(_))
        ));
        assert!(matches!(
            parse("-a ** 2"),
            Err(ComputeError::Unsupported(_))
        ));
        assert!(matches!(
            parse("-(a) ** 2"),
            Err(ComputeError::Unsupported(_))
        ));
        assert!(matches!(parse("a.sum()"), Err(ComputeError::NotElementwise(n)) if n == "sum"));
        assert!(matches!(
            parse("a[1:2]"),
            Err(ComputeError::NotElementwise(_))
        ));
        assert!(
            matches!(parse("sum(a, axis=0)"), Err(ComputeError::NotElementwise(n)) if n == "sum")
        );
        assert!(matches!(
            parse("where(a, b, c=1)"),
            Err(ComputeError::Unsupported(_))
        ));
        assert!(matches!(
            parse("a = 1"),
            Err(ComputeError::Syntax { at: 2, .. })
        ));
        assert!(matches!(parse("not a"), Err(ComputeError::Unsupported(_))));
        assert!(matches!(
            parse("a +"),
            Err(ComputeError::Syntax { at: 3, .. })
        ));
        assert!(matches!(
            parse("a $ b"),
            Err(ComputeError::Syntax { at: 2, .. })
        ));
        assert!(matches!(parse("(a"), Err(ComputeError::Syntax { .. })));
        assert!(matches!(
            parse("a b"),
            Err(ComputeError::Syntax { at: 2, .. })
        ));
        assert!(matches!(parse("1e"), Err(ComputeError::Syntax { .. })));
        assert!(matches!(
            parse("99999999999999999999999999999999999999999"),
            Err(ComputeError::Literal(_))
        ));
        assert!(matches!(parse(""), Err(ComputeError::Syntax { at: 0, .. })));
    }

    #[test]
    fn hostile_sizes_are_bounded() {
        let deep = format!("{}a{}", "(".repeat(1000), ")".repeat(1000));
        assert_eq!(parse(&deep).unwrap_err(), ComputeError::TooDeep(MAX_DEPTH));
        let unary = format!("{}a", "-".repeat(100_000));
        assert_eq!(parse(&unary).unwrap_err(), ComputeError::TooDeep(MAX_DEPTH));
        let pow = vec!["a"; 1000].join("**");
        assert_eq!(parse(&pow).unwrap_err(), ComputeError::TooDeep(MAX_DEPTH));
        let long = vec!["a"; 10_000].join(" + ");
        assert_eq!(
            parse(&long).unwrap_err(),
            ComputeError::TooManyTerms(MAX_NODES)
        );
        let calls = format!("{}a{}", "sin(".repeat(1000), ")".repeat(1000));
        assert_eq!(parse(&calls).unwrap_err(), ComputeError::TooDeep(MAX_DEPTH));
        // Just under the caps parses.
        let ok = format!(
            "{}a{}",
            "(".repeat(MAX_DEPTH - 2),
            ")".repeat(MAX_DEPTH - 2)
        );
        assert!(parse(&ok).is_ok());
    }
}
