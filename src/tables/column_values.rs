//! A column's values over a range of physical rows, decoded from its
//! storage parts into an Arrow array (deleted rows included: the caller
//! keeps the live ones), with its nulls as validity: a mask's false, a
//! sentinel's value, a dictionary's null code, msgpack nil.

use std::sync::Arc;

use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{
    types::ArrowPrimitiveType, Array as _, ArrayRef, BooleanArray, DictionaryArray,
    FixedSizeListArray, LargeBinaryArray, LargeStringArray, PrimitiveArray, StringArray,
};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::DataType;

use super::batch_array::{self as batches, Serializer};
use super::build::from_msgpack;
use super::model::{Column, Parts, TableModel};
use super::schema::{Kind, Nulls, Sentinel};
use super::seam::{ColumnBatch, TableError};
use crate::format::{msgpack, Array, Region};
use crate::read::read_uncached;
use crate::read::RowMap;

/// Bytes of a `.notnull` mask read at a time when counting its nulls.
const MASK_STEP: u64 = 1 << 20;

fn invalid(column: &Column, detail: impl Into<String>) -> TableError {
    TableError::Invalid {
        column: column.name().to_owned(),
        detail: detail.into(),
    }
}

fn arrow_err(column: &Column, source: arrow_schema::ArrowError) -> TableError {
    TableError::Arrow {
        column: column.name().to_owned(),
        source,
    }
}

/// Bytes `[start, start + len)` of `array`'s data, or why not.
fn read_bytes(array: &Array, part: &str, start: u64, len: u64) -> Result<Vec<u8>, TableError> {
    let end = start.saturating_add(len);
    if end > array.data_len() {
        return Err(TableError::Invalid {
            column: part.to_owned(),
            detail: format!(
                "holds {} bytes where rows need {end}: shorter than the table's live rows",
                array.data_len()
            ),
        });
    }
    let mut out = vec![0u8; len as usize];
    read_uncached(array, Region::Data, start, &mut out).map_err(|problem| TableError::Part {
        part: part.to_owned(),
        problem,
    })?;
    Ok(out)
}

fn part_name(array: &Array) -> String {
    array.name().display().to_string()
}

/// The validity of physical rows `[p0, p1)` from a `.notnull` mask.
fn mask_nulls(mask: &Array, p0: u64, p1: u64) -> Result<Option<NullBuffer>, TableError> {
    let bytes = read_bytes(mask, &part_name(mask), p0, p1 - p0)?;
    Ok(nulls_of(bytes.iter().map(|&b| b != 0)))
}

/// A validity buffer, or none when every row is valid.
fn nulls_of(valid: impl Iterator<Item = bool>) -> Option<NullBuffer> {
    let valid: Vec<bool> = valid.collect();
    (!valid.iter().all(|&v| v)).then(|| NullBuffer::from(valid))
}

/// The two validities together (a row is valid in both).
fn both(a: Option<NullBuffer>, b: Option<NullBuffer>) -> Option<NullBuffer> {
    NullBuffer::union(a.as_ref(), b.as_ref())
}

impl TableModel {
    /// The raw stored bytes of fixed-width column `i` over physical rows
    /// `[p0, p1)` (row-major, its stored dtype).
    pub fn fixed_bytes(&self, i: usize, p0: u64, p1: u64) -> Result<Vec<u8>, TableError> {
        let column = &self.columns[i];
        let Parts::Fixed {
            values, row_bytes, ..
        } = &column.parts
        else {
            return Err(invalid(column, "not a fixed-width column"));
        };
        read_bytes(
            values,
            &part_name(values),
            p0 * row_bytes,
            (p1 - p0) * row_bytes,
        )
    }

    /// Nulls among rows `rows` of a `.notnull` mask (a false byte is a null).
    pub fn count_nulls(&self, mask: &Array, rows: &RowMap) -> Result<u64, TableError> {
        let mut nulls = 0u64;
        for &(start, n) in &rows.runs {
            let mut at = start;
            while at < start + n {
                let len = (start + n - at).min(MASK_STEP);
                let bytes = read_bytes(mask, &part_name(mask), at, len)?;
                nulls += bytes.iter().filter(|&&b| b == 0).count() as u64;
                at += len;
            }
        }
        Ok(nulls)
    }

