//! Arrays known from a description rather than a frame: a dataset a server
//! describes (shape, grid, dtype, codec settings, vlmeta) and serves as
//! regions, with no frame of its own to read. [`Description::frame`]
//! stands in the frame those fields would have, with no stored chunk, so
//! the views render such an array as they render a read one; its values
//! come from a [`super::BlockProducer`] (see [`super::Array::described`]).

use serde_json::Value as Json;

use super::chunk::Special;
use super::dtype::NumpyDtype;
use super::error::{PResult, Problem};
use super::frame::{ChunkOffset, Frame};
use super::geometry::Geometry;
use super::meta::{simple_dtype_itemsize, Flavor, NdMeta};

/// Most chunks a described array may have: its stand-in chunk index takes
/// 16 bytes a chunk, and a description costs its sender nothing to inflate.
pub const MAX_DESCRIBED_CHUNKS: u64 = 1 << 20;

/// What a server says of a dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct Description {
    /// Extent of the array along each dimension (empty for 0-d).
    pub shape: Vec<u64>,
    /// Extent of a chunk along each dimension.
    pub chunkshape: Vec<u64>,
    /// Extent of a block along each dimension.
    pub blockshape: Vec<u64>,
    /// The NumPy dtype string (`<f8`, `|S3`, or a structured dtype's
    /// description list, as a b2nd metalayer holds it).
    pub dtype: String,
    /// Bytes per item, as the server says (needed for a structured dtype;
    /// checked against a simple one's own size).
    pub typesize: Option<u64>,
    /// Codec id (C-Blosc2's numbering; informative).
    pub codec: u8,
    /// Compression level (informative).
    pub clevel: u8,
    /// The dataset's variable-length metadata.
    pub vlmeta: Vec<(String, Json)>,
}

impl Description {
    /// The geometry and b2nd metadata described, checked like a frame's
    /// (at most 16 dimensions, sizes that fit, blocks inside chunks).
    pub fn nd(&self) -> PResult<(Geometry, NdMeta)> {
        let bad = |detail: String| Problem::corrupt("dataset description", detail);
        let itemsize = match (simple_dtype_itemsize(&self.dtype), self.typesize) {
            (Some(own), Some(said)) if own != said => {
                return Err(bad(format!(
                    "dtype {} has items of {own} bytes, the typesize says {said}",
                    self.dtype
                )))
            }
            (Some(own), _) => own,
            // A record: its size is the typesize the server gives.
            (None, Some(said)) if said > 0 && is_record(&self.dtype) => said,
            _ => {
                return Err(Problem::Unsupported {
                    what: format!("dtype {:?}", self.dtype),
                    detail: "its item size is not known".into(),
                })
            }
        };
        let n = self.shape.len();
        if n > 16 || self.chunkshape.len() != n || self.blockshape.len() != n {
            return Err(bad(format!(
                "shape {:?}, chunks {:?} and blocks {:?} disagree",
                self.shape, self.chunkshape, self.blockshape
            )));
        }
        let geometry = Geometry::new(&self.shape, &self.chunkshape, &self.blockshape, itemsize)?;
        if geometry.nchunks() > MAX_DESCRIBED_CHUNKS {
            return Err(bad(format!(
                "{} chunks (at most {MAX_DESCRIBED_CHUNKS} are read)",
                geometry.nchunks()
            )));
        }
        let meta = NdMeta {
            flavor: Flavor::B2nd,
            version: 0,
            shape: self.shape.clone(),
            chunkshape: self.chunkshape.clone(),
            blockshape: self.blockshape.clone(),
            dtype_format: Some(0),
            dtype: Some(self.dtype.clone()),
        };
        Ok((geometry, meta))
    }

    /// The frame these fields describe: no stored chunk (every chunk's
    /// values come from the producer), no metalayers, the vlmeta given.
    pub fn frame(&self, geometry: &Geometry) -> Frame {
        let (codec_code, udcodec) = if self.codec <= 5 {
            (self.codec, 0)
        } else {
            (6, self.codec)
        };
        Frame {
            sparse: false,
            version: 0,
            header_len: 0,
            frame_len: 0,
            nbytes: geometry.nbytes(),
            cbytes: 0,
            typesize: geometry.itemsize.max(1) as usize,
            blocksize: i32::try_from(geometry.block_nbytes()).unwrap_or(0),
            chunksize: geometry.chunk_nbytes(),
            codec_code,
            clevel: self.clevel,
            splitmode: 4,
            udcodec,
            compcode_meta: 0,
            use_dict: false,
            filters: Vec::new(),
            filters_meta: Vec::new(),
            metalayers: Vec::new(),
            vlmeta: self.vlmeta.clone(),
            offsets: vec![ChunkOffset::Special(Special::Uninit); geometry.nchunks() as usize],
        }
    }
}

/// Whether `dtype` is a structured (record) dtype.
fn is_record(dtype: &str) -> bool {
    matches!(NumpyDtype::parse(dtype), Ok(NumpyDtype::Record(_)))
}
