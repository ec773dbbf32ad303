//! An array folder's `zarr.json`: the Zarr v3 array metadata that makes the
//! folder itself a v3 array node, and the names of its chunk keys.
//!
//! The chunk keys use the default encoding with `/` (`c/1/0/2`), so the
//! chunk files sit in a tree `c/<i>/<j>/...` under the array folder. The
//! namespace serves that tree by lookup only (it is not listed in the array
//! folder); each chunk file is the same decoded, C-order, edge-padded chunk
//! `chunks/` serves. The folders of that tree are numbered here ([`CDirs`])
//! so the namespace can give each one an inode of its own.

use serde_json::{json, Map, Value as Json};

use crate::format::dtype::{ByteOrder, ItemKind, NumpyDtype, Scalar};

/// Why an array is not a Zarr v3 array node (meta.json says it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotV3 {
    /// The dtype is not one of v3's core data types.
    #[error("Zarr v3 has no core data type for dtype {0} (only bool, int8-64, uint8-64, float16/32/64, complex64/128)")]
    Dtype(String),
    /// The chunks are not of one shape (a plain frame with a short or
    /// uneven chunk).
    #[error(
        "the chunks are not of one full shape (Zarr v3 needs every chunk file of the grid's size)"
    )]
    Chunks,
    /// A table column presents only its valid rows: there is no chunk grid.
    #[error("a table column shows its valid rows only and has no chunk grid")]
    Column,
}

/// The v3 `data_type` of a NumPy dtype string, and its byte order
/// (`None` for one-byte types, which have none), when v3 has one.
pub fn data_type(descr: &str) -> Result<(&'static str, Option<ByteOrder>), NotV3> {
    let not = || NotV3::Dtype(descr.to_string());
    let Ok(NumpyDtype::Scalar(Scalar {
        kind, size, order, ..
    })) = NumpyDtype::parse(descr)
    else {
        return Err(not());
    };
    let name = match (kind, size) {
        (ItemKind::Bool, 1) => "bool",
        (ItemKind::Int, 1) => "int8",
        (ItemKind::Int, 2) => "int16",
        (ItemKind::Int, 4) => "int32",
        (ItemKind::Int, 8) => "int64",
        (ItemKind::UInt, 1) => "uint8",
        (ItemKind::UInt, 2) => "uint16",
        (ItemKind::UInt, 4) => "uint32",
        (ItemKind::UInt, 8) => "uint64",
        (ItemKind::Float, 2) => "float16",
        (ItemKind::Float, 4) => "float32",
        (ItemKind::Float, 8) => "float64",
        (ItemKind::Complex, 8) => "complex64",
        (ItemKind::Complex, 16) => "complex128",
        _ => return Err(not()),
    };
    let order = match (size, order) {
        (1, _) | (_, ByteOrder::NotApplicable) => None,
        (_, order) => Some(order),
    };
    Ok((name, order))
}

/// The fill value v3 wants written for `data_type` (never used for a
/// chunk: every chunk of the grid is served).
fn fill_value(data_type: &str) -> Json {
    match data_type {
        "bool" => json!(false),
        "complex64" | "complex128" => json!([0.0, 0.0]),
        t if t.starts_with("float") => json!(0.0),
        _ => json!(0),
    }
}

/// The dimension names of an array presented in a folder named `name`:
/// the names saved with it (a vlmeta `dimension_names` or xarray's
/// `_ARRAY_DIMENSIONS`, a list of one distinct string per axis), otherwise
/// `<name>_dim<k>`, which no sibling folder can share.
pub fn dimension_names(name: &str, ndim: usize, vlmeta: &[(String, Json)]) -> Vec<String> {
    for key in ["dimension_names", "_ARRAY_DIMENSIONS"] {
        let saved = vlmeta.iter().find(|(k, _)| k == key).and_then(|(_, v)| {
            v.as_array()?
                .iter()
                .map(|s| s.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
        });
        if let Some(saved) = saved {
            let mut distinct = saved.clone();
            distinct.sort();
            distinct.dedup();
            if saved.len() == ndim && distinct.len() == ndim {
                return saved;
            }
        }
    }
    (0..ndim).map(|k| format!("{name}_dim{k}")).collect()
}

/// What an array's `zarr.json` is made of.
#[derive(Debug)]
pub struct ArrayMeta<'a> {
    /// The NumPy dtype string of its items.
    pub dtype: &'a str,
    /// Its shape.
    pub shape: &'a [u64],
    /// Its chunk shape (a zero extent, only in an empty array, is written 1).
    pub chunks: &'a [u64],
    /// The presented folder's name (for default dimension names).
    pub name: &'a str,
    /// Its variable-length metadata, carried as attributes.
    pub vlmeta: &'a [(String, Json)],
}

