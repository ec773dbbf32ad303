//! An opened Blosc2 array: its frame, how its bytes map onto chunks, and
//! the pure questions the read layer asks of it.
//!
//! This is the format layer's front door. It answers "how long is the
//! C-order array", "which pieces serve bytes [a, b)" ([`Array::pieces`]),
//! "what is the layout of chunk c" ([`Array::read_layout`]) and "decode block
//! b of chunk c, given block 0 where DELTA needs it"
//! ([`Array::decode_block`]). It keeps no decoded data and no layouts: the
//! read layer above caches both and asks again when it has to.
//!
//! Its bytes come through a [`ByteSource`]; the only state it keeps besides
//! the parsed frame is which version of the source it trusts. A file that
//! grew by appended chunks (python-blosc2 appends in place) is still trusted
//! once [`Array::accept_growth`] has checked that the chunks it knows are
//! where and what they were.

use parking_lot::Mutex;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use super::chunk::header::{ChunkHeader, EXTENDED_HEADER_LEN};
use super::chunk::Special;
use super::chunk::{decode_chunk_into, BlockContext, ChunkLayout, ChunkRegion, Fork, Storage};
use super::elsewhere::Elsewhere;
use super::error::{Error, PResult, Problem};
use super::frame::{ChunkOffset, Frame};
use super::geometry::{Geometry, Piece, PieceSource};
use super::meta::{Flavor, NdMeta};
use super::plain;
use super::produced::BlockProducer;
use super::source::{ByteSource, Need, SparseChunks, Version, VersionTag};

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Name of the index file inside a sparse-frame directory.
pub const SPARSE_INDEX: &str = "chunks.b2frame";

/// Largest single decoded block accepted (C-Blosc2's own maximum block size).
pub const MAX_BLOCK_BYTES: usize = super::chunk::header::MAX_BLOCKSIZE;

/// Where the frame's bytes live.
#[derive(Debug)]
enum Container {
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
    container: Container,
    frame: Frame,
    shape: Shape,
    /// Set when the frame says its values live elsewhere: every read fails.
    elsewhere: Option<Elsewhere>,
    /// The source version whose bytes this array trusts (the opened one, or
    /// a later one checked to be a growth of it).
    trusted: Mutex<Trust>,
    /// Stored chunk offsets in file order (built on the first hint), to tell
    /// where a chunk's stored bytes end.
    stored_order: OnceLock<Vec<u64>>,
    /// Where the values of a frame that holds none come from (a saved
    /// expression's evaluation): every block is asked of it.
    producer: Option<Arc<dyn BlockProducer>>,
}

/// Bytes of a block served before, for [`Array::accept_growth`] to compare:
/// decoded bytes `[offset, offset + bytes.len())` of block `block` of chunk
/// `chunk`.
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    /// Chunk number.
    pub chunk: u64,
    /// Block number within the chunk.
    pub block: u64,
    /// Where `bytes` start in the decoded block.
    pub offset: usize,
    /// The bytes served.
    pub bytes: &'a [u8],
}

/// Which state of the source an array reads, and which of its chunks that
/// state no longer holds as they were.
#[derive(Debug)]
struct Trust {
    version: Version,
    /// Chunks rewritten in place by the growth that led to `version` (a
    /// b2nd array's edge chunk when it is resized): their reads fail.
    rewritten: BTreeSet<u64>,
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

