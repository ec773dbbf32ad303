//! `data.txt`: an array's values as fixed-width text, and the mapping from a
//! byte range of that text to the items it shows.
//!
//! Every value of a dtype is written in one width chosen from the dtype
//! alone (how each value is written: [`super::scalar`]), followed by one
//! separator (a space, or a newline at the end of a line). Every item
//! therefore takes the same number of bytes, the file's size is known at
//! `stat` time and byte `o` belongs to item `o / item_width`: a read decodes
//! only the items it shows. Lines hold one last-axis row (1-D arrays: one
//! value per line); structured dtypes give one column per field (a field
//! with a shape: one per element).

use std::ops::Range;

use crate::format::dtype::{NumpyDtype, Record};
use crate::format::Array;

use super::dtype::{presented_dtype, presented_shape};
use super::scalar::ScalarFormat;

/// One column of the text: a scalar at a byte offset inside the item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// Byte offset of the value inside the item.
    pub offset: usize,
    /// How the value is written.
    pub format: ScalarFormat,
}

/// The columns of a dtype and its item size: one column for a plain
/// dtype [`ScalarFormat::of`] can write, one per field (a field with a
/// shape: one per element) for a record of such fields; `None` for any
/// other dtype (a record with a nested record, a titled field, or no
/// fields; a subarray).
pub fn columns(dtype: &NumpyDtype) -> Option<(Vec<Column>, usize)> {
    match dtype {
        NumpyDtype::Scalar(scalar) => {
            let format = ScalarFormat::of(scalar)?;
            Some((vec![Column { offset: 0, format }], format.size))
        }
        NumpyDtype::Record(record) => record_columns(record),
        NumpyDtype::Subarray(_) => None,
    }
}

/// [`columns`] of a record, at its fields' offsets.
fn record_columns(record: &Record) -> Option<(Vec<Column>, usize)> {
    let mut out = Vec::new();
    for field in &record.fields {
        if field.title.is_some() {
            return None;
        }
        let (scalar, count) = match &field.dtype {
            NumpyDtype::Scalar(scalar) => (scalar, 1),
            NumpyDtype::Subarray(sub) => (sub.base.as_scalar()?, sub.shape.iter().product()),
            NumpyDtype::Record(_) => return None,
        };
        let format = ScalarFormat::of(scalar)?;
        let mut offset = usize::try_from(field.offset).ok()?;
        for _ in 0..count {
            out.push(Column { offset, format });
            offset = offset.checked_add(format.size)?;
        }
    }
    let itemsize = usize::try_from(record.itemsize).ok()?;
    (!out.is_empty()).then_some((out, itemsize))
}

/// The text layout of one array: its columns, how many items a line holds
/// and how many items there are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextLayout {
    columns: Vec<Column>,
    itemsize: usize,
    item_width: u64,
    per_line: u64,
    nitems: u64,
}

impl TextLayout {
    /// The layout of `data.txt` for `array`, when its presented dtype is
    /// one text can show and its items are the frame's typesize.
    /// (An ObjectArray's or BatchArray's bytes are msgpack, shown by
    /// `items.jsonl`: it has no `data.txt`.)
    pub fn of_array(array: &Array) -> Option<TextLayout> {
        if super::items::kind_of(array).is_some() {
            return None;
        }
        let dtype = NumpyDtype::parse(&presented_dtype(array)).ok()?;
        if dtype.itemsize() != array.frame().typesize as u64 {
            return None;
        }
        TextLayout::of_dtype(&dtype, &presented_shape(array))
    }

    /// The layout of an array of `dtype` (a NumPy dtype string) and `shape`;
    /// `None` when text cannot show the dtype ([`columns`]) or the text
    /// would not fit in 2^63 bytes.
    pub fn new(dtype: &str, shape: &[u64]) -> Option<TextLayout> {
        TextLayout::of_dtype(&NumpyDtype::parse(dtype).ok()?, shape)
    }

