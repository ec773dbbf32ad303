//! `data.mhd`: a MetaImage header (ITK's MetaIO) that points at `data`, so
//! ITK, SimpleITK, ITK-SNAP, 3D Slicer and ParaView open a mounted 2-D to
//! 4-D array with no conversion.
//!
//! The byte order is given as `BinaryDataByteOrderMSB`, the key ITK reads
//! (it ignores `ByteOrderMSB` alone and would read big-endian data wrong).
//! `ElementDataFile` must be the last field: MetaIO reads the data right
//! after it.
//!
//! Images of 2 to 4 dimensions ([`DIMS`]): MetaIO itself takes any, but
//! ITK's viewers build images of 2 and 3 dimensions and SimpleITK up to 4,
//! and a 1-D or 5-D "image" would open as something else or not at all.
//! A channel axis ([`super::imaging`]) is `ElementNumberOfChannels`, so
//! ITK reads an image of the spatial axes with that many components per
//! pixel. MetaIO's components are interleaved (the channel is the fastest
//! axis): when it is the last axis, or holds one channel, `data` already
//! lies so and the header points at it; otherwise (nnU-Net's channel-first
//! `(C, X, Y, Z)`) it points at [`INTERLEAVED_FILE`], the same bytes with
//! the channel axis moved last, produced on demand
//! ([`crate::read::Interleave`]).
//! `TransformMatrix` is written when a direction is given: row k is image
//! axis k's direction, as ITK's MetaImageIO reads it. MetaIO has no half
//! floats and no complex element type: those arrays get no header.
//! Booleans are shown as `MET_UCHAR`.

use super::imaging::{number, Element, Raster};

/// Image dimensions a MetaImage header is offered for (SimpleITK builds
/// images of 2 to 4).
pub const DIMS: std::ops::RangeInclusive<usize> = 2..=4;

/// The file beside `data` holding its bytes with the channel axis moved
/// last, which `data.mhd` points at when `data` keeps channels as planes.
pub const INTERLEAVED_FILE: &str = "data.interleaved";

/// Whether `data.mhd` of `raster` points at [`INTERLEAVED_FILE`]: several
/// channels on an axis that is not the fastest.
pub fn needs_interleaved(raster: &Raster) -> bool {
    raster
        .channel_axis
        .is_some_and(|c| c + 1 < raster.rank() && raster.shape[c] > 1)
}

/// MetaIO's name for the element type, `None` where it has none.
fn element_type(element: Element) -> Option<&'static str> {
    Some(match element {
        Element::Bool => "MET_UCHAR",
        Element::Int {
            signed: true,
            size: 1,
        } => "MET_CHAR",
        Element::Int {
            signed: false,
            size: 1,
        } => "MET_UCHAR",
        Element::Int {
            signed: true,
            size: 2,
        } => "MET_SHORT",
        Element::Int {
            signed: false,
            size: 2,
        } => "MET_USHORT",
        Element::Int {
            signed: true,
            size: 4,
        } => "MET_INT",
        Element::Int {
            signed: false,
            size: 4,
        } => "MET_UINT",
        Element::Int {
            signed: true,
            size: 8,
        } => "MET_LONG_LONG",
        Element::Int {
            signed: false,
            size: 8,
        } => "MET_ULONG_LONG",
        Element::Float { size: 4 } => "MET_FLOAT",
        Element::Float { size: 8 } => "MET_DOUBLE",
        _ => return None,
    })
}

