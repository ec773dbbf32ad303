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

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex};
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
            let spawned = thread::Builder::new().name(format!("prefetch-{i}")).spawn(move || worker(&shared, &blocks));
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
        let mut queues = self.shared.queues.lock().unwrap_or_else(|e| e.into_inner());
        if queues.blocks.len() >= QUEUE {
            return false;
        }
        queues.blocks.push_back(BlockJob { array, pieces });
        self.shared.ready.notify_one();
        true
    }

    /// Queue reading the first chunk layouts of `array`; false when dropped.
    pub fn preload_layouts(&self, array: Arc<Array>) -> bool {
        let mut queues = self.shared.queues.lock().unwrap_or_else(|e| e.into_inner());
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
        self.shared.queues.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
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
            let mut queues = shared.queues.lock().unwrap_or_else(|e| e.into_inner());
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
                queues = shared.ready.wait(queues).unwrap_or_else(|e| e.into_inner());
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
                    let mut queues = shared.queues.lock().unwrap_or_else(|e| e.into_inner());
                    queues.layouts.push_back(LayoutJob { array: job.array, next: until });
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
            let PieceSource::Block { chunk, block, .. } = p.source else { continue };
            if blocks.contains(array, chunk, block) {
                continue;
            }
            match blocks.block(array, chunk, block) {
                Ok(_) => Stats::add(&blocks.stats().prefetched_blocks, 1),
                Err(e) => {
                    log::debug!("prefetch of {} chunk {chunk} block {block} failed: {e}", array.name().display());
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
            PieceSource::Block { chunk, block, .. } if !blocks.contains(array, chunk, block) => wanted.entry(chunk).or_default().push(block),
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
