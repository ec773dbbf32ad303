//! An opened Blosc2 array: frame, metadata, geometry and block decoding.
//!
//! This is the format layer's front door. It answers "how many bytes does the
//! C-order array have", "which pieces serve bytes [a, b)", and "decode block
//! b of chunk c" — and leaves caching to its callers through [`BlockSource`].

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value as Json};

use super::chunk::{ChunkLayout, Storage};
use super::chunk_header::{filter_name, registered_codec_name, Special};
use super::error::{Error, PResult, Problem};
use super::frame::{ChunkOffset, Frame};
use super::geometry::{Geometry, Piece, PieceSource};
use super::meta::{Flavor, NdMeta};
use super::msgpack;
use super::source::{FileRegion, SourceFile};

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Name of the index file inside a sparse-frame directory.
pub const SPARSE_INDEX: &str = "chunks.b2frame";

/// Chunk layouts (header + block positions, a few hundred bytes each) kept
/// per array.
const LAYOUT_CACHE: usize = 4096;

/// Blocks one `fill` call keeps at hand (enough for a row crossing 64 chunks).
const AT_HAND: usize = 64;

/// Largest single decoded block accepted (C-Blosc2's own maximum block size).
pub const MAX_BLOCK_BYTES: usize = super::chunk_header::MAX_BLOCKSIZE;

/// Where the frame's bytes live.
#[derive(Debug)]
enum Container {
    Contiguous(SourceFile),
    Sparse { dir: PathBuf, index: SourceFile },
}

/// How the array's bytes map onto chunks.
#[derive(Debug, Clone)]
pub enum Shape {
    /// b2nd or caterva: an N-d array in chunks of blocks.
    Nd { geometry: Geometry, meta: NdMeta },
    /// A plain frame: its chunks' bytes one after the other.
    Plain { chunk_starts: Vec<u64> },
}

/// Gives decoded blocks to the read path; callers choose the caching.
pub trait BlockSource {
    fn block(&self, array: &Array, chunk: u64, block: u64) -> PResult<Arc<Vec<u8>>>;
}

/// A block source without a cache (decodes on every call, keeping block 0
/// for DELTA chunks only as long as one call needs it).
pub struct Uncached;

impl BlockSource for Uncached {
    fn block(&self, array: &Array, chunk: u64, block: u64) -> PResult<Arc<Vec<u8>>> {
        Ok(Arc::new(array.decode_block_via(self, chunk, block)?))
    }
}

/// An opened array.
#[derive(Debug)]
pub struct Array {
    /// Unique per opening: cached blocks are filed under it, so two versions
    /// of a changed file never mix.
    pub id: u64,
    pub path: PathBuf,
    container: Container,
    pub frame: Frame,
    pub shape: Shape,
    layouts: Mutex<lru::LruCache<u64, Arc<ChunkLayout>>>,
}

impl Array {
    /// Whether `path` is a sparse-frame directory.
    pub fn is_sparse_dir(path: &Path) -> bool {
        path.is_dir() && path.join(SPARSE_INDEX).is_file()
    }

    /// Open a contiguous frame file or a sparse-frame directory.
    pub fn open(path: &Path) -> Result<Array, Error> {
        Self::open_inner(path).map_err(|p| Error::new(path, p))
    }

    /// Open a contiguous frame held in memory (`name` is used in messages).
    pub fn from_bytes(name: &Path, bytes: Vec<u8>) -> Result<Array, Error> {
        Self::from_container(name, Container::Contiguous(SourceFile::from_bytes(name, bytes))).map_err(|p| Error::new(name, p))
    }

    fn open_inner(path: &Path) -> PResult<Array> {
        let meta = std::fs::metadata(path)?;
        let container = if meta.is_dir() {
            let index_path = path.join(SPARSE_INDEX);
            if !index_path.is_file() {
                return Err(Problem::NotBlosc2(format!("directory without {SPARSE_INDEX}")));
            }
            Container::Sparse { dir: path.to_path_buf(), index: SourceFile::open(&index_path)? }
        } else {
            Container::Contiguous(SourceFile::open(path)?)
        };
        Self::from_container(path, container)
    }

