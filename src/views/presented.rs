//! What one version of an array presents, rendered once when it is loaded:
//! the bytes of `meta.json`, the `.npy` header, `chunks/.zarray`, the
//! extended attributes, and (for a table column) the views of its valid
//! rows. The files whose bytes come from the array on demand (`data`,
//! `data.txt`, `preview.png`, chunks) are sized from it; `items.jsonl` is
//! rendered a piece at a time when read.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{json, Value as Json};

use crate::format::{Array, Shape};
use crate::read::{row_bytes, Interleave, RowMap, RowSelection, View};

use super::column_files::{Bytes, ColumnFiles};
use super::dtype::presented_dtype;
use super::imaging::{Geometry, Raster};
use super::json::json_bytes;
use super::piece_file::PieceFile;
use super::zarr3::{self, ArrayMeta, NotV3};
use super::{envi, items, meta_json, metaimage, npy, nrrd, zarr};

/// Everything rendered for one version of an array.
#[derive(Debug)]
pub struct Presented {
    /// The opened array, or None when the file cannot be read or holds no
    /// values of its own (meta.json says why).
    pub array: Option<Arc<Array>>,
    /// Bytes of `meta.json`: the array's metadata as pretty-printed JSON ending
    /// in a newline, or `{"file", "error"}` when the array could not be opened.
    pub meta_json: Arc<Vec<u8>>,
    /// The `.npy` header that `data.npy` presents before the data (empty when
    /// the array could not be opened).
    pub npy_header: Arc<Vec<u8>>,
    /// Bytes of `chunks/.zarray`, when zarr can describe the chunks (chunks of
    /// one shape and a dtype zarr knows); `None` otherwise, and then there is no
    /// `.zarray` file.
    pub zarray: Option<Arc<Vec<u8>>>,
    /// Bytes of the array folder's `zarr.json` (Zarr v3 array metadata), when
    /// v3 can describe the array; `None` otherwise (meta.json says why).
    pub zarr3: Option<Arc<Vec<u8>>>,
    /// Chunk-grid dimensions for `chunks/` names (plain frames: `[nchunks]`).
    pub chunk_grid: Vec<u64>,
    /// Extended attributes of `data` and `data.npy`, name and value:
    /// `user.blosc2.dtype`, `user.blosc2.shape` (JSON), `user.blosc2.chunkshape`
    /// (JSON, N-d arrays only) and `user.blosc2.codec`. Empty when the array could
    /// not be opened.
    pub xattrs: Vec<(String, Vec<u8>)>,
    /// For a table column: the views of its valid rows (`data`, `data.npy`);
    /// then `data` and `data.npy` show those rows only and there is no `chunks/`.
    pub rows: Option<[Arc<RowSelection>; 2]>,
    /// For an ObjectArray, BatchArray or ListArray, and a table column of
    /// text, words, lists, structs or objects: its `items.jsonl`, rendered
    /// a piece at a time when read.
    pub items: Option<Arc<PieceFile>>,
    /// The sidecar headers that describe `data` for imaging and GIS tools
    /// (`None` where a format cannot describe it).
    pub sidecars: Sidecars,
    /// For a table column: its rendered values and validity files.
    pub column: ColumnFiles,
}

/// The sidecar headers beside `data`, rendered when the array is loaded.
#[derive(Debug, Default)]
pub struct Sidecars {
    /// `data.nhdr` (NRRD, detached).
    pub nrrd: Option<Arc<Vec<u8>>>,
    /// `data.mhd` (MetaImage).
    pub metaimage: Option<Arc<Vec<u8>>>,
    /// `data.hdr` (ENVI).
    pub envi: Option<Arc<Vec<u8>>>,
    /// How `data.interleaved` lays out `data` (the channel axis moved
    /// last), when `data.mhd` points at it.
    pub interleaved: Option<Arc<Interleave>>,
}

