//! Datasets a Caterva2 server does not keep as a Blosc2 frame (HDF5
//! leaves, proxies): `/api/info` gives their shape, grid and dtype, and
//! each chunk is read as the frames `GET /api/fetch/PATH?slice_=` builds of
//! its regions (clipped to the array): the whole chunk in one request when
//! its bytes fit a region, else boxes of its blocks ([`split`](super::split)).
//! Each region is decoded here, once, single-flight; the most recent are
//! kept for the blocks that follow (the block cache above keeps the blocks).
//!
//! A built region carries no validator, so the dataset's ETag is asked
//! again (`/api/info`) at most once per attribute TTL ([`recheck`](super::recheck)):
//! a region that arrives later than that after the last answer waits for a
//! new one, and is refused as changed unless the ETag is the one opened.

use parking_lot::Mutex;
use std::num::NonZeroUsize;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use object_store::path::Path;

use super::recheck::{Recheck, Refusal};
use super::split::Split;
use crate::format::byte_source::{ByteSource, Version, VersionTag};
use crate::format::dtype::{ItemKind, NumpyDtype};
use crate::format::{grid_coords, Array, BlockProducer, Geometry, PResult, Problem, Shape};
use crate::source::memory::MemorySource;
use crate::source::remote::error::RemoteError;
use crate::source::remote::store::Connection;

/// Decoded regions kept at most, in bytes (at least two regions are kept);
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
    /// The ETag the dataset had when opened, and when it is asked again
    /// (`None`: the server gives none).
    recheck: Option<Recheck>,
    /// The most decoded bytes a region may hold, unless it is one block
    /// (a quarter of the remote budget, 2 to 16 MiB: the connection's `part`).
    limit: u64,
    /// Decoded regions by (chunk, region of the chunk).
    regions: Mutex<lru::LruCache<(u64, u64), Cell>>,
}

