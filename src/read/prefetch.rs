//! Prefetch: decode the blocks a sequential reader will want next on worker
//! threads, so both cores work while FUSE serves the current request.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread;

use super::cache::BlockCache;
use crate::format::Array;
use super::stats::Stats;

struct Job {
    array: Arc<Array>,
    blocks: Vec<(u64, u64)>,
}

/// A pool of decode workers fed through a bounded queue; requests that do
/// not fit are dropped (prefetch is a hint, never a debt).
pub struct Prefetcher {
    tx: SyncSender<Job>,
}

impl Prefetcher {
    pub fn start(cache: Arc<BlockCache>, workers: usize) -> Prefetcher {
        let (tx, rx) = sync_channel::<Job>(16);
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..workers.max(1) {
            let rx = rx.clone();
            let cache = cache.clone();
            let spawned = thread::Builder::new().name(format!("prefetch-{i}")).spawn(move || worker(rx, cache));
            if let Err(e) = spawned {
                log::warn!("cannot start prefetch worker: {e}");
            }
        }
        Prefetcher { tx }
    }

    /// Queue a request; false when the queue is full (the request is dropped).
    pub fn request(&self, array: Arc<Array>, blocks: Vec<(u64, u64)>) -> bool {
        match self.tx.try_send(Job { array, blocks }) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => false,
            Err(TrySendError::Disconnected(_)) => {
                log::debug!("prefetch workers are gone");
                true
            }
        }
    }
}

fn worker(rx: Arc<Mutex<Receiver<Job>>>, cache: Arc<BlockCache>) {
    loop {
        let job = {
            let rx = rx.lock().unwrap_or_else(|e| e.into_inner());
            rx.recv()
        };
        let Ok(job) = job else { return };
        for (chunk, block) in job.blocks {
            let key = super::cache::BlockKey { array: job.array.id, chunk, block };
            if cache.contains(&key) {
                continue;
            }
            match cache.get(&job.array, chunk, block) {
                Ok(_) => Stats::add(&cache.stats.prefetched_blocks, 1),
                Err(e) => {
                    log::debug!("prefetch of {} chunk {chunk} block {block} failed: {e}", job.array.path.display());
                    break;
                }
            }
        }
    }
}