    /// [`Self::new`] for a dtype already read.
    pub fn of_dtype(dtype: &NumpyDtype, shape: &[u64]) -> Option<TextLayout> {
        let (columns, itemsize) = columns(dtype)?;
        let item_width: u64 = columns.iter().map(|c| c.format.width() as u64 + 1).sum();
        let nitems = shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d))?;
        let per_line = if shape.len() >= 2 {
            shape[shape.len() - 1]
        } else {
            1
        };
        nitems.checked_mul(item_width).filter(|&n| n < 1 << 63)?;
        Some(TextLayout {
            columns,
            itemsize,
            item_width,
            per_line,
            nitems,
        })
    }

    /// Size of the text in bytes.
    pub fn len(&self) -> u64 {
        self.nitems * self.item_width
    }

    /// Whether the text is empty (no items).
    pub fn is_empty(&self) -> bool {
        self.nitems == 0
    }

    /// Bytes of one item in the data.
    pub fn itemsize(&self) -> usize {
        self.itemsize
    }

    /// Bytes of one item in the text, separator included.
    pub fn item_width(&self) -> u64 {
        self.item_width
    }

    /// The items whose text overlaps bytes `[offset, offset + size)`.
    pub fn items(&self, offset: u64, size: u64) -> Range<u64> {
        let end = offset.saturating_add(size).min(self.len());
        let start = offset.min(end);
        start / self.item_width..end.div_ceil(self.item_width)
    }

    /// Append the text of the items from number `first` on, whose data bytes
    /// are `data` (a whole number of items).
    pub fn render(&self, first: u64, data: &[u8], out: &mut Vec<u8>) {
        out.reserve(data.len() / self.itemsize.max(1) * self.item_width as usize);
        let mut scratch = String::with_capacity(64);
        for (i, item) in data.chunks_exact(self.itemsize.max(1)).enumerate() {
            let n = first + i as u64;
            for (k, col) in self.columns.iter().enumerate() {
                col.format.write_with(
                    &item[col.offset..col.offset + col.format.size],
                    &mut scratch,
                    out,
                );
                let last = k + 1 == self.columns.len() && (n + 1).is_multiple_of(self.per_line);
                out.push(if last { b'\n' } else { b' ' });
            }
        }
    }

    /// Bytes `[offset, offset + size)` of the text (shorter at its end);
    /// `fetch(start, len)` returns data bytes `[start, start + len)`.
    pub fn read<E>(
        &self,
        offset: u64,
        size: u64,
        fetch: impl FnOnce(u64, u64) -> Result<Vec<u8>, E>,
    ) -> Result<Vec<u8>, E> {
        let items = self.items(offset, size);
        if items.is_empty() {
            return Ok(Vec::new());
        }
        let is = self.itemsize as u64;
        let data = fetch(items.start * is, (items.end - items.start) * is)?;
        let mut text = Vec::new();
        self.render(items.start, &data, &mut text);
        let skip = (offset - items.start * self.item_width) as usize;
        let end = offset.saturating_add(size).min(self.len());
        let take = (end - offset) as usize;
        text.truncate(skip + take);
        text.drain(..skip);
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(dtype: &str) -> Option<(Vec<Column>, usize)> {
        super::columns(&NumpyDtype::parse(dtype).ok()?)
    }

    #[test]
    fn structured_dtypes_give_one_column_per_field() {
        let (cols, size) = columns("[('a', '<i4'), ('b', '>f8'), ('c', '|u1', (2,))]").unwrap();
        assert_eq!(size, 14);
        assert_eq!(
            cols.iter().map(|c| c.offset).collect::<Vec<_>>(),
            [0, 4, 12, 13]
        );
        assert!(cols[1].format.big_endian);
        // Bytes and string fields are columns too; nested records are not.
        let (cols, size) =
            columns("[('a', '<i4'), ('f1', 'V6'), ('s', 'S3'), ('u', '>U2')]").unwrap();
        assert_eq!(size, 4 + 6 + 3 + 8);
        assert_eq!(
            cols.iter()
                .map(|c| (c.offset, c.format.width()))
                .collect::<Vec<_>>(),
            [(0, 11), (4, 26), (10, 14), (13, 22)]
        );
        assert_eq!(columns("[('a', [('x', '<i4')])]"), None);
        assert_eq!(columns("[]"), None);
        assert_eq!(columns("<U4").unwrap().1, 16);
        // Titled fields are not shown; a subarray dtype is no record.
        assert_eq!(columns("[(('t', 'a'), '<i4')]"), None);
        assert_eq!(columns("('<i4', (2,))"), None);
        // A dict-form record's columns sit at its offsets.
        let (cols, size) = columns(
            "{'names': ['a', 'b'], 'formats': ['<i4', '<M8[ns]'], 'offsets': [8, 0], 'itemsize': 16}",
        )
        .unwrap();
        assert_eq!((cols[0].offset, cols[1].offset, size), (8, 0, 16));
    }

    #[test]
    fn byte_ranges_map_to_items_and_lines() {
        // 2 x 3 <i2: items of 6 + 1 bytes, lines of 3 items.
        let layout = TextLayout::new("<i2", &[2, 3]).unwrap();
        assert_eq!((layout.item_width(), layout.len()), (7, 42));
        let data: Vec<u8> = [1i16, -2, 300, i16::MIN, 0, 7]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let whole = layout
            .read(0, u64::MAX, |s, n| {
                Ok::<_, ()>(data[s as usize..(s + n) as usize].to_vec())
            })
            .unwrap();
        assert_eq!(
            String::from_utf8(whole.clone()).unwrap(),
            "     1     -2    300\n-32768      0      7\n"
        );
        for offset in 0..44u64 {
            for size in [0u64, 1, 5, 7, 8, 13, 100] {
                let mut asked = None;
                let got = layout
                    .read(offset, size, |s, n| {
                        asked = Some((s, n));
                        Ok::<_, ()>(data[s as usize..(s + n) as usize].to_vec())
                    })
                    .unwrap();
                let (a, b) = (
                    (offset as usize).min(42),
                    ((offset + size) as usize).min(42),
                );
                assert_eq!(got, &whole[a..b], "{offset} {size}");
                if let Some((s, n)) = asked {
                    // Only the items shown are fetched.
                    assert_eq!(s, offset / 7 * 2);
                    assert_eq!(n, ((offset + size).min(42).div_ceil(7) - offset / 7) * 2);
                }
            }
        }
        // 1-D: one value per line; 0-D: one line; empty: nothing.
        let one = TextLayout::new("|b1", &[3]).unwrap();
        let text = one.read(0, 100, |_, _| Ok::<_, ()>(vec![1, 0, 2])).unwrap();
        assert_eq!(text, b"1\n0\n1\n");
        let scalar = TextLayout::new("<f8", &[]).unwrap();
        assert_eq!(
            scalar
                .read(0, 100, |_, _| Ok::<_, ()>(2.5f64.to_le_bytes().to_vec()))
                .unwrap(),
            format!("{:>24}\n", "2.5").as_bytes()
        );
        let empty = TextLayout::new("<f8", &[4, 0]).unwrap();
        assert!(empty.is_empty());
        assert_eq!(
            empty
                .read(0, 100, |_, _| -> Result<Vec<u8>, ()> {
                    panic!("nothing to fetch")
                })
                .unwrap(),
            b""
        );
        // Structured: columns separated by spaces, items by the line rule.
        let rec = TextLayout::new("[('a', '<i4'), ('b', '<f4')]", &[2]).unwrap();
        let data: Vec<u8> = [
            1i32.to_le_bytes(),
            0.5f32.to_le_bytes(),
            (-3i32).to_le_bytes(),
            1e30f32.to_le_bytes(),
        ]
        .concat();
        let text = rec.read(0, 1000, |_, _| Ok::<_, ()>(data.clone())).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            format!("{:>11} {:>15}\n{:>11} {:>15}\n", 1, "0.5", -3, "1e30")
        );
        assert_eq!(
            TextLayout::new("<f8", &[1 << 61, 1 << 2]),
            None,
            "too large"
        );
        assert_eq!(TextLayout::new("|V0", &[3]), None);
        assert_eq!(TextLayout::new("<M8[1 s]", &[3]), None);
    }
}
