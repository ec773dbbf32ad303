//! The items of a BatchArray's batches, as its serializer wrote them: a
//! list of msgpack values, or (serializer `arrow`) the rows of the `values`
//! column of Arrow IPC streams. `items.jsonl` and a table's variable-length
//! columns read batches through here.
//!
//! A batch is one chunk whose blocks are each one serialized group of
//! items; the decoded chunk is those groups back to back: msgpack arrays,
//! or complete IPC streams (schema, one record batch, end-of-stream
//! marker).

use std::io::Cursor;

use arrow_array::ArrayRef;
use rmpv::Value;
use serde_json::Value as Json;

use crate::format::{msgpack, Array, PResult, Problem};

use super::seam::ColumnBatch;

/// Deepest msgpack nesting accepted.
const MAX_DEPTH: usize = 64;

/// How a BatchArray's items are serialized (its `batcharray` metalayer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Serializer {
    /// Each block is one msgpack array of items.
    Msgpack,
    /// Each block is an Arrow IPC stream whose `values` column holds the items.
    Arrow,
    /// A serializer this reader does not know (its name, as written).
    Unknown(String),
}

/// The serializer the `batcharray` metalayer of `array` names (`None`: it
/// has no such metalayer; an absent or unreadable name is msgpack, the
/// only serializer of python-blosc2's first BatchArrays).
pub fn serializer(array: &Array) -> Option<Serializer> {
    let bytes = array.frame().metalayer("batcharray")?;
    let name = msgpack::parse(bytes, "batcharray metalayer")
        .ok()
        .map(|v| msgpack::to_json(&v))
        .and_then(|j| {
            j.get("serializer")
                .and_then(Json::as_str)
                .map(str::to_owned)
        });
    Some(match name.as_deref() {
        None | Some("msgpack") => Serializer::Msgpack,
        Some("arrow") => Serializer::Arrow,
        Some(other) => Serializer::Unknown(other.to_owned()),
    })
}

/// The items of batch `c` (chunk `c`) of a msgpack BatchArray, in order.
pub fn msgpack_batch(array: &Array, c: u64) -> PResult<Vec<Value>> {
    let chunk = array.decode_chunk(c).map_err(|p| p.in_chunk(c))?;
    let mut cursor = chunk.as_slice();
    let mut items = Vec::new();
    while !cursor.is_empty() {
        let block = rmpv::decode::read_value_with_max_depth(&mut cursor, MAX_DEPTH)
            .map_err(|e| Problem::corrupt("batch", format!("msgpack: {e}")).in_chunk(c))?;
        match block {
            Value::Array(list) => items.extend(list),
            other => items.push(other),
        }
    }
    Ok(items)
}

/// The items of batch `c` of an Arrow BatchArray: the `values` column of
/// each of its IPC streams, joined in order.
pub fn arrow_batch(array: &Array, c: u64) -> PResult<ArrayRef> {
    let chunk = array.decode_chunk(c).map_err(|p| p.in_chunk(c))?;
    arrow_values(&chunk).map_err(|p| p.in_chunk(c))
}

/// The `values` columns of the IPC streams back to back in `bytes`, joined.
pub fn arrow_values(bytes: &[u8]) -> PResult<ArrayRef> {
    let bad = |e: &dyn std::fmt::Display| Problem::corrupt("arrow batch", e.to_string());
    let mut cursor = Cursor::new(bytes);
    let mut parts: Vec<ArrayRef> = Vec::new();
    while (cursor.position() as usize) < bytes.len() {
        let at = cursor.position();
        let reader =
            arrow_ipc::reader::StreamReader::try_new(&mut cursor, None).map_err(|e| bad(&e))?;
        let schema = reader.schema();
        let column = schema
            .index_of("values")
            .map_err(|_| bad(&"no column named values"))?;
        for batch in reader {
            let batch = batch.map_err(|e| bad(&e))?;
            parts.push(batch.column(column).clone());
        }
        if cursor.position() == at {
            return Err(bad(&"an IPC stream of no bytes"));
        }
    }
    match parts.len() {
        0 => Err(bad(&"no IPC stream")),
        1 => Ok(parts.remove(0)),
        _ => {
            let refs: Vec<&dyn arrow_array::Array> = parts.iter().map(|a| a.as_ref()).collect();
            arrow_select::concat::concat(&refs).map_err(|e| bad(&e))
        }
    }
}

/// The items of batch `c` of `array`, serialized by `serializer`: msgpack
/// items as JSON (by the rules of `meta.json`), Arrow items as the Arrow
/// rows they are; an unknown serializer is refused.
pub fn batch_values(array: &Array, serializer: &Serializer, c: u64) -> PResult<ColumnBatch> {
    match serializer {
        Serializer::Msgpack => Ok(ColumnBatch::Json(
            msgpack_batch(array, c)?
                .iter()
                .map(msgpack::to_json)
                .collect(),
        )),
        Serializer::Arrow => arrow_batch(array, c).map(ColumnBatch::Arrow),
        Serializer::Unknown(name) => Err(unknown(name)),
    }
}

/// Why a BatchArray of serializer `name` is not read.
pub fn unknown(name: &str) -> Problem {
    Problem::Unsupported {
        what: "BatchArray serializer".into(),
        detail: format!("{name:?} (msgpack and arrow are read)"),
    }
}
