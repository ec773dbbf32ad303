//! The recipe of a saved lazy expression: its text and where its operands
//! live, read from the carrier array's variable-length metadata (vlmeta),
//! already decoded from msgpack into JSON values.
//!
//! Two forms exist (checked by saving expressions with python-blosc2 4.14.1
//! and dumping `schunk.vlmeta`; see `scripts/check/compute_oracle.py recipes`):
//! - current: vlmeta `b2o` = `{"kind": "lazyexpr", "version": 1,
//!   "expression": "a * 2 + sin(b)", "operands": {"a": {"kind": "urlpath",
//!   "version": 1, "urlpath": "ops/a.b2nd"}, ...}}`, an operand being
//!   `urlpath` (relative to the carrier's folder unless absolute),
//!   `dictstore_key` (`urlpath` of a `.b2d`/`.b2z` store and its `key`) or
//!   `c2array` (`path` on a Caterva2 server at `urlbase`); the carrier also
//!   has the metalayer `b2o` = `{"kind": "lazyexpr", "version": 1}`.
//!   `"kind": "lazyudf"` holds Python (DSL) source: not evaluated here.
//! - legacy (python-blosc2 before 4): vlmeta `_LazyArray` =
//!   `{"expression": ..., "UDF": null, "operands": {"a": "a.b2nd" |
//!   {"path": ..., "urlbase": ...}}}`; a non-null `UDF` is Python source.

use serde_json::Value;
use thiserror::Error;

/// Where an operand of a saved expression lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperandRef {
    /// A Blosc2 file; relative paths are relative to the carrier's folder.
    UrlPath(String),
    /// A member of a DictStore (`.b2d` folder or `.b2z` zip).
    DictStoreKey {
        /// The store's path.
        urlpath: String,
        /// The member's key, e.g. `/x`.
        key: String,
    },
    /// A dataset on a Caterva2 server.
    C2Array {
        /// The dataset's path on the server.
        path: String,
        /// The server's URL, if saved.
        urlbase: Option<String>,
    },
}

/// A saved expression and its operands, in the order they were saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recipe {
    /// The expression text, operands by name.
    pub expression: String,
    /// Each operand's name and location.
    pub operands: Vec<(String, OperandRef)>,
}

/// Why a vlmeta holds no recipe this layer can evaluate.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RecipeError {
    /// Neither `b2o` nor `_LazyArray` is present.
    #[error("no lazy expression recipe in the metadata")]
    Absent,
    /// A user-defined function (Python or DSL source), which blosc2fs does
    /// not run.
    #[error("not evaluated: {0}")]
    NotEvaluated(String),
    /// A `b2o` object of another kind (`c2array`, `remote_array`, ...) or
    /// version.
    #[error("unsupported persisted object: {0}")]
    Unsupported(String),
    /// The recipe does not have the expected shape.
    #[error("malformed recipe: {0}")]
    Malformed(String),
}

fn string(v: &Value, field: &str, what: &str) -> Result<String, RecipeError> {
    v.get(field)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| RecipeError::Malformed(format!("{what}: no string {field:?}")))
}

impl Recipe {
    /// Read the recipe from a carrier's vlmeta (a JSON object of its
    /// entries): `b2o` first, else the legacy `_LazyArray`.
    pub fn from_vlmeta(vlmeta: &Value) -> Result<Recipe, RecipeError> {
        if let Some(b2o) = vlmeta.get("b2o") {
            return Recipe::from_b2o(b2o);
        }
        if let Some(legacy) = vlmeta.get("_LazyArray") {
            return Recipe::from_legacy(legacy);
        }
        Err(RecipeError::Absent)
    }

    /// The current form: the value of vlmeta `b2o`.
    pub fn from_b2o(b2o: &Value) -> Result<Recipe, RecipeError> {
        let kind = string(b2o, "kind", "b2o")?;
        let version = b2o.get("version").and_then(Value::as_i64);
        if version != Some(1) {
            return Err(RecipeError::Unsupported(format!(
                "{kind} version {version:?}"
            )));
        }
        match kind.as_str() {
            "lazyexpr" => {}
            "lazyudf" => {
                let fk = b2o
                    .get("function_kind")
                    .and_then(Value::as_str)
                    .unwrap_or("python");
                let name = b2o.get("name").and_then(Value::as_str).unwrap_or("?");
                return Err(RecipeError::NotEvaluated(format!(
                    "a user-defined function ({fk} kernel {name:?}); blosc2fs evaluates expressions, not code"
                )));
            }
            other => return Err(RecipeError::Unsupported(format!("kind {other:?}"))),
        }
        let expression = string(b2o, "expression", "lazyexpr")?;
        let ops = b2o
            .get("operands")
            .and_then(Value::as_object)
            .ok_or_else(|| RecipeError::Malformed("lazyexpr: no operands object".into()))?;
        let mut operands = Vec::with_capacity(ops.len());
        for (name, r) in ops {
            let what = format!("operand {name}");
            let kind = string(r, "kind", &what)?;
            let reference = match kind.as_str() {
                "urlpath" => OperandRef::UrlPath(string(r, "urlpath", &what)?),
                "dictstore_key" => OperandRef::DictStoreKey {
                    urlpath: string(r, "urlpath", &what)?,
                    key: string(r, "key", &what)?,
                },
                "c2array" => OperandRef::C2Array {
                    path: string(r, "path", &what)?,
                    urlbase: r.get("urlbase").and_then(Value::as_str).map(str::to_string),
                },
                other => {
                    return Err(RecipeError::Unsupported(format!(
                        "{what} of kind {other:?}"
                    )))
                }
            };
            operands.push((name.clone(), reference));
        }
        Ok(Recipe {
            expression,
            operands,
        })
    }