impl SlicedBlocks {
    /// The blocks of the dataset at `path` of `geometry` and `dtype`, its
    /// ETag and when the `/api/info` that gave it was sent (`None`: no ETag).
    pub(crate) fn new(
        conn: Arc<Connection>,
        path: Path,
        shown: String,
        geometry: Geometry,
        dtype: String,
        etag: Option<(String, Instant)>,
    ) -> SlicedBlocks {
        let limit = conn.part;
        let ttl = conn.attr_ttl;
        let keep = (KEPT_BYTES / largest_region(&geometry, limit).max(1)).max(2) as usize;
        let keep = NonZeroUsize::new(keep).unwrap_or(NonZeroUsize::MIN);
        SlicedBlocks {
            conn,
            path,
            shown,
            geometry,
            dtype,
            recheck: etag.map(|(etag, asked)| Recheck::new(etag, asked, ttl)),
            limit,
            regions: Mutex::new(lru::LruCache::new(keep)),
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

    /// How a chunk of `extent` items is cut into regions.
    fn split(&self, extent: &[u64]) -> Split {
        let g = &self.geometry;
        Split::of(extent, &g.blockshape, g.itemsize, self.limit)
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

    /// Fetch and decode the region at `origin` (in the array) of `extent`:
    /// its items in C order.
    fn fetch_region(&self, origin: &[u64], extent: &[u64]) -> Result<Arc<Vec<u8>>, RemoteError> {
        let changed = |detail| RemoteError::Changed {
            url: self.shown.clone(),
            detail,
        };
        // Known to be another file now: nothing to ask for.
        if let Some(detail) = self.recheck.as_ref().and_then(Recheck::changed) {
            return Err(changed(detail));
        }
        let items: u64 = extent.iter().product();
        let nbytes = items * self.geometry.itemsize;
        let slice = (!extent.is_empty()).then(|| Self::slice_text(origin, extent));
        let limit = nbytes + nbytes / 8 + (1 << 20);
        let body = self
            .conn
            .c2_slice(&self.path, &self.shown, slice.as_deref(), limit)?;
        let arrived = Instant::now();
        let shown_slice = slice.as_deref().unwrap_or("()");
        let name = std::path::PathBuf::from(format!("{} (region {shown_slice})", self.shown));
        let bad = |detail: String| RemoteError::Request {
            url: self.shown.clone(),
            detail,
        };
        // The body's allocation becomes the source's (no copy: nothing else holds it).
        let region = Array::from_source(
            &name,
            Arc::new(MemorySource::new(
                name.display().to_string(),
                Vec::from(body),
            )),
        )
        .map_err(|e| {
            bad(format!(
                "the region {shown_slice} is not a frame we read: {e}"
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
        let opaque = NumpyDtype::parse(&self.dtype)
            .is_ok_and(|d| d.as_scalar().is_some_and(|s| s.kind == ItemKind::Void))
            && region
                .geometry()
                .is_some_and(|g| g.itemsize == self.geometry.itemsize);
        if dtype.as_ref().is_some_and(|d| *d != self.dtype) && !opaque {
            return Err(bad(format!(
                "the region {shown_slice} came back as dtype {}, the dataset is described as {}",
                dtype.unwrap_or_default(),
                self.dtype
            )));
        }
        if !shape_ok || region.data_len() != nbytes {
            return Err(bad(format!(
                "the region {shown_slice} came back as {} bytes of another shape",
                region.data_len()
            )));
        }
        let bytes = region
            .read_all()
            .map_err(|p| bad(format!("the region {shown_slice}: {p}")))?;
        drop(region);
        if let Some(recheck) = &self.recheck {
            recheck
                .region(arrived, || {
                    Ok(self.conn.c2_info(&self.path, &self.shown)?.etag)
                })
                .map_err(|refusal| match refusal {
                    Refusal::Changed(detail) => changed(detail),
                    Refusal::Unasked(e) => e,
                })?;
        }
        Ok(Arc::new(bytes))
    }

    /// Region `r` of chunk `c` (at `origin` in the array, of `extent`),
    /// fetched once however many readers ask at once.
    fn region(
        &self,
        c: u64,
        r: u64,
        origin: &[u64],
        extent: &[u64],
    ) -> Result<Arc<Vec<u8>>, RemoteError> {
        let cell: Cell = self
            .regions
            .lock()
            .get_or_insert((c, r), Cell::default)
            .clone();
        let answer = cell
            .get_or_init(|| self.fetch_region(origin, extent))
            .clone();
        if answer.is_err() {
            let mut regions = self.regions.lock();
            if regions
                .peek(&(c, r))
                .is_some_and(|kept| Arc::ptr_eq(kept, &cell))
            {
                regions.pop(&(c, r));
            }
        }
        answer
    }
}

impl BlockProducer for SlicedBlocks {
    /// The most the kept regions may take.
    fn held_bytes(&self) -> usize {
        let kept = self.regions.lock().cap().get() as u64;
        let largest = largest_region(&self.geometry, self.limit);
        usize::try_from(kept.saturating_mul(largest)).unwrap_or(usize::MAX)
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
        let (origin, extent) = self.chunk_box(chunk);
        let at: Vec<u64> = g
            .block_origin(chunk, block)
            .iter()
            .zip(&origin)
            .map(|(s, o)| s - o)
            .collect();
        out.fill(0);
        let split = self.split(&extent);
        // A block wholly past the array's edge holds zeros only.
        let Some(r) = split.region_of(&at) else {
            return Ok(());
        };
        let (from, size) = split.region(r);
        let start: Vec<u64> = origin.iter().zip(&from).map(|(o, f)| o + f).collect();
        let region = self.region(chunk, r, &start, &size)?;
        copy_box(
            &region,
            &size,
            &at.iter().zip(&from).map(|(a, f)| a - f).collect::<Vec<_>>(),
            &g.blockshape,
            g.itemsize as usize,
            out,
        );
        Ok(())
    }
}

/// The most decoded bytes one region of a dataset of `geometry` holds
/// when regions are cut at `limit` bytes: the limit, or one block when a
/// block is larger, and never more than a chunk.
fn largest_region(geometry: &Geometry, limit: u64) -> u64 {
    geometry
        .chunk_nbytes()
        .min(limit.max(geometry.block_nbytes()))
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
