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
use crate::read::{RowMap, RowSelection, View};

use super::scalar::ScalarFormat;

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
            let view = View::Rows(Arc::new(RowSelection::new(
                clipped.runs,
                format.size as u64,
                Arc::new(Vec::new()),
            )));
            names.push(header_field(&name));
            out.push(CsvColumn {
                array,
                view,
                format,
            });
        }
        let mut header = names.join(",").into_bytes();
        header.push(b'\n');
        let row_width = out.iter().map(|c| c.format.width() as u64 + 1).sum();
        Some(TableCsv {
            header,
            columns: out,
            row_width,
            rows: count.unwrap_or(0),
        })
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
    pub fn read<E>(
        &self,
        offset: u64,
        size: u64,
        mut fetch: impl FnMut(&CsvColumn, u64, u64) -> Result<Vec<u8>, E>,
    ) -> Result<Vec<u8>, E> {
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
                .map(|c| {
                    fetch(
                        c,
                        rows.start * c.format.size as u64,
                        n * c.format.size as u64,
                    )
                })
                .collect::<Result<_, _>>()?;
            let mut scratch = String::with_capacity(64);
            for r in 0..n as usize {
                for (k, (column, bytes)) in self.columns.iter().zip(&data).enumerate() {
                    let size = column.format.size;
                    column.format.write_with(
                        &bytes[r * size..(r + 1) * size],
                        &mut scratch,
                        &mut text,
                    );
                    text.push(if k + 1 == self.columns.len() {
                        b'\n'
                    } else {
                        b','
                    });
                }
            }
        }
        let skip = (start - from) as usize;
        text.truncate(skip + (end - start) as usize);
        text.drain(..skip);
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Region;
    use crate::read::read_uncached;
    use crate::views::testing::fixture;

    /// table.b2d (scripts/gen/gen_store_fixtures.py): 20 rows `a = 3 i` (int32),
    /// `b = i / 4` (float64), rows 1, 5, 6 and 19 deleted.
    #[test]
    fn lines_hold_the_valid_rows_in_fixed_widths() {
        let columns = ["a", "b"].map(|c| {
            let array = fixture(&format!("stores/table.b2d/_cols/{c}.b2nd"));
            let dtype = crate::views::presented_dtype(&array);
            (c.to_string(), array, dtype)
        });
        let rows = RowMap {
            runs: vec![(0, 1), (2, 3), (7, 12)],
            count: 16,
        };
        let csv = TableCsv::new(columns.to_vec(), &rows).expect("two 1-D numeric columns");
        let fetch =
            |column: &CsvColumn, start: u64, len: u64| -> Result<Vec<u8>, crate::format::Problem> {
                let View::Rows(selection) = &column.view else {
                    panic!("a rows view")
                };
                // Map the view's bytes back to stored rows the simple way: read the whole column.
                let mut all = vec![0; column.array.data_len() as usize];
                read_uncached(&column.array, Region::Data, 0, &mut all)?;
                let size = column.format.size;
                let kept: Vec<u8> = [(0u64, 1u64), (2, 3), (7, 12)]
                    .iter()
                    .flat_map(|&(s, n)| all[s as usize * size..(s + n) as usize * size].to_vec())
                    .collect();
                assert_eq!(selection.body_len(), kept.len() as u64);
                Ok(kept[start as usize..(start + len) as usize].to_vec())
            };
        let whole = csv.read(0, u64::MAX, fetch).unwrap();
        assert_eq!(whole.len() as u64, csv.len());
        let text = String::from_utf8(whole.clone()).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("a,b"));
        let kept: Vec<u64> = (0..20).filter(|i| ![1, 5, 6, 19].contains(i)).collect();
        let body: Vec<&str> = lines.collect();
        assert_eq!(body.len(), kept.len());
        for (line, &i) in body.iter().zip(&kept) {
            assert_eq!(line.len(), body[0].len(), "fixed width: {line:?}");
            let (a, b) = line.split_once(',').unwrap();
            assert_eq!(a.trim().parse::<i64>().unwrap(), 3 * i as i64, "{line:?}");
            assert_eq!(b.trim().parse::<f64>().unwrap(), i as f64 / 4.0, "{line:?}");
        }
        // Any window is that slice of the whole file.
        for (offset, size) in [(0u64, 2u64), (3, 11), (40, 77), (csv.len() - 5, 100)] {
            let part = csv.read(offset, size, fetch).unwrap();
            let end = (offset + size).min(csv.len()) as usize;
            assert_eq!(
                part,
                &whole[offset as usize..end],
                "{size} bytes at {offset}"
            );
        }
    }

    #[test]
    fn header_fields_are_quoted_only_when_needed() {
        assert_eq!(header_field("temp"), "temp");
        assert_eq!(header_field("a,b"), "\"a,b\"");
        assert_eq!(header_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn columns_of_different_row_counts_or_two_axes_make_no_csv() {
        let rows = RowMap {
            runs: vec![(0, 10)],
            count: 10,
        };
        let two_axes = fixture("dtype_le_f8.b2nd");
        assert!(TableCsv::new(vec![("x".into(), two_axes, "<f8".into())], &rows).is_none());
        let short = fixture("stores/table.b2d/_cols/a.b2nd");
        let stored = match short.shape() {
            Shape::Nd { geometry, .. } => geometry.shape[0],
            Shape::Plain { .. } => unreachable!(),
        };
        let long_rows = RowMap {
            runs: vec![(0, stored + 5)],
            count: stored + 5,
        };
        let one =
            TableCsv::new(vec![("a".into(), short.clone(), "<i4".into())], &long_rows).unwrap();
        // Rows past the stored ones are clipped, never made up.
        assert_eq!(one.rows, stored);
    }
}
