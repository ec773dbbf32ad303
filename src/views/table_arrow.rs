//! `table.arrow` of a CTable: an Arrow IPC file (Feather v2) of the table's
//! logical columns ([`TableSource`]), one record batch per batch of the
//! table, that `pyarrow.ipc.open_file`, `pyarrow.feather.read_table` and
//! `polars.read_ipc` read as `CTable.to_arrow()`.
//!
//! The file is `ARROW1` and the schema message (piece 0); each record batch
//! message (piece `i + 1` for batch `i`; piece 1 also holds the dictionary
//! batches, written once, before the first record batch, since an IPC
//! file has one dictionary per field); the end-of-stream marker, the footer
//! (the schema again and every block's offset and lengths) and `ARROW1`
//! (the last piece).
//!
//! Why these pieces of arrow-ipc: the measuring pass runs arrow-ipc's own
//! `FileWriter` over a sink that only counts bytes (it writes a batch's
//! buffers to the sink without copying them), so the header, each batch's
//! length and the footer with its block offsets are the writer's own; the
//! header and footer bytes are kept. A record batch is rendered on its own
//! by the writer's building block, `IpcDataGenerator::encode`, framed by
//! `write_message`: the same flatbuffer and body layout `FileWriter` writes
//! (a unit test holds the pieces to a whole file `FileWriter` wrote).
//!
//! [`TableSource`]: crate::tables::TableSource

use std::io::Write;
use std::sync::OnceLock;

use arrow_array::RecordBatch;
use arrow_ipc::writer::{
    write_message, DictionaryTracker, FileWriter, IpcDataGenerator, IpcWriteContext,
    IpcWriteOptions,
};
use arrow_ipc::MetadataVersion;
use arrow_schema::SchemaRef;

use super::piece_file::{PieceRenderer, RenderError};
use crate::tables::SharedTableSource;

/// Buffers and messages are aligned to 64 bytes (arrow-ipc's default),
/// so readers that map the file can use its buffers in place.
const ALIGNMENT: usize = 64;

/// The file's first and last bytes, kept from the measuring pass.
#[derive(Debug)]
struct Ends {
    /// `ARROW1`, padding, the schema message.
    head: Vec<u8>,
    /// End-of-stream marker, footer, its length, `ARROW1`.
    tail: Vec<u8>,
}

/// The renderer of a table's `table.arrow`.
pub struct TableArrow {
    source: SharedTableSource,
    schema: SchemaRef,
    ends: OnceLock<Ends>,
}

impl std::fmt::Debug for TableArrow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableArrow")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

/// A sink that counts what is written and keeps it only while `keep`.
#[derive(Default)]
struct Counting {
    at: u64,
    keep: bool,
    kept: Vec<u8>,
}

