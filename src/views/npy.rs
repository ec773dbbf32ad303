//! The `.npy` header of `data.npy` (NumPy format version 1.0, or 2.0 when the
//! header would not fit in 64 KiB).

use crate::format::dtype::{NumpyDtype, RecordForm};

/// Header bytes for an array of `descr` (a dtype as
/// [`super::presented_dtype`] gives it: a plain dtype string, written
/// quoted, or a record's list of fields, written as it is) and `shape`.
/// Padded with spaces so that header + data start is a multiple of 64.
pub fn header(descr: &str, shape: &[u64]) -> Vec<u8> {
    let shape_text = match shape.len() {
        0 => "()".to_string(),
        1 => format!("({},)", shape[0]),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let descr_literal = match NumpyDtype::parse(descr) {
        Ok(NumpyDtype::Record(r)) if r.form == RecordForm::List => descr.to_string(),
        _ => format!("'{descr}'"),
    };
    let dict =
        format!("{{'descr': {descr_literal}, 'fortran_order': False, 'shape': {shape_text}, }}");
    let build = |prefix_len: usize| -> usize {
        let unpadded = prefix_len + dict.len() + 1;
        unpadded.div_ceil(64) * 64
    };
    let (version, prefix_len) = if build(10) - 10 <= u16::MAX as usize {
        (1u8, 10)
    } else {
        (2u8, 12)
    };
    let total = build(prefix_len);
    let header_len = total - prefix_len;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"\x93NUMPY");
    out.push(version);
    out.push(0);
    if version == 1 {
        out.extend_from_slice(&(header_len as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(header_len as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_numpy_layout() {
        // numpy.lib.format.write_array_header_1_0 for dtype '<f8', shape (400, 3)
        let h = header("<f8", &[400, 3]);
        assert_eq!(h.len() % 64, 0);
        assert_eq!(&h[..8], b"\x93NUMPY\x01\x00");
        let len = u16::from_le_bytes([h[8], h[9]]) as usize;
        assert_eq!(len + 10, h.len());
        let text = std::str::from_utf8(&h[10..]).unwrap();
        assert!(text.starts_with("{'descr': '<f8', 'fortran_order': False, 'shape': (400, 3), }"));
        assert!(text.ends_with('\n'));
        assert!(std::str::from_utf8(&header("|V4", &[])[10..])
            .unwrap()
            .contains("'shape': ()"));
        assert!(std::str::from_utf8(&header("<i2", &[7])[10..])
            .unwrap()
            .contains("'shape': (7,)"));
        let structured = header("[('a', '<i4'), ('b', '<f8')]", &[2]);
        assert!(std::str::from_utf8(&structured[10..])
            .unwrap()
            .contains("'descr': [('a', '<i4'), ('b', '<f8')]"));
    }
}
