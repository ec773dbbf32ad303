//! `items.jsonl`: the items of an ObjectArray, BatchArray or ListArray as
//! JSON lines, so a shell user can read them.
//!
//! - ObjectArray (metalayer `vlarray`): each chunk is one msgpack item; one
//!   line per item.
//! - BatchArray (metalayer `batcharray`): each chunk is one batch; one line
//!   per batch (a JSON list of its items), as python-blosc2 iterates it.
//!   Its items are msgpack or, serializer `arrow`, the rows of Arrow IPC
//!   streams ([`crate::tables::batch_array`]); another serializer is refused (the
//!   array's `meta.json` says so under `items_error`).
//! - ListArray (metalayer `listarray`): one line per row, whichever its
//!   backend: an ObjectArray (`vl`, one row per chunk) or a BatchArray
//!   (`batch`, whose items are the rows).
//!
//! msgpack becomes JSON with the same rules as `meta.json`
//! ([`crate::format::msgpack::to_json`]). The file is rendered a chunk at
//! a time by [`super::piece_file`] (one piece per chunk: an ObjectArray's
//! item, a BatchArray's batch, the rows of a ListArray's batch), so a
//! container of any size is served in the memory of the pieces kept.

use std::sync::Arc;

use serde_json::Value as Json;

use crate::format::{msgpack, Array, PResult, Problem};

use crate::tables::batch_array::{self, Serializer};

use super::column_jsonl::{batch_json, batch_lines, push_line};
use super::piece_file::{PieceFile, PieceRenderer, RenderError};

/// Deepest msgpack nesting accepted.
const MAX_DEPTH: usize = 64;

/// Which kind of variable-length container an array is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemsKind {
    /// One msgpack item per chunk (an ObjectArray, or a ListArray on one).
    Object,
    /// One batch per chunk, one line per batch.
    Batch,
    /// A ListArray on a BatchArray: one line per row (per item of the batches).
    ListRows,
}

/// The container kind of `array`, from its metalayers.
pub fn kind_of(array: &Array) -> Option<ItemsKind> {
    let f = array.frame();
    if f.metalayer("vlarray").is_some() {
        Some(ItemsKind::Object)
    } else if f.metalayer("batcharray").is_some() {
        Some(if f.metalayer("listarray").is_some() {
            ItemsKind::ListRows
        } else {
            ItemsKind::Batch
        })
    } else {
        None
    }
}

/// The renderer of a container's `items.jsonl`: piece `c` is what chunk
/// `c` holds, as JSON lines.
struct ItemsJsonl {
    array: Arc<Array>,
    kind: ItemsKind,
    serializer: Serializer,
}

impl ItemsJsonl {
    /// The JSON lines of chunk `c`.
    fn lines(&self, c: u64) -> Result<Vec<u8>, RenderError> {
        let mut out = Vec::new();
        let mut push = |value: &Json| push_line(&mut out, value);
        match self.kind {
            ItemsKind::Object => {
                let chunk = self.array.decode_chunk(c).map_err(|p| p.in_chunk(c))?;
                let mut cursor = chunk.as_slice();
                let v = rmpv::decode::read_value_with_max_depth(&mut cursor, MAX_DEPTH)
                    .map_err(|e| Problem::corrupt("item", format!("msgpack: {e}")).in_chunk(c))?;
                push(&msgpack::to_json(&v))?;
            }
            ItemsKind::Batch => {
                let batch = batch_array::batch_values(&self.array, &self.serializer, c)?;
                push(&Json::Array(batch_json(batch)))?;
            }
            ItemsKind::ListRows => {
                let batch = batch_array::batch_values(&self.array, &self.serializer, c)?;
                out.extend_from_slice(&batch_lines(&batch)?);
            }
        }
        Ok(out)
    }
}

impl PieceRenderer for ItemsJsonl {
    fn measure(&self) -> Result<Vec<u64>, RenderError> {
        (0..self.array.nchunks() as usize)
            .map(|c| Ok(self.render(c)?.len() as u64))
            .collect()
    }

    fn render(&self, piece: usize) -> Result<Vec<u8>, RenderError> {
        let count = self.array.nchunks() as usize;
        if piece >= count {
            return Err(RenderError::NoSuchPiece { piece, count });
        }
        self.lines(piece as u64)
    }
}

/// The `items.jsonl` of `array`: `None` for an array that is no container,
/// an error for one whose items cannot be read (a BatchArray serializer
/// this reader does not know).
pub fn items_file(array: &Arc<Array>) -> Option<PResult<PieceFile>> {
    let kind = kind_of(array)?;
    let serializer = batch_array::serializer(array).unwrap_or(Serializer::Msgpack);
    if let Serializer::Unknown(name) = &serializer {
        if kind != ItemsKind::Object {
            return Some(Err(batch_array::unknown(name)));
        }
    }
    let name = array.name().join("items.jsonl").display().to_string();
    let renderer = ItemsJsonl {
        array: array.clone(),
        kind,
        serializer,
    };
    Some(Ok(PieceFile::new(
        name,
        Box::new(renderer),
        array.may_wait(),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::testing::fixture;

    /// objects.b2f is an ObjectArray of eight items; its manifest holds the
    /// items as python-blosc2 wrote them (bytes as `{"base64": ...}`).
    #[test]
    fn object_array_items_are_one_json_line_each() {
        let array = fixture("stores/objects.b2f");
        assert_eq!(kind_of(&array), Some(ItemsKind::Object));
        let file = items_file(&array).expect("an ObjectArray").unwrap();
        let text = String::from_utf8(file.read(0, u64::MAX).unwrap()).unwrap();
        let manifest: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/stores/manifest.json"
            ))
            .unwrap(),
        )
        .unwrap();
        let expected = manifest["items"]["objects.b2f"].as_array().unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(&lines, expected);
        assert!(text.ends_with('\n'));
    }

    #[test]
    fn a_numeric_array_has_no_items() {
        assert!(kind_of(&fixture("dtype_le_f8.b2nd")).is_none());
        assert!(items_file(&fixture("dtype_le_f8.b2nd")).is_none());
    }
}