impl Write for Counting {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.at += buf.len() as u64;
        if self.keep {
            self.kept.extend_from_slice(buf);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn options() -> IpcWriteOptions {
    IpcWriteOptions::try_new(ALIGNMENT, false, MetadataVersion::V5)
        .unwrap_or_else(|_| IpcWriteOptions::default())
}

impl TableArrow {
    /// The Arrow file of the table `source`.
    pub fn new(source: SharedTableSource) -> TableArrow {
        TableArrow {
            schema: source.schema(),
            source,
            ends: OnceLock::new(),
        }
    }

    /// Batch `i` of the table, checked to have the table's schema.
    fn batch(&self, i: usize) -> Result<RecordBatch, RenderError> {
        let batch = self.source.batch(i)?;
        if batch.schema_ref().fields() != self.schema.fields() {
            return Err(RenderError::OtherSchema { batch: i });
        }
        Ok(batch)
    }
}

impl PieceRenderer for TableArrow {
    fn measure(&self) -> Result<Vec<u64>, RenderError> {
        let batches = self.source.batch_rows().len();
        let mut sink = Counting {
            keep: true,
            ..Counting::default()
        };
        let mut writer = FileWriter::try_new_with_options(&mut sink, &self.schema, options())?;
        let head = std::mem::take(&mut writer.get_mut().kept);
        writer.get_mut().keep = false;
        let mut lengths = Vec::with_capacity(batches + 2);
        lengths.push(head.len() as u64);
        for i in 0..batches {
            let batch = self.batch(i)?;
            let before = writer.get_ref().at;
            writer.write(&batch)?;
            lengths.push(writer.get_ref().at - before);
        }
        writer.get_mut().keep = true;
        writer.finish()?;
        let tail = std::mem::take(&mut writer.get_mut().kept);
        lengths.push(tail.len() as u64);
        let _ = self.ends.set(Ends { head, tail });
        Ok(lengths)
    }

    fn render(&self, piece: usize) -> Result<Vec<u8>, RenderError> {
        let batches = self.source.batch_rows().len();
        let ends = self
            .ends
            .get()
            .ok_or(RenderError::NoSuchPiece { piece, count: 0 })?;
        if piece == 0 {
            return Ok(ends.head.clone());
        }
        if piece == batches + 1 {
            return Ok(ends.tail.clone());
        }
        if piece > batches + 1 {
            return Err(RenderError::NoSuchPiece {
                piece,
                count: batches + 2,
            });
        }
        let batch = self.batch(piece - 1)?;
        let options = options();
        let generator = IpcDataGenerator::default();
        // The schema gives each dictionary its id, in the order the file's
        // schema does.
        let mut tracker = DictionaryTracker::new(false);
        let _ =
            generator.schema_to_bytes_with_dictionary_tracker(&self.schema, &mut tracker, &options);
        let (dictionaries, message) = generator.encode(
            &batch,
            &mut tracker,
            &options,
            &mut IpcWriteContext::default(),
        )?;
        let mut out = Vec::new();
        if piece == 1 {
            for dictionary in dictionaries {
                write_message(&mut out, dictionary, &options)?;
            }
        }
        write_message(&mut out, message, &options)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow_array::types::Int32Type;
    use arrow_array::{
        Array as _, ArrayRef, DictionaryArray, FixedSizeListArray, Float32Array, Float64Array,
        Int32Array, Int64Array, LargeBinaryArray, LargeStringArray, ListArray, StringArray,
        StructArray, TimestampMillisecondArray,
    };
    use arrow_ipc::reader::FileReader;
    use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};

    use crate::views::piece_file::in_memory::Batches;
    use crate::views::piece_file::PieceFile;

    /// A batch of `n` rows from `start` with a column of every shape the
    /// tables give: nulls, NaN, large strings, a dictionary (the same
    /// words in every batch), a list, nested structs, timestamps, bytes,
    /// fixed-size lists.
    fn batch(schema: &SchemaRef, start: i64, n: usize, words: &ArrayRef) -> RecordBatch {
        let rows: Vec<i64> = (start..start + n as i64).collect();
        let x: Float32Array = rows
            .iter()
            .map(|&i| (i % 5 != 1).then_some(if i == 3 { f32::NAN } else { i as f32 * 0.25 }))
            .collect();
        let s: LargeStringArray = rows
            .iter()
            .map(|&i| (i % 6 != 1).then(|| ["a,b", "", "héllo", "x\"y"][i as usize % 4]))
            .collect();
        let keys: Int32Array = rows
            .iter()
            .map(|&i| (i % 7 != 3).then_some((i % 3) as i32))
            .collect();
        let d = DictionaryArray::<Int32Type>::try_new(keys, words.clone()).unwrap();
        let l = ListArray::from_iter_primitive::<Int32Type, _, _>(
            rows.iter()
                .map(|&i| (i % 8 != 5).then(|| (0..i as i32 % 3).map(Some).collect::<Vec<_>>())),
        );
        let lon: Float64Array = rows.iter().map(|&i| Some(i as f64 * 1.5)).collect();
        let begin = StructArray::from(vec![(
            Arc::new(Field::new("lon", DataType::Float64, true)),
            Arc::new(lon) as ArrayRef,
        )]);
        let count: Int32Array = rows
            .iter()
            .map(|&i| (i % 3 != 2).then_some(i as i32))
            .collect();
        let trip = StructArray::from(vec![
            (
                Arc::new(Field::new("begin", begin.data_type().clone(), true)),
                Arc::new(begin) as ArrayRef,
            ),
            (
                Arc::new(Field::new("n", DataType::Int32, true)),
                Arc::new(count) as ArrayRef,
            ),
        ]);
        let ts: TimestampMillisecondArray = rows
            .iter()
            .map(|&i| (i % 9 != 4).then_some(1_600_000_000_000 + i))
            .collect();
        let bin: LargeBinaryArray = rows
            .iter()
            .map(|&i| (i % 6 != 3).then(|| vec![i as u8; i as usize % 3]))
            .collect::<Vec<_>>()
            .iter()
            .map(|v| v.as_deref())
            .collect();
        let items =
            Float32Array::from_iter_values(rows.iter().flat_map(|&i| [i as f32, -i as f32]));
        let vec = FixedSizeListArray::new(
            Arc::new(Field::new("item", DataType::Float32, true)),
            2,
            Arc::new(items),
            None,
        );
        RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(rows.clone())),
                Arc::new(x),
                Arc::new(s),
                Arc::new(d),
                Arc::new(l),
                Arc::new(trip),
                Arc::new(ts),
                Arc::new(bin),
                Arc::new(vec),
            ],
        )
        .unwrap()
    }

    fn schema() -> SchemaRef {
        let begin = Fields::from(vec![Field::new("lon", DataType::Float64, true)]);
        let trip = Fields::from(vec![
            Field::new("begin", DataType::Struct(begin), true),
            Field::new("n", DataType::Int32, true),
        ]);
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("x", DataType::Float32, true),
            Field::new("s", DataType::LargeUtf8, true),
            Field::new(
                "d",
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                true,
            ),
            Field::new_list("l", Field::new_list_field(DataType::Int32, true), true),
            Field::new("trip", DataType::Struct(trip), true),
            Field::new("ts", DataType::Timestamp(TimeUnit::Millisecond, None), true),
            Field::new("bin", DataType::LargeBinary, true),
            Field::new(
                "vec",
                DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Float32, true)), 2),
                true,
            ),
        ]))
    }

    fn table(sizes: &[usize]) -> (Vec<RecordBatch>, PieceFile) {
        let schema = schema();
        let words: ArrayRef = Arc::new(StringArray::from(vec!["red", "green", "blue", "unused"]));
        let mut start = 0;
        let batches: Vec<RecordBatch> = sizes
            .iter()
            .map(|&n| {
                let b = batch(&schema, start, n, &words);
                start += n as i64;
                b
            })
            .collect();
        let source = Arc::new(Batches::new(schema, batches.clone()));
        let file = PieceFile::new(
            "t/table.arrow".into(),
            Box::new(TableArrow::new(source)),
            false,
        );
        (batches, file)
    }

    #[test]
    fn the_pieces_make_the_file_arrow_ipc_writes_whole() {
        let (batches, file) = table(&[10, 0, 7, 13]);
        let mut whole = Vec::new();
        {
            let mut writer =
                FileWriter::try_new_with_options(&mut whole, &schema(), options()).unwrap();
            for b in &batches {
                writer.write(b).unwrap();
            }
            writer.finish().unwrap();
        }
        assert_eq!(file.len(), Some(whole.len() as u64));
        assert!(file.read(0, u64::MAX).unwrap() == whole, "the same bytes");
        // Any window, from a fresh file (no piece kept), is that slice.
        for (offset, size) in [
            (0u64, 9u64),
            (5, 700),
            (300, 4096),
            (whole.len() as u64 - 20, 64),
        ] {
            let (_, fresh) = table(&[10, 0, 7, 13]);
            fresh.len();
            let end = (offset + size).min(whole.len() as u64) as usize;
            assert!(
                fresh.read(offset, size).unwrap() == whole[offset as usize..end],
                "{size} at {offset}"
            );
        }
    }

    #[test]
    fn arrow_reads_the_file_back_as_the_batches() {
        let (batches, file) = table(&[5, 9]);
        let bytes = file.read(0, u64::MAX).unwrap();
        let reader = FileReader::try_new(std::io::Cursor::new(bytes), None).unwrap();
        assert_eq!(reader.num_batches(), 2);
        let read: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
        assert_eq!(read, batches);
    }

    #[test]
    fn a_table_of_no_batches_is_a_file_of_its_schema() {
        let (_, file) = table(&[]);
        let bytes = file.read(0, u64::MAX).unwrap();
        let reader = FileReader::try_new(std::io::Cursor::new(bytes), None).unwrap();
        assert_eq!(reader.schema(), schema());
        assert_eq!(reader.num_batches(), 0);
    }

    #[test]
    fn batches_whose_dictionaries_differ_are_refused() {
        let schema = schema();
        let words: ArrayRef = Arc::new(StringArray::from(vec!["red", "green", "blue"]));
        let other: ArrayRef = Arc::new(StringArray::from(vec!["blue", "green", "red"]));
        let batches = vec![batch(&schema, 0, 4, &words), batch(&schema, 4, 4, &other)];
        let source = Arc::new(Batches::new(schema, batches));
        let file = PieceFile::new(
            "t/table.arrow".into(),
            Box::new(TableArrow::new(source)),
            false,
        );
        let e = file.size().unwrap_err();
        assert!(
            e.to_string().contains("t/table.arrow") && e.to_string().contains("ictionary"),
            "{e}"
        );
    }
}