    /// Column `i`'s values over physical rows `[p0, p1)`.
    pub fn read_column(&self, i: usize, p0: u64, p1: u64) -> Result<ColumnBatch, TableError> {
        let column = &self.columns[i];
        if let Some(why) = &column.problem {
            return Err(invalid(column, why.clone()));
        }
        match &column.parts {
            Parts::Fixed { dtype, mask, .. } => {
                let bytes = self.fixed_bytes(i, p0, p1)?;
                let mask = match mask {
                    Some(m) => mask_nulls(m, p0, p1)?,
                    None => None,
                };
                fixed_array(column, dtype, bytes, mask).map(ColumnBatch::Arrow)
            }
            Parts::Utf8 {
                offsets,
                bytes,
                mask,
            } => {
                let mask = match mask {
                    Some(m) => mask_nulls(m, p0, p1)?,
                    None => None,
                };
                utf8_array(column, offsets, bytes, p0, p1, mask).map(ColumnBatch::Arrow)
            }
            Parts::Dictionary { codes, words } => {
                let raw = read_bytes(codes, &part_name(codes), p0 * 4, (p1 - p0) * 4)?;
                let null_code = match column.spec.nulls {
                    Nulls::Code(c) => Some(c),
                    _ => None,
                };
                let mut keys = Vec::with_capacity(raw.len() / 4);
                let mut valid = Vec::with_capacity(raw.len() / 4);
                for c in raw.chunks_exact(4) {
                    let code = i32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    if Some(i64::from(code)) == null_code {
                        keys.push(0);
                        valid.push(false);
                    } else if code < 0 || code as usize >= words.len() {
                        return Err(invalid(
                            column,
                            format!(
                                "code {code} outside its dictionary of {} words",
                                words.len()
                            ),
                        ));
                    } else {
                        keys.push(code);
                        valid.push(true);
                    }
                }
                let keys = PrimitiveArray::<Int32Type>::new(
                    ScalarBuffer::from(keys),
                    nulls_of(valid.into_iter()),
                );
                let dict = DictionaryArray::<Int32Type>::try_new(keys, words.clone())
                    .map_err(|e| arrow_err(column, e))?;
                Ok(ColumnBatch::Arrow(Arc::new(dict)))
            }
            Parts::Batches {
                array,
                serializer,
                starts,
            } => batch_rows(column, array, serializer, starts, p0, p1),
            Parts::PerChunk { array } => {
                if p1 > array.nchunks() {
                    return Err(invalid(
                        column,
                        format!("holds {} rows where the table needs {p1}", array.nchunks()),
                    ));
                }
                let mut values = Vec::with_capacity((p1 - p0) as usize);
                for c in p0..p1 {
                    let chunk = array.decode_chunk(c).map_err(|problem| TableError::Part {
                        part: part_name(array),
                        problem: problem.in_chunk(c),
                    })?;
                    values.push(msgpack::parse(&chunk, "row").map_err(|problem| {
                        TableError::Part {
                            part: part_name(array),
                            problem: problem.in_chunk(c),
                        }
                    })?);
                }
                msgpack_values(column, &values)
            }
            Parts::Computed { program, deps } => {
                let inputs: Vec<Vec<u8>> = deps
                    .iter()
                    .map(|&d| self.fixed_bytes(d, p0, p1))
                    .collect::<Result<_, _>>()?;
                let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
                let mut out = vec![0u8; ((p1 - p0) as usize) * program.dtype().itemsize()];
                program
                    .evaluate(&[p0], &[p1 - p0], &refs, &mut out)
                    .map_err(|e| invalid(column, e.to_string()))?;
                fixed_array(column, program.dtype().numpy_str(), out, None).map(ColumnBatch::Arrow)
            }
            Parts::Missing => Err(invalid(column, "its values cannot be read")),
        }
    }
}