impl Sidecars {
    /// The headers of `data` holding `dtype` items in `shape`, placed by
    /// `geometry`.
    fn of(dtype: &str, shape: &[u64], geometry: &Geometry) -> Sidecars {
        let Some(raster) = Raster::placed(dtype, shape, geometry) else {
            return Sidecars::default();
        };
        let arc = |bytes: Option<Vec<u8>>| bytes.map(Arc::new);
        let metaimage = arc(metaimage::header(&raster));
        let interleaved = raster
            .channel_axis
            .filter(|_| metaimage.is_some() && metaimage::needs_interleaved(&raster))
            .and_then(|c| Interleave::new(shape, c, raster.item_size() as u64))
            .map(Arc::new);
        Sidecars {
            nrrd: arc(nrrd::header(&raster)),
            // Never a header pointing at a file that is not there.
            metaimage: metaimage
                .filter(|_| interleaved.is_some() || !metaimage::needs_interleaved(&raster)),
            envi: arc(envi::header(&raster)),
            interleaved,
        }
    }

    fn weight(&self) -> usize {
        [&self.nrrd, &self.metaimage, &self.envi]
            .iter()
            .map(|b| b.as_ref().map_or(0, |b| b.len()))
            .sum()
    }
}

/// What a version costs besides the sizes it can count: the structures,
/// the paths and names, the allocator's rounding.
const PRESENTED_OVERHEAD: usize = 1024;

impl Presented {
    /// Bytes this version holds, roughly: what the metadata cache charges.
    pub fn weight(&self) -> usize {
        let blob = |b: &Option<Arc<Vec<u8>>>| b.as_ref().map_or(0, |b| b.len());
        let xattrs: usize = self
            .xattrs
            .iter()
            .map(|(n, v)| 48 + n.len() + v.len())
            .sum();
        PRESENTED_OVERHEAD
            + self.array.as_ref().map_or(0, |a| a.held_bytes())
            + self.meta_json.len()
            + self.npy_header.len()
            + blob(&self.zarray)
            + blob(&self.zarr3)
            + self.items.as_ref().map_or(0, |f| f.held_bytes())
            + self.sidecars.weight()
            + self.column.weight()
            + self.chunk_grid.len() * 8
            + xattrs
    }

    /// A version that presents only `meta.json` holding `doc` (no array to
    /// read: it could not be opened, or its values live elsewhere).
    pub fn meta_only(doc: &Json) -> Presented {
        Presented {
            array: None,
            meta_json: Arc::new(json_bytes(doc)),
            npy_header: Arc::new(Vec::new()),
            zarray: None,
            zarr3: None,
            chunk_grid: Vec::new(),
            xattrs: Vec::new(),
            rows: None,
            items: None,
            sidecars: Sidecars::default(),
            column: ColumnFiles::default(),
        }
    }

    /// What `array` presents; `rows`, for a table column, are the table's
    /// valid rows (only those are shown, and there is no `chunks/`).
    pub fn of_array(array: Arc<Array>, rows: Option<&RowMap>) -> Presented {
        Presented::of_placed_array(array, rows, None)
    }

