//! A table's schema as text for `blosc2fs info`: its rows (live, deleted,
//! physical), each column in schema order with its kind, Arrow type,
//! nullability and null storage, the columns Arrow cannot hold, its
//! indexes and the keys no column claims.

use std::fmt::Write as _;

use super::record_batches::TableBatches;
use super::schema::{Kind, Nulls};
use super::seam::TableSource;
use super::type_names::{arrow_name, kind_name};

/// The schema of `batches`' table as aligned text, one line per column.
pub fn schema_text(batches: &TableBatches) -> String {
    let model = batches.model();
    let mut out = String::new();
    let key = if model.key.is_empty() {
        "/"
    } else {
        &model.key
    };
    let _ = writeln!(
        out,
        "ctable {key}: {} rows ({} deleted, {} physical), {} columns",
        model.rows.count,
        model.deleted_rows(),
        model.physical_rows,
        model.columns.len()
    );
    let rows: Vec<[String; 5]> = model
        .columns
        .iter()
        .map(|c| {
            let nullable = match c.spec.nulls {
                Nulls::None => "not null".to_string(),
                ref n => format!("nullable ({})", n.name()),
            };
            let note = match (&c.problem, &c.spec.kind) {
                (Some(why), _) => format!("not shown: {why}"),
                (
                    None,
                    Kind::Computed {
                        expression, deps, ..
                    },
                ) => {
                    format!("= {expression} over {}", deps.join(", "))
                }
                _ => String::new(),
            };
            [
                c.name().to_string(),
                kind_name(c),
                arrow_name(c).as_str().unwrap_or("-").to_string(),
                nullable,
                note,
            ]
        })
        .collect();
    let header = ["column", "kind", "arrow type", "nulls", ""].map(String::from);
    let mut widths = [0usize; 4];
    for row in std::iter::once(&header).chain(&rows) {
        for (w, cell) in widths.iter_mut().zip(row.iter()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in std::iter::once(&header).chain(&rows) {
        let mut line = String::from(" ");
        for (w, cell) in widths.iter().zip(row.iter()) {
            let _ = write!(line, " {cell:<w$}");
        }
        if !row[4].is_empty() {
            let _ = write!(line, " {}", row[4]);
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    for (name, why) in batches.left_out() {
        let _ = writeln!(out, "not in table.arrow: {name}: {why}");
    }
    if model.indexes.is_empty() {
        let _ = writeln!(out, "indexes: none");
    } else {
        let list: Vec<String> = model
            .indexes
            .iter()
            .map(|ix| format!("{} ({})", ix.column, ix.kind))
            .collect();
        let _ = writeln!(out, "indexes: {}", list.join(", "));
    }
    if !model.unclaimed.is_empty() {
        let _ = writeln!(out, "keys no column claims: {}", model.unclaimed.join(", "));
    }
    out
}