    fn from_container(path: &Path, container: Container) -> PResult<Array> {
        let frame = match &container {
            Container::Contiguous(file) => Frame::read(file, false)?,
            Container::Sparse { index, .. } => Frame::read(index, true)?,
        };
        let nd = if let Some(bytes) = frame.metalayer("b2nd") {
            Some(NdMeta::parse(bytes, Flavor::B2nd)?)
        } else if let Some(bytes) = frame.metalayer("caterva") {
            Some(NdMeta::parse(bytes, Flavor::Caterva)?)
        } else {
            None
        };
        let cache_size = NonZeroUsize::new(LAYOUT_CACHE).expect("non-zero");
        let mut array = Array {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            path: path.to_path_buf(),
            container,
            frame,
            shape: Shape::Plain { chunk_starts: Vec::new() },
            layouts: Mutex::new(lru::LruCache::new(cache_size)),
        };
        array.shape = match nd {
            Some(meta) => {
                let geometry = Geometry::new(&meta.shape, &meta.chunkshape, &meta.blockshape, array.frame.typesize as u64)?;
                let nchunks = array.frame.nchunks() as u64;
                if geometry.nchunks() != nchunks && !(geometry.nbytes() == 0 && nchunks == 0) {
                    return Err(Problem::corrupt(
                        "b2nd metalayer",
                        format!("shape {:?} / chunkshape {:?} imply {} chunks, the frame holds {nchunks}", meta.shape, meta.chunkshape, geometry.nchunks()),
                    ));
                }
                if nchunks > 0 && array.frame.chunksize != 0 && array.frame.chunksize != geometry.chunk_nbytes() {
                    return Err(Problem::corrupt(
                        "b2nd metalayer",
                        format!("chunks of {} bytes, the frame says {}", geometry.chunk_nbytes(), array.frame.chunksize),
                    ));
                }
                Shape::Nd { geometry, meta }
            }
            None => Shape::Plain { chunk_starts: array.plain_chunk_starts()? },
        };
        Ok(array)
    }

