//! Prefetch: decode what a sequential reader will want next, and read the
//! first chunk layouts of newly opened arrays, on a small pool of worker
//! threads fed through bounded queues — so both cores work while FUSE
//! serves the current request. Requests that do not fit are dropped:
//! prefetch is a hint, never a debt.
//!
//! Decode-ahead comes first: layout preloading is done in slices of
//! [`LAYOUT_SLICE`] chunks, and a worker takes the next slice only when no
//! block request waits, so opening an array never holds up a reader.
//!
//! For sources where every read is a round trip (remote objects), the
//! stored bytes are announced before they are decoded: the chunks of a
//! sequential reader's window as soon as it is asked for
//! ([`Prefetcher::request`]), and the blocks of each read ([`announce`]),
//! so they arrive in few parallel GETs instead of one GET per block.

use parking_lot::{Condvar, Mutex};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::thread;

use crate::format::{Array, Need, PResult, Piece, PieceSource};

use super::blocks::Blocks;
use super::stats::Stats;

/// Requests each queue holds before new ones are dropped.
const QUEUE: usize = 16;

/// Chunk layouts read ahead for a newly opened array.
const PRELOAD_LAYOUTS: u64 = 4096;

/// Layouts read per turn before a worker looks for block requests again.
const LAYOUT_SLICE: u64 = 64;

/// Decode the blocks these pieces need.
struct BlockJob {
    array: Arc<Array>,
    pieces: Vec<Piece>,
}

/// Read the layouts of chunks `next..` (up to [`PRELOAD_LAYOUTS`]) of an array.
struct LayoutJob {
    array: Arc<Array>,
    next: u64,
}

#[derive(Default)]
struct Queues {
    blocks: VecDeque<BlockJob>,
    layouts: VecDeque<LayoutJob>,
    closed: bool,
}

#[derive(Default)]
struct Shared {
    queues: Mutex<Queues>,
    ready: Condvar,
}

/// A pool of decode workers fed through bounded queues; stops its workers
/// when dropped.
pub struct Prefetcher {
    shared: Arc<Shared>,
}

impl Prefetcher {
    /// Start `workers` threads (at least one) filling `blocks`.
    pub fn start(blocks: Arc<Blocks>, workers: usize) -> Prefetcher {
        let shared = Arc::new(Shared::default());
        for i in 0..workers.max(1) {
            let shared = shared.clone();
            let blocks = blocks.clone();
            let spawned = thread::Builder::new()
                .name(format!("prefetch-{i}"))
                .spawn(move || worker(&shared, &blocks));
            if let Err(e) = spawned {
                log::warn!("cannot start prefetch worker: {e}");
            }
        }
        Prefetcher { shared }
    }

    /// Queue the blocks `pieces` need; false when the queue is full (dropped).
    /// Their chunks' stored bytes are hinted to the source at once, whole.
    pub fn request(&self, array: Arc<Array>, pieces: Vec<Piece>) -> bool {
        hint_chunks(&array, &pieces);
        let mut queues = self.shared.queues.lock();
        if queues.blocks.len() >= QUEUE {
            return false;
        }
        queues.blocks.push_back(BlockJob { array, pieces });
        self.shared.ready.notify_one();
        true
    }

    /// Queue reading the first chunk layouts of `array`; false when dropped.
    /// Not for remote arrays (a GET per chunk up front): their layouts come
    /// with the chunks a read or a hint fetches.
    pub fn preload_layouts(&self, array: Arc<Array>) -> bool {
        if array.takes_hints() {
            return true;
        }
        let mut queues = self.shared.queues.lock();
        if queues.layouts.len() >= QUEUE {
            return false;
        }
        queues.layouts.push_back(LayoutJob { array, next: 0 });
        self.shared.ready.notify_one();
        true
    }
}

impl Drop for Prefetcher {
    fn drop(&mut self) {
        self.shared.queues.lock().closed = true;
        self.shared.ready.notify_all();
    }
}

enum Work {
    Blocks(BlockJob),
    Layouts(LayoutJob),
}

fn worker(shared: &Shared, blocks: &Blocks) {
    loop {
        let work = {
            let mut queues = shared.queues.lock();
            loop {
                if queues.closed {
                    return;
                }
                if let Some(job) = queues.blocks.pop_front() {
                    break Work::Blocks(job);
                }
                if let Some(job) = queues.layouts.pop_front() {
                    break Work::Layouts(job);
                }
                shared.ready.wait(&mut queues);
            }
        };
        match work {
            Work::Blocks(job) => decode_ahead(blocks, &job.array, job.pieces),
            Work::Layouts(job) => {
                let end = job.array.nchunks().min(PRELOAD_LAYOUTS);
                let until = end.min(job.next + LAYOUT_SLICE);
                // Errors are left for the reads that need those chunks.
                for c in job.next..until {
                    if job.array.index_special(c).is_none() && !blocks.has_layout(&job.array, c) {
                        let _ = blocks.layout(&job.array, c);
                    }
                }
                if until < end {
                    let mut queues = shared.queues.lock();
                    queues.layouts.push_back(LayoutJob {
                        array: job.array,
                        next: until,
                    });
                    shared.ready.notify_one();
                }
            }
        }
    }
}

