//! A compiled saved expression: its dtype and shape, which region of each
//! operand a region of the result needs, and the evaluation of a region
//! from those operands' bytes (see the folder's face, [`super`], for the
//! rules it follows and its bounds).

use super::broadcast::{self, MAX_NDIM};
use super::dtype::{ByteOrder, DType};
use super::error::ComputeError;
use super::eval;
use super::eval::Val;
use super::parse;
use super::typed;
use super::typed::{Step, Typing};
use super::values;
use super::values::Col;

/// Most elements one `evaluate` call computes (2^24, 16 Mi): its working
/// memory is a few columns of this many items (8 bytes each for integers
/// and float64, 16 for complex128), so at most a few hundred MB. Blocks are
/// far smaller; a caller with a larger region splits it.
pub const MAX_REGION_ELEMENTS: u64 = 1 << 24;

/// An operand as the expression sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperandInfo {
    /// numpy dtype string as stored, e.g. `"<f8"` or `">i2"`.
    pub dtype_str: String,
    /// Its shape (numpy order).
    pub shape: Vec<u64>,
}

#[derive(Debug, Clone)]
struct Operand {
    name: String,
    dtype: DType,
    order: ByteOrder,
    shape: Vec<u64>,
}

/// A compiled expression.
#[derive(Debug, Clone)]
pub struct Program {
    dtype: DType,
    shape: Vec<u64>,
    /// The operands the expression uses, in the caller's order.
    operands: Vec<Operand>,
    names: Vec<String>,
    steps: Vec<Step>,
    root: usize,
    last: Vec<usize>,
    /// Caller's operand index → index in `operands`.
    slot: Vec<Option<usize>>,
}

impl Program {
    /// Parse and type-check `expression` against the operands (name → info).
    pub fn compile(
        expression: &str,
        operands: &[(String, OperandInfo)],
    ) -> Result<Program, ComputeError> {
        let ast = parse::parse(expression)?;
        let parsed: Vec<Option<(DType, ByteOrder)>> = operands
            .iter()
            .map(|(_, info)| DType::parse(&info.dtype_str).ok())
            .collect();
        let names: Vec<(&str, Option<DType>)> = operands
            .iter()
            .zip(&parsed)
            .map(|((n, _), p)| (n.as_str(), p.map(|p| p.0)))
            .collect();
        // Name the stored dtype of an operand whose dtype is not computable.
        let name_dtype = |e: ComputeError| match e {
            ComputeError::DType(what) => {
                let name = what.strip_prefix("operand ").unwrap_or(&what);
                match operands.iter().find(|(n, _)| n == name) {
                    Some((n, info)) => {
                        ComputeError::DType(format!("{} (operand {n})", info.dtype_str))
                    }
                    None => ComputeError::DType(what),
                }
            }
            e => e,
        };
        let mut typed = typed::type_ast(&ast, &names, Typing::NUMPY).map_err(name_dtype)?;
        let result = typed.steps[typed.root].dtype;
        let has_f32 = typed
            .steps
            .iter()
            .any(|s| matches!(s.dtype, DType::F32 | DType::C64));
        if matches!(result, DType::F64 | DType::C128) && has_f32 && numexpr_functions_only(&ast) {
            // python-blosc2's own types for the float32 parts (see typed::Typing).
            let f64_source = ast.nodes.iter().any(|n| match n {
                parse::Node::Lit(parse::Literal::Float(_) | parse::Literal::Imag(_)) => true,
                parse::Node::Name(name, _) => names
                    .iter()
                    .any(|(n, d)| n == name && matches!(d, Some(DType::F64 | DType::C128))),
                _ => false,
            });
            if let Ok(mut own) = typed::type_ast(
                &ast,
                &names,
                Typing {
                    widen: f64_source,
                    narrow: true,
                    widen_int: true,
                },
            ) {
                own.cast_to(result);
                typed = own;
            }
        }
        let mut used = Vec::new();
        let mut slot = vec![None; operands.len()];
        for (i, ((name, info), p)) in operands.iter().zip(&parsed).enumerate() {
            if !typed.used[i] {
                continue;
            }
            let (dtype, order) = p.ok_or_else(|| ComputeError::DType(info.dtype_str.clone()))?;
            if info.shape.len() > MAX_NDIM {
                return Err(ComputeError::TooManyDims(info.shape.len()));
            }
            slot[i] = Some(used.len());
            used.push(Operand {
                name: name.clone(),
                dtype,
                order,
                shape: info.shape.clone(),
            });
        }
        let shape = broadcast::broadcast_shapes(used.iter().map(|o| o.shape.as_slice()))?;
        let last = eval::last_uses(&typed.steps, typed.root);
        Ok(Program {
            dtype: result,
            shape,
            names: used.iter().map(|o| o.name.clone()).collect(),
            operands: used,
            steps: typed.steps,
            root: typed.root,
            last,
            slot,
        })
    }

