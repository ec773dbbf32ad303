//! What a table's folder and its column folders show: the table's
//! `meta.json` (columns in schema order, their kinds, null policies, rows,
//! deleted rows, indexes, keys no column claims), and each column's
//! version: `data`/`data.npy` over the live rows where one stored array
//! holds the values (or a computed column's values, evaluated), `valid`
//! beside them for a nullable column, `items.jsonl` for text, dictionary,
//! variable-length, list, struct and object columns, and a `meta.json`
//! saying which and why.

use std::sync::Arc;

use arrow_array::Array as _;
use serde_json::{json, Value as Json};

use crate::format::Region;
use crate::read::{read_uncached, RowMap, RowSelection};
use crate::views::arrow_json::type_name;
use crate::views::column_files::{ColumnFiles, ValidBytes};
use crate::views::column_jsonl::{ColumnBatch, ColumnJsonl, ColumnSource};
use crate::views::json::json_bytes;
use crate::views::table_file::TableFile;
use crate::views::table_source::TableError;
use crate::views::{npy, zarr3, Presented};

use super::model::{Column, Parts, TableModel};
use super::read::Values;
use super::schema::{Kind, Nulls, Sentinel};
use super::source::TableBatches;
use crate::views::table_source::TableSource;

/// Largest rendered `data` of a computed column.
const MAX_COMPUTED_BYTES: u64 = 256 << 20;

/// The schema kind name of a column (its entry's `kind`, or `computed`).
pub fn kind_name(column: &Column) -> String {
    match &column.spec.kind {
        Kind::Computed { .. } => "computed".into(),
        _ => column
            .spec
            .entry
            .get("kind")
            .and_then(Json::as_str)
            .unwrap_or("?")
            .to_owned(),
    }
}

/// The column's Arrow type as `to_arrow` prints it, or null.
pub fn arrow_name(column: &Column) -> Json {
    match &column.spec.arrow {
        Ok(t) => {
            let name = type_name(t);
            match column.spec.kind {
                Kind::Dictionary { ordered: true, .. } => {
                    json!(name.replace("ordered=0", "ordered=1"))
                }
                _ => json!(name),
            }
        }
        Err(_) => Json::Null,
    }
}

/// The null policy of a column as `meta.json` states it.
pub fn nulls_doc(model: &TableModel, column: &Column) -> Json {
    let nulls = &column.spec.nulls;
    let mut doc = json!({ "policy": nulls.name() });
    match nulls {
        Nulls::None => {
            doc["meaning"] = json!("the column is not nullable");
        }
        Nulls::Mask => {
            let mask = column.keys.iter().find(|k| k.ends_with(".notnull"));
            doc["key"] = json!(mask);
            doc["meaning"] = json!(match mask {
                Some(_) => "a row is null where its .notnull mask is false; the value stored there is a fill, not data",
                None => "no .notnull mask was written: no row is null",
            });
        }
        Nulls::Sentinel(s) => {
            doc["value"] = match s {
                Sentinel::Int(i) => json!(i.to_string().parse::<Json>().unwrap_or(Json::Null)),
                Sentinel::Float(f) => crate::views::arrow_json::float_json(*f),
                Sentinel::Text(t) => json!(t),
            };
            doc["meaning"] = json!(match s {
                Sentinel::Float(f) if f.is_nan() =>
                    "a row is null where its stored value is NaN (every NaN is a null)",
                _ => "a row is null where its stored value equals this value",
            });
        }
        Nulls::Code(c) => {
            doc["code"] = json!(c);
            doc["meaning"] = json!("a row is null where its dictionary code is this code");
        }
        Nulls::Native => {
            doc["meaning"] =
                json!("a row is null where its stored item is nil (null in items.jsonl)");
        }
    }
    let _ = model;
    doc
}

