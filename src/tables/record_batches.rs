//! A table as Arrow record batches of its live rows ([`TableSource`]):
//! one batch per run of [`BATCH_PHYSICAL_ROWS`] physical rows holding a live
//! row, each column decoded over that run and its deleted rows dropped,
//! `from_arrow`'s flattened struct leaves nested back under their parents,
//! as `CTable.to_arrow()` gives them. Columns Arrow cannot hold (object,
//! complex, a computed column not evaluated) are left out and named.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};
use serde_json::Value as Json;

use super::model::{TableModel, BATCH_PHYSICAL_ROWS};
use super::schema;
use super::seam::{ColumnBatch, ColumnSource, TableError, TableSource};
use crate::read::RowMap;

/// One field of the Arrow schema: a stored or computed column, or a struct
/// regrouping dotted leaves.
#[derive(Debug, Clone)]
enum Slot {
    /// Column `i` of the model.
    Column(usize),
    /// A struct: its children.
    Struct(Fields, Vec<Slot>),
}

/// The table's batches and Arrow schema.
#[derive(Debug)]
pub struct TableBatches {
    model: Arc<TableModel>,
    schema: SchemaRef,
    slots: Vec<Slot>,
    /// Physical rows `[start, end)` of each batch (end: one past its last live row).
    ranges: Vec<(u64, u64)>,
    rows: Vec<u64>,
    left_out: Vec<(String, String)>,
}

impl TableBatches {
    /// The batches of `model`.
    pub fn new(model: Arc<TableModel>) -> TableBatches {
        let mut left_out = Vec::new();
        let mut fields: Vec<Field> = Vec::new();
        let mut slots: Vec<Slot> = Vec::new();
        let parents: HashMap<&str, &Json> = model
            .schema
            .struct_parents
            .iter()
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        let mut done_parents: Vec<String> = Vec::new();
        for (i, column) in model.columns.iter().enumerate() {
            let name = column.name();
            let parent = name
                .split_once('.')
                .map(|(p, _)| p)
                .filter(|p| parents.contains_key(p));
            if let Some(parent) = parent {
                if done_parents.iter().any(|d| d == parent) {
                    continue;
                }
                done_parents.push(parent.to_owned());
                match struct_slot(&model, parent, parents[parent]) {
                    Ok((field, slot)) => {
                        fields.push(field);
                        slots.push(slot);
                    }
                    Err(why) => left_out.push((parent.to_owned(), why)),
                }
                continue;
            }
            match usable(&model, i) {
                Ok(t) => {
                    let ordered = matches!(
                        column.spec.kind,
                        schema::Kind::Dictionary { ordered: true, .. }
                    );
                    let field = Field::new(name, t, true)
                        .with_metadata(schema::field_metadata(&column.spec))
                        .with_dict_is_ordered(ordered);
                    fields.push(field);
                    slots.push(Slot::Column(i));
                }
                Err(why) => left_out.push((name.to_owned(), why)),
            }
        }
        let (ranges, rows) = batch_ranges(&model.rows);
        TableBatches {
            schema: Arc::new(Schema::new(fields)),
            model,
            slots,
            ranges,
            rows,
            left_out,
        }
    }

    /// The model the batches are read from.
    pub fn model(&self) -> &Arc<TableModel> {
        &self.model
    }

    /// Physical rows `[start, end)` of batch `i`.
    pub fn range(&self, i: usize) -> Option<(u64, u64)> {
        self.ranges.get(i).copied()
    }

    /// Which of physical rows `[p0, p1)` are live.
    pub fn live_mask(&self, p0: u64, p1: u64) -> BooleanArray {
        let mut live = vec![false; (p1 - p0) as usize];
        let runs = &self.model.rows.runs;
        let first = runs.partition_point(|&(s, n)| s + n <= p0);
        for &(s, n) in &runs[first..] {
            if s >= p1 {
                break;
            }
            for p in s.max(p0)..(s + n).min(p1) {
                live[(p - p0) as usize] = true;
            }
        }
        BooleanArray::from(live)
    }