/// The `zarr.json` document of an array, or why it has none.
pub fn array_json(meta: &ArrayMeta) -> Result<Json, NotV3> {
    let (data_type, order) = data_type(meta.dtype)?;
    let chunks: Vec<u64> = meta.chunks.iter().map(|&c| c.max(1)).collect();
    let bytes = match order {
        None => json!({"name": "bytes"}),
        Some(order) => {
            let endian = if order == ByteOrder::Big {
                "big"
            } else {
                "little"
            };
            json!({"name": "bytes", "configuration": {"endian": endian}})
        }
    };
    let attributes: Map<String, Json> = meta.vlmeta.iter().cloned().collect();
    Ok(json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": meta.shape,
        "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill_value(data_type),
        "codecs": [bytes],
        "attributes": attributes,
        "dimension_names": dimension_names(meta.name, meta.shape.len(), meta.vlmeta),
    }))
}

/// The folders of an array's chunk tree `c/<i>/<j>/...`: for a grid of
/// rank n, the prefixes of length 0 (`c` itself) to n-1, numbered one
/// depth after the other and in C order within a depth.
#[derive(Debug, Clone, Copy)]
pub struct CDirs<'a> {
    grid: &'a [u64],
}

impl<'a> CDirs<'a> {
    /// The chunk tree of an array whose chunk grid is `grid` (rank >= 1).
    pub fn new(grid: &'a [u64]) -> CDirs<'a> {
        CDirs { grid }
    }

    /// Number of prefixes of length `depth`.
    fn at_depth(&self, depth: usize) -> u64 {
        self.grid[..depth]
            .iter()
            .try_fold(1u64, |a, &g| a.checked_mul(g))
            .unwrap_or(u64::MAX)
    }

    /// How many folders the tree has (`None` when it cannot be counted in
    /// 64 bits, or for a 0-d array, which has no tree: its chunk is `c`).
    pub fn count(&self) -> Option<u64> {
        if self.grid.is_empty() {
            return None;
        }
        (0..self.grid.len()).try_fold(0u64, |a, d| {
            let n = self.at_depth(d);
            (n != u64::MAX).then_some(())?;
            a.checked_add(n)
        })
    }

    /// The number of the folder at `prefix` (coordinates below the grid's).
    pub fn number(&self, prefix: &[u64]) -> u64 {
        let base: u64 = (0..prefix.len()).map(|d| self.at_depth(d)).sum();
        let mut linear = 0u64;
        for (&c, &g) in prefix.iter().zip(self.grid) {
            linear = linear * g + c;
        }
        base + linear
    }

    /// The prefix numbered `n`, if the tree has that many folders.
    pub fn prefix(&self, mut n: u64) -> Option<Vec<u64>> {
        for depth in 0..self.grid.len() {
            let here = self.at_depth(depth);
            if n < here {
                let mut coords = vec![0; depth];
                for d in (0..depth).rev() {
                    coords[d] = n % self.grid[d];
                    n /= self.grid[d];
                }
                return Some(coords);
            }
            n -= here;
        }
        None
    }

    /// The grid's rank.
    pub fn rank(&self) -> usize {
        self.grid.len()
    }

    /// The extent of the grid along axis `axis`.
    pub fn extent(&self, axis: usize) -> u64 {
        self.grid[axis]
    }
}

/// The coordinate a chunk key's part `name` names along an axis of `extent`
/// chunks (a decimal number without leading zeros, below `extent`).
pub fn parse_coord(name: &str, extent: u64) -> Option<u64> {
    if name.is_empty()
        || (name.len() > 1 && name.starts_with('0'))
        || !name.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    name.parse::<u64>().ok().filter(|&v| v < extent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_core_dtype_maps_to_its_data_type_and_endian() {
        use ByteOrder::{Big, Little};
        let cases: [(&str, &str, Option<ByteOrder>); 22] = [
            ("|b1", "bool", None),
            ("?", "bool", None),
            ("|i1", "int8", None),
            ("<i2", "int16", Some(Little)),
            (">i2", "int16", Some(Big)),
            ("<i4", "int32", Some(Little)),
            (">i4", "int32", Some(Big)),
            ("<i8", "int64", Some(Little)),
            ("|u1", "uint8", None),
            ("<u2", "uint16", Some(Little)),
            ("<u4", "uint32", Some(Little)),
            (">u8", "uint64", Some(Big)),
            ("<u8", "uint64", Some(Little)),
            ("<f2", "float16", Some(Little)),
            (">f2", "float16", Some(Big)),
            ("<f4", "float32", Some(Little)),
            ("<f8", "float64", Some(Little)),
            (">f8", "float64", Some(Big)),
            ("<c8", "complex64", Some(Little)),
            ("<c16", "complex128", Some(Little)),
            (">c16", "complex128", Some(Big)),
            ("=f4", "float32", Some(Little)),
        ];
        for (descr, name, order) in cases {
            assert_eq!(data_type(descr), Ok((name, order)), "{descr}");
        }
        for not in [
            "|S7",
            "<U5",
            "[('a', '<i4')]",
            "<M8[ns]",
            "<m8[s]",
            "|O",
            "|V4",
            "<f16",
            "<c32",
            "('<i4', (2,))",
        ] {
            assert_eq!(data_type(not), Err(NotV3::Dtype(not.into())), "{not}");
        }
    }

    #[test]
    fn array_json_is_the_v3_document() {
        let vlmeta = vec![("units".to_string(), json!("m"))];
        let doc = array_json(&ArrayMeta {
            dtype: ">i4",
            shape: &[33, 21],
            chunks: &[12, 8],
            name: "a.b2nd",
            vlmeta: &vlmeta,
        })
        .unwrap();
        assert_eq!(
            doc,
            json!({
                "zarr_format": 3,
                "node_type": "array",
                "shape": [33, 21],
                "data_type": "int32",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [12, 8]}},
                "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
                "fill_value": 0,
                "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}],
                "attributes": {"units": "m"},
                "dimension_names": ["a.b2nd_dim0", "a.b2nd_dim1"],
            })
        );
        let one = |dtype, shape: &[u64], chunks: &[u64]| {
            array_json(&ArrayMeta {
                dtype,
                shape,
                chunks,
                name: "x",
                vlmeta: &[],
            })
            .unwrap()
        };
        let b = one("|b1", &[0, 4], &[0, 2]);
        assert_eq!(b["codecs"], json!([{"name": "bytes"}]));
        assert_eq!(b["fill_value"], json!(false));
        assert_eq!(
            b["chunk_grid"]["configuration"]["chunk_shape"],
            json!([1, 2])
        );
        assert_eq!(one("<c8", &[3], &[2])["fill_value"], json!([0.0, 0.0]));
        assert_eq!(one("<f2", &[3], &[2])["fill_value"], json!(0.0));
        assert_eq!(one("|u1", &[3], &[2])["fill_value"], json!(0));
        let scalar = one("<f8", &[], &[]);
        assert_eq!(scalar["shape"], json!([]));
        assert_eq!(scalar["dimension_names"], json!([]));
        assert_eq!(
            array_json(&ArrayMeta {
                dtype: "|S3",
                shape: &[1],
                chunks: &[1],
                name: "s",
                vlmeta: &[]
            }),
            Err(NotV3::Dtype("|S3".into()))
        );
    }

