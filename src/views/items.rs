//! `items.jsonl`: the items of an ObjectArray, BatchArray or ListArray as
//! JSON lines, so a shell user can read them.
//!
//! - ObjectArray (metalayer `vlarray`): each chunk is one msgpack item; one
//!   line per item.
//! - BatchArray (metalayer `batcharray`): each chunk is one batch; one line
//!   per batch (a JSON list of its items), as python-blosc2 iterates it.
//!   Its items are msgpack or, serializer `arrow`, the rows of Arrow IPC
//!   streams ([`super::batches`]); another serializer is refused (the
//!   array's `meta.json` says so under `items_error`).
//! - ListArray (metalayer `listarray`): one line per row, whichever its
//!   backend: an ObjectArray (`vl`, one row per chunk) or a BatchArray
//!   (`batch`, whose items are the rows).
//!
//! msgpack becomes JSON with the same rules as `meta.json`
//! ([`crate::format::msgpack::to_json`]). The whole file is built when the
//! array is loaded, so it is offered only for arrays of at most
//! [`MAX_ITEMS_BYTES`] decoded bytes.

use serde_json::Value as Json;

use crate::format::{msgpack, Array, PResult, Problem};

/// Largest decoded array whose items are offered as `items.jsonl`.
pub const MAX_ITEMS_BYTES: u64 = 64 << 20;
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

fn push_line(out: &mut Vec<u8>, line: &Json) -> PResult<()> {
    serde_json::to_writer(&mut *out, line).map_err(|e| Problem::corrupt("item", e.to_string()))?;
    out.push(b'\n');
    Ok(())
}

/// The `items.jsonl` bytes of `array` (of kind `kind`).
pub fn items_jsonl(array: &Array, kind: ItemsKind) -> PResult<Vec<u8>> {
    if array.data_len() > MAX_ITEMS_BYTES {
        return Err(Problem::Limit(format!(
            "{} decoded bytes of items (at most {MAX_ITEMS_BYTES} are shown as items.jsonl)",
            array.data_len()
        )));
    }
    let mut out = Vec::new();
    match kind {
        ItemsKind::Object => {
            for c in 0..array.nchunks() {
                let chunk = array.decode_chunk(c).map_err(|p| p.in_chunk(c))?;
                let mut cursor = chunk.as_slice();
                let v = rmpv::decode::read_value_with_max_depth(&mut cursor, MAX_DEPTH)
                    .map_err(|e| Problem::corrupt("item", format!("msgpack: {e}")).in_chunk(c))?;
                push_line(&mut out, &msgpack::to_json(&v))?;
            }
        }
        ItemsKind::Batch => {
            for batch in super::batches::batches_json(array)? {
                push_line(&mut out, &Json::Array(batch))?;
            }
        }
        ItemsKind::ListRows => {
            for batch in super::batches::batches_json(array)? {
                for row in &batch {
                    push_line(&mut out, row)?;
                }
            }
        }
    }
    Ok(out)
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
        let kind = kind_of(&array).expect("an ObjectArray");
        let text = String::from_utf8(items_jsonl(&array, kind).unwrap()).unwrap();
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
    }
}