    /// Column `i`'s values over the live rows of batch `b`.
    pub fn column_batch(&self, i: usize, b: usize) -> Result<ColumnBatch, TableError> {
        let (p0, p1) = self.range(b).ok_or(TableError::NoSuchBatch {
            index: b,
            count: self.ranges.len(),
        })?;
        let mask = self.live_mask(p0, p1);
        match self.model.read_column(i, p0, p1)? {
            ColumnBatch::Arrow(a) => arrow_select::filter::filter(a.as_ref(), &mask)
                .map(ColumnBatch::Arrow)
                .map_err(|source| TableError::Arrow {
                    column: self.model.columns[i].name().to_owned(),
                    source,
                }),
            ColumnBatch::Json(all) => Ok(ColumnBatch::Json(
                all.into_iter()
                    .zip(mask.values().iter())
                    .filter_map(|(v, keep)| keep.then_some(v))
                    .collect(),
            )),
        }
    }

    fn slot_array(&self, slot: &Slot, b: usize) -> Result<ArrayRef, TableError> {
        match slot {
            Slot::Column(i) => match self.column_batch(*i, b)? {
                ColumnBatch::Arrow(a) => Ok(a),
                ColumnBatch::Json(_) => Err(TableError::Invalid {
                    column: self.model.columns[*i].name().to_owned(),
                    detail: "no Arrow values".into(),
                }),
            },
            Slot::Struct(fields, children) => {
                let arrays = children
                    .iter()
                    .map(|c| self.slot_array(c, b))
                    .collect::<Result<Vec<_>, _>>()?;
                let rows = self.rows[b] as usize;
                StructArray::try_new_with_length(fields.clone(), arrays, None, rows)
                    .map(|s| Arc::new(s) as ArrayRef)
                    .map_err(|source| TableError::Arrow {
                        column: "struct".into(),
                        source,
                    })
            }
        }
    }
}

/// Column `i`'s Arrow type, when it can be given.
fn usable(model: &TableModel, i: usize) -> Result<DataType, String> {
    let column = &model.columns[i];
    if let Some(why) = &column.problem {
        return Err(why.clone());
    }
    column.spec.arrow.clone()
}

/// The struct `parent` regrouping its dotted leaf columns per its spec.
fn struct_slot(model: &TableModel, prefix: &str, spec: &Json) -> Result<(Field, Slot), String> {
    let fields = spec
        .get("fields")
        .and_then(Json::as_array)
        .ok_or("a struct parent without fields")?;
    let mut arrow_fields = Vec::new();
    let mut slots = Vec::new();
    for f in fields {
        let name = f.get("name").and_then(Json::as_str).unwrap_or("");
        let path = format!("{prefix}.{name}");
        if f.get("kind").and_then(Json::as_str) == Some("struct") {
            let (field, slot) = struct_slot(model, &path, f)?;
            arrow_fields.push(Field::new(name, field.data_type().clone(), true));
            slots.push(slot);
        } else {
            let i = model
                .column_index(&path)
                .ok_or_else(|| format!("its leaf {path} is not a column"))?;
            let t = usable(model, i).map_err(|why| format!("{path}: {why}"))?;
            arrow_fields.push(Field::new(name, t, true));
            slots.push(Slot::Column(i));
        }
    }
    let fields = Fields::from(arrow_fields);
    let leaf = prefix.rsplit('.').next().unwrap_or(prefix);
    Ok((
        Field::new(leaf, DataType::Struct(fields.clone()), true),
        Slot::Struct(fields, slots),
    ))
}

/// The batches' physical ranges (only those holding a live row) and live rows.
fn batch_ranges(live: &RowMap) -> (Vec<(u64, u64)>, Vec<u64>) {
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    let mut rows: Vec<u64> = Vec::new();
    for &(start, n) in &live.runs {
        let mut at = start;
        let end = start + n;
        while at < end {
            let window = at / BATCH_PHYSICAL_ROWS;
            let window_end = (window + 1) * BATCH_PHYSICAL_ROWS;
            let stop = end.min(window_end);
            match (ranges.last_mut(), rows.last_mut()) {
                (Some(r), Some(count)) if r.0 / BATCH_PHYSICAL_ROWS == window => {
                    r.1 = stop;
                    *count += stop - at;
                }
                _ => {
                    ranges.push((at, stop));
                    rows.push(stop - at);
                }
            }
            at = stop;
        }
    }
    (ranges, rows)
}

