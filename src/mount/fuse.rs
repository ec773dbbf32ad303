//! The FUSE adapter: fuser calls become tree and planner calls, errors
//! become errno. Nothing here knows the Blosc2 format.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, InitFlags, KernelConfig, LockOwner,
    OpenAccMode, OpenFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs,
    ReplyWrite, ReplyXattr, Request, TimeOrNow, WriteFlags,
};

use crate::error::FsError;
use crate::format::Problem;
use crate::read::{Planner, Stats};
use crate::tree::{Attr, Content, DirEntry, Kind, Tree};

/// Settings of the adapter.
#[derive(Debug, Clone)]
pub struct FsOptions {
    pub uid: u32,
    pub gid: u32,
    pub ttl: Duration,
    pub direct_io: bool,
    /// Bytes a sequential reader's prefetch runs ahead.
    pub prefetch_window: u64,
}

struct Handle {
    content: Content,
    /// Where the last read ended (to spot sequential readers).
    next_offset: AtomicU64,
    /// How far prefetch has been accepted (each read asks only for the part
    /// of its window beyond this; a request the full queue dropped is asked
    /// again by the next read).
    prefetched_to: AtomicU64,
}

/// The filesystem given to fuser.
pub struct Blosc2Fs {
    tree: Tree,
    planner: Planner,
    options: FsOptions,
    handles: Mutex<HashMap<u64, Arc<Handle>>>,
    /// Listings of source directories taken at opendir (one scan per open).
    listings: Mutex<HashMap<u64, Arc<Vec<DirEntry>>>>,
    next_fh: AtomicU64,
    /// Array id last served per inode: the page cache is kept only while it matches.
    served_version: Mutex<HashMap<u64, u64>>,
    /// (array id, chunk) pairs already reported in the log.
    reported: Mutex<HashSet<(u64, u64)>>,
}

fn errno(err: &FsError) -> Errno {
    Errno::from_i32(err.errno())
}

/// Answer an xattr request the Linux way: size 0 asks for the length, a
/// buffer too small gets ERANGE.
fn reply_xattr(bytes: Result<Vec<u8>, FsError>, size: u32, reply: ReplyXattr) {
    match bytes {
        Err(e) => reply.error(errno(&e)),
        Ok(bytes) if size == 0 => reply.size(bytes.len() as u32),
        Ok(bytes) if (size as usize) < bytes.len() => reply.error(errno(&FsError::Range)),
        Ok(bytes) => reply.data(&bytes),
    }
}

impl Blosc2Fs {
    pub fn new(tree: Tree, planner: Planner, options: FsOptions) -> Blosc2Fs {
        Blosc2Fs {
            tree,
            planner,
            options,
            handles: Mutex::new(HashMap::new()),
            listings: Mutex::new(HashMap::new()),
            next_fh: AtomicU64::new(1),
            served_version: Mutex::new(HashMap::new()),
            reported: Mutex::new(HashSet::new()),
        }
    }

    fn stats_json(&self) -> Vec<u8> {
        let (bytes, entries) = self.planner.cache.usage();
        let doc = self.planner.stats().to_json(bytes as u64, self.planner.cache.budget() as u64, entries as u64);
        let mut text = serde_json::to_vec_pretty(&doc).unwrap_or_default();
        text.push(b'\n');
        text
    }

    fn file_attr(&self, attr: &Attr) -> FileAttr {
        let (kind, perm, nlink) = match attr.kind {
            Kind::Dir => (FileType::Directory, 0o555, 2),
            Kind::File => (FileType::RegularFile, 0o444, 1),
        };
        FileAttr {
            ino: INodeNo(attr.ino),
            size: attr.size,
            blocks: attr.size.div_ceil(512),
            atime: attr.mtime,
            mtime: attr.mtime,
            ctime: attr.mtime,
            crtime: attr.mtime,
            kind,
            perm,
            nlink,
            uid: self.options.uid,
            gid: self.options.gid,
            rdev: 0,
            blksize: 1 << 20,
            flags: 0,
        }
    }


    /// Log a read failure once per (array, chunk).
    fn report(&self, array_id: u64, path: &std::path::Path, problem: &Problem) {
        let chunk = match problem {
            Problem::InChunk { chunk, .. } => *chunk,
            _ => u64::MAX,
        };
        let mut reported = self.reported.lock().unwrap_or_else(|e| e.into_inner());
        if reported.insert((array_id, chunk)) {
            log::error!("{}: {problem}", path.display());
        }
    }
}