/// Items `[p0, p1)` of a BatchArray whose items are a column's rows.
fn batch_rows(
    column: &Column,
    array: &Array,
    serializer: &Serializer,
    starts: &[u64],
    p0: u64,
    p1: u64,
) -> Result<ColumnBatch, TableError> {
    let total = starts.last().copied().unwrap_or(0);
    if p1 > total {
        return Err(invalid(
            column,
            format!("holds {total} rows where the table needs {p1}"),
        ));
    }
    let part = |problem| TableError::Part {
        part: part_name(array),
        problem,
    };
    let first = starts.partition_point(|&s| s <= p0).saturating_sub(1);
    match serializer {
        Serializer::Arrow => {
            let mut parts: Vec<ArrayRef> = Vec::new();
            let mut c = first;
            while (c as u64) < array.nchunks() && starts[c] < p1 {
                let batch = batches::arrow_batch(array, c as u64).map_err(part)?;
                let from = p0.saturating_sub(starts[c]) as usize;
                let to = ((p1 - starts[c]) as usize).min(batch.len());
                parts.push(batch.slice(from, to.saturating_sub(from)));
                c += 1;
            }
            let refs: Vec<&dyn arrow_array::Array> = parts.iter().map(|a| a.as_ref()).collect();
            let joined = match refs.len() {
                0 => arrow_array::new_empty_array(
                    column.spec.arrow.as_ref().unwrap_or(&DataType::Null),
                ),
                _ => arrow_select::concat::concat(&refs).map_err(|e| arrow_err(column, e))?,
            };
            match &column.spec.arrow {
                Ok(t) if t != joined.data_type() => Err(invalid(
                    column,
                    format!(
                        "its Arrow batches hold {} where the schema says {t}",
                        joined.data_type()
                    ),
                )),
                _ => Ok(ColumnBatch::Arrow(joined)),
            }
        }
        _ => {
            let mut values = Vec::with_capacity((p1 - p0) as usize);
            let mut c = first;
            while (c as u64) < array.nchunks() && starts[c] < p1 {
                let items = batches::msgpack_batch(array, c as u64).map_err(part)?;
                let from = p0.saturating_sub(starts[c]) as usize;
                let to = ((p1 - starts[c]) as usize).min(items.len());
                values.extend(items.into_iter().take(to).skip(from));
                c += 1;
            }
            if values.len() as u64 != p1 - p0 {
                return Err(invalid(
                    column,
                    "its batches hold fewer items than their lengths say",
                ));
            }
            msgpack_values(column, &values)
        }
    }
}

/// msgpack row values as the column's Arrow type (object columns: JSON).
fn msgpack_values(column: &Column, values: &[rmpv::Value]) -> Result<ColumnBatch, TableError> {
    if matches!(&column.spec.kind, Kind::Varlen { name } if name == "object") {
        return Ok(ColumnBatch::Json(
            values.iter().map(msgpack::to_json).collect(),
        ));
    }
    let data_type = column
        .spec
        .arrow
        .as_ref()
        .map_err(|why| invalid(column, why.clone()))?;
    let refs: Vec<&rmpv::Value> = values.iter().collect();
    from_msgpack(&refs, data_type)
        .map(ColumnBatch::Arrow)
        .map_err(|why| invalid(column, why))
}

/// The rows `[p0, p1)` of a utf8 column.
fn utf8_array(
    column: &Column,
    offsets: &Array,
    bytes: &Array,
    p0: u64,
    p1: u64,
    mask: Option<NullBuffer>,
) -> Result<ArrayRef, TableError> {
    let raw = read_bytes(offsets, &part_name(offsets), p0 * 8, (p1 - p0 + 1) * 8)?;
    let offs: Vec<i64> = raw.chunks_exact(8).map(|c| i64::decode(c, false)).collect();
    let (first, last) = (offs[0], offs[offs.len() - 1]);
    if first < 0 || offs.windows(2).any(|w| w[1] < w[0]) {
        return Err(invalid(column, "its offsets go backwards"));
    }
    let text = read_bytes(
        bytes,
        &part_name(bytes),
        first as u64,
        (last - first) as u64,
    )?;
    let rebased: Vec<i64> = offs.iter().map(|o| o - first).collect();
    let mut nulls = mask;
    if let Nulls::Sentinel(Sentinel::Text(s)) = &column.spec.nulls {
        let s = s.as_bytes();
        let sentinel = nulls_of(
            rebased
                .windows(2)
                .map(|w| &text[w[0] as usize..w[1] as usize] != s),
        );
        nulls = both(nulls, sentinel);
    }
    let array = LargeStringArray::try_new(
        OffsetBuffer::new(ScalarBuffer::from(rebased)),
        Buffer::from_vec(text),
        nulls,
    )
    .map_err(|e| arrow_err(column, e))?;
    Ok(Arc::new(array))
}

