//! `table.csv` of a CTable: what `CTable.to_pandas().to_csv(index=False)`
//! would hold, so that `pandas.read_csv` gives the table back.
//!
//! Its columns are `to_pandas`'s, in schema order: the table's logical
//! columns ([`crate::tables::TableSource`]), except that a struct python-blosc2 stores as
//! dotted leaf columns (`from_arrow`'s structs) shows its leaves
//! (`trip.begin.lon`), as `to_pandas` does, where a struct column declared
//! as one stays one column of JSON objects. One line per live row; each
//! cell as [`super::csv_cells`] writes it (numbers and times as pandas
//! does, text quoted by RFC 4180, lists, structs and arrays as compact JSON,
//! a null as an empty field, an empty string as `""`).
//!
//! The file is rendered one batch of rows at a time ([`PieceFile`]): the
//! header is piece 0, batch `i` piece `i + 1`. Measuring renders every
//! batch once, keeping only lengths; a timestamp column's resolution (the
//! finest any of its values needs, as pandas chooses it) is learnt in the
//! same pass, each value measured at seconds and the difference added
//! per value once the column's resolution is known.
//!
//! [`PieceFile`]: super::piece_file::PieceFile

use std::io::Write as _;
use std::sync::OnceLock;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type,
    UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_buffer::{NullBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field};

use super::arrow_json::{has_json_form, value_json};
use super::csv_cells::{
    nanos_per_unit, time_resolution, write_bytes_repr, write_field, write_float, write_name,
    write_time, FloatWidth, TimeResolution,
};
use super::piece_file::{PieceRenderer, RenderError};
use crate::tables::{SharedTableSource, TableError};

/// How a column's cells are written.
#[derive(Debug, Clone, Copy, PartialEq)]
enum CellKind {
    /// Integers, in decimal.
    Int,
    /// Floats, as NumPy prints them.
    Float(FloatWidth),
    /// `True` / `False`.
    Bool,
    /// Text, quoted when needed.
    Text,
    /// Bytes, as Python's `b'…'`.
    Bytes,
    /// Timestamps of this many nanoseconds per unit.
    Time(i64),
    /// Lists, structs, fixed-size arrays: compact JSON.
    Json,
}

/// The kind of cell a column of `data_type` writes (a dictionary: its
/// values'); `None` for a type with no written form.
fn cell_kind(data_type: &DataType) -> Option<CellKind> {
    Some(match data_type {
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64 => CellKind::Int,
        DataType::Float16 | DataType::Float32 => CellKind::Float(FloatWidth::F32),
        DataType::Float64 => CellKind::Float(FloatWidth::F64),
        DataType::Boolean => CellKind::Bool,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => CellKind::Text,
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => CellKind::Bytes,
        DataType::Timestamp(unit, _) => CellKind::Time(nanos_per_unit(*unit)),
        DataType::Dictionary(_, values) => cell_kind(values)?,
        other if has_json_form(other) => CellKind::Json,
        _ => return None,
    })
}

/// One column of the CSV.
#[derive(Debug)]
struct CsvColumn {
    /// The top-level field, then the child within each struct flattened.
    path: Vec<usize>,
    kind: CellKind,
}

/// The layout of a table's `table.csv` and the renderer of its pieces.
pub struct TableCsv {
    source: SharedTableSource,
    columns: Vec<CsvColumn>,
    header: Vec<u8>,
    /// Columns of the table the CSV cannot show (name, why).
    left_out: Vec<(String, String)>,
    /// Each column's timestamp resolution, learnt by the measuring pass.
    resolutions: OnceLock<Vec<TimeResolution>>,
}

impl std::fmt::Debug for TableCsv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableCsv")
            .field("columns", &self.columns)
            .finish_non_exhaustive()
    }
}

/// The columns a table's CSV shows, and those it cannot (with why).
#[derive(Default)]
struct Planned {
    shown: Vec<(String, CsvColumn)>,
    left_out: Vec<(String, String)>,
}

/// Add the columns of field `field` (at `path`, named `name`) to `out`:
/// one, or its leaves when it is a struct to flatten.
fn plan_field(field: &Field, name: String, path: Vec<usize>, flatten: bool, out: &mut Planned) {
    if let (true, DataType::Struct(children)) = (flatten, field.data_type()) {
        for (i, child) in children.iter().enumerate() {
            let mut child_path = path.clone();
            child_path.push(i);
            plan_field(
                child,
                format!("{name}.{}", child.name()),
                child_path,
                true,
                out,
            );
        }
        return;
    }
    match cell_kind(field.data_type()) {
        Some(kind) => out.shown.push((name, CsvColumn { path, kind })),
        None => out.left_out.push((
            name,
            format!("table.csv has no form for {}", field.data_type()),
        )),
    }
}

