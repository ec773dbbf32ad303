//! Datasets a Caterva2 server does not keep as a Blosc2 frame (HDF5
//! leaves, proxies): `/api/info` gives their shape, grid and dtype, and
//! each chunk is read as the frame `GET /api/fetch/PATH?slice_=` builds of
//! the chunk's region (clipped to the array). That frame is decoded here,
//! once per chunk, single-flight; the most recent decoded chunks are kept
//! for the blocks that follow (the block cache above keeps the blocks).
//!
//! A built region carries no validator, so after each one the dataset's
//! ETag is asked again (`/api/info`): a region read while the file was
//! being replaced is refused as changed, never served.

use parking_lot::Mutex;
use std::num::NonZeroUsize;
use std::sync::{Arc, OnceLock};

use object_store::path::Path;

use crate::format::source::{ByteSource, Version, VersionTag};
use crate::format::{grid_coords, Array, BlockProducer, Geometry, PResult, Problem, Shape};
use crate::source::memory::MemorySource;
use crate::source::remote::error::RemoteError;
use crate::source::remote::store::Connection;

/// Decoded chunks kept at most, in bytes (at least two chunks are kept);
/// reported as [`BlockProducer::held_bytes`], so the metadata cache that
/// keeps the opened array counts them (the block cache keeps the blocks).
const KEPT_BYTES: u64 = 16 << 20;

type Cell = Arc<OnceLock<Result<Arc<Vec<u8>>, RemoteError>>>;

/// The blocks of a dataset served as regions.
#[derive(Debug)]
pub struct SlicedBlocks {
    conn: Arc<Connection>,
    path: Path,
    shown: String,
    geometry: Geometry,
    /// The dtype the dataset is described with (each region must say the same).
    dtype: String,
    /// The ETag the dataset had when opened (`None`: the server gives none).
    etag: Option<String>,
    chunks: Mutex<lru::LruCache<u64, Cell>>,
}

impl SlicedBlocks {
    pub(crate) fn new(
        conn: Arc<Connection>,
        path: Path,
        shown: String,
        geometry: Geometry,
        dtype: String,
        etag: Option<String>,
    ) -> SlicedBlocks {
        let keep = (KEPT_BYTES / geometry.chunk_nbytes().max(1)).max(2) as usize;
        let keep = NonZeroUsize::new(keep).unwrap_or(NonZeroUsize::MIN);
        SlicedBlocks {
            conn,
            path,
            shown,
            geometry,
            dtype,
            etag,
            chunks: Mutex::new(lru::LruCache::new(keep)),
        }
    }

    /// Origin and extent (clipped to the array) of chunk `c`.
    fn chunk_box(&self, c: u64) -> (Vec<u64>, Vec<u64>) {
        let g = &self.geometry;
        let coords = g.chunk_coords(c);
        let origin: Vec<u64> = coords
            .iter()
            .zip(&g.chunkshape)
            .map(|(i, n)| i * n)
            .collect();
        let extent = origin
            .iter()
            .zip(&g.chunkshape)
            .zip(&g.shape)
            .map(|((o, n), s)| (*n).min(s.saturating_sub(*o)))
            .collect();
        (origin, extent)
    }

