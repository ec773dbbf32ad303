//! msgpack values (a BatchArray's or ListArray's rows: strings, bytes,
//! lists, structs as maps, nil for a null) as an Arrow array of a given
//! type, nested as deep as the type is.

use std::sync::Arc;

use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{
    ArrayRef, BooleanArray, LargeBinaryArray, LargeStringArray, ListArray, PrimitiveArray,
    StringArray, StructArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, TimeUnit};
use rmpv::Value;

/// A validity buffer, or none when nothing is null.
fn nulls(values: &[&Value]) -> Option<NullBuffer> {
    values
        .iter()
        .any(|v| v.is_nil())
        .then(|| NullBuffer::from(values.iter().map(|v| !v.is_nil()).collect::<Vec<bool>>()))
}

fn wrong(value: &Value, data_type: &DataType) -> String {
    let shown = value.to_string();
    let shown: String = shown.chars().take(60).collect();
    format!("a value {shown} where {data_type} was expected")
}

macro_rules! ints {
    ($t:ty, $values:expr, $dt:expr) => {{
        let mut out = Vec::with_capacity($values.len());
        for v in $values {
            out.push(match v {
                Value::Nil => Default::default(),
                Value::Integer(i) => i
                    .as_i64()
                    .and_then(|x| x.try_into().ok())
                    .or_else(|| i.as_u64().and_then(|x| x.try_into().ok()))
                    .ok_or_else(|| wrong(v, $dt))?,
                other => return Err(wrong(other, $dt)),
            });
        }
        Arc::new(PrimitiveArray::<$t>::new(
            ScalarBuffer::from(out),
            nulls($values),
        )) as ArrayRef
    }};
}

macro_rules! floats {
    ($t:ty, $native:ty, $values:expr, $dt:expr) => {{
        let mut out = Vec::with_capacity($values.len());
        for v in $values {
            out.push(match v {
                Value::Nil => 0.0,
                Value::F32(f) => *f as $native,
                Value::F64(f) => *f as $native,
                Value::Integer(i) => i.as_f64().ok_or_else(|| wrong(v, $dt))? as $native,
                other => return Err(wrong(other, $dt)),
            });
        }
        Arc::new(PrimitiveArray::<$t>::new(
            ScalarBuffer::from(out),
            nulls($values),
        )) as ArrayRef
    }};
}

/// `values` as an Arrow array of `data_type` (nil: null).
pub fn from_msgpack(values: &[&Value], data_type: &DataType) -> Result<ArrayRef, String> {
    let dt = data_type;
    Ok(match dt {
        DataType::Int8 => ints!(Int8Type, values, dt),
        DataType::Int16 => ints!(Int16Type, values, dt),
        DataType::Int32 => ints!(Int32Type, values, dt),
        DataType::Int64 => ints!(Int64Type, values, dt),
        DataType::UInt8 => ints!(UInt8Type, values, dt),
        DataType::UInt16 => ints!(UInt16Type, values, dt),
        DataType::UInt32 => ints!(UInt32Type, values, dt),
        DataType::UInt64 => ints!(UInt64Type, values, dt),
        DataType::Float32 => floats!(Float32Type, f32, values, dt),
        DataType::Float64 => floats!(Float64Type, f64, values, dt),
        DataType::Timestamp(unit, tz) => {
            let ints = ints!(Int64Type, values, dt);
            let data = ints.to_data();
            let buf: ScalarBuffer<i64> =
                ScalarBuffer::new(data.buffers()[0].clone(), 0, ints.len());
            let n = nulls(values);
            let tz = tz.clone();
            match unit {
                TimeUnit::Second => Arc::new(
                    PrimitiveArray::<TimestampSecondType>::new(buf, n).with_timezone_opt(tz),
                ) as ArrayRef,
                TimeUnit::Millisecond => Arc::new(
                    PrimitiveArray::<TimestampMillisecondType>::new(buf, n).with_timezone_opt(tz),
                ),
                TimeUnit::Microsecond => Arc::new(
                    PrimitiveArray::<TimestampMicrosecondType>::new(buf, n).with_timezone_opt(tz),
                ),
                TimeUnit::Nanosecond => Arc::new(
                    PrimitiveArray::<TimestampNanosecondType>::new(buf, n).with_timezone_opt(tz),
                ),
            }
        }
        DataType::Boolean => {
            let mut out = Vec::with_capacity(values.len());
            for v in values {
                out.push(match v {
                    Value::Nil => false,
                    Value::Boolean(b) => *b,
                    other => return Err(wrong(other, dt)),
                });
            }
            Arc::new(BooleanArray::new(out.into(), nulls(values)))
        }
        DataType::Utf8 | DataType::LargeUtf8 => {
            let mut out: Vec<Option<&str>> = Vec::with_capacity(values.len());
            for v in values {
                out.push(match v {
                    Value::Nil => None,
                    Value::String(s) => Some(s.as_str().ok_or("a string that is not UTF-8")?),
                    other => return Err(wrong(other, dt)),
                });
            }
            if matches!(dt, DataType::Utf8) {
                Arc::new(StringArray::from(out))
            } else {
                Arc::new(LargeStringArray::from(out))
            }
        }
        DataType::LargeBinary => {
            let mut out: Vec<Option<&[u8]>> = Vec::with_capacity(values.len());
            for v in values {
                out.push(match v {
                    Value::Nil => None,
                    Value::Binary(b) => Some(b.as_slice()),
                    Value::String(s) => Some(s.as_bytes()),
                    other => return Err(wrong(other, dt)),
                });
            }
            Arc::new(LargeBinaryArray::from_opt_vec(out))
        }
        DataType::List(field) => {
            let mut offsets = Vec::with_capacity(values.len() + 1);
            offsets.push(0i32);
            let mut items: Vec<&Value> = Vec::new();
            for v in values {
                match v {
                    Value::Nil => {}
                    Value::Array(list) => items.extend(list.iter()),
                    other => return Err(wrong(other, dt)),
                }
                offsets.push(
                    i32::try_from(items.len())
                        .map_err(|_| "a list batch of more than 2^31 items")?,
                );
            }
            let child = from_msgpack(&items, field.data_type())?;
            Arc::new(
                ListArray::try_new(
                    field.clone(),
                    OffsetBuffer::new(ScalarBuffer::from(offsets)),
                    child,
                    nulls(values),
                )
                .map_err(|e| e.to_string())?,
            )
        }
        DataType::Struct(fields) => {
            let nil = Value::Nil;
            let mut children = Vec::with_capacity(fields.len());
            for field in fields.iter() {
                let mut column: Vec<&Value> = Vec::with_capacity(values.len());
                for v in values {
                    column.push(match v {
                        Value::Nil => &nil,
                        Value::Map(pairs) => pairs
                            .iter()
                            .find(|(k, _)| k.as_str() == Some(field.name().as_str()))
                            .map_or(&nil, |(_, v)| v),
                        other => return Err(wrong(other, dt)),
                    });
                }
                children.push(from_msgpack(&column, field.data_type())?);
            }
            Arc::new(
                StructArray::try_new_with_length(
                    fields.clone(),
                    children,
                    nulls(values),
                    values.len(),
                )
                .map_err(|e| e.to_string())?,
            )
        }
        other => return Err(format!("values of {other} are not built from msgpack here")),
    })
}