    /// What `array` presents, placed by `outside` (geometry the catalog
    /// found beside it: nnU-Net's plans) when its own vlmeta places it
    /// nowhere and `outside` fits its shape; the headers and `zarr.json`'s
    /// attributes then carry it.
    pub fn of_placed_array(
        array: Arc<Array>,
        rows: Option<&RowMap>,
        outside: Option<&Geometry>,
    ) -> Presented {
        let dtype = presented_dtype(&array);
        let typesize = array.frame().typesize as u64;
        let (mut shape, chunkshape, chunk_grid, mut zarr_chunks) = match array.shape() {
            Shape::Nd { geometry, .. } => (
                geometry.shape.clone(),
                Some(geometry.chunkshape.clone()),
                geometry.chunk_grid.clone(),
                Some(geometry.chunkshape.clone()),
            ),
            Shape::Plain { .. } => {
                let items = array.data_len() / typesize;
                let chunksize = array.frame().chunksize;
                let uniform = chunksize > 0
                    && chunksize.is_multiple_of(typesize)
                    && array.data_len().is_multiple_of(typesize);
                let chunks = uniform.then(|| vec![chunksize / typesize]);
                (vec![items], None, vec![array.nchunks()], chunks)
            }
        };
        let mut row_views = None;
        let mut meta_doc = meta_json::render(&array);
        if let Some(rows) = rows {
            // A column: the valid rows among its first dimension.
            let stored_rows = shape.first().copied().unwrap_or(0);
            let row_bytes = row_bytes(&array).unwrap_or(typesize);
            let clipped = rows.clipped(stored_rows);
            if shape.is_empty() {
                shape.push(clipped.count);
            } else {
                shape[0] = clipped.count;
            }
            zarr_chunks = None;
            if let Some(obj) = meta_doc.as_object_mut() {
                obj.insert("rows_shown".into(), json!(clipped.count));
                obj.insert("rows_stored".into(), json!(stored_rows));
            }
            let npy_header = Arc::new(npy::header(&dtype, &shape));
            row_views = Some([
                Arc::new(RowSelection::new(
                    clipped.runs.clone(),
                    row_bytes,
                    Arc::new(Vec::new()),
                )),
                Arc::new(RowSelection::new(clipped.runs, row_bytes, npy_header)),
            ]);
        }
        let items = items::items_file(&array).and_then(|file| match file {
            Ok(file) => Some(Arc::new(file)),
            Err(p) => {
                if let Some(obj) = meta_doc.as_object_mut() {
                    obj.insert("items_error".into(), json!(p.to_string()));
                }
                None
            }
        });
        let (npy_dtype, npy_shape) =
            if row_views.is_some() || array.data_len().is_multiple_of(typesize) {
                (dtype.clone(), shape.clone())
            } else {
                ("|u1".to_string(), vec![array.data_len()])
            };
        // The headers describe data exactly as data.npy's header does (not
        // the msgpack bytes of an ObjectArray's items).
        let vlmeta = &array.frame().vlmeta;
        let own = Geometry::from_vlmeta(vlmeta, npy_shape.len());
        let (geometry, attributes) = match outside {
            Some(g) if own.is_empty() && rows.is_none() && g.check(&npy_shape).is_ok() => {
                // Its own vlmeta first, then what was found beside it.
                let mut attributes = vlmeta.clone();
                for (k, v) in g.attributes() {
                    if !attributes.iter().any(|(name, _)| *name == k) {
                        attributes.push((k, v));
                    }
                }
                (g.clone(), Cow::Owned(attributes))
            }
            _ => (own, Cow::Borrowed(&vlmeta[..])),
        };
        let mut sidecars = if npy_dtype == dtype && items::kind_of(&array).is_none() {
            Sidecars::of(&dtype, &npy_shape, &geometry)
        } else {
            Sidecars::default()
        };
        if rows.is_some() && sidecars.interleaved.is_some() {
            // A column shows some rows only: no interleaved file, so no
            // MetaImage header that would need one.
            sidecars.interleaved = None;
            sidecars.metaimage = None;
        }
        let zarr3 = v3_array(
            &array,
            &dtype,
            &shape,
            zarr_chunks.as_deref(),
            rows.is_some(),
            &attributes,
        );
        let zarray = zarr_chunks.and_then(|chunks| {
            let zdtype = zarr::zarr_dtype(&dtype)?;
            Some(Arc::new(zarr::zarray(&shape, &chunks, zdtype)))
        });
        let zarr3 = match zarr3 {
            Ok(doc) => Some(Arc::new(json_bytes(&doc))),
            Err(why) => {
                if let Some(obj) = meta_doc.as_object_mut() {
                    obj.insert(
                        "zarr".into(),
                        json!({"v3": false, "reason": why.to_string()}),
                    );
                }
                None
            }
        };
        let mut xattrs = vec![
            ("user.blosc2.dtype".to_string(), dtype.clone().into_bytes()),
            (
                "user.blosc2.shape".to_string(),
                serde_json::to_vec(&shape).unwrap_or_default(),
            ),
        ];
        if let Some(chunkshape) = &chunkshape {
            xattrs.push((
                "user.blosc2.chunkshape".to_string(),
                serde_json::to_vec(chunkshape).unwrap_or_default(),
            ));
        }
        xattrs.push((
            "user.blosc2.codec".to_string(),
            meta_json::codec_name(&array).into_bytes(),
        ));
        Presented {
            meta_json: Arc::new(json_bytes(&meta_doc)),
            npy_header: Arc::new(npy::header(&npy_dtype, &npy_shape)),
            zarray,
            zarr3,
            chunk_grid,
            xattrs,
            rows: row_views,
            items,
            sidecars,
            column: ColumnFiles::default(),
            array: Some(array),
        }
    }