    /// The `slice_` text of a box: `a:b,c:d` (empty for a 0-d array).
    fn slice_text(origin: &[u64], extent: &[u64]) -> String {
        origin
            .iter()
            .zip(extent)
            .map(|(o, e)| format!("{o}:{}", o + e))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Fetch and decode chunk `c`'s region: its items in C order over the
    /// clipped extent.
    fn fetch_chunk(&self, c: u64) -> Result<Arc<Vec<u8>>, RemoteError> {
        let (origin, extent) = self.chunk_box(c);
        let items: u64 = extent.iter().product();
        let nbytes = items * self.geometry.itemsize;
        let slice = (!extent.is_empty()).then(|| Self::slice_text(&origin, &extent));
        let limit = nbytes + nbytes / 8 + (1 << 20);
        let body = self
            .conn
            .c2_slice(&self.path, &self.shown, slice.as_deref(), limit)?;
        let name = std::path::PathBuf::from(format!(
            "{} (region {})",
            self.shown,
            slice.as_deref().unwrap_or("()")
        ));
        let bad = |detail: String| RemoteError::Request {
            url: self.shown.clone(),
            detail,
        };
        let region = Array::from_source(
            &name,
            Arc::new(MemorySource::new(name.display().to_string(), body.to_vec())),
        )
        .map_err(|e| {
            bad(format!(
                "the region {} is not a frame we read: {e}",
                slice.as_deref().unwrap_or("()")
            ))
        })?;
        let shape_ok = match region.geometry() {
            Some(g) => g.shape == extent && g.itemsize == self.geometry.itemsize,
            None => extent.is_empty() && region.data_len() == nbytes,
        };
        let dtype = match region.shape() {
            Shape::Nd { meta, .. } => meta.dtype.clone(),
            Shape::Plain { .. } => None,
        };
        // Opaque bytes (`|V8`) may come back as a one-field record of the
        // same size: there is no reading of them to get wrong.
        let opaque = self.dtype.starts_with("|V")
            && region
                .geometry()
                .is_some_and(|g| g.itemsize == self.geometry.itemsize);
        if dtype.as_ref().is_some_and(|d| *d != self.dtype) && !opaque {
            return Err(bad(format!(
                "the region {} came back as dtype {}, the dataset is described as {}",
                slice.as_deref().unwrap_or("()"),
                dtype.unwrap_or_default(),
                self.dtype
            )));
        }
        if !shape_ok || region.data_len() != nbytes {
            return Err(bad(format!(
                "the region {} came back as {} bytes of another shape",
                slice.as_deref().unwrap_or("()"),
                region.data_len()
            )));
        }
        let bytes = region.read_all().map_err(|p| {
            bad(format!(
                "the region {}: {p}",
                slice.as_deref().unwrap_or("()")
            ))
        })?;
        if let Some(opened) = &self.etag {
            let now = self.conn.c2_info(&self.path, &self.shown)?.etag;
            if now.as_ref() != Some(opened) {
                return Err(RemoteError::Changed {
                    url: self.shown.clone(),
                    detail: format!(
                        "ETag {opened} is now {}",
                        now.as_deref().unwrap_or("absent")
                    ),
                });
            }
        }
        Ok(Arc::new(bytes))
    }

    /// Chunk `c`'s region, fetched once however many readers ask at once.
    fn chunk(&self, c: u64) -> Result<Arc<Vec<u8>>, RemoteError> {
        let cell: Cell = self.chunks.lock().get_or_insert(c, Cell::default).clone();
        let answer = cell.get_or_init(|| self.fetch_chunk(c)).clone();
        if answer.is_err() {
            let mut chunks = self.chunks.lock();
            if chunks.peek(&c).is_some_and(|kept| Arc::ptr_eq(kept, &cell)) {
                chunks.pop(&c);
            }
        }
        answer
    }
}

impl BlockProducer for SlicedBlocks {
    /// The most the kept regions may take.
    fn held_bytes(&self) -> usize {
        let kept = self.chunks.lock().cap().get() as u64;
        usize::try_from(kept.saturating_mul(self.geometry.chunk_nbytes())).unwrap_or(usize::MAX)
    }

