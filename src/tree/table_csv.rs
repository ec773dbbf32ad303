//! `table.csv` of a CTable: a header line, then one line per valid row.
//!
//! Every field is right-aligned in the fixed width `data.txt` uses for its
//! column's dtype ([`ScalarFormat`]), fields are separated by `,`, so a
//! line's length is the same for every row: the file's size is known at
//! `stat` time and any byte range maps straight to rows. The values come
//! from each column's valid rows through the read layer, on demand (the file
//! is never built whole).

use std::ops::Range;
use std::sync::Arc;

use crate::format::{Array, Shape};
use crate::read::{RowSelection, View};

use super::store::RowMap;
use super::text::ScalarFormat;

/// One column of the CSV: its array, the view of its valid rows, the format.
#[derive(Debug)]
pub struct CsvColumn {
    /// The column's array.
    pub array: Arc<Array>,
    /// Its valid rows, in order (no prefix).
    pub view: View,
    format: ScalarFormat,
}

/// The layout of a table's `table.csv`.
#[derive(Debug)]
pub struct TableCsv {
    header: Vec<u8>,
    columns: Vec<CsvColumn>,
    row_width: u64,
    rows: u64,
}

/// A header field: quoted (with doubled quotes) when it holds a comma, a
/// quote or a line break, as CSV readers expect.
fn header_field(name: &str) -> String {
    if name.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", name.replace('"', "\"\""))
    } else {
        name.to_string()
    }
}

impl TableCsv {
    /// Whether reading a column may wait on a network.
    pub fn may_wait(&self) -> bool {
        self.columns.iter().any(|c| c.array.may_wait())
    }

    /// The CSV of columns (name, array, dtype as presented) over the valid
    /// rows `rows`; `None` when a column is not a 1-D array of a dtype
    /// `data.txt` can show, or the columns do not all hold the valid rows.
    pub fn new(columns: Vec<(String, Arc<Array>, String)>, rows: &RowMap) -> Option<TableCsv> {
        let mut names = Vec::new();
        let mut out = Vec::new();
        let mut count = None;
        for (name, array, dtype) in columns {
            let format = ScalarFormat::parse(&dtype)?;
            let stored = match array.shape() {
                Shape::Nd { geometry, .. } if geometry.shape.len() == 1 => geometry.shape[0],
                _ => return None,
            };
            if format.size as u64 != array.frame().typesize as u64 {
                return None;
            }
            let clipped = rows.clipped(stored);
            if *count.get_or_insert(clipped.count) != clipped.count {
                return None;
            }
            let view = View::Rows(Arc::new(RowSelection::new(clipped.runs, format.size as u64, Arc::new(Vec::new()))));
            names.push(header_field(&name));
            out.push(CsvColumn { array, view, format });
        }
        let mut header = names.join(",").into_bytes();
        header.push(b'\n');
        let row_width = out.iter().map(|c| c.format.width() as u64 + 1).sum();
        Some(TableCsv { header, columns: out, row_width, rows: count.unwrap_or(0) })
    }

    /// Size of the file in bytes.
    pub fn len(&self) -> u64 {
        self.header.len() as u64 + self.rows * self.row_width
    }

    /// Whether the file is empty (never: it has a header line).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rows whose lines overlap bytes `[start, end)` of the file.
    fn rows_in(&self, start: u64, end: u64) -> Range<u64> {
        let h = self.header.len() as u64;
        let first = start.saturating_sub(h) / self.row_width.max(1);
        let last = end.saturating_sub(h).div_ceil(self.row_width.max(1));
        first.min(self.rows)..last.min(self.rows)
    }

    /// Bytes `[offset, offset + size)` of the file (shorter at its end);
    /// `fetch(column, start, len)` returns bytes `[start, start + len)` of
    /// that column's valid-rows view.
    pub fn read<E>(&self, offset: u64, size: u64, mut fetch: impl FnMut(&CsvColumn, u64, u64) -> Result<Vec<u8>, E>) -> Result<Vec<u8>, E> {
        let end = offset.saturating_add(size).min(self.len());
        let start = offset.min(end);
        let h = self.header.len() as u64;
        let rows = self.rows_in(start, end);
        let mut text = Vec::with_capacity((end - start) as usize + self.row_width as usize);
        let mut from = start;
        if start < h {
            text.extend_from_slice(&self.header[start as usize..]);
        } else {
            from = h + rows.start * self.row_width;
        }
        if !rows.is_empty() {
            let n = rows.end - rows.start;
            let data: Vec<Vec<u8>> = self
                .columns
                .iter()
                .map(|c| fetch(c, rows.start * c.format.size as u64, n * c.format.size as u64))
                .collect::<Result<_, _>>()?;
            let mut scratch = String::with_capacity(64);
            for r in 0..n as usize {
                for (k, (column, bytes)) in self.columns.iter().zip(&data).enumerate() {
                    let size = column.format.size;
                    column.format.write_with(&bytes[r * size..(r + 1) * size], &mut scratch, &mut text);
                    text.push(if k + 1 == self.columns.len() { b'\n' } else { b',' });
                }
            }
        }
        let skip = (start - from) as usize;
        text.truncate(skip + (end - start) as usize);
        text.drain(..skip);
        Ok(text)
    }
}