/// A number as a column stores it: its bytes in either byte order, and
/// whether it is the column's null sentinel.
trait StoredNumber: arrow_buffer::ArrowNativeType {
    /// The value of `bytes` (exactly its width), big-endian with `be`.
    fn decode(bytes: &[u8], be: bool) -> Self;
    /// Whether this value is sentinel `s` (a sentinel of another kind
    /// never matches).
    fn is_sentinel(self, s: &Sentinel) -> bool;
}

macro_rules! stored_number {
    ($($native:ty: $v:ident, $s:ident => $test:expr;)*) => {$(
        impl StoredNumber for $native {
            fn decode(bytes: &[u8], be: bool) -> Self {
                let mut a = [0u8; std::mem::size_of::<$native>()];
                a.copy_from_slice(bytes);
                if be {
                    <$native>::from_be_bytes(a)
                } else {
                    <$native>::from_le_bytes(a)
                }
            }
            fn is_sentinel(self, s: &Sentinel) -> bool {
                let ($v, $s) = (self, s);
                $test
            }
        }
    )*};
}

stored_number! {
    i8: v, s => matches!(s, Sentinel::Int(s) if i128::from(v) == *s);
    i16: v, s => matches!(s, Sentinel::Int(s) if i128::from(v) == *s);
    i32: v, s => matches!(s, Sentinel::Int(s) if i128::from(v) == *s);
    i64: v, s => matches!(s, Sentinel::Int(s) if i128::from(v) == *s);
    u8: v, s => matches!(s, Sentinel::Int(s) if i128::from(v) == *s);
    u16: v, s => matches!(s, Sentinel::Int(s) if i128::from(v) == *s);
    u32: v, s => matches!(s, Sentinel::Int(s) if i128::from(v) == *s);
    u64: v, s => matches!(s, Sentinel::Int(s) if i128::from(v) == *s);
    f32: v, s => matches!(s, Sentinel::Float(s) if (s.is_nan() && v.is_nan()) || f64::from(v) == *s);
    f64: v, s => matches!(s, Sentinel::Float(s) if (s.is_nan() && v.is_nan()) || v == *s);
}

/// A column of numbers of Arrow type `T` from its stored `bytes`; a row is
/// null where `mask` says so or where it holds the column's `sentinel`.
fn primitive<T>(
    bytes: &[u8],
    be: bool,
    mask: Option<NullBuffer>,
    sentinel: Option<&Sentinel>,
) -> PrimitiveArray<T>
where
    T: ArrowPrimitiveType,
    T::Native: StoredNumber,
{
    let vals: Vec<T::Native> = bytes
        .chunks_exact(std::mem::size_of::<T::Native>())
        .map(|c| T::Native::decode(c, be))
        .collect();
    let sentinel = sentinel.and_then(|s| nulls_of(vals.iter().map(|v| !v.is_sentinel(s))));
    PrimitiveArray::<T>::new(ScalarBuffer::from(vals), both(mask, sentinel))
}

/// A fixed-width column's stored `bytes` (numpy `dtype`) as its Arrow array.
fn fixed_array(
    column: &Column,
    dtype: &str,
    bytes: Vec<u8>,
    mask: Option<NullBuffer>,
) -> Result<ArrayRef, TableError> {
    let be = dtype.starts_with('>');
    let code = dtype.trim_start_matches(['<', '>', '=', '|']);
    let sentinel = match &column.spec.nulls {
        Nulls::Sentinel(s) => Some(s),
        _ => None,
    };
    let kind = &column.spec.kind;
    Ok(match (kind, code) {
        (Kind::Timestamp { unit, tz }, "i8") | (Kind::Timestamp { unit, tz }, "M8") => {
            let (_, values, nulls) =
                primitive::<Int64Type>(&bytes, be, mask, sentinel).into_parts();
            let tz = tz.clone();
            match unit.as_str() {
                "s" => Arc::new(
                    PrimitiveArray::<TimestampSecondType>::new(values, nulls).with_timezone_opt(tz),
                ) as ArrayRef,
                "ms" => Arc::new(
                    PrimitiveArray::<TimestampMillisecondType>::new(values, nulls)
                        .with_timezone_opt(tz),
                ),
                "us" => Arc::new(
                    PrimitiveArray::<TimestampMicrosecondType>::new(values, nulls)
                        .with_timezone_opt(tz),
                ),
                _ => Arc::new(
                    PrimitiveArray::<TimestampNanosecondType>::new(values, nulls)
                        .with_timezone_opt(tz),
                ),
            }
        }
        (Kind::FixedText, _) if code.starts_with('U') => {
            let width: usize = code[1..].parse::<usize>().unwrap_or(0) * 4;
            let texts = texts_for(&bytes, width, be, column)?;
            let sentinel = match sentinel {
                Some(Sentinel::Text(t)) => nulls_of(texts.iter().map(|s| s != t)),
                _ => None,
            };
            string_array(texts, both(mask, sentinel))
        }
        _ => return fixed_plain(column, code, be, bytes, mask, sentinel),
    })
}

