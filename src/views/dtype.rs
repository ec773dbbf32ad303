//! The dtype every view presents an array's items as: the declared one when
//! it fits the frame's typesize, otherwise an opaque void of that size
//! (C-API writers leave the b2nd dtype at `|u1` for wider items).

use crate::format::{Array, Shape};

/// The NumPy dtype that describes the data's items
/// ([`Array::item_dtype`]: the declared dtype when it fits the frame's
/// typesize, otherwise a void of the typesize).
pub fn presented_dtype(array: &Array) -> String {
    array.item_dtype()
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
}
