//! A CTable's documents, rendered from its model as an array's are from
//! `Array`: the table folder's `meta.json` (its rows, deleted rows, each
//! column in schema order with its kind, Arrow type, null policy and
//! storage keys, the columns Arrow cannot hold, its indexes, the keys no
//! column claims, its schema and vlmeta) and the `column` part of each
//! column folder's `meta.json` (what the column is and how its nulls are
//! stored). The table folder's `zarr.json` is the Zarr v3 group of its
//! `meta.json` ([`super::zarr3_group`]).

use serde_json::{json, Value as Json};

use crate::tables::schema::{Nulls, Sentinel};
use crate::tables::type_names::{arrow_name, kind_name};
use crate::tables::{Column, TableBatches, TableModel, TableSource};

use super::arrow_json::float_json;

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
        "key": table_key(model),
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

/// The table's key as documents name it (`/`: the store root).
fn table_key(model: &TableModel) -> &str {
    if model.key.is_empty() {
        "/"
    } else {
        &model.key
    }
}

/// Column `i`'s description, the `column` of its folder's `meta.json`
/// (the files it shows are added by [`super::table_column`]).
pub fn column_doc(model: &TableModel, i: usize) -> Json {
    let column = &model.columns[i];
    let mut doc = json!({
        "kind": "column",
        "table": table_key(model),
        "name": column.name(),
        "column_kind": kind_name(column),
        "arrow_type": arrow_name(column),
        "nulls": nulls_doc(column),
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

/// The null policy of a column as `meta.json` states it.
pub fn nulls_doc(column: &Column) -> Json {
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
                Sentinel::Float(f) => float_json(*f),
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
    doc
}