    fn from_container(name: &Path, container: Container) -> PResult<Array> {
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
            trusted: Mutex::new(Trust {
                version: trusted,
                rewritten: BTreeSet::new(),
            }),
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
            trusted: Mutex::new(Trust {
                version: source.opened_version(),
                rewritten: BTreeSet::new(),
            }),
            container: Container::Contiguous(source),
            elsewhere: Some(Elsewhere::ServedRegions),
            frame,
            shape: Shape::Nd { geometry, meta },
            stored_order: OnceLock::new(),
            producer: Some(producer),
        })
    }

    /// Every byte of the array in C order, decoded chunk by chunk: for a
    /// small frame held in memory (a region a server built), never for a
    /// mounted array (the read layer serves those).
    pub fn read_all(&self) -> PResult<Vec<u8>> {
        let len = usize::try_from(self.data_len())
            .map_err(|_| Problem::Limit("array too large to read whole".into()))?;
        let mut out = vec![0u8; len];
        let mut decoded: Option<(u64, Vec<u8>)> = None;
        for piece in self.pieces(Region::Data, 0, len as u64)? {
            let (chunk, at) = match piece.source {
                PieceSource::Zeros => continue,
                PieceSource::Block {
                    chunk,
                    block,
                    offset,
                } => {
                    let block_len = self.geometry().map_or(0, Geometry::block_nbytes);
                    (
                        chunk,
                        block.saturating_mul(block_len).saturating_add(offset),
                    )
                }
                PieceSource::ChunkBytes { chunk, offset } => (chunk, offset),
            };
            if decoded.as_ref().is_none_or(|(c, _)| *c != chunk) {
                decoded = Some((chunk, self.decode_chunk(chunk)?));
            }
            let bytes = decoded
                .as_ref()
                .map(|(_, d)| d.as_slice())
                .unwrap_or_default();
            let from = usize::try_from(at).unwrap_or(usize::MAX);
            let src = from
                .checked_add(piece.len as usize)
                .and_then(|end| bytes.get(from..end));
            let src = src.ok_or_else(|| {
                Problem::corrupt(
                    "chunk",
                    format!(
                        "chunk {chunk} decodes to {} bytes, a piece needs {at}+{}",
                        bytes.len(),
                        piece.len
                    ),
                )
            })?;
            out[piece.out_offset as usize..piece.out_offset as usize + src.len()]
                .copy_from_slice(src);
        }
        Ok(out)
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

    /// Keep the source's descriptor open while the pin lives (an open file
    /// on this array keeps reading the file it opened); see [`ByteSource::pin`].
    pub fn pin(&self) -> PResult<Option<super::source::Pin>> {
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

    fn refuse_made_up(&self) -> PResult<()> {
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
    fn blockshape(&self) -> &[u64] {
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

    /// Decoded size chunk `c` must have according to the frame.
    fn expected_chunk_nbytes(&self, c: u64) -> Option<u64> {
        match &self.shape {
            Shape::Nd { geometry, .. } => Some(geometry.chunk_nbytes()),
            Shape::Plain { chunk_starts } if !chunk_starts.is_empty() => {
                Some(chunk_starts[c as usize + 1] - chunk_starts[c as usize])
            }
            Shape::Plain { .. } => {
                if self.frame.chunksize > 0 {
                    let start = c * self.frame.chunksize;
                    Some(
                        self.frame
                            .chunksize
                            .min(self.frame.nbytes.saturating_sub(start)),
                    )
                } else {
                    None
                }
            }
        }
    }

    /// The special kind of chunk `c` when the offsets index alone tells it.
    pub fn index_special(&self, c: u64) -> Option<super::chunk::Special> {
        match self.frame.offsets.get(c as usize) {
            Some(ChunkOffset::Special(kind)) => Some(*kind),
            _ => None,
        }
    }

    /// Where chunk `c` is stored: its source and its region in it.
    fn chunk_home(&self, c: u64, pos: u64) -> PResult<(Arc<dyn ByteSource>, u64, u64)> {
        match &self.container {
            Container::Contiguous(source) => {
                let start = self.frame.header_len + pos;
                let limit = (self.frame.header_len + self.frame.cbytes).min(self.frame.frame_len);
                Ok((source.clone(), start, limit.saturating_sub(start)))
            }
            Container::Sparse { chunks, .. } => {
                let file = chunks.open_chunk(pos).map_err(|p| p.in_chunk(c))?;
                let len = file.len();
                Ok((file, 0, len))
            }
        }
    }

    /// Read and check the layout of chunk `c` (header, block positions).
    pub fn read_layout(&self, c: u64) -> PResult<ChunkLayout> {
        self.read_layout_inner(c).map_err(|p| p.in_chunk(c))
    }

    fn read_layout_inner(&self, c: u64) -> PResult<ChunkLayout> {
        let offset = *self
            .frame
            .offsets
            .get(c as usize)
            .ok_or_else(|| Problem::OutOfRange(format!("chunk {c} of {}", self.nchunks())))?;
        let layout = match offset {
            ChunkOffset::Special(kind) => {
                let nbytes = self
                    .expected_chunk_nbytes(c)
                    .unwrap_or(self.frame.chunksize) as usize;
                // Blocks must match the geometry's; a plain frame's special
                // chunk is cut in blocks of at least 1 MiB whatever the header
                // says, so a tiny declared blocksize cannot explode the work.
                let blocksize = match &self.shape {
                    Shape::Nd { geometry, .. } => geometry.block_nbytes() as usize,
                    Shape::Plain { .. } => (self.frame.blocksize.max(0) as usize).max(1 << 20),
                };
                return Ok(ChunkLayout::special(
                    kind,
                    nbytes,
                    blocksize,
                    self.frame.typesize,
                ));
            }
            ChunkOffset::Stored(pos) => {
                let (source, start, available) = self.chunk_home(c, pos)?;
                let layout = ChunkLayout::read_sized(
                    &ChunkRegion {
                        source: &*source,
                        start,
                        available,
                    },
                    self.layout_guess(),
                )?;
                self.confirm_trusted(c)?;
                layout
            }
        };
        if let Some(expected) = self.expected_chunk_nbytes(c) {
            if layout.nbytes() as u64 != expected {
                return Err(Problem::corrupt(
                    "chunk",
                    format!(
                        "decodes to {} bytes, the frame expects {expected}",
                        layout.nbytes()
                    ),
                ));
            }
        }
        if let Shape::Nd { geometry, .. } = &self.shape {
            let h = &layout.header;
            if layout.nbytes() > 0
                && h.special.is_none()
                && !h.is_vlblocks()
                && h.blocksize as u64 != geometry.block_nbytes().min(layout.nbytes() as u64)
            {
                return Err(Problem::corrupt(
                    "chunk",
                    format!(
                        "blocks of {} bytes, the blockshape implies {}",
                        h.blocksize,
                        geometry.block_nbytes()
                    ),
                ));
            }
        }
        for b in 0..layout.nblocks() {
            if layout.block_range(b).len() > MAX_BLOCK_BYTES {
                return Err(Problem::Limit(format!(
                    "block {b} is larger than {MAX_BLOCK_BYTES} bytes"
                )));
            }
        }
        Ok(layout)
    }

    /// Decode block `b` of chunk `c` (whose layout is `layout`) into `out`
    /// (exactly the block's decoded length). `block0` must be the decoded
    /// block 0 of the chunk when `layout.needs_block0()` and b > 0.
    pub fn decode_block(
        &self,
        layout: &ChunkLayout,
        c: u64,
        b: u64,
        block0: Option<&[u8]>,
        out: &mut [u8],
    ) -> PResult<()> {
        self.decode_block_forked(layout, c, b, block0, None, out)
    }

    /// [`Array::decode_block`], with half of a split block's streams
    /// decoded through `fork` at the same time (for a reader waiting on
    /// this one block).
    pub fn decode_block_forked(
        &self,
        layout: &ChunkLayout,
        c: u64,
        b: u64,
        block0: Option<&[u8]>,
        fork: Option<&dyn Fork>,
        out: &mut [u8],
    ) -> PResult<()> {
        self.refuse_made_up()?;
        if let Some(producer) = &self.producer {
            if b >= layout.nblocks() as u64 || out.len() != layout.block_range(b as usize).len() {
                return Err(Problem::OutOfRange(format!(
                    "block {b} of {} ({} bytes asked)",
                    layout.nblocks(),
                    out.len()
                ))
                .in_chunk(c));
            }
            return producer.produce_block(c, b, out).map_err(|p| p.in_chunk(c));
        }
        self.decode_block_inner(layout, c, b as usize, block0, fork, out)
            .map_err(|p| p.in_chunk(c))
    }

    fn decode_block_inner(
        &self,
        layout: &ChunkLayout,
        c: u64,
        b: usize,
        block0: Option<&[u8]>,
        fork: Option<&dyn Fork>,
        out: &mut [u8],
    ) -> PResult<()> {
        let context = BlockContext {
            block0,
            blockshape: self.blockshape(),
            fork,
        };
        self.with_stored_block(layout, c, b, |stored| {
            layout.decode_block(b, stored, &context, out)
        })
    }

    /// Decoded bytes `[offset, offset + out.len())` of block `b` of chunk
    /// `c`, for a small read: only the items holding them are unshuffled
    /// ([`ChunkLayout::decode_block_part`]), with half of the streams
    /// decoded through `fork`. `Ok(false)`, with nothing written, for a
    /// block that must be decoded whole ([`Array::decode_block_forked`]).
    pub fn decode_block_part_forked(
        &self,
        layout: &ChunkLayout,
        c: u64,
        b: u64,
        fork: Option<&dyn Fork>,
        offset: u64,
        out: &mut [u8],
    ) -> PResult<bool> {
        self.refuse_made_up()?;
        let b = b as usize;
        let offset = usize::try_from(offset).map_err(|_| {
            Problem::OutOfRange(format!("offset {offset} in block {b}")).in_chunk(c)
        })?;
        // Known before the stored bytes are read: a block decoded whole
        // reads them once, in the caller's whole decode (a produced block
        // is always made whole).
        if self.producer.is_some() || !layout.decodes_in_part(b) {
            return Ok(false);
        }
        let context = BlockContext {
            block0: None,
            blockshape: self.blockshape(),
            fork,
        };
        self.with_stored_block(layout, c, b, |stored| {
            layout.decode_block_part(b, stored, &context, offset, out)
        })
        .map_err(|p| p.in_chunk(c))
    }

    /// `decode` run on the stored bytes of block `b` of chunk `c` (none for
    /// a special chunk), read through the chunk's source.
    fn with_stored_block<T>(
        &self,
        layout: &ChunkLayout,
        c: u64,
        b: usize,
        decode: impl FnOnce(&[u8]) -> PResult<T>,
    ) -> PResult<T> {
        if b >= layout.nblocks() {
            return Err(Problem::OutOfRange(format!(
                "block {b} of {}",
                layout.nblocks()
            )));
        }
        let range = layout.block_source_range(b);
        let stored = match (&layout.storage, self.frame.offsets.get(c as usize)) {
            (Storage::Special { .. }, _) | (_, Some(ChunkOffset::Special(_))) => None,
            (_, Some(ChunkOffset::Stored(pos))) => Some(*pos),
            (_, None) => {
                return Err(Problem::OutOfRange(format!(
                    "chunk {c} of {}",
                    self.nchunks()
                )))
            }
        };
        let Some(pos) = stored else {
            return decode(&[]);
        };
        let (source, start, available) = self.chunk_home(c, pos)?;
        if range.end > available {
            return Err(Problem::truncated(
                "block",
                range.start,
                range.end,
                available,
            ));
        }
        let contiguous = matches!(self.container, Container::Contiguous(_));
        read_and_decode(
            &*source,
            start,
            layout,
            b,
            || {
                if contiguous {
                    self.confirm_trusted(c)
                } else {
                    Ok(())
                }
            },
            decode,
        )
    }

    /// Decoded bytes `[offset, offset + out.len())` of block `b` of chunk
    /// `c`, read straight from the source when the chunk stores its blocks
    /// raw (memcpyed: decoding would be a copy). `Ok(false)`, with nothing
    /// read, for any other chunk. A small read of such a block reads only
    /// its own bytes.
    pub fn read_raw_block_part(
        &self,
        layout: &ChunkLayout,
        c: u64,
        b: u64,
        offset: u64,
        out: &mut [u8],
    ) -> PResult<bool> {
        self.refuse_made_up()?;
        let Some(ChunkOffset::Stored(pos)) = self.frame.offsets.get(c as usize) else {
            return Ok(false);
        };
        if !layout.stored_raw() || self.producer.is_some() {
            return Ok(false);
        }
        let mut read = || -> PResult<()> {
            if b as usize >= layout.nblocks() {
                return Err(Problem::OutOfRange(format!(
                    "block {b} of {}",
                    layout.nblocks()
                )));
            }
            let range = layout.block_source_range(b as usize);
            if offset
                .checked_add(out.len() as u64)
                .is_none_or(|e| e > range.end - range.start)
            {
                return Err(Problem::OutOfRange(format!(
                    "bytes {offset}+{} of block {b} ({} bytes)",
                    out.len(),
                    range.end - range.start
                )));
            }
            let (source, start, available) = self.chunk_home(c, *pos)?;
            if range.end > available {
                return Err(Problem::truncated(
                    "block",
                    range.start,
                    range.end,
                    available,
                ));
            }
            source.read_needed(start + range.start + offset, out)?;
            match self.container {
                Container::Contiguous(_) => self.confirm_trusted(c),
                Container::Sparse { .. } => Ok(()),
            }
        };
        read().map_err(|p| p.in_chunk(c))?;
        Ok(true)
    }

    /// All decoded bytes of chunk `c` as stored (blocks in order, padding
    /// included), from one read of the stored chunk.
    pub fn decode_chunk(&self, c: u64) -> PResult<Vec<u8>> {
        self.refuse_made_up()?;
        if self.producer.is_some() {
            return Err(Problem::Unsupported {
                what: "chunk of a computed array".into(),
                detail: "it stores no bytes; read its blocks".into(),
            });
        }
        let layout = self.read_layout(c)?;
        let mut out = vec![0u8; layout.nbytes()];
        let stored = match self.frame.offsets.get(c as usize) {
            Some(ChunkOffset::Stored(pos))
                if !matches!(layout.storage, Storage::Special { .. }) =>
            {
                let (source, start, _) = self.chunk_home(c, *pos)?;
                let mut bytes = vec![0u8; layout.header.cbytes];
                source
                    .read_needed(start, &mut bytes)
                    .map_err(|p| p.in_chunk(c))?;
                if matches!(self.container, Container::Contiguous(_)) {
                    self.confirm_trusted(c).map_err(|p| p.in_chunk(c))?;
                }
                bytes
            }
            _ => Vec::new(),
        };
        decode_chunk_into(&layout, &stored, self.blockshape(), &mut out)
            .map_err(|p| p.in_chunk(c))?;
        Ok(out)
    }

    /// Bytes a chunk's header, block starts and dictionary size take when
    /// its blocks are the geometry's (0 when not known: a plain frame).
    fn layout_guess(&self) -> usize {
        match &self.shape {
            Shape::Nd { geometry, .. } if geometry.block_nbytes() > 0 => {
                let nblocks = geometry.chunk_nbytes().div_ceil(geometry.block_nbytes());
                usize::try_from(
                    nblocks
                        .saturating_mul(4)
                        .saturating_add(EXTENDED_HEADER_LEN as u64 + 4),
                )
                .unwrap_or(usize::MAX)
            }
            _ => 0,
        }
    }

    /// Blocks in every chunk, when the geometry tells (an N-d array).
    pub fn blocks_per_chunk(&self) -> Option<u64> {
        let g = self.geometry()?;
        (g.block_nbytes() > 0).then(|| g.chunk_nbytes().div_ceil(g.block_nbytes()))
    }

    /// Whether the array's source acts on [`Self::will_need_chunks`] hints
    /// (a remote object); for others, working hints out is wasted.
    pub fn takes_hints(&self) -> bool {
        match &self.container {
            Container::Contiguous(source) => source.takes_hints(),
            Container::Sparse { .. } => false,
        }
    }

    /// The stored bytes of chunk `c` in the frame's source: from its offset
    /// to the next chunk's (in file order) or the end of the chunks.
    fn chunk_stored_range(&self, c: u64) -> Option<std::ops::Range<u64>> {
        let Some(ChunkOffset::Stored(pos)) = self.frame.offsets.get(c as usize) else {
            return None;
        };
        let order = self.stored_order.get_or_init(|| {
            let mut v: Vec<u64> = self
                .frame
                .offsets
                .iter()
                .filter_map(|o| {
                    if let ChunkOffset::Stored(p) = o {
                        Some(*p)
                    } else {
                        None
                    }
                })
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        });
        let next = order
            .get(order.partition_point(|&p| p <= *pos))
            .copied()
            .unwrap_or(self.frame.cbytes);
        let limit = (self.frame.header_len + self.frame.cbytes).min(self.frame.frame_len);
        let start = self.frame.header_len + pos;
        let end = (self.frame.header_len + next.max(*pos)).min(limit);
        (start < end).then_some(start..end)
    }

    /// Hint that chunks `chunks` will be read (`need`: how soon): their
    /// stored bytes are handed to the source in one [`ByteSource::will_need`]
    /// call (it may fetch neighbours together). Never blocks; special
    /// chunks and sparse frames are skipped.
    pub fn will_need_chunks(&self, chunks: &[u64], need: Need) {
        if !self.takes_hints() {
            return;
        }
        let ranges: Vec<_> = chunks
            .iter()
            .filter_map(|&c| self.chunk_stored_range(c))
            .collect();
        if !ranges.is_empty() {
            self.frame_source().will_need(&ranges, need);
        }
    }

    /// Hint that blocks `blocks` of chunk `c` (whose layout is `layout`)
    /// will be read (`need`: how soon): their stored bytes exactly, in one call.
    pub fn will_need_blocks(&self, layout: &ChunkLayout, c: u64, blocks: &[u64], need: Need) {
        if !self.takes_hints() || matches!(layout.storage, Storage::Special { .. }) {
            return;
        }
        let Some(chunk) = self.chunk_stored_range(c) else {
            return;
        };
        let ranges: Vec<_> = blocks
            .iter()
            .filter(|&&b| (b as usize) < layout.nblocks())
            .map(|&b| layout.block_source_range(b as usize))
            .filter(|r| !r.is_empty() && chunk.start + r.end <= chunk.end)
            .map(|r| chunk.start + r.start..chunk.start + r.end)
            .collect();
        if !ranges.is_empty() {
            self.frame_source().will_need(&ranges, need);
        }
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

    /// What names the bytes this array reads for a cache that outlives
    /// the process (the disk cache): the source's description and the
    /// version it is trusted in; for produced values (a saved expression)
    /// also the producer's inputs (the recipe is in the source, so its
    /// version covers it). `None` where that would not pin the bytes down:
    /// a sparse frame (its chunk files change on their own), values kept
    /// elsewhere, a producer that cannot name its inputs, a source whose
    /// version cannot change (bytes in memory, taken from who knows which
    /// state of a file), or chunks rewritten by a growth.
    pub fn version_identity(&self) -> Option<String> {
        let produced = match &self.producer {
            Some(producer) => Some(producer.version_identity()?),
            None if self.elsewhere.is_some() => return None,
            None => None,
        };
        let Container::Contiguous(source) = &self.container else {
            return None;
        };
        let trust = self.trusted.lock();
        if !trust.rewritten.is_empty() || matches!(trust.version.tag, VersionTag::Fixed(_)) {
            return None;
        }
        let own = format!("{}\n{:?}", source.describe(), trust.version);
        Some(match produced {
            Some(inputs) => format!("{own}\nproduced from\n{inputs}"),
            None => own,
        })
    }

    /// The source holding the frame (the index file of a sparse frame).
    fn frame_source(&self) -> &Arc<dyn ByteSource> {
        match &self.container {
            Container::Contiguous(source) => source,
            Container::Sparse { index, .. } => index,
        }
    }

    /// Whether the source is still in the version this array trusts, and
    /// chunk `c` still as it was.
    fn confirm_trusted(&self, c: u64) -> PResult<()> {
        let source = self.frame_source();
        let now = source.version()?;
        let trust = self.trusted.lock();
        if now != trust.version {
            return Err(Problem::SourceChanged(format!(
                "{} is no longer the version opened",
                source.describe()
            )));
        }
        if trust.rewritten.contains(&c) {
            return Err(Problem::SourceChanged(format!(
                "{} was rewritten where chunk {c} was",
                source.describe()
            )));
        }
        Ok(())
    }

    /// The source changed: trust its current version if it is this array's
    /// frame grown the way C-Blosc2 grows a frame in place — something
    /// written past the old chunks, the same header length and typesize,
    /// and every old chunk still at its offset (or replaced by one written
    /// past the old chunks, which leaves the old bytes where they were).
    /// Old chunks whose header changed (compared with the layouts in
    /// `known`) or no longer fits the room the chunk had are marked
    /// rewritten: their reads fail, the others go on. Bytes served before
    /// (`seen`) must decode the same from the current state, so a rewrite
    /// that kept every header is caught.
    /// Otherwise a [`Problem::SourceChanged`]. Metalayers may change (a b2nd
    /// array's shape grows); this array keeps presenting the shape it opened.
    pub fn accept_growth(
        &self,
        known: &[(u64, Arc<ChunkLayout>)],
        seen: &[Seen<'_>],
    ) -> PResult<()> {
        let source = self.frame_source();
        let changed = |why: String| {
            Problem::SourceChanged(format!("{} was rewritten: {why}", source.describe()))
        };
        let current = source
            .current()?
            .ok_or_else(|| changed("this source cannot be re-read".into()))?;
        let now = current.opened_version();
        if now == self.trusted.lock().version {
            return Ok(());
        }
        if let Container::Sparse { .. } = self.container {
            // The chunks live in their own files (checked as they are read):
            // a rewritten index moves none of them.
            self.trusted.lock().version = now;
            return Ok(());
        }
        let old = &self.frame;
        let chunks_end = old.header_len + old.cbytes;
        if now.len < chunks_end {
            return Err(changed(format!(
                "it is now {} bytes, its chunks ended at {chunks_end}",
                now.len
            )));
        }
        let new = Frame::read(&*current, false)
            .map_err(|p| changed(format!("its frame cannot be read now ({p})")))?;
        if new.header_len != old.header_len || new.typesize != old.typesize {
            return Err(changed("its header is not the one opened".into()));
        }
        // Something must have been appended: a rewrite in place with the
        // same layout would otherwise pass every check below.
        if new.offsets.len() <= old.offsets.len() && new.cbytes <= old.cbytes {
            return Err(changed("nothing was appended".into()));
        }
        let kept = |(c, old_offset): (usize, &ChunkOffset)| match (old_offset, new.offsets.get(c)) {
            (_, None) => false,
            (was, Some(now)) if was == now => true,
            (ChunkOffset::Stored(_), Some(ChunkOffset::Stored(now))) => *now >= old.cbytes,
            _ => false,
        };
        if !old.offsets.iter().enumerate().all(kept) {
            return Err(changed("its chunks are no longer where they were".into()));
        }
        let rewritten = self.rewritten_chunks(&*current, known)?;
        if let Some((c, b)) = self.first_changed_block(&*current, known, &rewritten, seen) {
            return Err(changed(format!(
                "block {b} of chunk {c} now holds other values"
            )));
        }
        if !rewritten.is_empty() {
            log::warn!(
                "{}: chunks {rewritten:?} were rewritten in place; open files get errors for them",
                source.describe()
            );
        }
        log::info!(
            "{} grew to {} chunks; open files keep reading their {} chunks",
            source.describe(),
            new.offsets.len(),
            old.offsets.len()
        );
        *self.trusted.lock() = Trust {
            version: now,
            rewritten,
        };
        Ok(())
    }

    /// The first block of `seen` (of chunks not `rewritten`) whose bytes
    /// decode differently from `current`, or that cannot be decoded alone.
    fn first_changed_block(
        &self,
        current: &dyn ByteSource,
        known: &[(u64, Arc<ChunkLayout>)],
        rewritten: &BTreeSet<u64>,
        seen: &[Seen<'_>],
    ) -> Option<(u64, u64)> {
        let context = BlockContext {
            block0: None,
            blockshape: self.blockshape(),
            fork: None,
        };
        for &Seen {
            chunk: c,
            block: b,
            offset,
            bytes,
        } in seen
        {
            let (Some(ChunkOffset::Stored(pos)), Some((_, layout))) = (
                self.frame.offsets.get(c as usize),
                known.iter().find(|(k, _)| *k == c),
            ) else {
                continue;
            };
            if rewritten.contains(&c)
                || (b > 0 && layout.needs_block0())
                || b >= layout.nblocks() as u64
                || matches!(layout.storage, Storage::Special { .. })
            {
                continue;
            }
            let mut out = vec![0u8; layout.block_range(b as usize).len()];
            let decoded_now = read_and_decode(
                current,
                self.frame.header_len + pos,
                layout,
                b as usize,
                || Ok(()),
                |stored| layout.decode_block(b as usize, stored, &context, &mut out),
            );
            if decoded_now.is_err()
                || out.get(offset..offset.saturating_add(bytes.len())) != Some(bytes)
            {
                return Some((c, b));
            }
        }
        None
    }

    /// Old chunks whose stored header in `current` differs from the one
    /// read before (`known`) or claims more room than the chunk had.
    fn rewritten_chunks(
        &self,
        current: &dyn ByteSource,
        known: &[(u64, Arc<ChunkLayout>)],
    ) -> PResult<BTreeSet<u64>> {
        let old = &self.frame;
        let mut stored: Vec<(u64, u64)> = old
            .offsets
            .iter()
            .enumerate()
            .filter_map(|(c, offset)| match offset {
                ChunkOffset::Stored(pos) => Some((*pos, c as u64)),
                ChunkOffset::Special(_) => None,
            })
            .collect();
        stored.sort_unstable();
        let ranges: Vec<_> = stored
            .iter()
            .map(|&(pos, _)| {
                let start = old.header_len + pos;
                start..(start + EXTENDED_HEADER_LEN as u64).min(current.len())
            })
            .collect();
        let headers = current.read_ranges(&ranges)?;
        let mut rewritten = BTreeSet::new();
        for (i, (&(pos, c), bytes)) in stored.iter().zip(&headers).enumerate() {
            let next = stored[i + 1..]
                .iter()
                .map(|&(p, _)| p)
                .find(|&p| p > pos)
                .unwrap_or(old.cbytes);
            let room = next.saturating_sub(pos);
            let as_before = match ChunkHeader::parse(bytes) {
                Ok(header) => {
                    let same_as_known = known
                        .iter()
                        .find(|(k, _)| *k == c)
                        .is_none_or(|(_, layout)| layout.header == header);
                    same_as_known && header.cbytes as u64 <= room
                }
                Err(_) => false,
            };
            if !as_before {
                rewritten.insert(c);
            }
        }
        Ok(rewritten)
    }
}

/// Read the stored bytes of block `b` of the chunk at `start` of `source`,
/// run `after_read` (the version check), then decode them into `out`.
fn read_and_decode<T>(
    source: &dyn ByteSource,
    start: u64,
    layout: &ChunkLayout,
    b: usize,
    after_read: impl FnOnce() -> PResult<()>,
    decode: impl FnOnce(&[u8]) -> PResult<T>,
) -> PResult<T> {
    let range = layout.block_source_range(b);
    STORED.with(|buf| {
        let mut buf = buf.borrow_mut();
        buf.resize(super::source::range_len(&range)?, 0);
        source.read_needed(start + range.start, &mut buf)?;
        after_read()?;
        decode(&buf)
    })
}

thread_local! {
    /// Per-thread buffer for a block's stored bytes, reused across reads.
    static STORED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}