    /// Start of each chunk in the 1-D stream of a plain frame, plus the total.
    fn plain_chunk_starts(&self) -> PResult<Vec<u64>> {
        let n = self.frame.nchunks() as u64;
        let total = self.frame.nbytes;
        let mut starts = Vec::with_capacity(n as usize + 1);
        if self.frame.chunksize > 0 {
            for c in 0..=n {
                starts.push((c * self.frame.chunksize).min(total));
            }
        } else {
            let mut pos = 0u64;
            starts.push(0);
            for c in 0..n {
                pos += self.chunk_layout(c)?.nbytes() as u64;
                starts.push(pos);
            }
        }
        if starts.last().copied().unwrap_or(0) != total {
            return Err(Problem::corrupt("frame", format!("chunks add up to {} bytes, the header says {total}", starts.last().copied().unwrap_or(0))));
        }
        Ok(starts)
    }

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
                    Some(self.frame.chunksize.min(self.frame.nbytes.saturating_sub(start)))
                } else {
                    None
                }
            }
        }
    }

    /// The layout of chunk `c` (header, block positions), cached per array.
    pub fn chunk_layout(&self, c: u64) -> PResult<Arc<ChunkLayout>> {
        if let Ok(mut cache) = self.layouts.lock() {
            if let Some(layout) = cache.get(&c) {
                return Ok(layout.clone());
            }
        }
        let layout = Arc::new(self.read_chunk_layout(c).map_err(|p| p.in_chunk(c))?);
        if let Ok(mut cache) = self.layouts.lock() {
            cache.put(c, layout.clone());
        }
        Ok(layout)
    }

    fn read_chunk_layout(&self, c: u64) -> PResult<ChunkLayout> {
        let offset = *self
            .frame
            .offsets
            .get(c as usize)
            .ok_or_else(|| Problem::OutOfRange(format!("chunk {c} of {}", self.nchunks())))?;
        let layout = match offset {
            ChunkOffset::Special(kind) => {
                let nbytes = self.expected_chunk_nbytes(c).unwrap_or(self.frame.chunksize) as usize;
                // Blocks must match the geometry's; a plain frame's special
                // chunk is cut in blocks of at least 1 MiB whatever the header
                // says, so a tiny declared blocksize cannot explode the work.
                let blocksize = match &self.shape {
                    Shape::Nd { geometry, .. } => geometry.block_nbytes() as usize,
                    Shape::Plain { .. } => (self.frame.blocksize.max(0) as usize).max(1 << 20),
                };
                return Ok(ChunkLayout::special(kind, nbytes, blocksize, self.frame.typesize));
            }
            ChunkOffset::Stored(pos) => match &self.container {
                Container::Contiguous(file) => {
                    let start = self.frame.header_len + pos;
                    let limit = (self.frame.header_len + self.frame.cbytes).min(self.frame.frame_len);
                    let region = FileRegion { file, start, available: limit.saturating_sub(start) };
                    ChunkLayout::read(&region)?
                }
                Container::Sparse { dir, .. } => {
                    let file = SourceFile::open(&dir.join(format!("{pos:08X}.chunk")))
                        .map_err(|p| Problem::corrupt("sparse frame", format!("chunk file {pos:08X}.chunk: {p}")))?;
                    let region = FileRegion { file: &file, start: 0, available: file.len() };
                    ChunkLayout::read(&region)?
                }
            },
        };
        if let Some(expected) = self.expected_chunk_nbytes(c) {
            if layout.nbytes() as u64 != expected {
                return Err(Problem::corrupt("chunk", format!("decodes to {} bytes, the frame expects {expected}", layout.nbytes())));
            }
        }
        if let Shape::Nd { geometry, .. } = &self.shape {
            let h = &layout.header;
            if layout.nbytes() > 0 && h.special.is_none() && !h.is_vlblocks() && h.blocksize as u64 != geometry.block_nbytes().min(layout.nbytes() as u64) {
                return Err(Problem::corrupt(
                    "chunk",
                    format!("blocks of {} bytes, the blockshape implies {}", h.blocksize, geometry.block_nbytes()),
                ));
            }
        }
        for b in 0..layout.nblocks() {
            if layout.block_range(b).len() > MAX_BLOCK_BYTES {
                return Err(Problem::Limit(format!("block {b} is larger than {MAX_BLOCK_BYTES} bytes")));
            }
        }
        Ok(layout)
    }

    /// Read the layouts of the first chunks ahead of need (up to the layout
    /// cache's size), so that a later random read costs one read of the
    /// source (the block) instead of two. Errors are left for the reads.
    pub fn preload_layouts(&self) {
        for c in 0..self.nchunks().min(LAYOUT_CACHE as u64) {
            if self.index_special(c).is_none() {
                let _ = self.chunk_layout(c);
            }
        }
    }

    /// Whether block b > 0 of chunk `c` needs its block 0 decoded first.
    pub fn needs_block0(&self, c: u64) -> PResult<bool> {
        Ok(self.chunk_layout(c)?.needs_block0())
    }

    /// Decode block `b` of chunk `c`, taking block 0 (when the DELTA filter
    /// needs it) from `blocks`, so a caching source decodes it only once.
    pub fn decode_block_via(&self, blocks: &dyn BlockSource, c: u64, b: u64) -> PResult<Vec<u8>> {
        let block0 = if b > 0 && self.needs_block0(c)? { Some(blocks.block(self, c, 0)?) } else { None };
        self.decode_block(c, b, block0.as_deref().map(|v| v.as_slice()))
    }

    /// Decode block `b` of chunk `c`. `block0` must be given when
    /// [`Self::needs_block0`] and b > 0.
    pub fn decode_block(&self, c: u64, b: u64, block0: Option<&[u8]>) -> PResult<Vec<u8>> {
        self.decode_block_inner(c, b, block0).map_err(|p| p.in_chunk(c))
    }

    fn decode_block_inner(&self, c: u64, b: u64, block0: Option<&[u8]>) -> PResult<Vec<u8>> {
        let layout = self.chunk_layout(c)?;
        let b = b as usize;
        if b >= layout.nblocks() {
            return Err(Problem::OutOfRange(format!("block {b} of {}", layout.nblocks())));
        }
        let range = layout.block_source_range(b);
        let len = (range.end - range.start) as usize;
        let source = match &layout.storage {
            Storage::Special { .. } => Vec::new(),
            _ => match (&self.container, self.frame.offsets[c as usize]) {
                (Container::Contiguous(file), ChunkOffset::Stored(pos)) => {
                    let bytes = file.read_at(self.frame.header_len + pos + range.start, len, "block")?;
                    if !file.unchanged() {
                        return Err(Problem::Io("the source file changed since it was opened".into()));
                    }
                    bytes
                }
                (Container::Sparse { dir, .. }, ChunkOffset::Stored(pos)) => {
                    let file = SourceFile::open(&dir.join(format!("{pos:08X}.chunk")))?;
                    file.read_at(range.start, len, "block")?
                }
                _ => Vec::new(),
            },
        };
        let mut out = vec![0u8; layout.block_range(b).len()];
        layout.decode_block(b, &source, block0, &mut out)?;
        Ok(out)
    }

    /// Pieces serving bytes `[start, start + len)` of `data`.
    pub fn data_pieces(&self, start: u64, len: u64) -> PResult<Vec<Piece>> {
        match &self.shape {
            Shape::Nd { geometry, .. } => Ok(geometry.pieces(start, len)),
            Shape::Plain { chunk_starts } => {
                let end = start.saturating_add(len).min(self.data_len());
                let mut pieces = Vec::new();
                let mut pos = start;
                while pos < end {
                    let c = chunk_starts.partition_point(|&s| s <= pos) - 1;
                    let in_chunk = pos - chunk_starts[c];
                    let chunk_end = chunk_starts[c + 1].min(end);
                    let layout = self.chunk_layout(c as u64)?;
                    let mut offset = in_chunk;
                    while chunk_starts[c] + offset < chunk_end {
                        let b = layout.block_at(offset as usize);
                        let r = layout.block_range(b);
                        let take = (r.end as u64 - offset).min(chunk_end - chunk_starts[c] - offset);
                        if take == 0 {
                            return Err(Problem::corrupt("chunk", format!("chunk {c}: block layout does not cover offset {offset}")));
                        }
                        pieces.push(Piece {
                            out_offset: chunk_starts[c] + offset - start,
                            len: take,
                            source: PieceSource::Block { chunk: c as u64, block: b as u64, offset: offset - r.start as u64 },
                        });
                        offset += take;
                    }
                    pos = chunk_end;
                }
                Ok(pieces)
            }
        }
    }

    /// Size of the `chunks/` file of chunk `c`.
    pub fn chunk_file_len(&self, c: u64) -> PResult<u64> {
        match &self.shape {
            Shape::Nd { geometry, .. } => Ok(geometry.chunk_view_nbytes()),
            Shape::Plain { chunk_starts } => Ok(chunk_starts[c as usize + 1] - chunk_starts[c as usize]),
        }
    }

    /// Pieces serving bytes of chunk `c`'s file in `chunks/`.
    pub fn chunk_file_pieces(&self, c: u64, start: u64, len: u64) -> PResult<Vec<Piece>> {
        match &self.shape {
            Shape::Nd { geometry, .. } => Ok(geometry.chunk_view_pieces(c, start, len)),
            Shape::Plain { chunk_starts } => {
                let base = chunk_starts[c as usize];
                let size = chunk_starts[c as usize + 1] - base;
                let start = start.min(size);
                let len = len.min(size - start);
                Ok(self.data_pieces(base + start, len)?)
            }
        }
    }

    /// Fill `out` from `pieces` using `blocks` to get decoded blocks.
    /// Blocks used by this call are kept at hand, so a request whose rows
    /// cross many chunks asks the source once per block.
    pub fn fill(&self, pieces: &[Piece], out: &mut [u8], blocks: &dyn BlockSource) -> PResult<()> {
        let mut at_hand: Vec<((u64, u64), Arc<Vec<u8>>)> = Vec::new();
        for p in pieces {
            let dst_start = p.out_offset as usize;
            let dst = out
                .get_mut(dst_start..dst_start + p.len as usize)
                .ok_or_else(|| Problem::OutOfRange("piece outside the output".into()))?;
            match p.source {
                PieceSource::Zeros => dst.fill(0),
                PieceSource::Block { chunk, block, offset } => {
                    let key = (chunk, block);
                    let data = match at_hand.iter().rev().find(|(k, _)| *k == key) {
                        Some((_, data)) => data.clone(),
                        None => {
                            let data = blocks.block(self, chunk, block)?;
                            if at_hand.len() == AT_HAND {
                                at_hand.remove(0);
                            }
                            at_hand.push((key, data.clone()));
                            data
                        }
                    };
                    let src = data
                        .get(offset as usize..offset as usize + p.len as usize)
                        .ok_or_else(|| Problem::corrupt("chunk", format!("chunk {chunk} block {block} is shorter than its shape")))?;
                    dst.copy_from_slice(src);
                }
            }
        }
        Ok(())
    }

    /// Read `out.len()` bytes of `data` at `start` (without caching).
    pub fn read_data(&self, start: u64, out: &mut [u8]) -> PResult<()> {
        let pieces = self.data_pieces(start, out.len() as u64)?;
        self.fill(&pieces, out, &Uncached)
    }

    /// Name of the metadata format: "b2nd", "caterva" or "frame".
    pub fn format_name(&self) -> &'static str {
        match &self.shape {
            Shape::Nd { meta, .. } if meta.flavor == Flavor::B2nd => "b2nd",
            Shape::Nd { .. } => "caterva",
            Shape::Plain { .. } => "frame",
        }
    }

    /// The codec named by the frame header.
    pub fn codec_name(&self) -> String {
        match self.frame.codec_code {
            0 => "blosclz".into(),
            1 => "lz4".into(),
            2 => "lz4hc".into(),
            3 => "snappy".into(),
            4 => "zlib".into(),
            5 => "zstd".into(),
            6 => registered_codec_name(self.frame.udcodec),
            other => format!("unknown codec {other}"),
        }
    }

    /// The `meta.json` document.
    pub fn meta_json(&self) -> Json {
        let f = &self.frame;
        let (shape, chunkshape, blockshape, dtype) = match &self.shape {
            Shape::Nd { meta, .. } => (json!(meta.shape), json!(meta.chunkshape), json!(meta.blockshape), json!(meta.dtype)),
            Shape::Plain { .. } => (json!([self.data_len() / f.typesize as u64]), Json::Null, Json::Null, Json::Null),
        };
        let filters: Vec<Json> = f
            .filters
            .iter()
            .zip(&f.filters_meta)
            .filter(|(&id, _)| id != 0)
            .map(|(&id, &meta)| json!({ "id": id, "name": filter_name(id), "meta": meta }))
            .collect();
        let mut metalayers = Map::new();
        for (name, bytes) in &f.metalayers {
            let value = if bytes.len() > super::frame::MAX_VLMETA_BYTES {
                json!({ "bytes": bytes.len(), "note": "too large to show" })
            } else {
                msgpack::parse(bytes, "metalayer").map(|v| msgpack::to_json(&v)).unwrap_or_else(|_| json!({ "base64": msgpack::base64(bytes) }))
            };
            metalayers.insert(name.clone(), value);
        }
        let vlmeta: Map<String, Json> = f.vlmeta.iter().cloned().collect();
        let mut doc = json!({
            "format": self.format_name(),
            "storage": if f.sparse { "sparse" } else { "contiguous" },
            "shape": shape,
            "chunkshape": chunkshape,
            "blockshape": blockshape,
            "dtype": dtype,
            "itemsize": f.typesize,
            "nchunks": self.nchunks(),
            "nbytes": self.data_len(),
            "cbytes": f.cbytes,
            "codec": self.codec_name(),
            "clevel": f.clevel,
            "filters": filters,
            "splitmode": match f.splitmode { 1 => "always", 2 => "never", 3 => "auto", _ => "forward_compat" },
            "use_dict": f.use_dict,
            "chunksize": f.chunksize,
            "blocksize": f.blocksize,
            "frame_version": f.version,
            "metalayers": metalayers,
            "vlmeta": vlmeta,
        });
        if let (Shape::Nd { meta, .. }, Some(obj)) = (&self.shape, doc.as_object_mut()) {
            if let Some(declared) = meta.dtype.as_deref().and_then(simple_dtype_itemsize) {
                obj.insert("dtype_itemsize".into(), json!(declared));
                if declared != f.typesize as u64 {
                    obj.insert(
                        "note".into(),
                        json!(format!("declared dtype {} has items of {declared} bytes but the frame's typesize is {}; the data layout follows the typesize", meta.dtype.as_deref().unwrap_or(""), f.typesize)),
                    );
                }
            }
        }
        doc
    }

    /// The special kind of chunk `c` when the offsets index alone tells it.
    pub fn index_special(&self, c: u64) -> Option<Special> {
        match self.frame.offsets.get(c as usize) {
            Some(ChunkOffset::Special(kind)) => Some(*kind),
            _ => None,
        }
    }
}