/// A column's description in its `meta.json`.
fn column_doc(model: &TableModel, i: usize) -> Json {
    let column = &model.columns[i];
    let mut doc = json!({
        "kind": "column",
        "table": if model.key.is_empty() { "/" } else { &model.key },
        "name": column.name(),
        "column_kind": kind_name(column),
        "arrow_type": arrow_name(column),
        "nulls": nulls_doc(model, column),
        "storage": column.keys,
        "rows": model.rows.count,
        "deleted_rows": model.deleted_rows(),
        "schema": column.spec.entry,
    });
    if let Err(why) = &column.spec.arrow {
        doc["arrow_left_out"] = json!(why);
    }
    if let Some(why) = &column.problem {
        doc["not_shown"] = json!(why);
    }
    doc
}

/// The version of column `i` of `batches`' table.
pub fn present_column(batches: &Arc<TableBatches>, i: usize) -> Presented {
    let model = batches.model();
    let column = &model.columns[i];
    let mut doc = column_doc(model, i);
    if column.problem.is_some() {
        doc["files"] = json!("meta.json only: the values cannot be given (see not_shown)");
        return Presented::meta_only(&doc);
    }
    match &column.parts {
        Parts::Fixed { values, mask, .. } => {
            let mut p = Presented::of_array(values.clone(), Some(&model.rows));
            let valid = valid_bytes(batches, i, mask.as_ref(), &mut doc);
            p.column = ColumnFiles {
                data: None,
                valid,
                zarr_one_chunk: false,
            };
            column_zarr(batches, i, &mut p, &mut doc);
            let items = matches!(column.spec.kind, Kind::FixedText | Kind::FixedBytes);
            if items {
                p.items = Some(items_file(batches, i, &mut doc));
            }
            doc["files"] = json!(match (items, p.column.valid.is_some()) {
                (true, true) => "data, data.npy (the stored values of the live rows), valid, valid.npy (1 = a value, 0 = null) and items.jsonl (null as null)",
                (true, false) => "data, data.npy (the stored values of the live rows) and items.jsonl",
                (false, true) => "data, data.npy (the stored values of the live rows: at a null, a fill that is not data) and valid, valid.npy (1 = a value, 0 = null)",
                (false, false) => "data, data.npy: the values of the live rows",
            });
            merge_meta(&mut p, doc);
            p
        }
        Parts::Computed { program, .. } => {
            let itemsize = program.dtype().itemsize() as u64;
            let bytes = model.rows.count.saturating_mul(itemsize);
            let mut p = Presented::meta_only(&doc);
            if bytes > MAX_COMPUTED_BYTES {
                doc["not_computed"] = json!(format!(
                    "{bytes} bytes of values (at most {MAX_COMPUTED_BYTES} are computed into data)"
                ));
            } else {
                match computed_bytes(batches, i) {
                    Ok(body) => {
                        let header = npy::header(program.dtype().numpy_str(), &[model.rows.count]);
                        let mut with_header = header;
                        with_header.extend_from_slice(&body);
                        p.column.data = Some([Arc::new(body), Arc::new(with_header)]);
                        doc["dtype"] = json!(program.dtype().numpy_str());
                        if model.rows.count > 0 {
                            let dtype = program.dtype().numpy_str();
                            one_chunk_zarr(
                                &mut p,
                                &mut doc,
                                dtype,
                                model.rows.count,
                                column.name(),
                            );
                        }
                        doc["files"] = json!("data, data.npy: the expression evaluated over the stored values of the live rows (never null, as python-blosc2 computes it)");
                    }
                    Err(why) => doc["not_computed"] = json!(why),
                }
            }
            p.meta_json = Arc::new(json_bytes(&doc));
            p
        }
        _ => {
            let mut p = Presented::meta_only(&doc);
            p.items = Some(items_file(batches, i, &mut doc));
            doc["files"] = json!("items.jsonl: one JSON value per live row, null as null");
            p.meta_json = Arc::new(json_bytes(&doc));
            p
        }
    }
}

/// The dimension every Zarr v3 column array of a table shares.
pub const ROW_DIMENSION: &str = "row";

