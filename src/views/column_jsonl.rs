//! A table column's `items.jsonl` (one JSON value per live row, null as
//! `null`), rendered a record batch of rows at a time by
//! [`super::piece_file`], so a column of any length is served in the
//! memory of the pieces kept.
//!
//! [`crate::tables`], which knows how a column is stored, gives the
//! column's values batch by batch ([`ColumnSource`]: the batches
//! `table.csv` and `table.arrow` render); here each batch becomes one piece
//! of the file.

use serde_json::Value as Json;

use crate::format::Problem;
use crate::tables::{ColumnBatch, ColumnSource};

use super::arrow_json::value_json;
use super::piece_file::{PieceRenderer, RenderError};

/// The JSON lines of one batch: one `\n`-terminated value per row.
pub fn batch_lines(values: &ColumnBatch) -> Result<Vec<u8>, RenderError> {
    let mut out = Vec::new();
    match values {
        ColumnBatch::Arrow(a) => {
            for row in 0..a.len() {
                push_line(&mut out, &value_json(a.as_ref(), row))?;
            }
        }
        ColumnBatch::Json(v) => {
            for value in v {
                push_line(&mut out, value)?;
            }
        }
    }
    Ok(out)
}

/// The values of a batch as JSON, one per row.
pub fn batch_json(values: ColumnBatch) -> Vec<Json> {
    match values {
        ColumnBatch::Arrow(a) => (0..a.len())
            .map(|row| value_json(a.as_ref(), row))
            .collect(),
        ColumnBatch::Json(v) => v,
    }
}

/// Append `value` and a newline to `out`.
pub fn push_line(out: &mut Vec<u8>, value: &Json) -> Result<(), RenderError> {
    serde_json::to_writer(&mut *out, value)
        .map_err(|e| Problem::corrupt("item", format!("as JSON: {e}")))?;
    out.push(b'\n');
    Ok(())
}

/// The renderer of a column's `items.jsonl`: piece `b` is the lines of
/// batch `b`.
pub struct ColumnJsonl {
    source: Box<dyn ColumnSource>,
}

impl ColumnJsonl {
    /// The `items.jsonl` of the column `source` gives.
    pub fn new(source: Box<dyn ColumnSource>) -> ColumnJsonl {
        ColumnJsonl { source }
    }
}

impl PieceRenderer for ColumnJsonl {
    fn measure(&self) -> Result<Vec<u64>, RenderError> {
        (0..self.source.batch_count())
            .map(|b| Ok(self.render(b)?.len() as u64))
            .collect()
    }

    fn render(&self, piece: usize) -> Result<Vec<u8>, RenderError> {
        let count = self.source.batch_count();
        if piece >= count {
            return Err(RenderError::NoSuchPiece { piece, count });
        }
        batch_lines(&self.source.batch(piece)?)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::types::Int32Type;
    use arrow_array::{DictionaryArray, Float64Array, Int32Array, ListArray, StringArray};

    use super::*;
    use crate::tables::TableError;
    use crate::views::piece_file::PieceFile;

    /// Batches given as they are; batch `broken` cannot be read.
    struct Given {
        batches: Vec<ColumnBatch>,
        broken: Option<usize>,
    }

    impl ColumnSource for Given {
        fn batch_count(&self) -> usize {
            self.batches.len()
        }
        fn batch(&self, b: usize) -> Result<ColumnBatch, TableError> {
            if self.broken == Some(b) {
                return Err(TableError::Part {
                    part: "_cols/name.utf8".into(),
                    problem: Problem::corrupt("chunk", "bad bytes"),
                });
            }
            Ok(match &self.batches[b] {
                ColumnBatch::Arrow(a) => ColumnBatch::Arrow(a.clone()),
                ColumnBatch::Json(v) => ColumnBatch::Json(v.clone()),
            })
        }
    }

    fn file(batches: Vec<ColumnBatch>, broken: Option<usize>) -> PieceFile {
        let source = Given { batches, broken };
        PieceFile::new(
            "t.b2d/name/items.jsonl".into(),
            Box::new(ColumnJsonl::new(Box::new(source))),
            false,
        )
    }

    #[test]
    fn each_row_is_one_json_line_across_batches() {
        let words = DictionaryArray::<Int32Type>::new(
            Int32Array::from(vec![Some(1), None, Some(0)]),
            Arc::new(StringArray::from(vec!["a\"b", "é"])),
        );
        let lists = ListArray::from_iter_primitive::<Int32Type, _, _>([
            Some(vec![Some(1), None]),
            None,
            Some(vec![]),
        ]);
        let f = file(
            vec![
                ColumnBatch::Arrow(Arc::new(StringArray::from(vec![Some("x,y"), None]))),
                ColumnBatch::Arrow(Arc::new(Float64Array::from(vec![0.5, f64::NAN]))),
                ColumnBatch::Arrow(Arc::new(StringArray::from(Vec::<&str>::new()))),
                ColumnBatch::Arrow(Arc::new(words)),
                ColumnBatch::Arrow(Arc::new(lists)),
                ColumnBatch::Json(vec![serde_json::json!({"k": [1, null]}), Json::Null]),
            ],
            None,
        );
        let want = "\"x,y\"\nnull\n0.5\n\"NaN\"\n\"é\"\nnull\n\"a\\\"b\"\n[1,null]\nnull\n[]\n{\"k\":[1,null]}\nnull\n";
        assert_eq!(f.len(), Some(want.len() as u64));
        assert_eq!(f.read(0, u64::MAX).unwrap(), want.as_bytes());
        // A window crossing batches is that slice of the whole file.
        assert_eq!(f.read(3, 20).unwrap(), &want.as_bytes()[3..23]);
    }

    #[test]
    fn a_batch_that_cannot_be_read_names_the_file_and_the_part() {
        let batch = || ColumnBatch::Arrow(Arc::new(StringArray::from(vec!["a"])));
        let f = file(vec![batch(), batch()], Some(1));
        assert_eq!(f.len(), None, "not measured: not presented");
        let e = crate::format::Error::from(f.read(0, 1).unwrap_err());
        let text = e.to_string();
        assert!(
            text.contains("t.b2d/name/items.jsonl") && text.contains("_cols/name.utf8"),
            "{text}"
        );
    }
}
