//! A CTable's schema as `_meta` writes it (a string of JSON from Python's
//! `json.dumps`, so `NaN`, `Infinity` and `-Infinity` may stand bare), read
//! into one [`ColumnSpec`] per stored column and per computed column: its
//! kind, how its nulls are stored, and the Arrow type `CTable.to_arrow()`
//! gives it. Which storage keys a column uses is [`super::model`]'s job.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, TimeUnit};
use serde_json::{Map, Value as Json};

/// What a column is, as its schema entry's `kind` says.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A fixed-width number, bool or complex: one NDArray of numpy `dtype`.
    Number {
        /// The schema's kind (`int32`, `bool`, `complex128`, ...).
        name: String,
    },
    /// Counts of `unit` since the epoch (`<i8`), with an optional time zone.
    Timestamp {
        /// `s`, `ms`, `us` or `ns`.
        unit: String,
        /// The time zone, when the schema names one.
        tz: Option<String>,
    },
    /// Fixed-width text `<U{max_length}` (UTF-32LE, NUL-padded).
    FixedText,
    /// Fixed-width bytes `|S{max_length}` (NUL-padded).
    FixedBytes,
    /// A fixed-shape array per row.
    NdArray {
        /// The shape of one row's item.
        item_shape: Vec<u64>,
    },
    /// int64 offsets + `P.utf8` bytes.
    Utf8,
    /// int32 codes + `P_dict` BatchArray of the words.
    Dictionary {
        /// The dictionary's order matters.
        ordered: bool,
        /// The code standing for a null.
        null_code: i64,
    },
    /// A BatchArray of msgpack values (`vlstring`, `vlbytes`, `struct`, `object`).
    Varlen {
        /// The schema's kind.
        name: String,
    },
    /// A ListArray.
    List,
    /// A computed column (`computed_columns`): an expression over stored columns.
    Computed {
        /// The expression, its operands named `o0, o1, …`.
        expression: String,
        /// The columns `o0, o1, …` stand for.
        deps: Vec<String>,
        /// The result's dtype name (`int64`, `float64`, ...).
        dtype: String,
    },
    /// A kind this reader does not know, or a computed column it cannot
    /// evaluate (a Python DSL kernel): the reason.
    Unknown(String),
}

/// How a column's nulls are stored.
#[derive(Debug, Clone, PartialEq)]
pub enum Nulls {
    /// Not nullable.
    None,
    /// A `P.notnull` bool array (absent: no nulls).
    Mask,
    /// An in-band value stands for a null.
    Sentinel(Sentinel),
    /// A dictionary code stands for a null.
    Code(i64),
    /// msgpack nil in a BatchArray or ListArray.
    Native,
}

/// A sentinel null value.
#[derive(Debug, Clone, PartialEq)]
pub enum Sentinel {
    /// An integer (also a bool's 255).
    Int(i128),
    /// A float; NaN: every NaN is a null.
    Float(f64),
    /// A string (utf8 columns).
    Text(String),
}

impl Nulls {
    /// The policy's name in `meta.json`.
    pub fn name(&self) -> &'static str {
        match self {
            Nulls::None => "none",
            Nulls::Mask => "mask",
            Nulls::Sentinel(_) => "sentinel",
            Nulls::Code(_) => "code",
            Nulls::Native => "native",
        }
    }
}

/// One logical column as the schema gives it.
#[derive(Debug, Clone)]
pub struct ColumnSpec {
    /// Its name (dotted for `from_arrow`'s flattened struct leaves).
    pub name: String,
    /// What it is.
    pub kind: Kind,
    /// How its nulls are stored.
    pub nulls: Nulls,
    /// The Arrow type `to_arrow` gives it, or why it has none.
    pub arrow: Result<DataType, String>,
    /// Its schema entry as written.
    pub entry: Json,
}

/// The schema: the columns in `to_pandas` order (stored, then computed),
/// and the struct parents `to_arrow` nests dotted leaves under.
#[derive(Debug, Clone)]
pub struct Schema {
    /// The columns.
    pub columns: Vec<ColumnSpec>,
    /// `metadata.struct_parents`: parent name → its struct spec.
    pub struct_parents: Vec<(String, Json)>,
    /// The whole schema document (non-JSON floats as strings).
    pub doc: Json,
}