impl TableCsv {
    /// The CSV of the table `source`, where the struct columns named in
    /// `leaf_structs` (those python-blosc2 stores as dotted leaf columns)
    /// show their leaves; `None` when it has no column to show.
    pub fn new(source: SharedTableSource, leaf_structs: &[String]) -> Option<TableCsv> {
        let schema = source.schema();
        let mut planned = Planned::default();
        for (i, field) in schema.fields().iter().enumerate() {
            let flatten = leaf_structs.iter().any(|s| s == field.name());
            plan_field(field, field.name().clone(), vec![i], flatten, &mut planned);
        }
        let Planned {
            shown: named,
            left_out,
        } = planned;
        if named.is_empty() {
            return None;
        }
        let mut header = Vec::new();
        for (k, (name, _)) in named.iter().enumerate() {
            if k > 0 {
                header.push(b',');
            }
            write_name(&mut header, name);
        }
        header.push(b'\n');
        Some(TableCsv {
            source,
            columns: named.into_iter().map(|(_, c)| c).collect(),
            header,
            left_out,
            resolutions: OnceLock::new(),
        })
    }

    /// Columns of the table the CSV cannot show, with why.
    pub fn left_out(&self) -> &[(String, String)] {
        &self.left_out
    }

    fn batch(&self, i: usize) -> Result<RecordBatch, TableError> {
        self.source.batch(i)
    }

    /// Write the lines of `batch`, each timestamp column at its resolution
    /// in `resolutions`; returns, per column, how many timestamps it wrote.
    fn write_rows(
        &self,
        batch: &RecordBatch,
        resolutions: &[TimeResolution],
        out: &mut Vec<u8>,
    ) -> Vec<u64> {
        let cells: Vec<Cells> = self
            .columns
            .iter()
            .zip(resolutions)
            .map(|(c, &r)| Cells::new(batch, c, r))
            .collect();
        let mut times = vec![0u64; cells.len()];
        let single = cells.len() == 1;
        for row in 0..batch.num_rows() {
            for (k, cell) in cells.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                let written = cell.write(out, row);
                if written && matches!(cell.kind, CellKind::Time(_)) {
                    times[k] += 1;
                }
                // A line with one empty field would be a blank line, which
                // readers skip: pandas writes `""` there.
                if single && !written {
                    out.extend_from_slice(b"\"\"");
                }
            }
            out.push(b'\n');
        }
        times
    }
}

/// One column's cells in one batch: the array holding the values, the row
/// of each value there (a dictionary's codes), and which rows are null
/// (the column's own nulls, its dictionary's, and those of the structs it
/// was flattened from).
struct Cells {
    kind: CellKind,
    resolution: TimeResolution,
    values: ArrayRef,
    keys: Option<Vec<usize>>,
    nulls: Option<NullBuffer>,
    times: Option<ScalarBuffer<i64>>,
}

impl Cells {
    fn new(batch: &RecordBatch, column: &CsvColumn, resolution: TimeResolution) -> Cells {
        let mut array: ArrayRef = batch.column(column.path[0]).clone();
        let mut nulls = array.logical_nulls();
        for &child in &column.path[1..] {
            array = array.as_struct().column(child).clone();
            nulls = NullBuffer::union(nulls.as_ref(), array.logical_nulls().as_ref());
        }
        let (values, keys) = match array.as_any_dictionary_opt() {
            Some(dict) => (dict.values().clone(), Some(dict.normalized_keys())),
            None => (array, None),
        };
        let times = matches!(column.kind, CellKind::Time(_)).then(|| {
            let data = values.to_data();
            ScalarBuffer::new(data.buffers()[0].clone(), data.offset(), data.len())
        });
        Cells {
            kind: column.kind,
            resolution,
            values,
            keys,
            nulls,
            times,
        }
    }

