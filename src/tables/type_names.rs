//! How python-blosc2 and pyarrow name a table column's type: its schema
//! kind (`int64`, `string`, `computed`) and its Arrow type as
//! `CTable.to_arrow()` users see it printed (`double`, `large_string`,
//! `dictionary<values=string, indices=int32, ordered=1>`), for `meta.json`
//! and `blosc2fs info`.

use arrow_schema::DataType;
use serde_json::{json, Value as Json};

use super::model::Column;
use super::schema::Kind;

/// The schema kind name of a column (its entry's `kind`, or `computed`).
pub fn kind_name(column: &Column) -> String {
    match &column.spec.kind {
        Kind::Computed { .. } => "computed".into(),
        _ => column
            .spec
            .entry
            .get("kind")
            .and_then(Json::as_str)
            .unwrap_or("?")
            .to_owned(),
    }
}

/// The column's Arrow type as `to_arrow` prints it, or null.
pub fn arrow_name(column: &Column) -> Json {
    match &column.spec.arrow {
        Ok(t) => {
            let name = type_name(t);
            match column.spec.kind {
                Kind::Dictionary { ordered: true, .. } => {
                    json!(name.replace("ordered=0", "ordered=1"))
                }
                _ => json!(name),
            }
        }
        Err(_) => Json::Null,
    }
}

/// `data_type` as pyarrow prints it (`int64`, `double`, `large_string`,
/// `list<item: int64>`, `struct<lon: double, tag: string>`,
/// `dictionary<values=string, indices=int32, ordered=0>`, `timestamp[ms]`),
/// so `meta.json` names types as `CTable.to_arrow()` users see them.
pub fn type_name(data_type: &DataType) -> String {
    use arrow_schema::TimeUnit;
    match data_type {
        DataType::Null => "null".into(),
        DataType::Boolean => "bool".into(),
        DataType::Int8 => "int8".into(),
        DataType::Int16 => "int16".into(),
        DataType::Int32 => "int32".into(),
        DataType::Int64 => "int64".into(),
        DataType::UInt8 => "uint8".into(),
        DataType::UInt16 => "uint16".into(),
        DataType::UInt32 => "uint32".into(),
        DataType::UInt64 => "uint64".into(),
        DataType::Float16 => "halffloat".into(),
        DataType::Float32 => "float".into(),
        DataType::Float64 => "double".into(),
        DataType::Utf8 => "string".into(),
        DataType::LargeUtf8 => "large_string".into(),
        DataType::Binary => "binary".into(),
        DataType::LargeBinary => "large_binary".into(),
        DataType::Timestamp(unit, tz) => {
            let unit = match unit {
                TimeUnit::Second => "s",
                TimeUnit::Millisecond => "ms",
                TimeUnit::Microsecond => "us",
                TimeUnit::Nanosecond => "ns",
            };
            match tz {
                Some(tz) => format!("timestamp[{unit}, tz={tz}]"),
                None => format!("timestamp[{unit}]"),
            }
        }
        DataType::List(f) => format!("list<{}: {}>", f.name(), type_name(f.data_type())),
        DataType::LargeList(f) => format!("large_list<{}: {}>", f.name(), type_name(f.data_type())),
        DataType::FixedSizeList(f, n) => {
            format!(
                "fixed_size_list<{}: {}>[{n}]",
                f.name(),
                type_name(f.data_type())
            )
        }
        DataType::Struct(fields) => {
            let inner: Vec<String> = fields
                .iter()
                .map(|f| format!("{}: {}", f.name(), type_name(f.data_type())))
                .collect();
            format!("struct<{}>", inner.join(", "))
        }
        DataType::Dictionary(keys, values) => format!(
            "dictionary<values={}, indices={}, ordered=0>",
            type_name(values),
            type_name(keys)
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_schema::{Field, Fields, TimeUnit};

    use super::*;

    #[test]
    fn types_are_named_as_pyarrow_prints_them() {
        let item = |t: DataType| Arc::new(Field::new("item", t, true));
        for (t, want) in [
            (DataType::Float64, "double"),
            (DataType::Float32, "float"),
            (DataType::LargeUtf8, "large_string"),
            (DataType::Boolean, "bool"),
            (
                DataType::Timestamp(TimeUnit::Millisecond, None),
                "timestamp[ms]",
            ),
            (
                DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
                "timestamp[ns, tz=UTC]",
            ),
            (DataType::List(item(DataType::Int64)), "list<item: int64>"),
            (
                DataType::FixedSizeList(item(DataType::Float32), 3),
                "fixed_size_list<item: float>[3]",
            ),
            (
                DataType::Struct(Fields::from(vec![
                    Field::new("lon", DataType::Float64, true),
                    Field::new("tag", DataType::Utf8, true),
                ])),
                "struct<lon: double, tag: string>",
            ),
            (
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                "dictionary<values=string, indices=int32, ordered=0>",
            ),
        ] {
            assert_eq!(type_name(&t), want);
        }
    }
}