/// Why a schema could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// `_meta` has no `schema` vlmeta.
    #[error("_meta holds no schema")]
    Missing,
    /// The text is not JSON (even allowing Python's `NaN`/`Infinity`).
    #[error("the schema is not JSON: {0}")]
    NotJson(String),
    /// No `columns` list.
    #[error("the schema has no list of columns")]
    NoColumns,
}

/// `text` with Python's bare `NaN`, `Infinity` and `-Infinity` (outside
/// strings) turned into the strings `"NaN"`, `"Infinity"`, `"-Infinity"`.
pub fn python_json_tokens(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            rest = &rest[c.len_utf8()..];
            continue;
        }
        if c == '"' {
            in_string = true;
        } else {
            let token = ["-Infinity", "Infinity", "NaN"]
                .into_iter()
                .find(|t| rest.starts_with(t));
            if let Some(t) = token {
                out.push('"');
                out.push_str(t);
                out.push('"');
                rest = &rest[t.len()..];
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// A float that may be written as one of the strings of [`python_json_tokens`].
fn json_float(v: &Json) -> Option<f64> {
    match v {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// Parse the `schema` vlmeta value (a string of JSON, or already JSON).
pub fn parse(value: Option<&Json>) -> Result<Schema, SchemaError> {
    let doc = match value.ok_or(SchemaError::Missing)? {
        Json::String(text) => serde_json::from_str::<Json>(&python_json_tokens(text))
            .map_err(|e| SchemaError::NotJson(e.to_string()))?,
        other => other.clone(),
    };
    let stored = doc
        .get("columns")
        .and_then(Json::as_array)
        .ok_or(SchemaError::NoColumns)?;
    let mut columns: Vec<ColumnSpec> = stored.iter().map(column_spec).collect();
    for entry in doc
        .get("computed_columns")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        columns.push(computed_spec(entry));
    }
    let struct_parents = doc
        .pointer("/metadata/struct_parents")
        .and_then(Json::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    Ok(Schema {
        columns,
        struct_parents,
        doc,
    })
}

fn str_field<'a>(entry: &'a Json, key: &str) -> Option<&'a str> {
    entry.get(key).and_then(Json::as_str)
}

fn computed_spec(entry: &Json) -> ColumnSpec {
    let name = str_field(entry, "name").unwrap_or("").to_owned();
    let dtype = str_field(entry, "dtype").unwrap_or("").to_owned();
    let kind = match str_field(entry, "kind") {
        Some("expression") => match (
            str_field(entry, "expression"),
            entry.get("col_deps").and_then(Json::as_array),
        ) {
            (Some(expression), Some(deps)) => Kind::Computed {
                expression: expression.to_owned(),
                deps: deps
                    .iter()
                    .map(|d| d.as_str().unwrap_or("").to_owned())
                    .collect(),
                dtype: dtype.clone(),
            },
            _ => Kind::Unknown("a computed column without an expression and its operands".into()),
        },
        Some("dsl") => Kind::Unknown(
            "a computed column defined by a Python DSL kernel: only Python can evaluate it".into(),
        ),
        other => Kind::Unknown(format!("a computed column of kind {other:?}")),
    };
    let arrow = match &kind {
        Kind::Unknown(why) => Err(why.clone()),
        _ => number_type(&dtype).ok_or_else(|| format!("a computed column of dtype {dtype:?}")),
    };
    ColumnSpec {
        name,
        kind,
        nulls: Nulls::None,
        arrow,
        entry: entry.clone(),
    }
}

fn column_spec(entry: &Json) -> ColumnSpec {
    let name = str_field(entry, "name").unwrap_or("").to_owned();
    let kind_name = str_field(entry, "kind").unwrap_or("");
    let nullable = entry.get("nullable").and_then(Json::as_bool) == Some(true);
    let kind = match kind_name {
        k if number_type(k).is_some() || k.starts_with("complex") => {
            Kind::Number { name: k.to_owned() }
        }
        "timestamp" => Kind::Timestamp {
            unit: str_field(entry, "unit").unwrap_or("ns").to_owned(),
            tz: str_field(entry, "timezone").map(str::to_owned),
        },
        "string" => Kind::FixedText,
        "bytes" => Kind::FixedBytes,
        "ndarray" => Kind::NdArray {
            item_shape: entry
                .get("item_shape")
                .and_then(Json::as_array)
                .map(|a| a.iter().filter_map(Json::as_u64).collect())
                .unwrap_or_default(),
        },
        "utf8" => Kind::Utf8,
        "dictionary" => Kind::Dictionary {
            ordered: entry.get("ordered").and_then(Json::as_bool) == Some(true),
            null_code: entry.get("null_code").and_then(Json::as_i64).unwrap_or(-1),
        },
        "vlstring" | "vlbytes" | "struct" | "object" => Kind::Varlen {
            name: kind_name.to_owned(),
        },
        "list" => Kind::List,
        other => Kind::Unknown(format!(
            "a column of kind {other:?}, which this reader does not know"
        )),
    };
    let nulls = match &kind {
        Kind::Dictionary { null_code, .. } => {
            if nullable {
                Nulls::Code(*null_code)
            } else {
                Nulls::None
            }
        }
        Kind::Varlen { .. } | Kind::List if nullable => Nulls::Native,
        _ if !nullable => Nulls::None,
        _ => match entry.get("null_value") {
            Some(v) if entry.get("null_storage").is_none() => match v {
                Json::String(s) if json_float(v).is_none() => {
                    Nulls::Sentinel(Sentinel::Text(s.clone()))
                }
                Json::Number(n) if n.is_i64() || n.is_u64() => Nulls::Sentinel(Sentinel::Int(
                    n.as_i64()
                        .map(i128::from)
                        .or(n.as_u64().map(i128::from))
                        .unwrap_or(0),
                )),
                other => match json_float(other) {
                    Some(f) => Nulls::Sentinel(Sentinel::Float(f)),
                    None => Nulls::Mask,
                },
            },
            _ => Nulls::Mask,
        },
    };
    let arrow = arrow_type(&kind, entry);
    ColumnSpec {
        name,
        kind,
        nulls,
        arrow,
        entry: entry.clone(),
    }
}

/// The Arrow type of a number kind name (`int32`, `float64`, `bool`).
pub fn number_type(kind: &str) -> Option<DataType> {
    Some(match kind {
        "int8" => DataType::Int8,
        "int16" => DataType::Int16,
        "int32" => DataType::Int32,
        "int64" => DataType::Int64,
        "uint8" => DataType::UInt8,
        "uint16" => DataType::UInt16,
        "uint32" => DataType::UInt32,
        "uint64" => DataType::UInt64,
        "float32" => DataType::Float32,
        "float64" => DataType::Float64,
        "bool" => DataType::Boolean,
        _ => return None,
    })
}

fn time_unit(unit: &str) -> Option<TimeUnit> {
    Some(match unit {
        "s" => TimeUnit::Second,
        "ms" => TimeUnit::Millisecond,
        "us" => TimeUnit::Microsecond,
        "ns" => TimeUnit::Nanosecond,
        _ => return None,
    })
}

/// The numpy dtype string of an ndarray column's `dtype_str` as an Arrow type.
fn numpy_type(dtype: &str) -> Option<DataType> {
    let code = dtype.trim_start_matches(['<', '>', '=', '|']);
    Some(match code {
        "i1" => DataType::Int8,
        "i2" => DataType::Int16,
        "i4" => DataType::Int32,
        "i8" => DataType::Int64,
        "u1" => DataType::UInt8,
        "u2" => DataType::UInt16,
        "u4" => DataType::UInt32,
        "u8" => DataType::UInt64,
        "f4" => DataType::Float32,
        "f8" => DataType::Float64,
        "b1" => DataType::Boolean,
        _ => return None,
    })
}

fn arrow_type(kind: &Kind, entry: &Json) -> Result<DataType, String> {
    match kind {
        Kind::Number { name } => number_type(name)
            .ok_or_else(|| format!("Arrow has no type for {name} (to_arrow refuses it too)")),
        Kind::Timestamp { unit, tz } => Ok(DataType::Timestamp(
            time_unit(unit).ok_or_else(|| format!("a timestamp unit {unit:?}"))?,
            tz.as_deref().map(Arc::from),
        )),
        Kind::FixedText => Ok(DataType::Utf8),
        Kind::FixedBytes => Ok(DataType::LargeBinary),
        Kind::NdArray { item_shape } => {
            let dtype = str_field(entry, "dtype_str").unwrap_or("");
            let item =
                numpy_type(dtype).ok_or_else(|| format!("an ndarray column of dtype {dtype:?}"))?;
            let n: u64 = item_shape.iter().product();
            Ok(DataType::FixedSizeList(
                Arc::new(Field::new("item", item, true)),
                i32::try_from(n).map_err(|_| "an ndarray item too large".to_string())?,
            ))
        }
        Kind::Utf8 => Ok(DataType::LargeUtf8),
        Kind::Dictionary { .. } => Ok(DataType::Dictionary(
            Box::new(DataType::Int32),
            Box::new(DataType::Utf8),
        )),
        Kind::Varlen { name } => match name.as_str() {
            "vlstring" => Ok(DataType::Utf8),
            "vlbytes" => Ok(DataType::LargeBinary),
            "struct" => struct_type(entry),
            _ => Err("an object column has no Arrow type (to_arrow refuses it too)".into()),
        },
        Kind::List => {
            let item = entry
                .get("item")
                .ok_or("a list column without an item spec")?;
            Ok(DataType::List(Arc::new(Field::new(
                "item",
                item_type(item)?,
                true,
            ))))
        }
        Kind::Computed { .. } => Err("computed".into()),
        Kind::Unknown(why) => Err(why.clone()),
    }
}

/// The Arrow type of an item spec (a list's item, a struct's field).
pub fn item_type(spec: &Json) -> Result<DataType, String> {
    let kind = str_field(spec, "kind").unwrap_or("");
    if let Some(t) = number_type(kind) {
        return Ok(t);
    }
    match kind {
        "string" | "vlstring" => Ok(DataType::Utf8),
        "utf8" => Ok(DataType::LargeUtf8),
        "bytes" | "vlbytes" => Ok(DataType::LargeBinary),
        "timestamp" => Ok(DataType::Timestamp(
            time_unit(str_field(spec, "unit").unwrap_or("ns"))
                .ok_or("an item timestamp of an unknown unit")?,
            str_field(spec, "timezone").map(Arc::from),
        )),
        "struct" => struct_type(spec),
        "list" => {
            let item = spec.get("item").ok_or("a list item without an item spec")?;
            Ok(DataType::List(Arc::new(Field::new(
                "item",
                item_type(item)?,
                true,
            ))))
        }
        other => Err(format!("an item of kind {other:?} has no Arrow type here")),
    }
}

/// The Arrow struct type of a spec with `fields`.
pub fn struct_type(spec: &Json) -> Result<DataType, String> {
    let fields = spec
        .get("fields")
        .and_then(Json::as_array)
        .ok_or("a struct without fields")?;
    let fields: Result<Vec<Field>, String> = fields
        .iter()
        .map(|f| {
            let name = str_field(f, "name").unwrap_or("");
            Ok(Field::new(name, item_type(f)?, true))
        })
        .collect();
    Ok(DataType::Struct(Fields::from(fields?)))
}

/// The arrow field metadata `to_arrow` gives an ndarray column.
pub fn field_metadata(spec: &ColumnSpec) -> HashMap<String, String> {
    let mut out = HashMap::new();
    if let Kind::NdArray { item_shape } = &spec.kind {
        let shape: Vec<String> = item_shape.iter().map(u64::to_string).collect();
        out.insert(
            "blosc2:ndarray_shape".to_string(),
            format!("[{}]", shape.join(", ")),
        );
    }
    out
}

/// The column's schema entry as an object (empty when it is not one).
pub fn entry_map(spec: &ColumnSpec) -> Map<String, Json> {
    spec.entry.as_object().cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_tokens_outside_strings_become_strings() {
        assert_eq!(
            python_json_tokens(
                r#"{"a": NaN, "b": -Infinity, "c": "NaN \" Infinity", "d": Infinity}"#
            ),
            r#"{"a": "NaN", "b": "-Infinity", "c": "NaN \" Infinity", "d": "Infinity"}"#
        );
    }

    #[test]
    fn a_sentinel_nan_is_a_float_sentinel() {
        let text = Json::String(r#"{"columns": [{"name": "f", "kind": "float32", "nullable": true, "null_value": NaN}, {"name": "s", "kind": "utf8", "nullable": true, "null_value": "__BLOSC2_NULL__"}, {"name": "m", "kind": "int8", "nullable": true, "null_storage": "mask"}]}"#.into());
        let schema = parse(Some(&text)).unwrap();
        assert!(
            matches!(schema.columns[0].nulls, Nulls::Sentinel(Sentinel::Float(f)) if f.is_nan())
        );
        assert_eq!(
            schema.columns[1].nulls,
            Nulls::Sentinel(Sentinel::Text("__BLOSC2_NULL__".into()))
        );
        assert_eq!(schema.columns[2].nulls, Nulls::Mask);
        assert_eq!(schema.columns[1].arrow, Ok(DataType::LargeUtf8));
    }
}