/// Item size of a simple NumPy dtype string such as `<f8`, `|S7`, `<U5`.
pub fn simple_dtype_itemsize(dtype: &str) -> Option<u64> {
    let body = dtype.strip_prefix(['<', '>', '|', '=']).unwrap_or(dtype);
    let kind = body.chars().next()?;
    let count: u64 = body[kind.len_utf8()..].parse().ok()?;
    match kind {
        'b' | 'i' | 'u' | 'f' | 'c' | 'S' | 'V' | 'm' | 'M' => Some(count),
        'U' => count.checked_mul(4),
        '?' => Some(1),
        _ => None,
    }
}

impl Array {
    /// All decoded bytes of chunk `c` as stored (blocks in order, padding included).
    pub fn decode_chunk(&self, c: u64) -> PResult<Vec<u8>> {
        let layout = self.chunk_layout(c)?;
        let mut out = Vec::with_capacity(layout.nbytes());
        let block0 = if layout.nblocks() > 1 && layout.needs_block0() { Some(self.decode_block(c, 0, None)?) } else { None };
        for b in 0..layout.nblocks() as u64 {
            match (&block0, b) {
                (Some(first), 0) => out.extend_from_slice(first),
                _ => out.extend_from_slice(&self.decode_block(c, b, block0.as_deref())?),
            }
        }
        Ok(out)
    }
}