impl Filesystem for Blosc2Fs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        let wanted = InitFlags::FUSE_AUTO_INVAL_DATA | InitFlags::FUSE_PARALLEL_DIROPS;
        if let Err(missing) = config.add_capabilities(wanted) {
            log::debug!("kernel lacks capabilities {missing:?}");
        }
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        match self.tree.lookup(parent.0, name, &|| self.stats_json().len() as u64) {
            Ok(attr) => reply.entry(&self.options.ttl, &self.file_attr(&attr), Generation(0)),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.tree.getattr(ino.0, &|| self.stats_json().len() as u64) {
            Ok(attr) => reply.attr(&self.options.ttl, &self.file_attr(&attr)),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        if flags.acc_mode() != OpenAccMode::O_RDONLY {
            reply.error(Errno::EROFS);
            return;
        }
        let (content, loaded) = match self.tree.open(ino.0) {
            Ok(v) => v,
            Err(e) => {
                reply.error(errno(&e));
                return;
            }
        };
        let mut fopen = FopenFlags::empty();
        match &content {
            Content::Stats => fopen |= FopenFlags::FOPEN_DIRECT_IO,
            _ if self.options.direct_io && matches!(content, Content::Array { .. }) => fopen |= FopenFlags::FOPEN_DIRECT_IO,
            _ => {
                // Immutable while the source is unchanged: keep the page cache
                // across opens, unless this open serves a new version.
                let version = loaded.as_ref().map(|l| l.version).unwrap_or(0);
                let mut served = self.served_version.lock().unwrap_or_else(|e| e.into_inner());
                if served.insert(ino.0, version) == Some(version) {
                    fopen |= FopenFlags::FOPEN_KEEP_CACHE;
                }
            }
        }
        let fh = self.next_fh.fetch_add(1, Ordering::Relaxed);
        let handle = Arc::new(Handle { content, next_offset: AtomicU64::new(u64::MAX), prefetched_to: AtomicU64::new(0) });
        self.handles.lock().unwrap_or_else(|e| e.into_inner()).insert(fh, handle);
        Stats::add(&self.planner.stats().open_files, 1);
        reply.opened(FileHandle(fh), fopen);
    }

    fn read(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let handle = match self.handles.lock().unwrap_or_else(|e| e.into_inner()).get(&fh.0) {
            Some(h) => h.clone(),
            None => {
                reply.error(Errno::EBADF);
                return;
            }
        };
        Stats::add(&self.planner.stats().reads, 1);
        let slice = |bytes: &[u8]| -> Vec<u8> {
            let start = (offset as usize).min(bytes.len());
            let end = start.saturating_add(size as usize).min(bytes.len());
            bytes[start..end].to_vec()
        };
        match &handle.content {
            Content::Static(bytes) => reply.data(&slice(bytes)),
            Content::Stats => reply.data(&slice(&self.stats_json())),
            Content::Array { array, view } => {
                let sequential = handle.next_offset.swap(offset + size as u64, Ordering::Relaxed) == offset;
                if sequential || offset == 0 {
                    let end = offset + size as u64;
                    let target = end + self.options.prefetch_window.max(size as u64);
                    let from = handle.prefetched_to.load(Ordering::Relaxed).max(end);
                    if from < target && self.planner.prefetch(array, view, from, target - from) {
                        handle.prefetched_to.fetch_max(target, Ordering::Relaxed);
                    }
                }
                match self.planner.read(array, view, offset, size as u64) {
                    Ok(bytes) => reply.data(&bytes),
                    Err(problem) => {
                        Stats::add(&self.planner.stats().read_errors, 1);
                        self.report(array.id, &array.path, &problem);
                        reply.error(Errno::EIO);
                    }
                }
            }
        }
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        if self.handles.lock().unwrap_or_else(|e| e.into_inner()).remove(&fh.0).is_some() {
            self.planner.stats().open_files.fetch_sub(1, Ordering::Relaxed);
        }
        reply.ok();
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        let fh = self.next_fh.fetch_add(1, Ordering::Relaxed);
        if self.tree.is_source_dir(ino.0) {
            match self.tree.readdir(ino.0, 0, usize::MAX) {
                Ok(entries) => {
                    self.listings.lock().unwrap_or_else(|e| e.into_inner()).insert(fh, Arc::new(entries));
                }
                Err(e) => {
                    reply.error(errno(&e));
                    return;
                }
            }
        }
        reply.opened(FileHandle(fh), FopenFlags::empty());
    }

    fn readdir(&self, _req: &Request, ino: INodeNo, fh: FileHandle, offset: u64, mut reply: ReplyDirectory) {
        let listing = self.listings.lock().unwrap_or_else(|e| e.into_inner()).get(&fh.0).cloned();
        let entries = match listing {
            Some(all) => Ok(all.iter().skip(offset as usize).take(4096).cloned().collect()),
            None => self.tree.readdir(ino.0, offset, 4096),
        };
        match entries {
            Ok(entries) => {
                for (i, (child, kind, name)) in entries.into_iter().enumerate() {
                    let kind = match kind {
                        Kind::Dir => FileType::Directory,
                        Kind::File => FileType::RegularFile,
                    };
                    // The offset given is the cookie of the *next* entry.
                    if reply.add(INodeNo(child), offset + i as u64 + 1, kind, &name) {
                        break;
                    }
                }
                reply.ok();
            }
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn releasedir(&self, _req: &Request, _ino: INodeNo, fh: FileHandle, _flags: OpenFlags, reply: ReplyEmpty) {
        self.listings.lock().unwrap_or_else(|e| e.into_inner()).remove(&fh.0);
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        reply.statfs(0, 0, 0, 0, 0, 4096, 255, 4096);
    }

    fn getxattr(&self, _req: &Request, ino: INodeNo, name: &OsStr, size: u32, reply: ReplyXattr) {
        let value = self.tree.xattrs(ino.0).and_then(|attrs| {
            attrs.into_iter().find(|(n, _)| OsStr::new(n) == name).map(|(_, v)| v).ok_or(FsError::NoAttr)
        });
        reply_xattr(value, size, reply);
    }

    fn listxattr(&self, _req: &Request, ino: INodeNo, size: u32, reply: ReplyXattr) {
        let names = self.tree.xattrs(ino.0).map(|attrs| {
            attrs.iter().flat_map(|(n, _)| n.bytes().chain(std::iter::once(0))).collect::<Vec<u8>>()
        });
        reply_xattr(names, size, reply);
    }

    fn setattr(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        _size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        reply.error(Errno::EROFS);
    }

    fn write(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _offset: u64,
        _data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        reply.error(Errno::EROFS);
    }

    fn create(&self, _req: &Request, _parent: INodeNo, _name: &OsStr, _mode: u32, _umask: u32, _flags: i32, reply: ReplyCreate) {
        reply.error(Errno::EROFS);
    }

    fn mknod(&self, _req: &Request, _parent: INodeNo, _name: &OsStr, _mode: u32, _umask: u32, _rdev: u32, reply: ReplyEntry) {
        reply.error(Errno::EROFS);
    }

    fn mkdir(&self, _req: &Request, _parent: INodeNo, _name: &OsStr, _mode: u32, _umask: u32, reply: ReplyEntry) {
        reply.error(Errno::EROFS);
    }

    fn unlink(&self, _req: &Request, _parent: INodeNo, _name: &OsStr, reply: ReplyEmpty) {
        reply.error(Errno::EROFS);
    }

    fn rmdir(&self, _req: &Request, _parent: INodeNo, _name: &OsStr, reply: ReplyEmpty) {
        reply.error(Errno::EROFS);
    }

    fn setxattr(&self, _req: &Request, _ino: INodeNo, _name: &OsStr, _value: &[u8], _flags: i32, _position: u32, reply: ReplyEmpty) {
        reply.error(Errno::EROFS);
    }

    fn removexattr(&self, _req: &Request, _ino: INodeNo, _name: &OsStr, reply: ReplyEmpty) {
        reply.error(Errno::EROFS);
    }

    fn access(&self, _req: &Request, ino: INodeNo, mask: fuser::AccessFlags, reply: ReplyEmpty) {
        if mask.contains(fuser::AccessFlags::W_OK) {
            reply.error(Errno::EROFS);
            return;
        }
        match self.tree.getattr(ino.0, &|| 0) {
            Ok(_) => reply.ok(),
            Err(e) => reply.error(errno(&e)),
        }
    }
}
