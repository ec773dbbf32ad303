//! impl Array: the NumPy dtype an array's items are read as. The declared
//! b2nd dtype when it fits the frame's typesize, otherwise an opaque void of
//! that size (C-API writers leave the b2nd dtype at `|u1` for wider items).
//! Every reader above agrees on it: the views present it, a table's column
//! reads its values by it, a saved expression types its operands by it.

use super::array::{Array, Shape};
use super::dtype::{NumpyDtype, RecordForm};
use super::meta::simple_dtype_itemsize;

impl Array {
    /// The NumPy dtype that describes the data's items: the declared dtype
    /// when it is a plain one whose size matches the frame's typesize, or a
    /// record written as a list of fields (the readers that lay out its
    /// fields check its size themselves); otherwise a void of the typesize.
    /// Plain sizes are [`simple_dtype_itemsize`]'s, so a datetime that names
    /// its unit, an object, a dict-form record and a subarray are voids.
    pub fn item_dtype(&self) -> String {
        let typesize = self.frame().typesize as u64;
        if let Shape::Nd { meta, .. } = self.shape() {
            if let Some(dtype) = meta.dtype.as_deref() {
                if read_as_declared(dtype, typesize) {
                    return dtype.to_string();
                }
            }
        }
        format!("|V{typesize}")
    }
}

/// Whether the declared `dtype` describes items of `typesize` bytes as
/// they can be read (see [`Array::item_dtype`]).
fn read_as_declared(dtype: &str, typesize: u64) -> bool {
    match simple_dtype_itemsize(dtype) {
        Some(size) => size == typesize,
        None => matches!(
            NumpyDtype::parse(dtype),
            Ok(NumpyDtype::Record(r)) if r.form == RecordForm::List
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_declared_dtypes_are_kept() {
        for (dtype, typesize, kept) in [
            ("<f8", 8, true),
            ("<f8", 4, false),
            ("<U5", 20, true),
            ("|S7", 7, true),
            ("<M8", 8, true),
            ("<M8[ns]", 8, false),
            ("|O", 8, false),
            ("[('a', '<i4'), ('b', [('x', 'u1')])]", 5, true),
            ("[(('t', 'a'), '<i4')]", 4, true),
            (
                "{'names': ['a'], 'formats': ['<i4'], 'offsets': [4], 'itemsize': 8}",
                8,
                false,
            ),
            ("('<i4', (2,))", 8, false),
            ("[('a', '<i4')", 4, false),
            ("<i3", 3, false),
        ] {
            assert_eq!(read_as_declared(dtype, typesize), kept, "{dtype}");
        }
    }
}
