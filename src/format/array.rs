//! An opened Blosc2 array: its frame, how its bytes map onto chunks, and
//! the pure questions the read layer asks of it.
//!
//! This is the format layer's front door: what the array is (its container,
//! frame, shape and metalayers) and how its bytes map onto chunks. It
//! answers "how long is the C-order array" and "which pieces serve bytes
//! [a, b)" ([`Array::pieces`]). The rest of `impl Array` lives beside it,
//! one job a file: reading and decoding chunks (`chunk_reads.rs`: "what is
//! the layout of chunk c", "decode block b of chunk c"), the source version
//! it trusts and the growth it accepts (`growth.rs`), and hints to a remote
//! source (`hints.rs`). It keeps no decoded data and no layouts: the read
//! layer above caches both and asks again when it has to.

use parking_lot::Mutex;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use super::byte_source::{ByteSource, SparseChunks, Version};
use super::chunk::{ChunkLayout, Special};
use super::elsewhere::Elsewhere;
use super::error::{Error, PResult, Problem};
use super::frame::{ChunkOffset, Frame};
use super::geometry::{Geometry, Piece};
use super::meta::{Flavor, NdMeta};
use super::plain;
use super::produced::BlockProducer;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Name of the index file inside a sparse-frame directory.
pub const SPARSE_INDEX: &str = "chunks.b2frame";

/// Where the frame's bytes live.
#[derive(Debug, Clone)]
pub(super) enum Container {
    /// One source holds the whole frame.
    Contiguous(Arc<dyn ByteSource>),
    /// A sparse frame: the index frame and a way to open its chunk files.
    Sparse {
        index: Arc<dyn ByteSource>,
        chunks: Arc<dyn SparseChunks>,
    },
}

/// How the array's bytes map onto chunks.
// One Shape per opened array, inside its Array (itself shared by Arc), and
// most arrays are Nd: boxing it would add an allocation and a pointer to
// follow on every read and save no memory.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Shape {
    /// b2nd or caterva: an N-d array in chunks of blocks.
    Nd {
        /// Shapes of the array and its chunk and block grids.
        geometry: Geometry,
        /// The parsed b2nd or caterva metalayer.
        meta: NdMeta,
    },
    /// A plain frame: its chunks' bytes one after the other.
    Plain {
        /// Start of each chunk in the stream, plus the total at the end.
        chunk_starts: Vec<u64>,
    },
}

/// Which byte view of an array a read is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// The array's bytes in C order (`data`).
    Data,
    /// Chunk `c` over its full chunkshape (`chunks/<coords>`); a plain
    /// frame: chunk `c`'s bytes.
    Chunk(u64),
}

/// An opened array.
#[derive(Debug)]
pub struct Array {
    id: u64,
    name: PathBuf,
    pub(super) container: Container,
    pub(super) frame: Frame,
    pub(super) shape: Shape,
    /// Set when the frame says its values live elsewhere: every read fails.
    pub(super) elsewhere: Option<Elsewhere>,
    /// The source version whose bytes this array trusts (the opened one, or
    /// a later one checked to be a growth of it).
    pub(super) trusted: Mutex<Trust>,
    /// Stored chunk offsets in file order (built on the first hint), to tell
    /// where a chunk's stored bytes end.
    pub(super) stored_order: OnceLock<Vec<u64>>,
    /// Where the values of a frame that holds none come from (a saved
    /// expression's evaluation): every block is asked of it.
    pub(super) producer: Option<Arc<dyn BlockProducer>>,
}

/// Which state of the source an array reads, and which of its chunks that
/// state no longer holds as they were.
#[derive(Debug)]
pub(super) struct Trust {
    pub(super) version: Version,
    /// Chunks rewritten in place by the growth that led to `version` (a
    /// b2nd array's edge chunk when it is resized): their reads fail.
    pub(super) rewritten: BTreeSet<u64>,
}

impl Trust {
    /// Trust in `version` as opened: no chunk rewritten.
    pub(super) fn opened(version: Version) -> Trust {
        Trust {
            version,
            rewritten: BTreeSet::new(),
        }
    }
}

impl Array {
    /// Open the contiguous frame held in `source`; `name` is used in messages.
    pub fn from_source(name: &Path, source: Arc<dyn ByteSource>) -> Result<Array, Error> {
        Self::from_container(name, Container::Contiguous(source)).map_err(|p| Error::new(name, p))
    }

    /// Open a sparse frame from its index source and its chunk files.
    pub fn from_sparse(
        name: &Path,
        index: Arc<dyn ByteSource>,
        chunks: Arc<dyn SparseChunks>,
    ) -> Result<Array, Error> {
        Self::from_container(name, Container::Sparse { index, chunks })
            .map_err(|p| Error::new(name, p))
    }

