//! What a table column's folder shows: `data`/`data.npy` over the live
//! rows where one stored array holds the values (or a computed column's
//! values, evaluated), `valid` beside them for a nullable column,
//! `items.jsonl` for text, dictionary, variable-length, list, struct and
//! object columns, a `zarr.json` where the column is a Zarr v3 array
//! ([`super::column_zarr`]), and a `meta.json` saying which and why (its
//! `column` part from [`super::table_meta`]).

use std::sync::Arc;

use arrow_array::Array as _;
use serde_json::{json, Value as Json};

use crate::format::Array;
use crate::read::RowSelection;
use crate::tables::record_batches::ColumnBatches;
use crate::tables::schema::{Kind, Nulls};
use crate::tables::{ColumnBatch, Parts, TableBatches, TableSource};

use super::column_files::{ColumnFiles, ValidBytes};
use super::column_jsonl::ColumnJsonl;
use super::column_zarr::{column_zarr, one_chunk_zarr};
use super::json::json_bytes;
use super::npy;
use super::piece_file::PieceFile;
use super::presented::Presented;
use super::table_meta::column_doc;

/// Largest rendered `data` of a computed column.
const MAX_COMPUTED_BYTES: u64 = 256 << 20;

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
                match batches.computed_bytes(i) {
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
    mask: Option<&Arc<Array>>,
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
            match model.count_nulls(mask, &clipped) {
                Ok(n) => doc["nulls"]["null_rows"] = json!(n),
                Err(e) => doc["nulls"]["error"] = json!(e.to_string()),
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
                    Ok(ColumnBatch::Arrow(a)) => {
                        body.extend((0..a.len()).map(|r| u8::from(a.is_valid(r))));
                    }
                    Ok(ColumnBatch::Json(v)) => {
                        body.extend(v.iter().map(|j| u8::from(!j.is_null())))
                    }
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

/// The `items.jsonl` of column `i`, rendered a batch of rows at a time
/// when read (how, in `doc`).
fn items_file(batches: &Arc<TableBatches>, i: usize, doc: &mut Json) -> Arc<PieceFile> {
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
    let source = ColumnBatches {
        batches: batches.clone(),
        column: i,
    };
    let renderer = ColumnJsonl::new(Box::new(source));
    Arc::new(PieceFile::new(
        name,
        Box::new(renderer),
        column.parts.may_wait(),
    ))
}