    /// The legacy form: the value of vlmeta `_LazyArray`.
    pub fn from_legacy(legacy: &Value) -> Result<Recipe, RecipeError> {
        if let Some(udf) = legacy.get("UDF").filter(|u| !u.is_null()) {
            let name = legacy.get("name").and_then(Value::as_str).unwrap_or("?");
            let _ = udf;
            return Err(RecipeError::NotEvaluated(format!(
                "a user-defined Python function {name:?}; blosc2fs evaluates expressions, not code"
            )));
        }
        let expression = string(legacy, "expression", "_LazyArray")?;
        let ops = legacy
            .get("operands")
            .and_then(Value::as_object)
            .ok_or_else(|| RecipeError::Malformed("_LazyArray: no operands object".into()))?;
        let mut operands = Vec::with_capacity(ops.len());
        for (name, r) in ops {
            let reference = match r {
                Value::String(p) => OperandRef::UrlPath(p.clone()),
                Value::Object(_) => OperandRef::C2Array {
                    path: string(r, "path", &format!("operand {name}"))?,
                    urlbase: r.get("urlbase").and_then(Value::as_str).map(str::to_string),
                },
                _ => {
                    return Err(RecipeError::Malformed(format!(
                        "operand {name}: neither a path nor an object"
                    )))
                }
            };
            operands.push((name.clone(), reference));
        }
        Ok(Recipe {
            expression,
            operands,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Dumped from files python-blosc2 4.14.1 saved (`blosc2_ext.open(p).schunk.vlmeta`).
    #[test]
    fn current_form() {
        let vl = json!({"b2o": {"kind": "lazyexpr", "version": 1, "expression": "a * 2 + sin(b) - c",
            "operands": {"a": {"kind": "urlpath", "version": 1, "urlpath": "ops/a.b2nd"},
                         "b": {"kind": "dictstore_key", "version": 1, "urlpath": "/abs/run.b2z", "key": "/x"},
                         "c": {"kind": "c2array", "version": 1, "path": "@public/ds.b2nd", "urlbase": "https://cat2.example/"}}},
            "_b2o_user_vlmeta": {}});
        let r = Recipe::from_vlmeta(&vl).unwrap();
        assert_eq!(r.expression, "a * 2 + sin(b) - c");
        assert_eq!(
            r.operands,
            vec![
                ("a".to_string(), OperandRef::UrlPath("ops/a.b2nd".into())),
                (
                    "b".to_string(),
                    OperandRef::DictStoreKey {
                        urlpath: "/abs/run.b2z".into(),
                        key: "/x".into()
                    }
                ),
                (
                    "c".to_string(),
                    OperandRef::C2Array {
                        path: "@public/ds.b2nd".into(),
                        urlbase: Some("https://cat2.example/".into())
                    }
                ),
            ]
        );
    }

    #[test]
    fn udfs_and_oddities_are_typed() {
        let udf = json!({"b2o": {"kind": "lazyudf", "version": 1, "function_kind": "dsl", "name": "k", "udf_source": "def k(x): ..."}});
        assert!(matches!(
            Recipe::from_vlmeta(&udf),
            Err(RecipeError::NotEvaluated(_))
        ));
        let legacy_udf = json!({"_LazyArray": {"UDF": "def f(inputs, output, offset): ...", "operands": {}, "name": "f"}});
        assert!(matches!(
            Recipe::from_vlmeta(&legacy_udf),
            Err(RecipeError::NotEvaluated(_))
        ));
        assert_eq!(Recipe::from_vlmeta(&json!({})), Err(RecipeError::Absent));
        let v2 = json!({"b2o": {"kind": "lazyexpr", "version": 2}});
        assert!(matches!(
            Recipe::from_vlmeta(&v2),
            Err(RecipeError::Unsupported(_))
        ));
        let remote = json!({"b2o": {"kind": "lazyexpr", "version": 1, "expression": "a", "operands": {"a": {"kind": "zarr", "version": 1, "urlpath": "s3://x"}}}});
        assert!(matches!(
            Recipe::from_vlmeta(&remote),
            Err(RecipeError::Unsupported(_))
        ));
        let bad =
            json!({"b2o": {"kind": "lazyexpr", "version": 1, "expression": 3, "operands": {}}});
        assert!(matches!(
            Recipe::from_vlmeta(&bad),
            Err(RecipeError::Malformed(_))
        ));
    }

    #[test]
    fn legacy_form() {
        let vl = json!({"_LazyArray": {"expression": "o0 + o1", "UDF": null,
            "operands": {"o0": "a.b2nd", "o1": {"path": "@public/x.b2nd", "urlbase": "https://h/"}}}});
        let r = Recipe::from_vlmeta(&vl).unwrap();
        assert_eq!(r.expression, "o0 + o1");
        assert_eq!(
            r.operands[0],
            ("o0".to_string(), OperandRef::UrlPath("a.b2nd".into()))
        );
        assert_eq!(
            r.operands[1],
            (
                "o1".to_string(),
                OperandRef::C2Array {
                    path: "@public/x.b2nd".into(),
                    urlbase: Some("https://h/".into())
                }
            )
        );
    }
}