    fn produce_block(&self, chunk: u64, block: u64, out: &mut [u8]) -> PResult<()> {
        let g = &self.geometry;
        if out.len() as u64 != g.block_nbytes() {
            return Err(Problem::OutOfRange(format!(
                "a block of {} bytes, blocks hold {}",
                out.len(),
                g.block_nbytes()
            )));
        }
        let region = self.chunk(chunk)?;
        let (origin, extent) = self.chunk_box(chunk);
        let start = g.block_origin(chunk, block);
        out.fill(0);
        copy_box(
            &region,
            &extent,
            &start
                .iter()
                .zip(&origin)
                .map(|(s, o)| s - o)
                .collect::<Vec<_>>(),
            &g.blockshape,
            g.itemsize as usize,
            out,
        );
        Ok(())
    }
}

/// Copy into `out` (a box of `shape` items, C order, of `itemsize` bytes
/// each, starting at `at` in the region) the items of `region` (C order
/// over `extent`) that the box covers; the rest of `out` is left alone.
fn copy_box(
    region: &[u8],
    extent: &[u64],
    at: &[u64],
    shape: &[u64],
    itemsize: usize,
    out: &mut [u8],
) {
    let n = shape.len();
    if n == 0 {
        let len = itemsize.min(region.len()).min(out.len());
        out[..len].copy_from_slice(&region[..len]);
        return;
    }
    let last = n - 1;
    let run = shape[last].min(extent[last].saturating_sub(at[last])) as usize * itemsize;
    if run == 0 {
        return;
    }
    let rows: u64 = shape[..last].iter().product();
    for r in 0..rows {
        let coords = grid_coords(r, &shape[..last]);
        let mut src = 0u64;
        let mut inside = true;
        for d in 0..last {
            let x = at[d] + coords[d];
            if x >= extent[d] {
                inside = false;
                break;
            }
            src = src * extent[d] + x;
        }
        if !inside {
            continue;
        }
        let src = ((src * extent[last] + at[last]) as usize) * itemsize;
        let dst = (r as usize) * shape[last] as usize * itemsize;
        if let (Some(from), Some(to)) = (region.get(src..src + run), out.get_mut(dst..dst + run)) {
            to.copy_from_slice(from);
        }
    }
}

/// Where a served dataset's values come from, as the array's source: no
/// bytes of its own, waits on the network, versioned by the ETag.
#[derive(Debug)]
pub struct ServedSource {
    shown: String,
    version: Version,
}

impl ServedSource {
    pub(crate) fn new(shown: String, etag: Option<&str>) -> ServedSource {
        let tag =
            VersionTag::Token(etag.map_or_else(|| "no etag".to_string(), |e| format!("etag {e}")));
        ServedSource {
            shown,
            version: Version { len: 0, tag },
        }
    }
}

impl ByteSource for ServedSource {
    fn len(&self) -> u64 {
        0
    }

    fn may_wait(&self) -> bool {
        true
    }

    fn opened_version(&self) -> Version {
        self.version.clone()
    }

    fn version(&self) -> PResult<Version> {
        Ok(self.version.clone())
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> PResult<()> {
        Err(Problem::truncated(
            "read",
            offset,
            offset + buf.len() as u64,
            0,
        ))
    }

    fn describe(&self) -> String {
        self.shown.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3x5 region of 2-byte items read into 2x4 blocks at the edge.
    #[test]
    fn boxes_copy_the_items_inside_the_region_only() {
        let region: Vec<u8> = (0..30).collect();
        let mut out = vec![0xffu8; 16];
        copy_box(&region, &[3, 5], &[2, 4], &[2, 4], 2, &mut out);
        assert_eq!(out[..2], [28, 29], "item (2,4)");
        assert!(
            out[2..].iter().all(|&b| b == 0xff),
            "outside the region: untouched"
        );
        let mut inner = vec![0u8; 16];
        copy_box(&region, &[3, 5], &[1, 1], &[2, 4], 2, &mut inner);
        assert_eq!(
            inner,
            [12, 13, 14, 15, 16, 17, 18, 19, 22, 23, 24, 25, 26, 27, 28, 29]
        );
        let mut scalar = vec![0u8; 8];
        copy_box(&[1, 2, 3, 4, 5, 6, 7, 8], &[], &[], &[], 8, &mut scalar);
        assert_eq!(scalar, [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(SlicedBlocks::slice_text(&[0, 11], &[7, 11]), "0:7,11:22");
    }
}