    /// The result dtype, as python-blosc2 reports it for the expression.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The broadcast result shape.
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// The operands the expression uses, in the order they were given to
    /// [`Program::compile`]: the order of `evaluate`'s inputs.
    pub fn operands(&self) -> &[String] {
        &self.names
    }

    /// For operand `i` (of [`Program::operands`]), the region of the operand
    /// (start, shape, in its own coordinates) that computing the result
    /// region `[start, start + shape)` reads. Broadcast axes (operand
    /// dimension 1) map to `[0, 1)`; result axes the operand lacks are
    /// dropped. `start` and `shape` should have the result's rank (missing
    /// trailing entries count as 0, which `evaluate` then refuses). Panics if
    /// `i` is not below `operands().len()`.
    pub fn operand_region(&self, i: usize, start: &[u64], shape: &[u64]) -> (Vec<u64>, Vec<u64>) {
        let n = self.shape.len();
        let pad = |v: &[u64]| {
            (0..n)
                .map(|k| v.get(k).copied().unwrap_or(0))
                .collect::<Vec<u64>>()
        };
        broadcast::operand_region(&self.operands[i].shape, &pad(start), &pad(shape))
    }

    fn check_region(&self, start: &[u64], shape: &[u64]) -> Result<u64, ComputeError> {
        let bad = || ComputeError::Region {
            start: start.to_vec(),
            shape: shape.to_vec(),
            result: self.shape.clone(),
        };
        if start.len() != self.shape.len() || shape.len() != self.shape.len() {
            return Err(bad());
        }
        for ((&s, &n), &d) in start.iter().zip(shape).zip(&self.shape) {
            if s.checked_add(n).is_none_or(|e| e > d) {
                return Err(bad());
            }
        }
        let n = elements(shape);
        if n > MAX_REGION_ELEMENTS {
            return Err(ComputeError::RegionTooLarge(n));
        }
        Ok(n)
    }

    /// Compute the result region `[start, start + shape)` into `out` (C
    /// order, little-endian, [`Program::dtype`]'s itemsize each).
    /// `inputs[i]` holds operand `i`'s values over
    /// `operand_region(i, start, shape)`, C order, in the operand's stored
    /// dtype and byte order.
    pub fn evaluate(
        &self,
        start: &[u64],
        shape: &[u64],
        inputs: &[&[u8]],
        out: &mut [u8],
    ) -> Result<(), ComputeError> {
        let n = self.check_region(start, shape)? as usize;
        if inputs.len() != self.operands.len() {
            return Err(ComputeError::InputCount {
                got: inputs.len(),
                expected: self.operands.len(),
            });
        }
        let expected = n * self.dtype.itemsize();
        if out.len() != expected {
            return Err(ComputeError::BufferLength {
                which: "output".into(),
                got: out.len(),
                expected,
            });
        }
        let mut regions = Vec::with_capacity(inputs.len());
        for (i, (op, bytes)) in self.operands.iter().zip(inputs).enumerate() {
            let (_, oshape) = self.operand_region(i, start, shape);
            let expected = usize::try_from(elements(&oshape))
                .ok()
                .and_then(|e| e.checked_mul(op.dtype.itemsize()))
                .unwrap_or(usize::MAX);
            if bytes.len() != expected {
                return Err(ComputeError::BufferLength {
                    which: format!("input {} ({})", i, op.name),
                    got: bytes.len(),
                    expected,
                });
            }
            regions.push(oshape);
        }
        if n == 0 {
            return Ok(());
        }
        let mut load = |caller_index: usize| -> Val {
            let i = self.slot[caller_index].expect("loads only used operands");
            let op = &self.operands[i];
            let col = values::load(inputs[i], op.dtype, op.order);
            let oshape = &regions[i];
            if elements(oshape) == 1 && n != 1 {
                return Val { col, scalar: true };
            }
            let same = oshape.len() == shape.len() && oshape == shape
                || elements(oshape) == n as u64
                    && shape[..shape.len() - oshape.len()].iter().all(|&d| d == 1);
            if same {
                return Val { col, scalar: false };
            }
            Val {
                col: expand_col(&col, oshape, shape),
                scalar: false,
            }
        };
        let val = eval::execute(&self.steps, self.root, &self.last, &mut load)?;
        values::store(&val.col, self.dtype, out);
        Ok(())
    }
}

