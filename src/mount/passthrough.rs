//! FUSE passthrough of complete disk cache files and of local files shown
//! as themselves (the source's own descriptor), and the kernel's rule
//! around it: an inode is read either through passthrough, every open file
//! of it on the same backing file, or through the daemon (the kernel's
//! "cached io" mode), never both at once; an open that would mix them
//! fails with EIO in the kernel. So this keeps, per open inode, how it is
//! read: a complete cache file is handed to the kernel only while no file
//! of the inode is open through the daemon, and later opens of an inode in
//! passthrough reuse its backing id.
//!
//! Registering a backing file needs CAP_SYS_ADMIN (a mount run as root);
//! the first refusal turns passthrough off for the mount, and those opens
//! are served by the daemon from the cache file (no decoding either way).

use fuser::{BackingId, ReplyOpen};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::disk_cache::Entry;

/// The file an open may be read from by the kernel.
pub enum Backing<'a> {
    /// A complete disk cache file.
    Cache(&'a Entry),
    /// A local source file shown as itself (its open descriptor).
    File(Arc<std::fs::File>),
}

impl Backing<'_> {
    /// The backing file's inode (what tells two versions of the bytes apart).
    fn data_ino(&self) -> u64 {
        use std::os::unix::fs::MetadataExt;
        match self {
            Backing::Cache(entry) => entry.data_ino(),
            Backing::File(file) => file.metadata().map_or(0, |m| m.ino()),
        }
    }

    fn file(&self) -> std::io::Result<Arc<std::fs::File>> {
        match self {
            Backing::Cache(entry) => entry.file(),
            Backing::File(file) => Ok(file.clone()),
        }
    }
}

/// How one open inode is read.
enum Mode {
    /// By the kernel from `backing` (the data file with inode `data_ino`).
    Passthrough {
        id: Arc<BackingId>,
        data_ino: u64,
        opens: usize,
    },
    /// Through the daemon.
    Daemon { opens: usize },
}

/// Open inodes' read modes and which inode each handle opened.
pub struct IoModes {
    enabled: AtomicBool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    inodes: HashMap<u64, Mode>,
    handles: HashMap<u64, u64>,
}

impl IoModes {
    /// Tracking for a mount that may (`enabled`) use passthrough.
    pub fn new(enabled: bool) -> IoModes {
        IoModes {
            enabled: AtomicBool::new(enabled),
            state: Mutex::new(State::default()),
        }
    }

    /// No passthrough from now on (the kernel does not offer it).
    pub fn disable(&self) {
        self.enabled.store(false, Ordering::Relaxed);
    }

    /// Open handle `fh` of inode `ino`, which the kernel may read from
    /// `backing` (if any): the backing id to reply with, or `None` to serve
    /// it through the daemon.
    pub fn open(
        &self,
        ino: u64,
        fh: u64,
        backing: Option<Backing<'_>>,
        reply: &ReplyOpen,
    ) -> Option<Arc<BackingId>> {
        if !self.enabled.load(Ordering::Relaxed) {
            return None;
        }
        let mut state = self.state.lock();
        state.handles.insert(fh, ino);
        let wanted = backing.as_ref().map(Backing::data_ino);
        match state.inodes.get_mut(&ino) {
            Some(Mode::Passthrough {
                id,
                data_ino,
                opens,
            }) => {
                if wanted != Some(*data_ino) {
                    // Another version of the bytes under this inode: never
                    // the old bytes; the kernel refuses this daemon-served
                    // open (EIO) until the old opens are closed. It should
                    // not happen: a changed source's files take new inode
                    // numbers (a single array's root too: the tree's
                    // `files_node`).
                    log::warn!("inode {ino}: changed while open in passthrough; open refused");
                    state.handles.remove(&fh);
                    return None;
                }
                *opens += 1;
                return Some(id.clone());
            }
            Some(Mode::Daemon { opens }) => {
                *opens += 1;
                return None;
            }
            None => {}
        }
        let id = backing.and_then(|backing| {
            let file = backing
                .file()
                .inspect_err(|e| log::info!("disk cache: {e}: served by the daemon"))
                .ok()?;
            match reply.open_backing(&*file) {
                Ok(id) => Some(Arc::new(id)),
                Err(e) => {
                    log::warn!("FUSE passthrough refused ({e}): files are served by the daemon");
                    self.disable();
                    None
                }
            }
        });
        let mode = match (&id, wanted) {
            (Some(id), Some(data_ino)) => Mode::Passthrough {
                id: id.clone(),
                data_ino,
                opens: 1,
            },
            _ => Mode::Daemon { opens: 1 },
        };
        state.inodes.insert(ino, mode);
        id
    }

    /// Handle `fh` of inode `ino` closed.
    pub fn release(&self, ino: u64, fh: u64) {
        let mut state = self.state.lock();
        if state.handles.remove(&fh).is_none() {
            return;
        }
        let emptied = match state.inodes.get_mut(&ino) {
            Some(Mode::Passthrough { opens, .. } | Mode::Daemon { opens }) => {
                *opens -= 1;
                *opens == 0
            }
            None => false,
        };
        if emptied {
            // The last open gone: its backing id is closed with it.
            state.inodes.remove(&ino);
        }
    }
}