    /// The view of the values `data` (or, `npy`, `data.npy`) shows and its
    /// size: the whole array in C order, or a table column's valid rows;
    /// `None` when this version has no values.
    pub fn values(&self, npy: bool) -> Option<(View, u64)> {
        let array = self.array.as_ref()?;
        Some(match (&self.rows, npy) {
            (Some([data, _]), false) => (View::Rows(data.clone()), data.body_len()),
            (Some([_, npy]), true) => (
                View::Rows(npy.clone()),
                self.npy_header.len() as u64 + npy.body_len(),
            ),
            (None, false) => (View::Data, array.data_len()),
            (None, true) => (
                View::Npy(self.npy_header.clone()),
                self.npy_header.len() as u64 + array.data_len(),
            ),
        })
    }

    /// Size and content of `data.interleaved`: `data` with the channel
    /// axis moved last, when `data.mhd` points at it.
    pub fn interleaved_file(&self) -> Option<(u64, Bytes)> {
        let il = self.sidecars.interleaved.as_ref()?;
        let array = self.whole_array()?;
        Some((
            il.len(),
            Bytes::View {
                array: array.clone(),
                view: View::Interleaved(il.clone()),
            },
        ))
    }

    /// Size and content of `data` (or, `npy`, `data.npy`): a view of the
    /// array, or a column's rendered values; `None` when it has no values.
    pub fn data_file(&self, npy: bool) -> Option<(u64, Bytes)> {
        if let Some(data) = &self.column.data {
            let bytes = data[usize::from(npy)].clone();
            return Some((bytes.len() as u64, Bytes::Static(bytes)));
        }
        let (view, size) = self.values(npy)?;
        Some((
            size,
            Bytes::View {
                array: self.array.clone()?,
                view,
            },
        ))
    }

    /// The chunk grid of the Zarr v3 chunk tree `c/` and its number of
    /// chunks, when this version is a v3 array: a whole array's grid, or
    /// for a table column one chunk (`c/0`, its `data`).
    pub fn zarr_chunks(&self) -> Option<(&[u64], u64)> {
        const ONE: [u64; 1] = [1];
        self.zarr3.as_ref()?;
        if let Some(array) = self.whole_array() {
            return Some((&self.chunk_grid, array.nchunks()));
        }
        self.column.zarr_one_chunk.then_some((&ONE[..], 1))
    }

    /// Size and content of chunk `c` (`chunks/` and the v3 chunk tree):
    /// a whole array's chunk over its chunkshape, or a column's one chunk.
    pub fn chunk_file(&self, c: u64) -> Option<(u64, Bytes)> {
        if let Some(array) = self.whole_array() {
            if c >= array.nchunks() {
                return None;
            }
            let len = array.region_len(crate::format::Region::Chunk(c)).ok()?;
            return Some((
                len,
                Bytes::View {
                    array: array.clone(),
                    view: View::Chunk(c),
                },
            ));
        }
        (self.column.zarr_one_chunk && c == 0)
            .then(|| self.data_file(false))
            .flatten()
    }

    /// The array, when it has values of its own and presents all of them
    /// (not a table column): then it has `chunks/` and the whole-array views.
    pub fn whole_array(&self) -> Option<&Arc<Array>> {
        self.array.as_ref().filter(|_| self.rows.is_none())
    }
}

