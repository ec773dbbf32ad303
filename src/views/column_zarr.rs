//! A table column as a Zarr v3 array: a 1-D number or bool column is an
//! array of one chunk (`c/0`, its `data`) along the table's
//! [`ROW_DIMENSION`], when no live row reads wrong there; its folder's
//! `zarr.json` says so, and its `meta.json` says why not when it is not.

use std::sync::Arc;

use serde_json::{json, Value as Json};

use crate::format::simple_dtype_itemsize;
use crate::tables::schema::{Kind, Nulls};
use crate::tables::{Parts, TableBatches};

use super::json::json_bytes;
use super::presented::Presented;
use super::zarr3;

/// The dimension every Zarr v3 column array of a table shares.
pub const ROW_DIMENSION: &str = "row";

/// Make a 1-D number or bool column a Zarr v3 array of one chunk (`c/0`,
/// its `data`) along the table's [`ROW_DIMENSION`], when no live row reads
/// wrong there: no null, or (floats) a NaN stored at every null, as pandas
/// shows it. Why not goes into `doc`.
pub fn column_zarr(batches: &TableBatches, i: usize, p: &mut Presented, doc: &mut Json) {
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
        if *row_bytes != simple_dtype_itemsize(dtype).unwrap_or(0) {
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
            batches.nan_at_every_null(i)?;
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
pub fn one_chunk_zarr(p: &mut Presented, doc: &mut Json, dtype: &str, rows: u64, name: &str) {
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