impl TableBatches {
    /// Computed column `i`'s values over the live rows, as stored bytes
    /// (its dtype's, in row order).
    pub fn computed_bytes(&self, i: usize) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        for b in 0..self.rows.len() {
            match self.column_batch(i, b).map_err(|e| e.to_string())? {
                ColumnBatch::Arrow(a) => {
                    let data = a.to_data();
                    let width = data
                        .data_type()
                        .primitive_width()
                        .ok_or("not a number column")?;
                    let buf = data.buffers().first().ok_or("no values")?;
                    let start = data.offset() * width;
                    out.extend_from_slice(&buf.as_slice()[start..start + data.len() * width]);
                }
                ColumnBatch::Json(_) => return Err("not a number column".into()),
            }
        }
        Ok(out)
    }

    /// Whether every null live row of float column `i` stores NaN (then
    /// its stored values read as pandas reads the column: NaN at a null).
    pub fn nan_at_every_null(&self, i: usize) -> Result<(), String> {
        use arrow_array::cast::AsArray;
        use arrow_array::types::{Float32Type, Float64Type};
        use arrow_array::Array as _;
        for b in 0..self.rows.len() {
            let ColumnBatch::Arrow(a) = self.column_batch(i, b).map_err(|e| e.to_string())? else {
                return Err("no float values".into());
            };
            let nan_everywhere = match a.data_type() {
                DataType::Float32 => {
                    let f = a.as_primitive::<Float32Type>();
                    (0..f.len()).all(|r| f.is_valid(r) || f.values()[r].is_nan())
                }
                DataType::Float64 => {
                    let f = a.as_primitive::<Float64Type>();
                    (0..f.len()).all(|r| f.is_valid(r) || f.values()[r].is_nan())
                }
                _ => false,
            };
            if !nan_everywhere {
                return Err(
                    "a null row stores a number, which a float array would show as a value".into(),
                );
            }
        }
        Ok(())
    }
}

/// Column `column` of a table, batch by batch (what its `items.jsonl` reads).
pub struct ColumnBatches {
    /// The table.
    pub batches: Arc<TableBatches>,
    /// The column's index among its columns.
    pub column: usize,
}

impl ColumnSource for ColumnBatches {
    fn batch_count(&self) -> usize {
        self.batches.batch_rows().len()
    }

    fn batch(&self, b: usize) -> Result<ColumnBatch, TableError> {
        self.batches.column_batch(self.column, b)
    }
}

impl TableSource for TableBatches {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn batch_rows(&self) -> &[u64] {
        &self.rows
    }

    fn batch(&self, i: usize) -> Result<RecordBatch, TableError> {
        if i >= self.ranges.len() {
            return Err(TableError::NoSuchBatch {
                index: i,
                count: self.ranges.len(),
            });
        }
        let columns = self
            .slots
            .iter()
            .map(|s| self.slot_array(s, i))
            .collect::<Result<Vec<_>, _>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(self.rows[i] as usize));
        RecordBatch::try_new_with_options(self.schema.clone(), columns, &options).map_err(
            |source| TableError::Arrow {
                column: "record batch".into(),
                source,
            },
        )
    }

    fn left_out(&self) -> &[(String, String)] {
        &self.left_out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Batches are windows of BATCH_PHYSICAL_ROWS physical rows holding a
    /// live row, each from its first live row to one past its last.
    #[test]
    fn batches_are_windows_of_physical_rows_with_live_ones() {
        let b = BATCH_PHYSICAL_ROWS;
        let live = RowMap {
            runs: vec![(3, 5), (b - 2, 4), (3 * b + 7, 1)],
            count: 10,
        };
        let (ranges, rows) = batch_ranges(&live);
        assert_eq!(ranges, [(3, b), (b, b + 2), (3 * b + 7, 3 * b + 8)]);
        assert_eq!(rows, [7, 2, 1]);
        assert_eq!(rows.iter().sum::<u64>(), live.count);
        assert_eq!(batch_ranges(&RowMap::default()), (vec![], vec![]));
    }
}