/// The Zarr v3 metadata of `array` (presented with `dtype` and `shape`, in
/// chunks of `chunks` when they are of one shape), or why it has none.
fn v3_array(
    array: &Array,
    dtype: &str,
    shape: &[u64],
    chunks: Option<&[u64]>,
    column: bool,
    attributes: &[(String, Json)],
) -> Result<Json, NotV3> {
    zarr3::data_type(dtype)?;
    if column {
        return Err(NotV3::Column);
    }
    let chunks = chunks.ok_or(NotV3::Chunks)?;
    if let Shape::Plain { .. } = array.shape() {
        // Every chunk file must be full: a plain frame's last may be short.
        let full = array.frame().chunksize.checked_mul(array.nchunks());
        if full != Some(array.data_len()) {
            return Err(NotV3::Chunks);
        }
    }
    let name = array
        .name()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    zarr3::array_json(&ArrayMeta {
        dtype,
        shape,
        chunks,
        name: &name,
        vlmeta: attributes,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::views::testing::fixture;

    fn xattr<'a>(p: &'a Presented, name: &str) -> Option<&'a str> {
        p.xattrs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| std::str::from_utf8(v).unwrap())
    }

    /// `dtype_le_f4.b2nd` as tests/fixtures/manifest.json gives it: shape
    /// [33, 21], chunks [12, 8], `<f4`, lz4.
    #[test]
    fn an_nd_array_presents_its_attributes_and_sizes() {
        let p = Presented::of_array(fixture("dtype_le_f4.b2nd"), None);
        assert_eq!(xattr(&p, "user.blosc2.dtype"), Some("<f4"));
        assert_eq!(xattr(&p, "user.blosc2.shape"), Some("[33,21]"));
        assert_eq!(xattr(&p, "user.blosc2.chunkshape"), Some("[12,8]"));
        assert_eq!(xattr(&p, "user.blosc2.codec"), Some("lz4"));
        assert_eq!(p.chunk_grid, [3, 3]);
        let (view, size) = p.values(false).unwrap();
        assert!(matches!(view, View::Data));
        assert_eq!(size, 33 * 21 * 4);
        let (view, size) = p.values(true).unwrap();
        assert!(matches!(view, View::Npy(_)));
        assert_eq!(size, p.npy_header.len() as u64 + 33 * 21 * 4);
        // numpy's header: magic, version 1.0, padded to 64 bytes, newline.
        assert!(p.npy_header.starts_with(b"\x93NUMPY\x01\x00"));
        assert_eq!(p.npy_header.len() % 64, 0);
        assert!(String::from_utf8_lossy(&p.npy_header)
            .contains("'descr': '<f4', 'fortran_order': False, 'shape': (33, 21)"));
        assert!(p.whole_array().is_some());
    }

    /// A plain frame of text (typesize 1, chunks of 1,500 bytes): 120 times a
    /// 57-byte sentence, 6,840 bytes, as scripts/gen/gen_fixtures.py writes it and
    /// the manifest's `size` says. One dimension of its length, no chunkshape
    /// attribute.
    #[test]
    fn a_plain_frame_is_one_dimension_of_items() {
        let p = Presented::of_array(fixture("frame_bytes_typesize1.b2frame"), None);
        assert_eq!(p.values(false).unwrap().1, 6840);
        assert_eq!(xattr(&p, "user.blosc2.shape"), Some("[6840]"));
        assert_eq!(xattr(&p, "user.blosc2.chunkshape"), None);
        assert_eq!(xattr(&p, "user.blosc2.codec"), Some("zlib"));
        assert_eq!(p.chunk_grid, [5]);
    }

    #[test]
    fn meta_only_has_no_values_and_no_attributes() {
        let p = Presented::meta_only(&json!({"file": "a.b2nd", "error": "truncated"}));
        assert!(p.values(false).is_none() && p.values(true).is_none() && p.whole_array().is_none());
        assert!(p.xattrs.is_empty() && p.npy_header.is_empty() && p.zarray.is_none());
    }
}
