//! `data.hdr`: an ENVI header beside `data`, so GDAL (`gdalinfo data`),
//! QGIS, rasterio and Spectral Python open a mounted 2-D or 3-D array as a
//! raster with no conversion: GDAL's ENVI driver looks for `data.hdr` when
//! it is given `data`.
//!
//! Band-sequential (`interleave = bsq`) is C order with the bands as the
//! first axis: a 3-D array of shape (bands, lines, samples), a 2-D array
//! one band of (lines, samples). A 3-D array whose channel axis
//! ([`super::imaging`]) is the last is band-interleaved by pixel (`bip`,
//! (lines, samples, bands)), and one in the middle band-interleaved by
//! line (`bil`, (lines, bands, samples)): ENVI's three layouts are the
//! three places of the channel axis, so `data` serves each as it is. A
//! volume of three spatial axes with channels has no ENVI layout and no
//! header.
//! ENVI's data type codes cover the types in [`data_type`]; there is no
//! signed byte, half float or boolean, and those arrays (and any other
//! rank) get no header. No `map info` is written: it names a map
//! projection, with northing decreasing down the lines, and an array's
//! spacing and origin carry neither, so it would claim what they do not.

use super::imaging::{Element, Raster};

/// ENVI's `data type` code, `None` where ENVI has none.
fn data_type(element: Element) -> Option<u8> {
    Some(match element {
        Element::Int {
            signed: false,
            size: 1,
        } => 1,
        Element::Int {
            signed: true,
            size: 2,
        } => 2,
        Element::Int {
            signed: true,
            size: 4,
        } => 3,
        Element::Float { size: 4 } => 4,
        Element::Float { size: 8 } => 5,
        Element::Complex { size: 8 } => 6,
        Element::Complex { size: 16 } => 9,
        Element::Int {
            signed: false,
            size: 2,
        } => 12,
        Element::Int {
            signed: false,
            size: 4,
        } => 13,
        Element::Int {
            signed: true,
            size: 8,
        } => 14,
        Element::Int {
            signed: false,
            size: 8,
        } => 15,
        _ => return None,
    })
}

/// The text of `data.hdr` for `raster`, or `None` for a shape ENVI cannot
/// lay out or an element type ENVI has no code for.
pub fn header(raster: &Raster) -> Option<Vec<u8>> {
    let code = data_type(raster.element)?;
    let (bands, lines, samples, interleave) = match (raster.channel_axis, &raster.shape[..]) {
        (None, [lines, samples]) => (1, *lines, *samples, "bsq"),
        (None | Some(0), [bands, lines, samples]) => (*bands, *lines, *samples, "bsq"),
        (Some(1), [lines, bands, samples]) => (*bands, *lines, *samples, "bil"),
        (Some(2), [lines, samples, bands]) => (*bands, *lines, *samples, "bip"),
        _ => return None,
    };
    let byte_order = u8::from(raster.big_endian && raster.item_size() > 1);
    let text = format!(
        "ENVI\ndescription = {{blosc2fs: the array's raw bytes in data, C order}}\nsamples = {samples}\nlines = {lines}\nbands = {bands}\n\
         header offset = 0\nfile type = ENVI Standard\ndata type = {code}\ninterleave = {interleave}\nbyte order = {byte_order}\n"
    );
    Some(text.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_little_endian_float_image_and_a_big_endian_cube() {
        let text =
            String::from_utf8(header(&Raster::new("<f4", &[3, 7], &[]).unwrap()).unwrap()).unwrap();
        assert_eq!(
            text,
            "ENVI\ndescription = {blosc2fs: the array's raw bytes in data, C order}\nsamples = 7\nlines = 3\nbands = 1\n\
             header offset = 0\nfile type = ENVI Standard\ndata type = 4\ninterleave = bsq\nbyte order = 0\n"
        );
        let cube =
            String::from_utf8(header(&Raster::new(">u2", &[4, 3, 7], &[]).unwrap()).unwrap())
                .unwrap();
        assert!(
            cube.contains("samples = 7\nlines = 3\nbands = 4\n")
                && cube.contains("data type = 12\n")
                && cube.ends_with("byte order = 1\n"),
            "{cube}"
        );
    }

    #[test]
    fn codes_and_what_envi_cannot_hold() {
        let code = |dtype: &str| {
            header(&Raster::new(dtype, &[2, 2], &[]).unwrap())
                .map(|h| String::from_utf8(h).unwrap())
        };
        for (dtype, c) in [
            ("|u1", 1),
            ("<i2", 2),
            ("<i4", 3),
            ("<f8", 5),
            ("<c8", 6),
            ("<c16", 9),
            ("<u4", 13),
            ("<i8", 14),
            ("<u8", 15),
        ] {
            assert!(
                code(dtype).unwrap().contains(&format!("data type = {c}\n")),
                "{dtype}"
            );
        }
        for dtype in ["|i1", "<f2", "|b1"] {
            assert!(code(dtype).is_none(), "{dtype}");
        }
        assert!(header(&Raster::new("<f4", &[5], &[]).unwrap()).is_none());
        assert!(header(&Raster::new("<f4", &[2, 2, 2, 2], &[]).unwrap()).is_none());
    }

    #[test]
    fn channels_are_bands_first_middle_or_last_and_nothing_else() {
        use crate::views::imaging::Geometry;
        let hdr = |shape: &[u64], axis: usize| {
            let g = Geometry {
                channel_axis: Some(axis),
                ..Geometry::default()
            };
            header(&Raster::placed("<u2", shape, &g).unwrap())
                .map(|h| String::from_utf8(h).unwrap())
        };
        let bip = hdr(&[4, 5, 3], 2).unwrap();
        assert!(
            bip.contains("samples = 5\nlines = 4\nbands = 3\n")
                && bip.contains("interleave = bip\n"),
            "{bip}"
        );
        let bsq = hdr(&[3, 4, 5], 0).unwrap();
        assert!(
            bsq.contains("samples = 5\nlines = 4\nbands = 3\n")
                && bsq.contains("interleave = bsq\n")
        );
        let bil = hdr(&[4, 3, 5], 1).unwrap();
        assert!(
            bil.contains("samples = 5\nlines = 4\nbands = 3\n")
                && bil.contains("interleave = bil\n"),
            "{bil}"
        );
        assert!(hdr(&[2, 4, 5, 6], 0).is_none(), "a volume with channels");
    }
}