fn decode_ahead(blocks: &Blocks, array: &Array, pieces: Vec<Piece>) {
    for piece in pieces {
        let resolved = match blocks.block_pieces(array, piece) {
            Ok(resolved) => resolved,
            Err(e) => {
                log::debug!("prefetch of {}: {e}", array.name().display());
                return;
            }
        };
        for p in resolved {
            let PieceSource::Block { chunk, block, .. } = p.source else {
                continue;
            };
            if blocks.contains(array, chunk, block) {
                continue;
            }
            match blocks.block(array, chunk, block) {
                Ok(_) => Stats::add(&blocks.stats().prefetched_blocks, 1),
                Err(e) => {
                    log::debug!(
                        "prefetch of {} chunk {chunk} block {block} failed: {e}",
                        array.name().display()
                    );
                    return;
                }
            }
        }
    }
}

/// Hint the source of `array` that the chunks `pieces` touch will be read,
/// whole (a sequential reader reaches all of a chunk). Never blocks.
pub fn hint_chunks(array: &Array, pieces: &[Piece]) {
    if !array.takes_hints() {
        return;
    }
    let mut chunks: Vec<u64> = pieces
        .iter()
        .filter_map(|p| match p.source {
            PieceSource::Block { chunk, .. } | PieceSource::ChunkBytes { chunk, .. } => Some(chunk),
            PieceSource::Zeros => None,
        })
        .collect();
    chunks.sort_unstable();
    chunks.dedup();
    array.will_need_chunks(&chunks, Need::Ahead);
}