fn texts_for(
    bytes: &[u8],
    width: usize,
    be: bool,
    column: &Column,
) -> Result<Vec<String>, TableError> {
    let rows = bytes.len().checked_div(width).unwrap_or(0);
    let mut texts = Vec::with_capacity(rows);
    for r in 0..rows {
        let cell = &bytes[r * width..(r + 1) * width];
        let mut s = String::new();
        for c in cell.chunks_exact(4) {
            let u = if be {
                u32::from_be_bytes([c[0], c[1], c[2], c[3]])
            } else {
                u32::from_le_bytes([c[0], c[1], c[2], c[3]])
            };
            s.push(
                char::from_u32(u)
                    .ok_or_else(|| invalid(column, format!("U+{u:X} is not a character")))?,
            );
        }
        texts.push(s.trim_end_matches('\0').to_owned());
    }
    Ok(texts)
}

fn string_array(texts: Vec<String>, nulls: Option<NullBuffer>) -> ArrayRef {
    let plain = StringArray::from(texts);
    let (offsets, values, _) = plain.into_parts();
    Arc::new(StringArray::new(offsets, values, nulls))
}

/// The fixed-width kinds but timestamps and text.
fn fixed_plain(
    column: &Column,
    code: &str,
    be: bool,
    bytes: Vec<u8>,
    mask: Option<NullBuffer>,
    sentinel: Option<&Sentinel>,
) -> Result<ArrayRef, TableError> {
    let kind = &column.spec.kind;
    Ok(match (kind, code) {
        (Kind::NdArray { item_shape }, _) => {
            let Ok(DataType::FixedSizeList(field, k)) = &column.spec.arrow else {
                return Err(invalid(column, "an ndarray column without an Arrow type"));
            };
            let item_code = match field.data_type() {
                DataType::Float32 => "f4",
                DataType::Float64 => "f8",
                DataType::Int8 => "i1",
                DataType::Int16 => "i2",
                DataType::Int32 => "i4",
                DataType::Int64 => "i8",
                DataType::UInt8 => "u1",
                DataType::UInt16 => "u2",
                DataType::UInt32 => "u4",
                DataType::UInt64 => "u8",
                DataType::Boolean => "b1",
                other => return Err(invalid(column, format!("ndarray items of {other}"))),
            };
            let _ = item_shape;
            let items = numbers(column, item_code, be, bytes, None, None)?;
            let rows = if *k == 0 {
                0
            } else {
                items.len() / *k as usize
            };
            Arc::new(
                FixedSizeListArray::try_new_with_length(field.clone(), *k, items, mask, rows)
                    .map_err(|e| arrow_err(column, e))?,
            )
        }
        (Kind::FixedBytes, _) if code.starts_with('S') => {
            let width: usize = code[1..].parse().unwrap_or(0);
            let rows = bytes.len().checked_div(width).unwrap_or(0);
            let cells: Vec<&[u8]> = (0..rows)
                .map(|r| {
                    let cell = &bytes[r * width..(r + 1) * width];
                    let end = cell.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
                    &cell[..end]
                })
                .collect();
            let plain = LargeBinaryArray::from_vec(cells);
            let (offsets, values, _) = plain.into_parts();
            Arc::new(LargeBinaryArray::new(offsets, values, mask))
        }
        _ => numbers(column, code, be, bytes, mask, sentinel)?,
    })
}

