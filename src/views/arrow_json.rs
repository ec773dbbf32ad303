//! One value of an Arrow array as JSON, by the rules every JSON file of the
//! mount follows (those of `meta.json` and `items.jsonl`): null as `null`,
//! NaN and infinities as the strings `"NaN"`, `"Infinity"`, `"-Infinity"`,
//! bytes as `{"base64": …}`, timestamps as integers in their unit,
//! dictionary values as their words, lists as arrays, structs as objects.
//! A table column's `items.jsonl` and a CSV cell holding a list or a struct
//! are written from it.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type,
    UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use serde_json::{json, Value as Json};

/// Row `row` of `array` as JSON (`null` where the row is null; a type
/// without a JSON form gives `null` and is named in [`has_json_form`]).
pub fn value_json(array: &dyn Array, row: usize) -> Json {
    if row >= array.len() || array.is_null(row) {
        return Json::Null;
    }
    match array.data_type() {
        DataType::Null => Json::Null,
        DataType::Boolean => Json::Bool(array.as_boolean().value(row)),
        DataType::Int8 => json!(array.as_primitive::<Int8Type>().value(row)),
        DataType::Int16 => json!(array.as_primitive::<Int16Type>().value(row)),
        DataType::Int32 => json!(array.as_primitive::<Int32Type>().value(row)),
        DataType::Int64 => json!(array.as_primitive::<Int64Type>().value(row)),
        DataType::UInt8 => json!(array.as_primitive::<UInt8Type>().value(row)),
        DataType::UInt16 => json!(array.as_primitive::<UInt16Type>().value(row)),
        DataType::UInt32 => json!(array.as_primitive::<UInt32Type>().value(row)),
        DataType::UInt64 => json!(array.as_primitive::<UInt64Type>().value(row)),
        DataType::Float16 => float_json(array.as_primitive::<Float16Type>().value(row).to_f64()),
        DataType::Float32 => float_json(f64::from(array.as_primitive::<Float32Type>().value(row))),
        DataType::Float64 => float_json(array.as_primitive::<Float64Type>().value(row)),
        DataType::Timestamp(..)
        | DataType::Date64
        | DataType::Time64(_)
        | DataType::Duration(_) => {
            // Every 64-bit temporal type is an i64 count of its unit.
            match array.to_data().buffers().first() {
                Some(buf) => {
                    let ints: &[i64] = buf.typed_data();
                    json!(ints[array.offset() + row])
                }
                None => Json::Null,
            }
        }
        DataType::Utf8 => Json::String(array.as_string::<i32>().value(row).to_owned()),
        DataType::LargeUtf8 => Json::String(array.as_string::<i64>().value(row).to_owned()),
        DataType::Utf8View => Json::String(array.as_string_view().value(row).to_owned()),
        DataType::Binary => bytes_json(array.as_binary::<i32>().value(row)),
        DataType::LargeBinary => bytes_json(array.as_binary::<i64>().value(row)),
        DataType::BinaryView => bytes_json(array.as_binary_view().value(row)),
        DataType::FixedSizeBinary(_) => bytes_json(array.as_fixed_size_binary().value(row)),
        DataType::List(_) => list_json(&array.as_list::<i32>().value(row)),
        DataType::LargeList(_) => list_json(&array.as_list::<i64>().value(row)),
        DataType::FixedSizeList(..) => list_json(&array.as_fixed_size_list().value(row)),
        DataType::Struct(fields) => {
            let s = array.as_struct();
            let mut map = serde_json::Map::new();
            for (field, column) in fields.iter().zip(s.columns()) {
                map.insert(field.name().clone(), value_json(column.as_ref(), row));
            }
            Json::Object(map)
        }
        DataType::Dictionary(..) => {
            // This row's key alone (normalized_keys() would convert every
            // key of the array at each row).
            let dict = array.as_any_dictionary();
            match value_json(dict.keys(), row).as_u64() {
                Some(key) => value_json(dict.values().as_ref(), key as usize),
                None => Json::Null,
            }
        }
        _ => Json::Null,
    }
}

/// Whether [`value_json`] gives values of `data_type` (rather than `null`).
pub fn has_json_form(data_type: &DataType) -> bool {
    match data_type {
        DataType::Null
        | DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64
        | DataType::Float16
        | DataType::Float32
        | DataType::Float64
        | DataType::Timestamp(..)
        | DataType::Date64
        | DataType::Time64(_)
        | DataType::Duration(_)
        | DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => true,
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            has_json_form(f.data_type())
        }
        DataType::Struct(fields) => fields.iter().all(|f| has_json_form(f.data_type())),
        DataType::Dictionary(_, values) => has_json_form(values),
        _ => false,
    }
}

fn list_json(items: &ArrayRef) -> Json {
    Json::Array(
        (0..items.len())
            .map(|i| value_json(items.as_ref(), i))
            .collect(),
    )
}

/// A float as JSON: NaN and infinities as strings (JSON has no such numbers).
pub fn float_json(f: f64) -> Json {
    if f.is_nan() {
        Json::String("NaN".into())
    } else if f.is_infinite() {
        Json::String(if f > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else {
        serde_json::Number::from_f64(f).map_or(Json::Null, Json::Number)
    }
}

/// Bytes as `{"base64": …}` (as `meta.json` and `items.jsonl` write msgpack bin).
pub fn bytes_json(bytes: &[u8]) -> Json {
    json!({ "base64": crate::format::msgpack::base64(bytes) })
}