    /// Write row `row`'s cell; `false` when it is null (nothing written).
    fn write(&self, out: &mut Vec<u8>, row: usize) -> bool {
        if self.nulls.as_ref().is_some_and(|n| n.is_null(row)) {
            return false;
        }
        let i = self.keys.as_ref().map_or(row, |k| k[row]);
        let v = self.values.as_ref();
        match self.kind {
            CellKind::Int => write_int(out, v, i),
            CellKind::Float(width) => {
                let x = match v.data_type() {
                    DataType::Float16 => {
                        f64::from(v.as_primitive::<Float16Type>().value(i).to_f32())
                    }
                    DataType::Float32 => f64::from(v.as_primitive::<Float32Type>().value(i)),
                    _ => v.as_primitive::<Float64Type>().value(i),
                };
                write_float(out, x, width);
            }
            CellKind::Bool => out.extend_from_slice(if v.as_boolean().value(i) {
                b"True"
            } else {
                b"False"
            }),
            CellKind::Text => {
                let text = match v.data_type() {
                    DataType::Utf8 => v.as_string::<i32>().value(i),
                    DataType::LargeUtf8 => v.as_string::<i64>().value(i),
                    _ => v.as_string_view().value(i),
                };
                write_field(out, text.as_bytes());
            }
            CellKind::Bytes => {
                let bytes = match v.data_type() {
                    DataType::Binary => v.as_binary::<i32>().value(i),
                    DataType::LargeBinary => v.as_binary::<i64>().value(i),
                    DataType::FixedSizeBinary(_) => v.as_fixed_size_binary().value(i),
                    _ => v.as_binary_view().value(i),
                };
                write_bytes_repr(out, bytes);
            }
            CellKind::Time(per) => {
                let value = self.times.as_ref().map_or(0, |t| t[i]);
                write_time(out, value, per, self.resolution);
            }
            CellKind::Json => {
                let text = serde_json::to_vec(&value_json(v, i)).unwrap_or_default();
                write_field(out, &text);
            }
        }
        true
    }

    /// The finest resolution a timestamp of this batch needs.
    fn finest_time(&self, rows: usize) -> TimeResolution {
        let (CellKind::Time(per), Some(times)) = (self.kind, &self.times) else {
            return TimeResolution::Day;
        };
        let mut finest = TimeResolution::Day;
        for row in 0..rows {
            if self.nulls.as_ref().is_some_and(|n| n.is_null(row)) {
                continue;
            }
            let i = self.keys.as_ref().map_or(row, |k| k[row]);
            finest = finest.max(time_resolution(times[i], per));
            if finest == TimeResolution::Nano {
                break;
            }
        }
        finest
    }
}

/// Write integer `i` of `v` (any integer type) in decimal.
fn write_int(out: &mut Vec<u8>, v: &dyn Array, i: usize) {
    let _ = match v.data_type() {
        DataType::Int8 => write!(out, "{}", v.as_primitive::<Int8Type>().value(i)),
        DataType::Int16 => write!(out, "{}", v.as_primitive::<Int16Type>().value(i)),
        DataType::Int32 => write!(out, "{}", v.as_primitive::<Int32Type>().value(i)),
        DataType::Int64 => write!(out, "{}", v.as_primitive::<Int64Type>().value(i)),
        DataType::UInt8 => write!(out, "{}", v.as_primitive::<UInt8Type>().value(i)),
        DataType::UInt16 => write!(out, "{}", v.as_primitive::<UInt16Type>().value(i)),
        DataType::UInt32 => write!(out, "{}", v.as_primitive::<UInt32Type>().value(i)),
        _ => write!(out, "{}", v.as_primitive::<UInt64Type>().value(i)),
    };
}

impl PieceRenderer for TableCsv {
    fn measure(&self) -> Result<Vec<u64>, RenderError> {
        let batches = self.source.batch_rows().len();
        let at_seconds = vec![TimeResolution::Second; self.columns.len()];
        let mut finest = vec![TimeResolution::Day; self.columns.len()];
        let mut lengths = Vec::with_capacity(batches + 1);
        let mut times = Vec::with_capacity(batches);
        lengths.push(self.header.len() as u64);
        let mut scratch = Vec::new();
        for i in 0..batches {
            let batch = self.batch(i)?;
            if self
                .columns
                .iter()
                .any(|c| matches!(c.kind, CellKind::Time(_)))
            {
                for (k, column) in self.columns.iter().enumerate() {
                    let cells = Cells::new(&batch, column, TimeResolution::Second);
                    finest[k] = finest[k].max(cells.finest_time(batch.num_rows()));
                }
            }
            scratch.clear();
            times.push(self.write_rows(&batch, &at_seconds, &mut scratch));
            lengths.push(scratch.len() as u64);
        }
        for (length, counts) in lengths[1..].iter_mut().zip(&times) {
            let extra: i64 = counts
                .iter()
                .zip(&finest)
                .map(|(&n, r)| n as i64 * r.extra_len())
                .sum();
            *length = length.saturating_add_signed(extra);
        }
        let _ = self.resolutions.set(finest);
        Ok(lengths)
    }