/// Make a 1-D number or bool column a Zarr v3 array of one chunk (`c/0`,
/// its `data`) along the table's [`ROW_DIMENSION`], when no live row reads
/// wrong there: no null, or (floats) a NaN stored at every null, as pandas
/// shows it. Why not goes into `doc`.
fn column_zarr(batches: &TableBatches, i: usize, p: &mut Presented, doc: &mut Json) {
    let model = batches.model();
    let column = &model.columns[i];
    let Parts::Fixed {
        dtype, row_bytes, ..
    } = &column.parts
    else {
        return;
    };
    let why_not = (|| -> Result<(), String> {
        if !matches!(column.spec.kind, Kind::Number { .. }) {
            return Err("only number and bool columns are Zarr arrays".into());
        }
        let code = dtype.trim_start_matches(['<', '>', '=', '|']);
        if code == "u1" && matches!(column.spec.arrow, Ok(arrow_schema::DataType::Boolean)) {
            return Err("a bool column stored as uint8 (sentinel nulls)".into());
        }
        zarr3::data_type(dtype).map_err(|e| e.to_string())?;
        if *row_bytes != crate::format::simple_dtype_itemsize(dtype).unwrap_or(0) {
            return Err("not one value per row".into());
        }
        if model.rows.count == 0 {
            return Err("the table has no rows".into());
        }
        let nulls = doc["nulls"]["null_rows"].as_u64().unwrap_or(0);
        if !matches!(column.spec.nulls, Nulls::None) && doc["nulls"]["null_rows"].is_null() {
            return Err("its nulls could not be counted".into());
        }
        if nulls > 0 {
            if !matches!(code, "f2" | "f4" | "f8") {
                return Err(format!(
                    "{nulls} live rows are null, and a {dtype} array cannot say so"
                ));
            }
            nan_at_nulls(batches, i)?;
        }
        Ok(())
    })();
    match why_not {
        Err(why) => {
            doc["zarr"] = json!({"v3": false, "reason": why});
        }
        Ok(()) => one_chunk_zarr(p, doc, dtype, model.rows.count, column.name()),
    }
}

/// Give `p` the `zarr.json` of a 1-D array of `rows` items of `dtype`
/// along [`ROW_DIMENSION`] in one chunk (`c/0`, its `data`).
fn one_chunk_zarr(p: &mut Presented, doc: &mut Json, dtype: &str, rows: u64, name: &str) {
    let shape = [rows];
    let vlmeta = [("dimension_names".to_string(), json!([ROW_DIMENSION]))];
    match zarr3::array_json(&zarr3::ArrayMeta {
        dtype,
        shape: &shape,
        chunks: &shape,
        name,
        vlmeta: &vlmeta,
    }) {
        Ok(mut z) => {
            z["attributes"] = json!({});
            p.zarr3 = Some(Arc::new(json_bytes(&z)));
            p.column.zarr_one_chunk = true;
            let nan = doc["nulls"]["null_rows"].as_u64().unwrap_or(0) > 0;
            doc["zarr"] = json!({
                "v3": true,
                "dimension": ROW_DIMENSION,
                "chunks": "one chunk, c/0, which is data",
                "nulls": if nan { json!("NaN at a null, as pandas shows it") } else { Json::Null },
            });
        }
        Err(why) => doc["zarr"] = json!({"v3": false, "reason": why.to_string()}),
    }
}