    /// Open `container`; when what was read is damaged and its source
    /// kept a copy ([`ByteSource::distrust`]), once more from the origin.
    fn from_container(name: &Path, container: Container) -> PResult<Array> {
        match Self::parse_container(name, container.clone()) {
            Err(problem) if problem.is_damage() && container.frame_source().distrust() => {
                log::warn!(
                    "{}: {problem}: dropped the cached copy, reading again from the origin",
                    name.display()
                );
                Self::parse_container(name, container)
            }
            other => other,
        }
    }

    fn parse_container(name: &Path, container: Container) -> PResult<Array> {
        let (frame, trusted) = match &container {
            Container::Contiguous(source) => {
                (Frame::read(&**source, false)?, source.opened_version())
            }
            Container::Sparse { index, .. } => {
                (Frame::read(&**index, true)?, index.opened_version())
            }
        };
        let nd = if let Some(bytes) = frame.metalayer("b2nd") {
            Some(NdMeta::parse(bytes, Flavor::B2nd)?)
        } else if let Some(bytes) = frame.metalayer("caterva") {
            Some(NdMeta::parse(bytes, Flavor::Caterva)?)
        } else {
            None
        };
        let mut array = Array {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            name: name.to_path_buf(),
            container,
            elsewhere: frame.values_elsewhere(),
            frame,
            shape: Shape::Plain {
                chunk_starts: Vec::new(),
            },
            trusted: Mutex::new(Trust::opened(trusted)),
            stored_order: OnceLock::new(),
            producer: None,
        };
        array.shape = match nd {
            Some(meta) => {
                let geometry = Geometry::new(
                    &meta.shape,
                    &meta.chunkshape,
                    &meta.blockshape,
                    array.frame.typesize as u64,
                )?;
                let nchunks = array.frame.nchunks() as u64;
                if geometry.nchunks() != nchunks && !(geometry.nbytes() == 0 && nchunks == 0) {
                    return Err(Problem::corrupt(
                        "b2nd metalayer",
                        format!("shape {:?} / chunkshape {:?} imply {} chunks, the frame holds {nchunks}", meta.shape, meta.chunkshape, geometry.nchunks()),
                    ));
                }
                if nchunks > 0
                    && array.frame.chunksize != 0
                    && array.frame.chunksize != geometry.chunk_nbytes()
                {
                    return Err(Problem::corrupt(
                        "b2nd metalayer",
                        format!(
                            "chunks of {} bytes, the frame says {}",
                            geometry.chunk_nbytes(),
                            array.frame.chunksize
                        ),
                    ));
                }
                Shape::Nd { geometry, meta }
            }
            None => Shape::Plain {
                chunk_starts: plain::chunk_starts(&array.frame, |c| {
                    Ok(array.read_layout(c)?.nbytes() as u64)
                })?,
            },
        };
        Ok(array)
    }

    /// An array known only from `description` (no frame is read), its
    /// values produced by `producer`; `source` stands for where they come
    /// from (its version is the array's, [`ByteSource::may_wait`] says
    /// whether reading waits on a network). Its values are marked as kept
    /// elsewhere ([`Elsewhere::ServedRegions`]).
    pub fn described(
        name: &Path,
        description: &super::described::Description,
        source: Arc<dyn ByteSource>,
        producer: Arc<dyn BlockProducer>,
    ) -> Result<Array, Error> {
        let (geometry, meta) = description.nd().map_err(|p| Error::new(name, p))?;
        let frame = description.frame(&geometry);
        Ok(Array {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            name: name.to_path_buf(),
            trusted: Mutex::new(Trust::opened(source.opened_version())),
            container: Container::Contiguous(source),
            elsewhere: Some(Elsewhere::ServedRegions),
            frame,
            shape: Shape::Nd { geometry, meta },
            stored_order: OnceLock::new(),
            producer: Some(producer),
        })
    }

    /// Unique per opening: a cache can file what it keeps under this id, so
    /// two versions of a changed file never mix.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The name given at opening (a path, for messages).
    pub fn name(&self) -> &Path {
        &self.name
    }