    #[test]
    fn dimension_names_are_saved_ones_or_unique_per_folder() {
        assert_eq!(
            dimension_names("t.b2nd", 2, &[]),
            ["t.b2nd_dim0", "t.b2nd_dim1"]
        );
        // Two siblings never share a name: the folder name is in each.
        let a = dimension_names("a.b2nd", 3, &[]);
        let b = dimension_names("a.b2frame", 3, &[]);
        assert!(a.iter().all(|n| !b.contains(n)));
        let saved = vec![("_ARRAY_DIMENSIONS".to_string(), json!(["time", "x"]))];
        assert_eq!(dimension_names("t", 2, &saved), ["time", "x"]);
        let saved = vec![("dimension_names".to_string(), json!(["y", "x"]))];
        assert_eq!(dimension_names("t", 2, &saved), ["y", "x"]);
        // Wrong length, repeated or non-string names are not used.
        for bad in [json!(["x"]), json!(["x", "x"]), json!(["x", 1])] {
            let saved = vec![("dimension_names".to_string(), bad)];
            assert_eq!(dimension_names("t", 2, &saved), ["t_dim0", "t_dim1"]);
        }
    }

    #[test]
    fn chunk_tree_folders_are_numbered_by_depth() {
        let grid = [2, 3, 4];
        let dirs = CDirs::new(&grid);
        // c, then c/0 c/1, then c/0/0 .. c/1/2.
        assert_eq!(dirs.count(), Some(1 + 2 + 6));
        assert_eq!(dirs.number(&[]), 0);
        assert_eq!(dirs.number(&[1]), 2);
        assert_eq!(dirs.number(&[1, 2]), 8);
        for n in 0..9 {
            assert_eq!(dirs.number(&dirs.prefix(n).unwrap()), n);
        }
        assert_eq!(dirs.prefix(9), None);
        assert_eq!(CDirs::new(&[5]).count(), Some(1));
        assert_eq!(CDirs::new(&[]).count(), None);
        assert_eq!(CDirs::new(&[u64::MAX, u64::MAX, 2]).count(), None);
        assert_eq!(parse_coord("3", 4), Some(3));
        assert_eq!(parse_coord("4", 4), None);
        assert_eq!(parse_coord("03", 4), None);
        assert_eq!(parse_coord("", 4), None);
        assert_eq!(parse_coord("+1", 4), None);
    }
}