/// Whether every null of float column `i` stores NaN (then its data reads
/// as pandas reads it: NaN at a null).
fn nan_at_nulls(batches: &TableBatches, i: usize) -> Result<(), String> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float32Type, Float64Type};
    for b in 0..batches.batch_rows().len() {
        let Values::Arrow(a) = batches.column_batch(i, b).map_err(|e| e.to_string())? else {
            return Err("no float values".into());
        };
        let nan_everywhere = match a.data_type() {
            arrow_schema::DataType::Float32 => {
                let f = a.as_primitive::<Float32Type>();
                (0..f.len()).all(|r| f.is_valid(r) || f.values()[r].is_nan())
            }
            arrow_schema::DataType::Float64 => {
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

/// Add `doc` to the array's `meta.json` as its `column`.
fn merge_meta(p: &mut Presented, doc: Json) {
    let mut meta: Json = serde_json::from_slice(&p.meta_json).unwrap_or_else(|_| json!({}));
    if let Some(obj) = meta.as_object_mut() {
        if let Some(zarr) = doc.get("zarr") {
            obj.insert("zarr".into(), zarr.clone());
        }
        obj.insert("column".into(), doc);
    }
    p.meta_json = Arc::new(json_bytes(&meta));
}

/// The `valid` files of a nullable fixed-width column (`None` for one that
/// is not nullable); the null count goes into `doc`.
fn valid_bytes(
    batches: &TableBatches,
    i: usize,
    mask: Option<&Arc<crate::format::Array>>,
    doc: &mut Json,
) -> Option<ValidBytes> {
    let model = batches.model();
    let column = &model.columns[i];
    let header = |n: u64| Arc::new(npy::header("|b1", &[n]));
    match (&column.spec.nulls, mask) {
        (Nulls::None, _) => None,
        (Nulls::Mask, Some(mask)) => {
            let clipped = model.rows.clipped(mask.data_len());
            if clipped.count != model.rows.count {
                doc["nulls"]["error"] = json!("the .notnull mask is shorter than the live rows");
                return None;
            }
            match count_nulls(mask, &clipped) {
                Ok(n) => doc["nulls"]["null_rows"] = json!(n),
                Err(e) => doc["nulls"]["error"] = json!(e),
            }
            let header = header(clipped.count);
            Some(ValidBytes::Mask {
                mask: mask.clone(),
                views: [
                    Arc::new(RowSelection::new(
                        clipped.runs.clone(),
                        1,
                        Arc::new(Vec::new()),
                    )),
                    Arc::new(RowSelection::new(clipped.runs, 1, header)),
                ],
            })
        }
        _ => {
            // No mask (no null written) or a sentinel: rendered from the values.
            let mut body = Vec::with_capacity(model.rows.count as usize);
            for b in 0..batches.batch_rows().len() {
                match batches.column_batch(i, b) {
                    Ok(Values::Arrow(a)) => {
                        body.extend((0..a.len()).map(|r| u8::from(a.is_valid(r))));
                    }
                    Ok(Values::Json(v)) => body.extend(v.iter().map(|j| u8::from(!j.is_null()))),
                    Err(e) => {
                        doc["nulls"]["error"] = json!(e.to_string());
                        return None;
                    }
                }
            }
            doc["nulls"]["null_rows"] = json!(body.iter().filter(|&&b| b == 0).count());
            let mut with_header = header(body.len() as u64).as_ref().clone();
            with_header.extend_from_slice(&body);
            Some(ValidBytes::Rendered([
                Arc::new(body),
                Arc::new(with_header),
            ]))
        }
    }
}

/// Nulls among the live rows of a `.notnull` mask.
fn count_nulls(mask: &crate::format::Array, rows: &RowMap) -> Result<u64, String> {
    let mut nulls = 0u64;
    let mut buf = Vec::new();
    for &(start, n) in &rows.runs {
        let mut at = start;
        while at < start + n {
            let len = (start + n - at).min(1 << 20);
            buf.resize(len as usize, 0);
            read_uncached(mask, Region::Data, at, &mut buf).map_err(|p| p.to_string())?;
            nulls += buf.iter().filter(|&&b| b == 0).count() as u64;
            at += len;
        }
    }
    Ok(nulls)
}

/// A computed column's values over the live rows, as stored bytes.
fn computed_bytes(batches: &TableBatches, i: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for b in 0..batches.batch_rows().len() {
        match batches.column_batch(i, b).map_err(|e| e.to_string())? {
            Values::Arrow(a) => {
                let data = a.to_data();
                let width = data
                    .data_type()
                    .primitive_width()
                    .ok_or("not a number column")?;
                let buf = data.buffers().first().ok_or("no values")?;
                let start = data.offset() * width;
                out.extend_from_slice(&buf.as_slice()[start..start + data.len() * width]);
            }
            Values::Json(_) => return Err("not a number column".into()),
        }
    }
    Ok(out)
}

/// Column `i` of a table, batch by batch, as its `items.jsonl` reads it.
struct ColumnOfTable {
    batches: Arc<TableBatches>,
    column: usize,
}

impl ColumnSource for ColumnOfTable {
    fn batch_count(&self) -> usize {
        self.batches.batch_rows().len()
    }

    fn batch(&self, b: usize) -> Result<ColumnBatch, TableError> {
        self.batches.column_batch(self.column, b)
    }
}

/// The `items.jsonl` of column `i`, rendered a batch of rows at a time
/// when read (how, in `doc`).
fn items_file(batches: &Arc<TableBatches>, i: usize, doc: &mut Json) -> Arc<TableFile> {
    doc["items"] = json!({
        "batches": batches.batch_rows().len(),
        "rendered": "a batch of rows at a time when read, sized by a measuring pass when first asked; a batch that cannot be read leaves items.jsonl out (the log says why)",
    });
    let model = batches.model();
    let column = &model.columns[i];
    let name = model
        .name
        .join(column.name())
        .join("items.jsonl")
        .display()
        .to_string();
    let source = ColumnOfTable {
        batches: batches.clone(),
        column: i,
    };
    let renderer = ColumnJsonl::new(Box::new(source));
    Arc::new(TableFile::new(
        name,
        Box::new(renderer),
        parts_may_wait(&column.parts),
    ))
}

/// Whether reading a column's stored parts may wait on a network.
fn parts_may_wait(parts: &Parts) -> bool {
    match parts {
        Parts::Fixed { values, mask, .. } => {
            values.may_wait() || mask.as_ref().is_some_and(|m| m.may_wait())
        }
        Parts::Utf8 {
            offsets,
            bytes,
            mask,
        } => offsets.may_wait() || bytes.may_wait() || mask.as_ref().is_some_and(|m| m.may_wait()),
        Parts::Dictionary { codes, .. } => codes.may_wait(),
        Parts::Batches { array, .. } | Parts::PerChunk { array } => array.may_wait(),
        _ => false,
    }
}

/// The table's `meta.json`.
pub fn table_doc(batches: &TableBatches) -> Json {
    let model = batches.model();
    let columns: Vec<Json> = model
        .columns
        .iter()
        .map(|c| {
            let mut d = json!({
                "name": c.name(),
                "kind": kind_name(c),
                "arrow_type": arrow_name(c),
                "nulls": c.spec.nulls.name(),
                "storage": c.keys,
            });
            if let Some(why) = &c.problem {
                d["not_shown"] = json!(why);
            }
            d
        })
        .collect();
    let left_out: serde_json::Map<String, Json> = batches
        .left_out()
        .iter()
        .map(|(n, why)| (n.clone(), json!(why)))
        .collect();
    let indexes: Vec<Json> = model
        .indexes
        .iter()
        .map(|ix| json!({ "column": ix.column, "kind": ix.kind }))
        .collect();
    json!({
        "kind": "ctable",
        "key": if model.key.is_empty() { "/" } else { &model.key },
        "rows": model.rows.count,
        "deleted_rows": model.deleted_rows(),
        "physical_rows": model.physical_rows,
        "columns": columns,
        "arrow_left_out": left_out,
        "indexes": indexes,
        "index_keys": model.index_keys,
        "unclaimed_keys": model.unclaimed,
        "schema": model.schema.doc,
        "vlmeta": model.meta_vlmeta,
        "user_vlmeta": model.user_vlmeta,
    })
}