    /// Bytes this opened array holds, roughly (its parsed frame: chunk
    /// index, metalayers, variable-length metalayers as JSON; the chunk
    /// starts of a plain frame): what a cache of opened arrays charges.
    pub fn held_bytes(&self) -> usize {
        let frame = &self.frame;
        let metalayers: usize = frame
            .metalayers
            .iter()
            .map(|(n, v)| 64 + n.len() + v.len())
            .sum();
        // A JSON value takes a few times its text in memory.
        let vlmeta: usize = frame
            .vlmeta
            .iter()
            .map(|(n, v)| 64 + n.len() + 4 * v.to_string().len())
            .sum();
        let starts = match &self.shape {
            Shape::Plain { chunk_starts } => chunk_starts.len() * 8,
            Shape::Nd { geometry, .. } => 64 * geometry.shape.len(),
        };
        let order = self.stored_order.get().map_or(0, |o| o.len() * 8);
        let producer = self.producer.as_ref().map_or(0, |p| p.held_bytes());
        producer
            + 1024
            + frame.offsets.len() * std::mem::size_of::<ChunkOffset>()
            + metalayers
            + vlmeta
            + starts
            + order
    }

    /// The bytes read for this array did not decode: ask its frame's
    /// source to drop any copy it keeps ([`ByteSource::distrust`]). True
    /// when a read again may see other bytes.
    pub fn distrust_source(&self) -> bool {
        self.frame_source().distrust()
    }

    /// Keep the source's descriptor open while the pin lives (an open file
    /// on this array keeps reading the file it opened); see [`ByteSource::pin`].
    pub fn pin(&self) -> PResult<Option<super::byte_source::Pin>> {
        self.frame_source().pin()
    }

    /// Whether reading this array may wait on a network
    /// ([`ByteSource::may_wait`]; a sparse frame's chunk files live where
    /// its index does).
    pub fn may_wait(&self) -> bool {
        match &self.container {
            Container::Contiguous(source) => source.may_wait(),
            Container::Sparse { index, .. } => index.may_wait(),
        }
    }

    /// The parsed frame.
    pub fn frame(&self) -> &Frame {
        &self.frame
    }

    /// Why the file holds no values of its own (a lazy expression, a
    /// proxy's cache, a placeholder), or None for an ordinary array. Every
    /// read of such an array fails with [`Problem::ValuesElsewhere`].
    pub fn values_elsewhere(&self) -> Option<&Elsewhere> {
        self.elsewhere.as_ref()
    }

    /// Chunks the offsets index marks as never written (`blosc2.empty`):
    /// they read as zeros, like holes in a sparse file. Chunks whose own
    /// header says so are found only when read.
    pub fn uninitialized_chunks(&self) -> u64 {
        self.frame
            .offsets
            .iter()
            .filter(|o| matches!(o, ChunkOffset::Special(Special::Uninit)))
            .count() as u64
    }

    /// This array (an N-d frame whose values live elsewhere), its blocks
    /// produced by `producer` from now on: reads no longer fail, and no
    /// block is decoded from the frame.
    pub fn produced_by(self, producer: Arc<dyn BlockProducer>) -> Array {
        Array {
            producer: Some(producer),
            ..self
        }
    }

    /// Whether the values are produced ([`Self::produced_by`]), not stored.
    pub fn is_produced(&self) -> bool {
        self.producer.is_some()
    }

    /// Pieces serving the box `[origin, origin + extent)` of an N-d array,
    /// its items in C order over the box (outside the array: zeros).
    pub fn box_pieces(&self, origin: &[u64], extent: &[u64]) -> PResult<Vec<Piece>> {
        self.refuse_made_up()?;
        match &self.shape {
            Shape::Nd { geometry, .. }
                if origin.len() == geometry.ndim() && extent.len() == geometry.ndim() =>
            {
                Ok(geometry.box_pieces(origin, extent))
            }
            _ => Err(Problem::OutOfRange(format!(
                "a box of {} dimensions in an array of shape {:?}",
                extent.len(),
                self.shape_dims()
            ))),
        }
    }

    fn shape_dims(&self) -> Vec<u64> {
        match &self.shape {
            Shape::Nd { geometry, .. } => geometry.shape.clone(),
            Shape::Plain { .. } => vec![self.data_len()],
        }
    }

    pub(super) fn refuse_made_up(&self) -> PResult<()> {
        match &self.elsewhere {
            Some(_) if self.producer.is_some() => Ok(()),
            Some(why) => Err(Problem::ValuesElsewhere(why.clone())),
            None => Ok(()),
        }
    }

    /// How the bytes map onto chunks.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The N-d geometry (None for a plain frame).
    pub fn geometry(&self) -> Option<&Geometry> {
        match &self.shape {
            Shape::Nd { geometry, .. } => Some(geometry),
            Shape::Plain { .. } => None,
        }
    }

    /// The block shape the decode pipeline is given (empty for a plain frame).
    pub(super) fn blockshape(&self) -> &[u64] {
        self.geometry()
            .map(|g| g.blockshape.as_slice())
            .unwrap_or(&[])
    }

    /// Number of chunks.
    pub fn nchunks(&self) -> u64 {
        self.frame.nchunks() as u64
    }

