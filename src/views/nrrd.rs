//! `data.nhdr`: a detached NRRD header (format NRRD0004) that points at
//! `data`, so teem's `unu`, 3D Slicer, ParaView, Fiji and pynrrd open a
//! mounted array with no conversion.
//!
//! It names `data` by its relative name (`data file: data`), the sizes
//! fastest axis first, the byte order, and either unit `spacings` or, when
//! the array is placed ([`super::imaging`]: its vlmeta, nnU-Net's plans),
//! `space directions` and `space origin`. A channel axis is a `list` axis
//! among `domain` ones (`kinds`), with no spacing or direction of its own
//! (`nan`, `none`): ITK reads the other axes as the image and the channel
//! axis as its components, wherever it lies in `data`. NRRD has no half floats and no complex numbers: those
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
    // NRRD axis k (fastest first) is array axis rank - 1 - k.
    let channel = |k: usize| raster.channel_axis == Some(rank - 1 - k);
    let mut out = String::from("NRRD0004\n# blosc2fs: the array's raw bytes are in `data`, C order (sizes below list the fastest axis first)\n");
    out += &format!(
        "type: {type_name}\ndimension: {rank}\nsizes: {}\n",
        raster.sizes_fastest_first()
    );
    if raster.channel_axis.is_some() {
        let kinds: Vec<&str> = (0..rank)
            .map(|k| if channel(k) { "list" } else { "domain" })
            .collect();
        out += &format!("kinds: {}\n", kinds.join(" "));
    }
    if raster.item_size() > 1 {
        out += if raster.big_endian {
            "endian: big\n"
        } else {
            "endian: little\n"
        };
    }
    out += "encoding: raw\n";
    // The spatial axes' steps and directions, fastest first.
    let mut spacing = raster.spacing.iter().rev();
    let mut directions = raster.directions_fastest_first().into_iter();
    if raster.placed {
        let space = raster.spacing.len();
        let vectors: Vec<String> = (0..rank)
            .map(|k| {
                if channel(k) {
                    return "none".to_string();
                }
                let step = spacing.next().copied().unwrap_or(1.0);
                let dir = directions.next().unwrap_or_default();
                let vector: Vec<String> = dir.iter().map(|c| number(c * step)).collect();
                format!("({})", vector.join(","))
            })
            .collect();
        out += &format!(
            "space dimension: {space}\nspace directions: {}\n",
            vectors.join(" ")
        );
        out += &format!(
            "space origin: ({})\n",
            raster.origin_fastest_first().replace(' ', ",")
        );
    } else {
        let steps: Vec<String> = (0..rank)
            .map(|k| {
                if channel(k) {
                    "nan".to_string()
                } else {
                    number(spacing.next().copied().unwrap_or(1.0))
                }
            })
            .collect();
        out += &format!("spacings: {}\n", steps.join(" "));
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

    #[test]
    fn a_channel_first_volume_is_a_list_axis_with_no_space_direction() {
        use crate::views::imaging::Geometry;
        let g = Geometry {
            channel_axis: Some(0),
            spacing: Some(vec![3.0, 0.625, 0.5]),
            ..Geometry::default()
        };
        let r = Raster::placed("<f4", &[2, 4, 5, 6], &g).unwrap();
        let text = String::from_utf8(header(&r).unwrap()).unwrap();
        assert_eq!(
            text,
            "NRRD0004\n# blosc2fs: the array's raw bytes are in `data`, C order (sizes below list the fastest axis first)\n\
             type: float\ndimension: 4\nsizes: 6 5 4 2\nkinds: domain domain domain list\nendian: little\nencoding: raw\n\
             space dimension: 3\nspace directions: (0.5,0,0) (0,0.625,0) (0,0,3) none\nspace origin: (0,0,0)\ndata file: data\n\n"
        );
        // Channels last and no placement: unit spacings, nan for the list axis.
        let vlmeta = [("channel_axis".to_string(), json!(-1))];
        let text =
            String::from_utf8(header(&Raster::new("|u1", &[4, 5, 3], &vlmeta).unwrap()).unwrap())
                .unwrap();
        assert!(
            text.contains(
                "sizes: 3 5 4\nkinds: list domain domain\nencoding: raw\nspacings: nan 1 1\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_direction_turns_each_axis_and_scales_it_by_its_spacing() {
        let vlmeta = [
            ("spacing".to_string(), json!([1, 2, 3])),
            (
                "direction".to_string(),
                json!([[0, 0, 1], [0, 1, 0], [-1, 0, 0]]),
            ),
            ("origin".to_string(), json!([7, 8, 9])),
        ];
        let text =
            String::from_utf8(header(&Raster::new("<i2", &[5, 6, 7], &vlmeta).unwrap()).unwrap())
                .unwrap();
        assert!(
            text.contains("space dimension: 3\nspace directions: (0,0,-3) (0,2,0) (1,0,0)\nspace origin: (9,8,7)\n"),
            "{text}"
        );
    }
}