/// Numbers and bools of numpy type `code`.
fn numbers(
    column: &Column,
    code: &str,
    be: bool,
    bytes: Vec<u8>,
    mask: Option<NullBuffer>,
    sentinel: Option<&Sentinel>,
) -> Result<ArrayRef, TableError> {
    let want_bool = matches!(column.spec.arrow, Ok(DataType::Boolean));
    Ok(match code {
        "b1" => {
            let values: Vec<bool> = bytes.iter().map(|&b| b != 0).collect();
            Arc::new(BooleanArray::new(values.into(), mask))
        }
        "u1" if want_bool => {
            // A bool under sentinel storage: 255 is null.
            let sentinel_nulls = nulls_of(bytes.iter().map(|&b| b != 255));
            let values: Vec<bool> = bytes.iter().map(|&b| b != 0 && b != 255).collect();
            Arc::new(BooleanArray::new(values.into(), both(mask, sentinel_nulls)))
        }
        "i1" => Arc::new(primitive::<Int8Type>(&bytes, be, mask, sentinel)),
        "i2" => Arc::new(primitive::<Int16Type>(&bytes, be, mask, sentinel)),
        "i4" => Arc::new(primitive::<Int32Type>(&bytes, be, mask, sentinel)),
        "i8" => Arc::new(primitive::<Int64Type>(&bytes, be, mask, sentinel)),
        "u1" => Arc::new(primitive::<UInt8Type>(&bytes, be, mask, sentinel)),
        "u2" => Arc::new(primitive::<UInt16Type>(&bytes, be, mask, sentinel)),
        "u4" => Arc::new(primitive::<UInt32Type>(&bytes, be, mask, sentinel)),
        "u8" => Arc::new(primitive::<UInt64Type>(&bytes, be, mask, sentinel)),
        "f4" => Arc::new(primitive::<Float32Type>(&bytes, be, mask, sentinel)),
        "f8" => Arc::new(primitive::<Float64Type>(&bytes, be, mask, sentinel)),
        other => {
            return Err(invalid(
                column,
                format!("stored as numpy {other:?}, which has no Arrow type here"),
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_numbers_decode_both_byte_orders_and_find_their_sentinel() {
        let le = primitive::<Int16Type>(&[1, 0, 0xff, 0x7f, 0xfe, 0xff], false, None, None);
        assert_eq!(le.values().as_ref(), [1, 32767, -2]);
        assert_eq!(le.null_count(), 0);
        let be = primitive::<UInt32Type>(&[0, 0, 1, 0, 0xff, 0xff, 0xff, 0xff], true, None, None);
        assert_eq!(be.values().as_ref(), [256, u32::MAX]);
        // -1 is the null sentinel; a float sentinel never matches an int.
        let ints = [5i64, -1, 7].map(i64::to_le_bytes).concat();
        let with = primitive::<Int64Type>(&ints, false, None, Some(&Sentinel::Int(-1)));
        assert_eq!((with.is_null(1), with.null_count()), (true, 1));
        let other = primitive::<Int64Type>(&ints, false, None, Some(&Sentinel::Float(-1.0)));
        assert_eq!(other.null_count(), 0);
        // NaN as a sentinel matches every NaN; a number sentinel its value.
        let floats = [1.5f64, f64::NAN, -0.25].map(f64::to_le_bytes).concat();
        let nan = primitive::<Float64Type>(&floats, false, None, Some(&Sentinel::Float(f64::NAN)));
        assert_eq!((nan.is_null(1), nan.null_count()), (true, 1));
        let f4 = [1.5f32, -0.25].map(f32::to_be_bytes).concat();
        let quarter = primitive::<Float32Type>(&f4, true, None, Some(&Sentinel::Float(-0.25)));
        assert_eq!((quarter.value(0), quarter.is_null(1)), (1.5, true));
        // A mask and a sentinel together.
        let mask = NullBuffer::from(vec![false, true, true]);
        let both = primitive::<Int64Type>(&ints, false, Some(mask), Some(&Sentinel::Int(7)));
        assert_eq!(both.null_count(), 2);
        assert!(both.is_valid(1));
    }
}