/// Items in a region of this shape; no overflow whatever the shape (a zero
/// axis makes 0, and a product past u64 saturates, to be refused).
fn elements(shape: &[u64]) -> u64 {
    if shape.contains(&0) {
        0
    } else {
        shape.iter().fold(1u64, |a, &d| a.saturating_mul(d))
    }
}

fn expand_col(col: &Col, from: &[u64], to: &[u64]) -> Col {
    macro_rules! ex {
        ($variant:ident, $v:expr) => {{
            let mut out = Vec::new();
            broadcast::expand($v, from, to, &mut out);
            Col::$variant(out)
        }};
    }
    match col {
        Col::Bool(v) => ex!(Bool, v),
        Col::Int(v) => ex!(Int, v),
        Col::U64(v) => ex!(U64, v),
        Col::F32(v) => ex!(F32, v),
        Col::F64(v) => ex!(F64, v),
        Col::C64(v) => ex!(C64, v),
        Col::C128(v) => ex!(C128, v),
    }
}

/// The functions numexpr 2.14 evaluates itself. python-blosc2 hands an
/// expression to numexpr first and, when numexpr refuses it (any other
/// function, e.g. `reciprocal`, `square`, `clip`, `add`, `asin`), evaluates
/// it with numpy: numpy's types node by node, none of numexpr's float32
/// narrowing or float64 widening (see `typed::Typing`).
const NUMEXPR_FUNCTIONS: &[&str] = &[
    "abs",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "ceil",
    "conj",
    "copysign",
    "cos",
    "cosh",
    "exp",
    "expm1",
    "floor",
    "hypot",
    "imag",
    "isfinite",
    "isinf",
    "isnan",
    "log",
    "log10",
    "log1p",
    "log2",
    "maximum",
    "minimum",
    "nextafter",
    "real",
    "round",
    "sign",
    "signbit",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "trunc",
    "where",
];

