//! `data.mhd`: a MetaImage header (ITK's MetaIO) that points at `data`, so
//! ITK, SimpleITK, ITK-SNAP, 3D Slicer and ParaView open a mounted 2-D or
//! 3-D array with no conversion.
//!
//! The byte order is given as `BinaryDataByteOrderMSB`, the key ITK reads
//! (it ignores `ByteOrderMSB` alone and would read big-endian data wrong).
//! `ElementDataFile` must be the last field: MetaIO reads the data right
//! after it.
//!
//! Only ranks 2 and 3: MetaIO itself takes any rank, but ITK's readers and
//! viewers build images of 2 and 3 dimensions (SimpleITK up to 4, and only
//! for some pixel types), and a 1-D or 5-D "image" would open as something
//! else or not at all. MetaIO has no half floats and no complex element
//! type: those arrays get no header. Booleans are shown as `MET_UCHAR`.

use super::imaging::{Element, Raster};

/// Ranks a MetaImage header is offered for.
pub const RANKS: std::ops::RangeInclusive<usize> = 2..=3;

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

/// The text of `data.mhd` for `raster`, or `None` when its rank or element
/// type is one MetaImage is not offered for.
pub fn header(raster: &Raster) -> Option<Vec<u8>> {
    if !RANKS.contains(&raster.rank()) {
        return None;
    }
    let element_type = element_type(raster.element)?;
    let msb = if raster.big_endian && raster.item_size() > 1 {
        "True"
    } else {
        "False"
    };
    let text = format!(
        "ObjectType = Image\nNDims = {}\nBinaryData = True\nBinaryDataByteOrderMSB = {msb}\nCompressedData = False\n\
         DimSize = {}\nElementSpacing = {}\nOffset = {}\nElementType = {element_type}\nElementDataFile = data\n",
        raster.rank(),
        raster.sizes_fastest_first(),
        raster.spacing_fastest_first(),
        raster.origin_fastest_first(),
    );
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
        assert!(r("<f8", &[2, 2, 2, 2]).is_none(), "4-D");
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
}
