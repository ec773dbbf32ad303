//! Prefetch: decode what a sequential reader will want next, and read the
//! first chunk layouts of newly opened arrays, on a small pool of worker
//! threads fed through a bounded queue — so both cores work while FUSE
//! serves the current request. Requests that do not fit are dropped:
//! prefetch is a hint, never a debt.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread;

use crate::format::{Array, Piece, PieceSource};

use super::blocks::Blocks;
use super::planner::resolve;
use super::stats::Stats;

/// Requests the queue holds before new ones are dropped.
const QUEUE: usize = 16;

/// Chunk layouts read ahead for a newly opened array.
const PRELOAD_LAYOUTS: u64 = 4096;

enum Job {
    /// Decode the blocks these pieces need.
    Blocks { array: Arc<Array>, pieces: Vec<Piece> },
    /// Read the first chunk layouts of an array.
    Layouts { array: Arc<Array> },
}

/// A pool of decode workers fed through a bounded queue.
pub struct Prefetcher {
    tx: SyncSender<Job>,
}

impl Prefetcher {
    /// Start `workers` threads (at least one) filling `blocks`.
    pub fn start(blocks: Arc<Blocks>, workers: usize) -> Prefetcher {
        let (tx, rx) = sync_channel::<Job>(QUEUE);
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..workers.max(1) {
            let rx = rx.clone();
            let blocks = blocks.clone();
            let spawned = thread::Builder::new().name(format!("prefetch-{i}")).spawn(move || worker(rx, blocks));
            if let Err(e) = spawned {
                log::warn!("cannot start prefetch worker: {e}");
            }
        }
        Prefetcher { tx }
    }

    fn send(&self, job: Job) -> bool {
        match self.tx.try_send(job) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => false,
            Err(TrySendError::Disconnected(_)) => {
                log::debug!("prefetch workers are gone");
                true
            }
        }
    }

    /// Queue the blocks `pieces` need; false when the queue is full (dropped).
    pub fn request(&self, array: Arc<Array>, pieces: Vec<Piece>) -> bool {
        self.send(Job::Blocks { array, pieces })
    }

    /// Queue reading the first chunk layouts of `array`; false when dropped.
    pub fn preload_layouts(&self, array: Arc<Array>) -> bool {
        self.send(Job::Layouts { array })
    }
}

fn worker(rx: Arc<Mutex<Receiver<Job>>>, blocks: Arc<Blocks>) {
    loop {
        let job = {
            let rx = rx.lock().unwrap_or_else(|e| e.into_inner());
            rx.recv()
        };
        match job {
            Err(_) => return,
            Ok(Job::Blocks { array, pieces }) => decode_ahead(&blocks, &array, pieces),
            Ok(Job::Layouts { array }) => {
                // Errors are left for the reads that need those chunks.
                for c in 0..array.nchunks().min(PRELOAD_LAYOUTS) {
                    if array.index_special(c).is_none() && !blocks.has_layout(&array, c) {
                        let _ = blocks.layout(&array, c);
                    }
                }
            }
        }
    }
}

fn decode_ahead(blocks: &Blocks, array: &Array, pieces: Vec<Piece>) {
    for piece in pieces {
        let resolved = match resolve(blocks, array, piece) {
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