/// Whether every function `ast` calls is one numexpr evaluates.
fn numexpr_functions_only(ast: &parse::Ast) -> bool {
    ast.nodes.iter().all(|n| match n {
        parse::Node::Call(name, ..) => NUMEXPR_FUNCTIONS.contains(&name.as_str()),
        _ => true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(dtype: &str, shape: &[u64]) -> OperandInfo {
        OperandInfo {
            dtype_str: dtype.into(),
            shape: shape.to_vec(),
        }
    }

    fn f64s(b: &[f64]) -> Vec<u8> {
        b.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn read_f64(b: &[u8]) -> Vec<f64> {
        b.chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    #[test]
    fn int64_plus_float32_is_computed_in_float64() {
        // numpy: int64 + float32 is float64, so 1 / (2 + b) keeps float64's
        // digits (compute oracle seed 15838, case 986).
        let ops = vec![
            ("a".to_string(), info("<i8", &[1])),
            ("b".to_string(), info("<f4", &[2])),
        ];
        let p = Program::compile("reciprocal((a + b))", &ops).unwrap();
        assert_eq!(p.dtype(), DType::F64);
        let a = 2i64.to_le_bytes().to_vec();
        let b: Vec<u8> = [-3.7409532f32, 0.5]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let mut out = vec![0u8; 16];
        p.evaluate(&[0], &[2], &[&a, &b], &mut out).unwrap();
        let want: Vec<f64> = [-3.7409532f32, 0.5]
            .iter()
            .map(|&x| 1.0 / (2.0 + x as f64))
            .collect();
        assert_eq!(read_f64(&out), want);
    }

    #[test]
    fn broadcast_evaluation_over_regions() {
        let ops = vec![
            ("a".to_string(), info("<f8", &[2, 3])),
            ("b".to_string(), info(">f8", &[3])),
            ("z".to_string(), info("<U8", &[9])),
        ];
        let p = Program::compile("a * b + 1.5", &ops).unwrap();
        assert_eq!(p.dtype(), DType::F64);
        assert_eq!(p.shape(), &[2, 3]);
        assert_eq!(p.operands(), &["a".to_string(), "b".to_string()]);
        let a = f64s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let b: Vec<u8> = [10.0f64, 20.0, 30.0]
            .iter()
            .flat_map(|x| x.to_be_bytes())
            .collect();
        let mut out = vec![0u8; 48];
        p.evaluate(&[0, 0], &[2, 3], &[&a, &b], &mut out).unwrap();
        assert_eq!(read_f64(&out), vec![11.5, 41.5, 91.5, 41.5, 101.5, 181.5]);
        // The region rows 1..2, columns 1..3.
        assert_eq!(
            p.operand_region(0, &[1, 1], &[1, 2]),
            (vec![1, 1], vec![1, 2])
        );
        assert_eq!(p.operand_region(1, &[1, 1], &[1, 2]), (vec![1], vec![2]));
        let mut out = vec![0u8; 16];
        p.evaluate(&[1, 1], &[1, 2], &[&f64s(&[5.0, 6.0]), &b[8..]], &mut out)
            .unwrap();
        assert_eq!(read_f64(&out), vec![101.5, 181.5]);
    }

    #[test]
    fn evaluate_checks_its_buffers() {
        let ops = vec![("a".to_string(), info("<i4", &[4]))];
        let p = Program::compile("a + 1", &ops).unwrap();
        let a = [0u8; 16];
        let mut out = [0u8; 16];
        assert!(p.evaluate(&[0], &[4], &[&a], &mut out).is_ok());
        assert!(matches!(
            p.evaluate(&[0], &[4], &[&a[..15]], &mut out),
            Err(ComputeError::BufferLength { .. })
        ));
        assert!(matches!(
            p.evaluate(&[0], &[4], &[&a], &mut out[..12]),
            Err(ComputeError::BufferLength { .. })
        ));
        assert!(matches!(
            p.evaluate(&[1], &[4], &[&a], &mut out),
            Err(ComputeError::Region { .. })
        ));
        assert!(matches!(
            p.evaluate(&[0, 0], &[4, 1], &[&a], &mut out),
            Err(ComputeError::Region { .. })
        ));
        assert!(matches!(
            p.evaluate(&[u64::MAX], &[4], &[&a], &mut out),
            Err(ComputeError::Region { .. })
        ));
        assert!(matches!(
            p.evaluate(&[0], &[4], &[], &mut out),
            Err(ComputeError::InputCount { .. })
        ));
        assert!(p.evaluate(&[2], &[0], &[&[]], &mut []).is_ok());
    }

    #[test]
    fn programs_are_shareable_and_regions_total() {
        fn shareable<T: Send + Sync>() {}
        shareable::<Program>();
        let ops = vec![("a".to_string(), info("<f8", &[2, 3]))];
        let p = Program::compile("a + 1", &ops).unwrap();
        assert_eq!(p.operand_region(0, &[1], &[]), (vec![1, 0], vec![0, 0]));
        let mut out = [0u8; 8];
        assert!(matches!(
            p.evaluate(&[1], &[1], &[&[0u8; 8]], &mut out),
            Err(ComputeError::Region { .. })
        ));
        let big = vec![("a".to_string(), info("<f8", &[1 << 25]))];
        let p = Program::compile("a * 2", &big).unwrap();
        assert!(matches!(
            p.evaluate(&[0], &[1 << 25], &[&[]], &mut []),
            Err(ComputeError::RegionTooLarge(_))
        ));
    }

    #[test]
    fn empty_regions_of_huge_shapes_do_not_overflow() {
        // b's region spans 2^80 items: counted without overflow, refused.
        let ops = vec![
            ("a".to_string(), info("<f8", &[1 << 40, 0, 1 << 40])),
            ("b".to_string(), info("<f8", &[1 << 40, 1, 1 << 40])),
        ];
        let p = Program::compile("a + b", &ops).unwrap();
        assert_eq!(p.shape(), &[1 << 40, 0, 1 << 40]);
        let r = p.evaluate(&[0, 0, 0], &[1 << 40, 0, 1 << 40], &[&[], &[]], &mut []);
        assert!(matches!(r, Err(ComputeError::BufferLength { .. })), "{r:?}");
        assert!(matches!(
            Program::compile("b", &ops),
            Err(ComputeError::TooLarge(_))
        ));
    }

    /// A poor man's fuzzer (cargo-fuzz is not always at hand): token soup
    /// from a fixed alphabet, compiled against operands of assorted dtypes
    /// and shapes, evaluated whenever it compiles. Nothing may panic, and a
    /// compiled program evaluates.
    #[test]
    fn token_soup_never_panics() {
        const TOKENS: &[&str] = &[
            "a", "b", "c", "d", "e", "g", "(", ")", ",", "+", "-", "*", "/", "//", "%", "**", "<",
            ">=", "==", "!=", "&", "|", "^", "~", "<<", ">>", "1", "0", "-1", "2.5", "1e308",
            "nan", "inf", "True", "3j", "300", "sin", "sqrt", "where", "maximum", "abs", "real",
            "arctan2", "floor", "isnan", "log1p", "clip", "conj", "square", "sign", "round",
        ];
        let ops = vec![
            ("a".to_string(), info("<f8", &[2, 3])),
            ("b".to_string(), info(">i2", &[3])),
            ("c".to_string(), info("|b1", &[2, 1])),
            ("d".to_string(), info("<c8", &[1, 3])),
            ("e".to_string(), info("<u8", &[])),
            ("g".to_string(), info("|i1", &[1])),
        ];
        let mut rng = crate::test_rng::Rng::new(0x2545_f491_4f6c_dd1d);
        let mut next = || rng.next_u64();
        let mut compiled = 0;
        for _ in 0..100_000 {
            let len = 1 + next() % 8;
            let text: Vec<&str> = (0..len)
                .map(|_| TOKENS[(next() % TOKENS.len() as u64) as usize])
                .collect();
            let text = text.join(" ");
            let Ok(p) = Program::compile(&text, &ops) else {
                continue;
            };
            compiled += 1;
            let shape = p.shape().to_vec();
            let start = vec![0; shape.len()];
            let inputs: Vec<Vec<u8>> = (0..p.operands().len())
                .map(|i| {
                    let info = &ops.iter().find(|(n, _)| *n == p.operands()[i]).unwrap().1;
                    let item = DType::parse(&info.dtype_str).unwrap().0.itemsize();
                    let n = elements(&p.operand_region(i, &start, &shape).1) as usize * item;
                    (0..n).map(|_| next() as u8).collect()
                })
                .collect();
            let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
            let mut out = vec![0u8; elements(&shape) as usize * p.dtype().itemsize()];
            let r = p.evaluate(&start, &shape, &refs, &mut out);
            assert!(r.is_ok(), "{text:?}: {r:?}");
        }
        assert!(compiled > 1000, "only {compiled} compiled");
    }

    #[test]
    fn compile_refusals() {
        let ops = vec![
            ("a".to_string(), info("<f8", &[1 << 30])),
            ("b".to_string(), info("<f8", &[1 << 30, 1])),
        ];
        assert!(matches!(
            Program::compile("a + b", &ops),
            Err(ComputeError::TooLarge(_))
        ));
        let ops = vec![
            ("a".to_string(), info("<f8", &[3])),
            ("b".to_string(), info("<f8", &[4])),
        ];
        assert!(matches!(
            Program::compile("a + b", &ops),
            Err(ComputeError::Broadcast(..))
        ));
        assert!(Program::compile("a + a", &ops).is_ok());
        let ops = vec![("s".to_string(), info("<U8", &[3]))];
        assert_eq!(
            Program::compile("s + 1", &ops).unwrap_err(),
            ComputeError::DType("<U8 (operand s)".into())
        );
        assert!(matches!(
            Program::compile("sum(a)", &ops),
            Err(ComputeError::NotElementwise(_))
        ));
    }

    #[test]
    fn float32_operands_widen_in_a_float64_result() {
        // sin(b) with b float32 in a float64 result is taken in float64.
        let ops = vec![
            ("a".to_string(), info("<f8", &[1])),
            ("b".to_string(), info("<f4", &[1])),
        ];
        let p = Program::compile("a + sin(b)", &ops).unwrap();
        let mut out = [0u8; 8];
        p.evaluate(
            &[0],
            &[1],
            &[&f64s(&[0.0]), &0.5f32.to_le_bytes()],
            &mut out,
        )
        .unwrap();
        assert_eq!(read_f64(&out), vec![0.479425538604203]);
        let p = Program::compile("sin(b)", &ops).unwrap();
        assert_eq!(p.dtype(), DType::F32);
        let mut out = [0u8; 4];
        p.evaluate(&[0], &[1], &[&0.5f32.to_le_bytes()], &mut out)
            .unwrap();
        assert_eq!(f32::from_le_bytes(out), 0.47942555);
    }

    /// An integer too large for float32 meeting float32 is float32 in
    /// python-blosc2 4.14.1, which reports float64 (probed: `i + b` with
    /// int32 `i` near 1e8 equals `float64(float32(i) + b)`, never the float64 sum).
    #[test]
    fn integers_meeting_float32_are_float32_under_a_float64_result() {
        let i = (1i32 << 24) + 1; // 16,777,217: not a float32
        let ops = vec![
            ("i".to_string(), info("<i4", &[1])),
            ("b".to_string(), info("<f4", &[1])),
            ("a".to_string(), info("<f8", &[1])),
        ];
        let run = |expr: &str, inputs: &[&[u8]]| {
            let p = Program::compile(expr, &ops).unwrap();
            assert_eq!(p.dtype(), DType::F64, "{expr}");
            let mut out = [0u8; 8];
            p.evaluate(&[0], &[1], inputs, &mut out).unwrap();
            read_f64(&out)[0]
        };
        let (ib, bb, ab) = (i.to_le_bytes(), 0.0f32.to_le_bytes(), 1.0f64.to_le_bytes());
        assert_eq!(run("i + b", &[&ib, &bb]), 16777216.0);
        // Also under a float64 operand: the int32 + float32 part stays float32.
        assert_eq!(run("(i + b) * a", &[&ib, &bb, &ab]), 16777216.0);
        assert_eq!(run("where(i > 0, i, b)", &[&ib, &bb]), 16777216.0);
        // A float64 operand or a float literal met directly keeps numpy's float64.
        assert_eq!(run("i + a", &[&ib, &ab]), 16777218.0);
        assert_eq!(run("maximum(i, b)", &[&ib, &bb]), 16777217.0);
    }

    /// Throughput of `a * b + 1.5` over float64, single-threaded:
    /// `cargo test --lib compute::tests::speed -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn speed_a_times_b_plus_constant() {
        let n: u64 = 1 << 17; // 1 MiB of float64 per operand, a typical block
        let ops = vec![
            ("a".to_string(), info("<f8", &[n])),
            ("b".to_string(), info("<f8", &[n])),
        ];
        let p = Program::compile("a * b + 1.5", &ops).unwrap();
        let a = f64s(&(0..n).map(|i| i as f64).collect::<Vec<_>>());
        let b = f64s(&(0..n).map(|i| 1.0 / (i as f64 + 1.0)).collect::<Vec<_>>());
        let mut out = vec![0u8; n as usize * 8];
        let rounds = 200;
        let t = std::time::Instant::now();
        for _ in 0..rounds {
            p.evaluate(&[0], &[n], &[&a, &b], &mut out).unwrap();
        }
        let secs = t.elapsed().as_secs_f64();
        let mb = (rounds * n * 8) as f64 / 1e6;
        eprintln!(
            "a * b + 1.5, float64: {:.0} MB/s of result ({:.0} MB/s of input)",
            mb / secs,
            2.0 * mb / secs
        );
        assert_eq!(read_f64(&out[8..16]), vec![2.0]); // 1 * 0.5 + 1.5
    }
}
