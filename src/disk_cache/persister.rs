//! The persister thread: makes entries' maps on disk name what the writer
//! filled ([`Entry::sync`] then [`Entry::commit`]), so the writer never
//! waits on a disk sync (a 64 MiB `fdatasync` takes tens of ms here) while
//! reads hand it granules. Syncs run without the directory lock; only the
//! map's replacement takes it.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::entry::Entry;
use super::shared::Shared;
use super::stats::DiskStats;

enum Msg {
    Persist(Vec<Arc<Entry>>),
    Flush(mpsc::Sender<()>),
}

/// The handle of the persister thread (owned by the writer thread).
pub(super) struct Persister {
    tx: Mutex<Option<mpsc::Sender<Msg>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Persister {
    /// Start the thread.
    pub(super) fn start(shared: Arc<Shared>) -> Persister {
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("disk-cache-persist".into())
            .spawn(move || run(&shared, &rx))
            .ok();
        if thread.is_none() {
            log::warn!("disk cache: no persister thread; maps will not be saved");
        }
        Persister {
            tx: Mutex::new(Some(tx)),
            thread: Mutex::new(thread),
        }
    }

    /// Persist `entries` (soon, in this order).
    pub(super) fn persist(&self, entries: Vec<Arc<Entry>>) {
        if !entries.is_empty() {
            self.send(Msg::Persist(entries));
        }
    }

    /// Wait until everything asked before is persisted.
    pub(super) fn flush(&self) {
        let (ack, done) = mpsc::channel();
        if self.send(Msg::Flush(ack)) && done.recv_timeout(Duration::from_secs(60)).is_err() {
            log::warn!("disk cache: the maps were not persisted in time");
        }
    }

    fn send(&self, msg: Msg) -> bool {
        self.tx
            .lock()
            .as_ref()
            .is_some_and(|tx| tx.send(msg).is_ok())
    }
}

impl Drop for Persister {
    fn drop(&mut self) {
        // Closing the channel makes the thread persist what it was sent and end.
        self.tx.lock().take();
        if let Some(thread) = self.thread.lock().take() {
            let _ = thread.join();
        }
    }
}

/// The thread's loop: what is asked in one go (and what follows at once)
/// is persisted together, each entry once.
fn run(shared: &Shared, rx: &mpsc::Receiver<Msg>) {
    while let Ok(first) = rx.recv() {
        let mut asked: HashMap<String, Arc<Entry>> = HashMap::new();
        let mut acks = Vec::new();
        let mut take = |msg: Msg| match msg {
            Msg::Persist(entries) => {
                for entry in entries {
                    asked.insert(entry.key().name().to_string(), entry);
                }
            }
            Msg::Flush(ack) => acks.push(ack),
        };
        take(first);
        while let Ok(msg) = rx.try_recv() {
            take(msg);
        }
        persist(shared, asked.into_values().collect());
        for ack in acks {
            let _ = ack.send(());
        }
    }
}

/// Each entry's data file synced first, without the lock; then their maps,
/// under it. An entry whose map could not be written is persisted again
/// with its next fills.
fn persist(shared: &Shared, entries: Vec<Arc<Entry>>) {
    let mut synced = Vec::new();
    for entry in entries {
        match entry.sync(&shared.index) {
            Ok(Some(done)) => synced.push((entry, done)),
            Ok(None) => {}
            Err(e) => {
                DiskStats::add(&shared.stats.errors, 1);
                log::warn!("disk cache: {e}");
            }
        }
    }
    if synced.is_empty() {
        return;
    }
    let locked = match shared.index.lock() {
        Ok(locked) => locked,
        Err(e) => {
            log::warn!("disk cache: {e}");
            for (entry, done) in synced {
                entry.unsync(done);
            }
            return;
        }
    };
    for (entry, done) in synced {
        if let Err(e) = entry.commit(&locked, done) {
            DiskStats::add(&shared.stats.errors, 1);
            log::warn!("disk cache: {e}");
        }
    }
}