/// Before a read decodes the blocks `pieces` need: announce their stored
/// bytes to the source, so the uncached ones arrive together — whole
/// chunks when at least half of a chunk's blocks are wanted, else the
/// wanted blocks exactly (block 0 too where DELTA needs it), after
/// reading the chunk's layout (which the read needs anyway, so its error
/// is the read's). Nothing for sources that ignore hints.
pub fn announce(blocks: &Blocks, array: &Array, pieces: &[Piece]) -> PResult<()> {
    if !array.takes_hints() {
        return Ok(());
    }
    let mut wanted: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    let mut whole = Vec::new();
    for p in pieces {
        match p.source {
            PieceSource::Block { chunk, block, .. } if !blocks.contains(array, chunk, block) => {
                wanted.entry(chunk).or_default().push(block)
            }
            PieceSource::ChunkBytes { chunk, .. } => whole.push(chunk),
            _ => {}
        }
    }
    let per_chunk = array.blocks_per_chunk().unwrap_or(u64::MAX);
    let mut partial = Vec::new();
    for (c, mut list) in wanted {
        list.sort_unstable();
        list.dedup();
        if (list.len() as u64).saturating_mul(2) >= per_chunk {
            whole.push(c);
        } else {
            partial.push((c, list));
        }
    }
    whole.sort_unstable();
    whole.dedup();
    array.will_need_chunks(&whole, Need::Now);
    for (c, mut list) in partial {
        let layout = blocks.layout(array, c)?;
        if layout.needs_block0() && !list.contains(&0) && !blocks.contains(array, c, 0) {
            list.insert(0, 0);
        }
        if list.len() >= 2 {
            array.will_need_blocks(&layout, c, &list, Need::Now);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::byte_source::{ByteSource, Version};
    use crate::format::{ChunkOffset, Region};
    use crate::source::MemorySource;
    use std::ops::Range;
    use std::path::Path;

    /// A memory source that takes hints and records them.
    #[derive(Debug)]
    struct Recorder {
        inner: MemorySource,
        hints: Mutex<Vec<(Vec<Range<u64>>, Need)>>,
    }

    impl ByteSource for Recorder {
        fn len(&self) -> u64 {
            self.inner.len()
        }
        fn opened_version(&self) -> Version {
            self.inner.opened_version()
        }
        fn version(&self) -> PResult<Version> {
            self.inner.version()
        }
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> PResult<()> {
            self.inner.read_at(offset, buf)
        }
        fn will_need(&self, ranges: &[Range<u64>], need: Need) {
            self.hints.lock().push((ranges.to_vec(), need));
        }
        fn takes_hints(&self) -> bool {
            true
        }
        fn describe(&self) -> String {
            "recorder".into()
        }
    }

    fn open(name: &str) -> (Arc<Array>, Arc<Recorder>) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        let src = Arc::new(Recorder {
            inner: MemorySource::new(name, std::fs::read(path).unwrap()),
            hints: Mutex::new(Vec::new()),
        });
        (
            Arc::new(Array::from_source(Path::new(name), src.clone()).unwrap()),
            src,
        )
    }

    fn take(src: &Recorder) -> Vec<(Vec<Range<u64>>, Need)> {
        std::mem::take(&mut *src.hints.lock())
    }

    fn blocks() -> Blocks {
        Blocks::new(16 << 20, 1 << 20, Arc::new(Stats::default()))
    }

    #[test]
    fn reads_announce_whole_chunks_or_exact_blocks_and_prefetch_hints_chunks() {
        // 33 x 21 float64 in 12 x 8 chunks of 5 x 3 blocks.
        let (array, src) = open("dtype_le_f8.b2nd");
        let blocks = blocks();
        // The chunks' stored ranges, worked out here from the offsets index.
        let frame = array.frame();
        let mut order: Vec<u64> = frame
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
        order.sort_unstable();
        let stored = |c: usize| {
            let ChunkOffset::Stored(p) = frame.offsets[c] else {
                panic!("chunk {c} is special")
            };
            let next = order
                .iter()
                .copied()
                .find(|&q| q > p)
                .unwrap_or(frame.cbytes);
            frame.header_len + p..frame.header_len + next
        };
        // One item: one block, nothing to announce.
        let pieces = array.pieces(Region::Data, 8, 8).unwrap();
        announce(&blocks, &array, &pieces).unwrap();
        assert!(take(&src).is_empty());
        // Everything, for the read under way: chunks 0..8 whole (at least 6
        // of their 9 blocks hold data); of the corner chunk 8 (rows 24..33,
        // columns 16..21) blocks 0, 1, 3 and 4 only, exactly.
        let pieces = array.pieces(Region::Data, 0, array.data_len()).unwrap();
        announce(&blocks, &array, &pieces).unwrap();
        let whole: Vec<Range<u64>> = (0..8).map(stored).collect();
        let corner = array.read_layout(8).unwrap();
        let at8 = stored(8).start;
        let corner_blocks: Vec<Range<u64>> = [0, 1, 3, 4]
            .iter()
            .map(|&b| corner.block_source_range(b))
            .map(|r| at8 + r.start..at8 + r.end)
            .collect();
        assert_eq!(
            take(&src),
            vec![(whole, Need::Now), (corner_blocks, Need::Now)]
        );
        // Prefetch: whole chunks touched, ahead.
        hint_chunks(&array, &array.pieces(Region::Data, 0, 21 * 8).unwrap());
        assert_eq!(
            take(&src),
            vec![(vec![stored(0), stored(1), stored(2)], Need::Ahead)]
        );
        // Row 0, columns 0..6: two of chunk 0's 12 blocks, exactly.
        let pieces = array.pieces(Region::Data, 0, 6 * 8).unwrap();
        announce(&blocks, &array, &pieces).unwrap();
        let layout = array.read_layout(0).unwrap();
        let at = stored(0).start;
        let want: Vec<Range<u64>> = [0, 1]
            .iter()
            .map(|&b| layout.block_source_range(b))
            .map(|r| at + r.start..at + r.end)
            .collect();
        assert_eq!(take(&src), vec![(want, Need::Now)]);
    }

    #[test]
    fn delta_reads_announce_block0_with_their_block() {
        let (array, src) = open("codec_lz4_delta_shuffle.b2nd");
        let blocks = blocks();
        let layout = array.read_layout(0).unwrap();
        assert!(
            layout.needs_block0() && layout.nblocks() > 2,
            "the fixture has DELTA and several blocks"
        );
        // The last piece of chunk 0's view: a block after block 0.
        let all = array.pieces(Region::Chunk(0), 0, u64::MAX).unwrap();
        let last = *all
            .iter()
            .rev()
            .find(|p| matches!(p.source, PieceSource::Block { block, .. } if block > 0))
            .unwrap();
        let PieceSource::Block { block: b, .. } = last.source else {
            panic!()
        };
        let b = b as usize;
        announce(&blocks, &array, &[last]).unwrap();
        let ChunkOffset::Stored(pos) = array.frame().offsets[0] else {
            panic!()
        };
        let at = array.frame().header_len + pos;
        let want: Vec<Range<u64>> = [0, b]
            .iter()
            .map(|&k| layout.block_source_range(k))
            .map(|r| at + r.start..at + r.end)
            .collect();
        assert_eq!(take(&src), vec![(want, Need::Now)]);
    }
}