    /// Size of the `data` view: the array's bytes in C order.
    pub fn data_len(&self) -> u64 {
        match &self.shape {
            Shape::Nd { geometry, .. } => geometry.nbytes(),
            Shape::Plain { chunk_starts } => chunk_starts.last().copied().unwrap_or(0),
        }
    }

    /// Size of a region's bytes.
    pub fn region_len(&self, region: Region) -> PResult<u64> {
        match (region, &self.shape) {
            (Region::Data, _) => Ok(self.data_len()),
            (Region::Chunk(c), _) if c >= self.nchunks() => Err(Problem::OutOfRange(format!(
                "chunk {c} of {}",
                self.nchunks()
            ))),
            (Region::Chunk(_), Shape::Nd { geometry, .. }) => Ok(geometry.chunk_view_nbytes()),
            (Region::Chunk(c), Shape::Plain { chunk_starts }) => {
                Ok(chunk_starts[c as usize + 1] - chunk_starts[c as usize])
            }
        }
    }

    /// Pieces serving bytes `[start, start + len)` of `region` (clipped to
    /// its end). N-d arrays get block pieces straight from the geometry; a
    /// plain frame gets chunk-byte pieces, which [`Self::block_pieces`]
    /// splits into blocks once the chunk's layout is known.
    pub fn pieces(&self, region: Region, start: u64, len: u64) -> PResult<Vec<Piece>> {
        self.refuse_made_up()?;
        let end = start.saturating_add(len).min(self.region_len(region)?);
        let len = end.saturating_sub(start);
        Ok(match (&self.shape, region) {
            (Shape::Nd { geometry, .. }, Region::Data) => geometry.pieces(start, len),
            (Shape::Nd { geometry, .. }, Region::Chunk(c)) => {
                geometry.chunk_view_pieces(c, start, len)
            }
            (Shape::Plain { chunk_starts }, Region::Data) => {
                plain::pieces(chunk_starts, start, len)
            }
            (Shape::Plain { chunk_starts }, Region::Chunk(c)) => {
                plain::pieces(chunk_starts, chunk_starts[c as usize] + start, len)
            }
        })
    }

    /// Split a chunk-bytes piece of chunk `c` into block pieces, given its layout.
    pub fn block_pieces(&self, layout: &ChunkLayout, c: u64, piece: Piece) -> PResult<Vec<Piece>> {
        plain::block_pieces(layout, c, piece)
    }

    /// The special kind of chunk `c` when the offsets index alone tells it.
    pub fn index_special(&self, c: u64) -> Option<Special> {
        match self.frame.offsets.get(c as usize) {
            Some(ChunkOffset::Special(kind)) => Some(*kind),
            _ => None,
        }
    }

    /// Blocks in every chunk, when the geometry tells (an N-d array).
    pub fn blocks_per_chunk(&self) -> Option<u64> {
        let g = self.geometry()?;
        (g.block_nbytes() > 0).then(|| g.chunk_nbytes().div_ceil(g.block_nbytes()))
    }

    /// The bytes of `data` that chunk file `c` (the chunk over its full
    /// chunkshape, [`Region::Chunk`]) shows first, when it shows one
    /// contiguous run of them, followed only by zero padding: every chunk
    /// of a plain frame, and of an N-d array whose chunks span every
    /// dimension but the first. `None` otherwise.
    pub fn chunk_data_range(&self, c: u64) -> Option<std::ops::Range<u64>> {
        if c >= self.nchunks() {
            return None;
        }
        match &self.shape {
            Shape::Plain { chunk_starts } => {
                Some(chunk_starts[c as usize]..chunk_starts[c as usize + 1])
            }
            Shape::Nd { geometry, .. } => {
                let (Some(first), Some(rest)) =
                    (geometry.chunkshape.first(), geometry.shape.get(1..))
                else {
                    return None;
                };
                if geometry.chunkshape[1..] != *rest {
                    return None;
                }
                let row = rest
                    .iter()
                    .product::<u64>()
                    .checked_mul(geometry.itemsize)?;
                let rows = first.checked_mul(row)?;
                let start = c.checked_mul(rows)?;
                let end = start.checked_add(rows)?.min(self.data_len());
                Some(start.min(end)..end)
            }
        }
    }

    /// The source holding the frame (the index file of a sparse frame).
    pub(super) fn frame_source(&self) -> &Arc<dyn ByteSource> {
        self.container.frame_source()
    }
}

impl Container {
    /// The source holding the frame (the index file of a sparse frame).
    fn frame_source(&self) -> &Arc<dyn ByteSource> {
        match self {
            Container::Contiguous(source) => source,
            Container::Sparse { index, .. } => index,
        }
    }
}