/// The text of `data.mhd` for `raster`, or `None` when its dimensions or
/// element type are ones MetaImage is not offered for.
pub fn header(raster: &Raster) -> Option<Vec<u8>> {
    let element_type = element_type(raster.element)?;
    let rank = raster.rank();
    // The channel axis becomes components; the image's axes are the
    // spatial ones, fastest first.
    let sizes: Vec<String> = (0..rank)
        .rev()
        .filter(|a| Some(*a) != raster.channel_axis)
        .map(|a| raster.shape[a].to_string())
        .collect();
    if !DIMS.contains(&sizes.len()) {
        return None;
    }
    let msb = if raster.big_endian && raster.item_size() > 1 {
        "True"
    } else {
        "False"
    };
    let mut text = format!(
        "ObjectType = Image\nNDims = {}\nBinaryData = True\nBinaryDataByteOrderMSB = {msb}\nCompressedData = False\n",
        sizes.len()
    );
    if raster.direction.is_some() {
        // Row k: the direction of image axis k, components in image axis order.
        let rows: Vec<String> = raster
            .directions_fastest_first()
            .iter()
            .flatten()
            .map(|x| number(*x))
            .collect();
        text += &format!("TransformMatrix = {}\n", rows.join(" "));
    }
    text += &format!(
        "DimSize = {}\nElementSpacing = {}\nOffset = {}\n",
        sizes.join(" "),
        raster.spacing_fastest_first(),
        raster.origin_fastest_first(),
    );
    if raster.channels() > 1 {
        text += &format!("ElementNumberOfChannels = {}\n", raster.channels());
    }
    let file = if needs_interleaved(raster) {
        INTERLEAVED_FILE
    } else {
        "data"
    };
    text += &format!("ElementType = {element_type}\nElementDataFile = {file}\n");
    Some(text.into_bytes())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_big_endian_placed_image() {
        let vlmeta = [
            ("spacing".to_string(), json!([0.5, 2])),
            ("origin".to_string(), json!([1, 2])),
        ];
        let text =
            String::from_utf8(header(&Raster::new(">i2", &[3, 7], &vlmeta).unwrap()).unwrap())
                .unwrap();
        assert_eq!(
            text,
            "ObjectType = Image\nNDims = 2\nBinaryData = True\nBinaryDataByteOrderMSB = True\nCompressedData = False\n\
             DimSize = 7 3\nElementSpacing = 2 0.5\nOffset = 2 1\nElementType = MET_SHORT\nElementDataFile = data\n"
        );
    }

    #[test]
    fn ranks_and_types_it_cannot_offer() {
        let r = |dtype: &str, shape: &[u64]| header(&Raster::new(dtype, shape, &[]).unwrap());
        assert!(r("<f8", &[5]).is_none(), "1-D");
        assert!(r("<f8", &[2, 2, 2, 2, 2]).is_none(), "5-D");
        assert!(r("<f8", &[2, 2, 2, 2]).is_some(), "4-D");
        assert!(r("<f2", &[2, 2]).is_none());
        assert!(r("<c8", &[2, 2]).is_none());
        let bools = String::from_utf8(r("|b1", &[2, 2, 2]).unwrap()).unwrap();
        assert!(
            bools.contains("BinaryDataByteOrderMSB = False\n")
                && bools.contains("ElementType = MET_UCHAR\n")
        );
        assert!(String::from_utf8(r("<u8", &[2, 2]).unwrap())
            .unwrap()
            .contains("MET_ULONG_LONG"));
    }

    #[test]
    fn channels_are_components_where_interleaved_and_a_dimension_otherwise() {
        use crate::views::imaging::Geometry;
        let text = |shape: &[u64], g: &Geometry| {
            String::from_utf8(header(&Raster::placed("<f4", shape, g).unwrap()).unwrap()).unwrap()
        };
        let first = |spacing: Vec<f64>| Geometry {
            channel_axis: Some(0),
            spacing: Some(spacing),
            ..Geometry::default()
        };
        // Two channels first (nnU-Net's MR): a 3-D image of two
        // components, over the bytes with the channel axis moved last.
        assert_eq!(
            text(&[2, 4, 5, 6], &first(vec![3.0, 0.625, 0.5])),
            "ObjectType = Image\nNDims = 3\nBinaryData = True\nBinaryDataByteOrderMSB = False\nCompressedData = False\n\
             DimSize = 6 5 4\nElementSpacing = 0.5 0.625 3\nOffset = 0 0 0\nElementNumberOfChannels = 2\n\
             ElementType = MET_FLOAT\nElementDataFile = data.interleaved\n"
        );
        // Channels in the middle too.
        let middle = Geometry {
            channel_axis: Some(1),
            ..Geometry::default()
        };
        assert!(text(&[4, 3, 5], &middle).ends_with(
            "DimSize = 5 4\nElementSpacing = 1 1\nOffset = 0 0\nElementNumberOfChannels = 3\n\
             ElementType = MET_FLOAT\nElementDataFile = data.interleaved\n"
        ));
        // One channel first (nnU-Net's CT, a segmentation): a 3-D image.
        assert_eq!(
            text(&[1, 4, 5, 6], &first(vec![3.0, 0.625, 0.5])),
            "ObjectType = Image\nNDims = 3\nBinaryData = True\nBinaryDataByteOrderMSB = False\nCompressedData = False\n\
             DimSize = 6 5 4\nElementSpacing = 0.5 0.625 3\nOffset = 0 0 0\nElementType = MET_FLOAT\nElementDataFile = data\n"
        );
        // Three channels last: interleaved components of a 2-D image.
        let last = Geometry {
            channel_axis: Some(2),
            ..Geometry::default()
        };
        let rgb = text(&[4, 5, 3], &last);
        assert!(
            rgb.contains("NDims = 2\n")
                && rgb.contains("DimSize = 5 4\nElementSpacing = 1 1\nOffset = 0 0\nElementNumberOfChannels = 3\nElementType")
                && rgb.ends_with("ElementDataFile = data\n")
        );
        // Five channels of a 4-D volume: a 4-D image of components.
        assert!(text(&[5, 2, 3, 4, 6], &first(vec![1.0; 4])).contains("NDims = 4\n"));
        let five = Raster::placed("<f4", &[5, 2, 2, 3, 4, 6], &first(vec![1.0; 5])).unwrap();
        assert!(header(&five).is_none(), "five spatial axes");
    }

    #[test]
    fn a_direction_is_a_transform_matrix_row_per_axis() {
        let vlmeta = [
            ("spacing".to_string(), json!([1, 2, 3])),
            (
                "direction".to_string(),
                json!([[0, 0, 1], [0, 1, 0], [-1, 0, 0]]),
            ),
        ];
        let text =
            String::from_utf8(header(&Raster::new("<u1", &[5, 6, 7], &vlmeta).unwrap()).unwrap())
                .unwrap();
        assert!(
            text.contains(
                "TransformMatrix = 0 0 -1 0 1 0 1 0 0\nDimSize = 7 6 5\nElementSpacing = 3 2 1\n"
            ),
            "{text}"
        );
    }
}
