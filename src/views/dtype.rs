//! The dtype every view presents an array's items as: the declared one when
//! it fits the frame's typesize, otherwise an opaque void of that size
//! (C-API writers leave the b2nd dtype at `|u1` for wider items).

use crate::format::dtype::{NumpyDtype, RecordForm};
use crate::format::{simple_dtype_itemsize, Array, Shape};

/// The NumPy dtype that describes the data's items: the declared dtype when
/// it is a plain one whose size matches the frame's typesize, or a record
/// written as a list of fields (the views that lay out its fields check its
/// size themselves); otherwise a void of the typesize. Plain sizes are
/// [`simple_dtype_itemsize`]'s, so a datetime that names its unit, an
/// object, a dict-form record and a subarray are presented as voids.
pub fn presented_dtype(array: &Array) -> String {
    let typesize = array.frame().typesize as u64;
    if let Shape::Nd { meta, .. } = array.shape() {
        if let Some(dtype) = meta.dtype.as_deref() {
            if presented_as_declared(dtype, typesize) {
                return dtype.to_string();
            }
        }
    }
    format!("|V{typesize}")
}

/// Whether the declared `dtype` describes items of `typesize` bytes as the
/// views can present them (see [`presented_dtype`]).
fn presented_as_declared(dtype: &str, typesize: u64) -> bool {
    match simple_dtype_itemsize(dtype) {
        Some(size) => size == typesize,
        None => matches!(
            NumpyDtype::parse(dtype),
            Ok(NumpyDtype::Record(r)) if r.form == RecordForm::List
        ),
    }
}

/// The shape the views present: the b2nd shape, or for a plain frame one
/// axis of whole items.
pub fn presented_shape(array: &Array) -> Vec<u64> {
    match array.shape() {
        Shape::Nd { geometry, .. } => geometry.shape.clone(),
        Shape::Plain { .. } => vec![array.data_len() / (array.frame().typesize as u64).max(1)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::testing::fixture;

    #[test]
    fn declared_dtypes_are_kept_and_plain_frames_get_voids() {
        assert_eq!(presented_dtype(&fixture("dtype_le_f8.b2nd")), "<f8");
        assert_eq!(presented_dtype(&fixture("dtype_be_i4.b2nd")), ">i4");
        assert_eq!(
            presented_dtype(&fixture("dtype_struct.b2nd")),
            "[('a', '<i4'), ('b', '<f8'), ('c', 'S3')]"
        );
        let plain = fixture("frame_f32.b2frame");
        assert_eq!(presented_dtype(&plain), "|V4");
        assert_eq!(presented_shape(&plain), [2500]);
        assert_eq!(presented_shape(&fixture("shape_3d.b2nd")), [13, 11, 9]);
    }

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
            assert_eq!(presented_as_declared(dtype, typesize), kept, "{dtype}");
        }
    }
}