    fn render(&self, piece: usize) -> Result<Vec<u8>, RenderError> {
        if piece == 0 {
            return Ok(self.header.clone());
        }
        let resolutions = self
            .resolutions
            .get()
            .ok_or(RenderError::NoSuchPiece { piece, count: 0 })?;
        let batch = self.batch(piece - 1)?;
        let mut out = Vec::new();
        self.write_rows(&batch, resolutions, &mut out);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow_array::types::Int32Type;
    use arrow_array::{
        BooleanArray, DictionaryArray, FixedSizeListArray, Float32Array, Float64Array, Int32Array,
        Int64Array, LargeBinaryArray, LargeStringArray, ListArray, StringArray, StructArray,
        TimestampMillisecondArray,
    };
    use arrow_buffer::NullBuffer;
    use arrow_schema::{Field, Fields, Schema, SchemaRef, TimeUnit};

    use crate::views::piece_file::in_memory::Batches;
    use crate::views::piece_file::PieceFile;

    fn struct_of(fields: Vec<(&str, ArrayRef)>, nulls: Option<Vec<bool>>) -> StructArray {
        let fields_and_arrays: Vec<(Arc<Field>, ArrayRef)> = fields
            .into_iter()
            .map(|(n, a)| (Arc::new(Field::new(n, a.data_type().clone(), true)), a))
            .collect();
        let (fields, arrays): (Vec<_>, Vec<_>) = fields_and_arrays.into_iter().unzip();
        StructArray::new(Fields::from(fields), arrays, nulls.map(NullBuffer::from))
    }

    fn file(schema: SchemaRef, batches: Vec<RecordBatch>, leaf_structs: &[String]) -> String {
        let source = Arc::new(Batches::new(schema, batches));
        let csv = TableCsv::new(source, leaf_structs).expect("columns to show");
        let file = PieceFile::new("t/table.csv".into(), Box::new(csv), false);
        let bytes = file.read(0, u64::MAX).unwrap();
        assert_eq!(Some(bytes.len() as u64), file.len());
        String::from_utf8(bytes).unwrap()
    }

    /// Expected lines: what pandas' `to_csv` writes for these values (see
    /// csv_cells), with JSON for lists and structs, `""` for an empty
    /// string and nothing for a null.
    #[test]
    fn cells_are_written_as_pandas_writes_them() {
        let words: ArrayRef = Arc::new(StringArray::from(vec!["red", "green", "blue"]));
        let cat = DictionaryArray::<Int32Type>::try_new(
            Int32Array::from(vec![Some(0), None, Some(2)]),
            words,
        )
        .unwrap();
        let tags = ListArray::from_iter_primitive::<arrow_array::types::Int64Type, _, _>(vec![
            Some(vec![Some(1), Some(2)]),
            None,
            Some(vec![]),
        ]);
        let trip = struct_of(
            vec![
                ("lon", Arc::new(Float64Array::from(vec![1.5, -3.0, 4.0]))),
                ("tag", Arc::new(StringArray::from(vec!["t", "u", "v,w"]))),
            ],
            None,
        );
        let begin = struct_of(
            vec![("lon", Arc::new(Float64Array::from(vec![2.0, 9.0, 4.5])))],
            Some(vec![true, false, true]),
        );
        let flat = struct_of(
            vec![
                ("begin", Arc::new(begin)),
                (
                    "n",
                    Arc::new(Int32Array::from(vec![Some(3), None, Some(5)])),
                ),
            ],
            None,
        );
        let items = Float32Array::from(vec![1.0, -1.0, 2.0, -2.0, 3.0, -3.0]);
        let vec = FixedSizeListArray::new(
            Arc::new(Field::new("item", DataType::Float32, true)),
            2,
            Arc::new(items),
            None,
        );
        let columns: Vec<(&str, ArrayRef)> = vec![
            ("i", Arc::new(Int64Array::from(vec![1, -2, 3]))),
            (
                "f",
                Arc::new(Float64Array::from(vec![Some(0.5), Some(f64::NAN), None])),
            ),
            (
                "g",
                Arc::new(Float32Array::from(vec![Some(0.1), None, Some(1e7)])),
            ),
            (
                "ok",
                Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])),
            ),
            (
                "name",
                Arc::new(LargeStringArray::from(vec![
                    Some("a,b"),
                    Some(""),
                    Some("say \"hi\"\nbye"),
                ])),
            ),
            ("cat", Arc::new(cat)),
            ("tags", Arc::new(tags)),
            ("trip", Arc::new(trip)),
            ("flat", Arc::new(flat)),
            (
                "ts",
                Arc::new(TimestampMillisecondArray::from(vec![
                    Some(1_600_000_000_000),
                    None,
                    Some(1_600_086_400_000),
                ])),
            ),
            (
                "bin",
                Arc::new(LargeBinaryArray::from(vec![
                    Some(&b"\x00\xff"[..]),
                    None,
                    Some(&b""[..]),
                ])),
            ),
            ("vec", Arc::new(vec)),
        ];
        let schema = Arc::new(Schema::new(
            columns
                .iter()
                .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
                .collect::<Vec<_>>(),
        ));
        let batch = RecordBatch::try_new(
            schema.clone(),
            columns.into_iter().map(|(_, a)| a).collect(),
        )
        .unwrap();
        let text = file(schema, vec![batch], &["flat".to_string()]);
        let want = [
            "i,f,g,ok,name,cat,tags,trip,flat.begin.lon,flat.n,ts,bin,vec",
            "1,0.5,0.1,True,\"a,b\",red,\"[1,2]\",\"{\"\"lon\"\":1.5,\"\"tag\"\":\"\"t\"\"}\",2.0,3,\
             2020-09-13 12:26:40,b'\\x00\\xff',\"[1.0,-1.0]\"",
            "-2,,,,\"\",,,\"{\"\"lon\"\":-3.0,\"\"tag\"\":\"\"u\"\"}\",,,,,\"[2.0,-2.0]\"",
            "3,,1e+07,False,\"say \"\"hi\"\"\nbye\",blue,[],\"{\"\"lon\"\":4.0,\"\"tag\"\":\"\"v,w\"\"}\",\
             4.5,5,2020-09-14 12:26:40,b'',\"[3.0,-3.0]\"",
        ];
        assert_eq!(text, want.join("\n") + "\n");
    }

    #[test]
    fn a_timestamp_column_takes_the_finest_resolution_of_all_its_batches() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("ts", DataType::Timestamp(TimeUnit::Millisecond, None), true),
            Field::new("k", DataType::Int32, false),
        ]));
        let batch = |ts: Vec<Option<i64>>| {
            let n = ts.len() as i32;
            RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(TimestampMillisecondArray::from(ts)),
                    Arc::new(Int32Array::from((0..n).collect::<Vec<_>>())),
                ],
            )
            .unwrap()
        };
        let days = batch(vec![Some(0), Some(86_400_000)]);
        let text = file(schema.clone(), vec![days.clone()], &[]);
        assert_eq!(text, "ts,k\n1970-01-01,0\n1970-01-02,1\n");
        let batches = vec![days, batch(vec![None]), batch(vec![Some(1_500)])];
        let text = file(schema, batches, &[]);
        assert_eq!(
            text,
            "ts,k\n1970-01-01 00:00:00.000,0\n1970-01-02 00:00:00.000,1\n,0\n\
             1970-01-01 00:00:01.500,0\n"
        );
    }

    #[test]
    fn a_null_alone_on_its_line_is_written_as_an_empty_quoted_field() {
        let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(StringArray::from(vec![Some("a"), None, Some("")]))],
        )
        .unwrap();
        assert_eq!(file(schema, vec![batch], &[]), "s\na\n\"\"\n\"\"\n");
    }

    #[test]
    fn header_names_are_quoted_when_needed() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("a,b", DataType::Int8, false),
            Field::new("say \"x\"", DataType::Int8, false),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(arrow_array::Int8Array::from(vec![1])),
                Arc::new(arrow_array::Int8Array::from(vec![-1])),
            ],
        )
        .unwrap();
        assert_eq!(
            file(schema, vec![batch], &[]),
            "\"a,b\",\"say \"\"x\"\"\"\n1,-1\n"
        );
    }
}
