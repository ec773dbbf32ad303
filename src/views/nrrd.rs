//! `data.nhdr`: a detached NRRD header (format NRRD0004) that points at
//! `data`, so teem's `unu`, 3D Slicer, ParaView, Fiji and pynrrd open a
//! mounted array with no conversion.
//!
//! It names `data` by its relative name (`data file: data`), the sizes
//! fastest axis first, the byte order, and either unit `spacings` or, when
//! the vlmeta places the array ([`super::imaging`]), `space directions` and
//! `space origin`. NRRD has no half floats and no complex numbers: those
//! arrays get no header. Booleans are shown as `uint8` (0 or 1).

use super::imaging::{number, Element, Raster};

/// NRRD's name for the element type, `None` where it has none.
fn type_name(element: Element) -> Option<&'static str> {
    Some(match element {
        Element::Bool => "uint8",
        Element::Int {
            signed: true,
            size: 1,
        } => "int8",
        Element::Int {
            signed: false,
            size: 1,
        } => "uint8",
        Element::Int {
            signed: true,
            size: 2,
        } => "int16",
        Element::Int {
            signed: false,
            size: 2,
        } => "uint16",
        Element::Int {
            signed: true,
            size: 4,
        } => "int32",
        Element::Int {
            signed: false,
            size: 4,
        } => "uint32",
        Element::Int {
            signed: true,
            size: 8,
        } => "int64",
        Element::Int {
            signed: false,
            size: 8,
        } => "uint64",
        Element::Float { size: 4 } => "float",
        Element::Float { size: 8 } => "double",
        _ => return None,
    })
}

/// The text of `data.nhdr` for `raster`, or `None` when NRRD cannot
/// describe its element type.
pub fn header(raster: &Raster) -> Option<Vec<u8>> {
    let type_name = type_name(raster.element)?;
    let rank = raster.rank();
    let mut out = String::from("NRRD0004\n# blosc2fs: the array's raw bytes are in `data`, C order (sizes below list the fastest axis first)\n");
    out += &format!(
        "type: {type_name}\ndimension: {rank}\nsizes: {}\n",
        raster.sizes_fastest_first()
    );
    if raster.item_size() > 1 {
        out += if raster.big_endian {
            "endian: big\n"
        } else {
            "endian: little\n"
        };
    }
    out += "encoding: raw\n";
    if raster.placed {
        // One axis-aligned direction vector per axis, fastest first.
        let directions: Vec<String> = (0..rank)
            .map(|axis| {
                let step = raster.spacing[rank - 1 - axis];
                let vector: Vec<String> = (0..rank)
                    .map(|k| if k == axis { number(step) } else { "0".into() })
                    .collect();
                format!("({})", vector.join(","))
            })
            .collect();
        out += &format!(
            "space dimension: {rank}\nspace directions: {}\n",
            directions.join(" ")
        );
        out += &format!(
            "space origin: ({})\n",
            raster.origin_fastest_first().replace(' ', ",")
        );
    } else {
        out += &format!("spacings: {}\n", raster.spacing_fastest_first());
    }
    out += "data file: data\n\n";
    Some(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_little_endian_float_volume() {
        let r = Raster::new("<f4", &[4, 5, 6], &[]).unwrap();
        let text = String::from_utf8(header(&r).unwrap()).unwrap();
        assert_eq!(
            text,
            "NRRD0004\n# blosc2fs: the array's raw bytes are in `data`, C order (sizes below list the fastest axis first)\n\
             type: float\ndimension: 3\nsizes: 6 5 4\nendian: little\nencoding: raw\nspacings: 1 1 1\ndata file: data\n\n"
        );
    }

    #[test]
    fn big_endian_bytes_bools_and_placed_arrays() {
        let text = |dtype: &str, shape: &[u64], vlmeta: &[(String, serde_json::Value)]| {
            String::from_utf8(header(&Raster::new(dtype, shape, vlmeta).unwrap()).unwrap()).unwrap()
        };
        assert!(
            text(">i8", &[3], &[]).contains("type: int64\ndimension: 1\nsizes: 3\nendian: big\n")
        );
        // One-byte types carry no endian line.
        let b = text("|b1", &[2, 3], &[]);
        assert!(b.contains("type: uint8\n") && !b.contains("endian"), "{b}");
        let placed = text(
            "<u2",
            &[2, 3],
            &[
                ("spacing".into(), json!([2, 0.5])),
                ("origin".into(), json!([10, -1.5])),
            ],
        );
        assert!(placed.contains("space dimension: 2\nspace directions: (0.5,0) (0,2)\nspace origin: (-1.5,10)\ndata file: data\n"), "{placed}");
        assert!(!placed.contains("spacings"));
    }

    #[test]
    fn half_floats_and_complex_have_no_nrrd_type() {
        assert!(header(&Raster::new("<f2", &[3], &[]).unwrap()).is_none());
        assert!(header(&Raster::new("<c8", &[3], &[]).unwrap()).is_none());
    }
}
