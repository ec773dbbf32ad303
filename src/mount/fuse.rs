//! The fuser adapter: each FUSE call becomes one call of the in-process
//! [`Filesystem`], each answer one reply. Nothing here knows the Blosc2
//! format or keeps state of its own; errors become errno in one place
//! ([`errno`]), and every attempt to write is refused in one place
//! ([`READ_ONLY`]).

use std::ffi::OsStr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem as FuserFilesystem, FopenFlags, Generation,
    INodeNo, InitFlags, KernelConfig, LockOwner, OpenAccMode, OpenFlags, ReplyAttr, ReplyCreate,
    ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite,
    ReplyXattr, Request, TimeOrNow, WriteFlags,
};

use super::passthrough::{Backing, IoModes};
use super::waiting::WaitPool;
use crate::fs::{Attr, Filesystem, FsError, Kind};

/// What the adapter adds to the filesystem's attributes.
#[derive(Debug, Clone)]
pub struct AdapterOptions {
    /// Owner of every presented file (`--uid`), instead of its source's.
    pub uid: Option<u32>,
    /// Group of every presented file (`--gid`), instead of its source's.
    pub gid: Option<u32>,
    /// The mounting user and group: owner of what has no source (`.stats`).
    pub mounter: (u32, u32),
    /// How long the kernel may cache attributes and names.
    pub ttl: Duration,
    /// Largest read request in KiB (0: the kernel's maximum).
    pub max_request_kb: u32,
    /// Ask the kernel for FUSE passthrough and hand it complete disk cache
    /// files (falls back to serving them when it refuses).
    pub passthrough: bool,
}

/// The filesystem given to fuser.
pub struct FuseAdapter {
    core: Arc<Answers>,
    /// Workers answering requests that may wait on a network.
    waiting: WaitPool,
    /// The source is remote: lookups, getattrs, opens and listings may
    /// wait on its server, and are answered from [`Self::waiting`].
    remote: bool,
}

/// What answering a request needs, shared with the waiting workers.
struct Answers {
    fs: Arc<Filesystem>,
    options: AdapterOptions,
    /// How each open inode is being read (see [`super::passthrough`]).
    io_modes: IoModes,
}

/// Threads serving requests on remote sources from the start (they wait,
/// they do not compute), and the most there may be while many stall.
const REMOTE_WAIT_WORKERS: usize = 8;
const REMOTE_WAIT_WORKERS_MOST: usize = 64;

/// The errno of a filesystem error: the one conversion.
fn errno(err: &FsError) -> Errno {
    Errno::from_i32(err.errno())
}

thread_local! {
    /// The reply buffer of this FUSE thread (see [`FuseAdapter::read`]).
    static REPLY: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A reply buffer larger than this (a kernel request is at most 1 MiB
/// unless raised) is not kept for the next request.
const MAX_KEPT_REPLY: usize = 4 << 20;

/// Every write-side operation answers this.
const READ_ONLY: FsError = FsError::ReadOnly;

/// Reply `err` on any reply type.
macro_rules! reply_err {
    ($reply:expr, $err:expr) => {
        $reply.error(errno(&$err))
    };
}

/// Answer an xattr request the Linux way: size 0 asks for the length, a
/// buffer too small gets ERANGE.
fn reply_xattr(bytes: Result<Vec<u8>, FsError>, size: u32, reply: ReplyXattr) {
    match bytes {
        Err(e) => reply_err!(reply, e),
        Ok(bytes) if size == 0 => reply.size(bytes.len() as u32),
        Ok(bytes) if (size as usize) < bytes.len() => reply_err!(reply, FsError::Range),
        Ok(bytes) => reply.data(&bytes),
    }
}

/// Read and answer one request. One reply buffer per thread, reused: the
/// reply is written to the kernel before this returns. A read inside one
/// decoded block is sent straight from the block.
fn serve_read(fs: &Filesystem, fh: u64, offset: u64, size: u32, reply: ReplyData) {
    // Round trips this read waits for share one remote timeout in total.
    let _budget = crate::read_deadline::Scope::begin();
    REPLY.with(|buffer| {
        let mut buffer = buffer.borrow_mut();
        match fs.read_served(fh, offset, size, &mut buffer) {
            Ok(served) => reply.data(served.bytes(&buffer)),
            Err(e) => reply_err!(reply, e),
        }
        if buffer.capacity() > MAX_KEPT_REPLY {
            *buffer = Vec::new();
        }
    });
}

impl FuseAdapter {
    /// The adapter over `fs`.
    pub fn new(fs: Filesystem, options: AdapterOptions) -> FuseAdapter {
        let remote = fs.is_remote();
        FuseAdapter {
            core: Arc::new(Answers {
                fs: Arc::new(fs),
                io_modes: IoModes::new(options.passthrough),
                options,
            }),
            // A local mount never waits on a network: no workers (a job
            // handed to an empty pool runs on its caller).
            waiting: if remote {
                WaitPool::start(REMOTE_WAIT_WORKERS, REMOTE_WAIT_WORKERS_MOST)
            } else {
                WaitPool::start(0, 0)
            },
            remote,
        }
    }

    /// The filesystem served (the daemon tells it the mount's device).
    pub fn filesystem(&self) -> Arc<Filesystem> {
        self.core.fs.clone()
    }

    /// Answer a request that may wait on a remote server: on a waiting
    /// worker for a remote source, here otherwise.
    fn answer(&self, job: impl FnOnce(&Answers) + Send + 'static) {
        if self.remote {
            let core = self.core.clone();
            self.waiting.run(Box::new(move || job(&core)));
        } else {
            job(&self.core);
        }
    }
}

impl Answers {
    fn file_attr(&self, attr: &Attr) -> FileAttr {
        let (kind, nlink) = match attr.kind {
            Kind::Dir => (FileType::Directory, 2),
            Kind::File => (FileType::RegularFile, 1),
            Kind::Symlink => (FileType::Symlink, 1),
        };
        let (uid, gid) = attr.owner.unwrap_or(self.options.mounter);
        FileAttr {
            ino: INodeNo(attr.ino),
            size: attr.size,
            blocks: attr.size.div_ceil(512),
            atime: attr.mtime,
            mtime: attr.mtime,
            ctime: attr.mtime,
            crtime: attr.mtime,
            kind,
            perm: attr.perm,
            nlink,
            uid: self.options.uid.unwrap_or(uid),
            gid: self.options.gid.unwrap_or(gid),
            rdev: 0,
            blksize: 1 << 20,
            flags: 0,
        }
    }

    fn lookup(&self, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        match self.fs.lookup(parent.0, name) {
            Ok(attr) => reply.entry(&self.options.ttl, &self.file_attr(&attr), Generation(0)),
            Err(e) => reply_err!(reply, e),
        }
    }

    fn getattr(&self, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.fs.getattr(ino.0) {
            Ok(attr) => reply.attr(&self.options.ttl, &self.file_attr(&attr)),
            Err(e) => reply_err!(reply, e),
        }
    }

    fn open(&self, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        match self
            .fs
            .open(ino.0, flags.acc_mode() != OpenAccMode::O_RDONLY)
        {
            Ok(opened) => {
                let mut fopen = FopenFlags::empty();
                if opened.keep_cache {
                    fopen |= FopenFlags::FOPEN_KEEP_CACHE;
                }
                if opened.direct_io {
                    fopen |= FopenFlags::FOPEN_DIRECT_IO;
                }
                let cache_entry = (opened.cache_file && !opened.direct_io)
                    .then(|| self.fs.backing(opened.fh))
                    .flatten();
                let backing = match &cache_entry {
                    Some(entry) => Some(Backing::Cache(entry)),
                    None => opened
                        .plain_file
                        .then(|| self.fs.plain_backing(opened.fh))
                        .flatten()
                        .map(Backing::File),
                };
                let fh = FileHandle(opened.fh);
                let passthrough = self.io_modes.open(ino.0, opened.fh, backing, &reply);
                if opened.cache_file {
                    self.fs.note_cache_file_open(passthrough.is_some());
                }
                if opened.plain_file {
                    self.fs.note_plain_open(passthrough.is_some());
                }
                match passthrough {
                    Some(id) => reply.opened_passthrough(fh, FopenFlags::empty(), &id),
                    None => reply.opened(fh, fopen),
                }
            }
            Err(e) => reply_err!(reply, e),
        }
    }

    fn opendir(&self, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.fs.opendir(ino.0) {
            Ok(fh) => reply.opened(FileHandle(fh), FopenFlags::empty()),
            Err(e) => reply_err!(reply, e),
        }
    }

    fn readdir(&self, ino: INodeNo, fh: FileHandle, offset: u64, mut reply: ReplyDirectory) {
        match self.fs.readdir(ino.0, fh.0, offset) {
            Ok(entries) => {
                for (i, (child, kind, name)) in entries.into_iter().enumerate() {
                    let kind = match kind {
                        Kind::Dir => FileType::Directory,
                        Kind::File => FileType::RegularFile,
                        Kind::Symlink => FileType::Symlink,
                    };
                    // The offset given is the cookie of the *next* entry.
                    if reply.add(INodeNo(child), offset + i as u64 + 1, kind, &name) {
                        break;
                    }
                }
                reply.ok();
            }
            Err(e) => reply_err!(reply, e),
        }
    }

    fn getxattr(&self, ino: INodeNo, name: &OsStr, size: u32, reply: ReplyXattr) {
        reply_xattr(self.fs.getxattr(ino.0, name), size, reply);
    }

    fn listxattr(&self, ino: INodeNo, size: u32, reply: ReplyXattr) {
        reply_xattr(self.fs.listxattr(ino.0), size, reply);
    }
}

impl FuserFilesystem for FuseAdapter {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        let wanted = InitFlags::FUSE_AUTO_INVAL_DATA | InitFlags::FUSE_PARALLEL_DIROPS;
        if let Err(missing) = config.add_capabilities(wanted) {
            log::debug!("kernel lacks capabilities {missing:?}");
        }
        // Shared mmap of a file opened with direct I/O (Linux 6.6+): a
        // `data` re-read while its disk cache entry fills is one.
        if config
            .add_capabilities(InitFlags::FUSE_DIRECT_IO_ALLOW_MMAP)
            .is_err()
        {
            log::debug!("kernel lacks FUSE_DIRECT_IO_ALLOW_MMAP");
        }
        if self.core.options.passthrough {
            // The cache files live on a plain file system: one level below.
            let granted = config.add_capabilities(InitFlags::FUSE_PASSTHROUGH).is_ok()
                && config.set_max_stack_depth(1).is_ok();
            if !granted {
                log::info!(
                    "the kernel offers no FUSE passthrough: cache files are served by the daemon"
                );
                self.core.io_modes.disable();
            }
        }
        // fuser asks for requests as large as the larger of max_write and
        // max_readahead; nothing is ever written here, so max_write sets it.
        if self.core.options.max_request_kb > 0 {
            let bytes = self.core.options.max_request_kb.saturating_mul(1024);
            if let Err(nearest) = config.set_max_write(bytes) {
                let _ = config.set_max_write(nearest);
            }
        }
        Ok(())
    }

    fn destroy(&mut self) {
        // What the disk cache has queued is written, its maps persisted.
        self.core.fs.flush();
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let name = name.to_os_string();
        self.answer(move |a| a.lookup(parent, &name, reply));
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        self.answer(move |a| a.getattr(ino, fh, reply));
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        use std::os::unix::ffi::OsStrExt;
        match self.core.fs.readlink(ino.0) {
            Ok(target) => reply.data(target.as_bytes()),
            Err(e) => reply_err!(reply, e),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        self.answer(move |a| a.open(ino, flags, reply));
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
        if self.core.fs.may_wait(fh.0) {
            let fs = self.core.fs.clone();
            self.waiting
                .run(Box::new(move || serve_read(&fs, fh.0, offset, size, reply)));
        } else {
            serve_read(&self.core.fs, fh.0, offset, size, reply);
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
        self.core.io_modes.release(_ino.0, fh.0);
        self.core.fs.release(fh.0);
        reply.ok();
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        self.answer(move |a| a.opendir(ino, flags, reply));
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        reply: ReplyDirectory,
    ) {
        self.answer(move |a| a.readdir(ino, fh, offset, reply));
    }

    fn releasedir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        self.core.fs.releasedir(fh.0);
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        reply.statfs(0, 0, 0, 0, 0, 4096, 255, 4096);
    }

    fn getxattr(&self, _req: &Request, ino: INodeNo, name: &OsStr, size: u32, reply: ReplyXattr) {
        let name = name.to_os_string();
        self.answer(move |a| a.getxattr(ino, &name, size, reply));
    }

    fn listxattr(&self, _req: &Request, ino: INodeNo, size: u32, reply: ReplyXattr) {
        self.answer(move |a| a.listxattr(ino, size, reply));
    }

    fn access(&self, _req: &Request, ino: INodeNo, mask: fuser::AccessFlags, reply: ReplyEmpty) {
        match self
            .core
            .fs
            .access(ino.0, mask.contains(fuser::AccessFlags::W_OK))
        {
            Ok(()) => reply.ok(),
            Err(e) => reply_err!(reply, e),
        }
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
        reply_err!(reply, READ_ONLY);
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
        reply_err!(reply, READ_ONLY);
    }

    fn create(
        &self,
        _req: &Request,
        _parent: INodeNo,
        _name: &OsStr,
        _mode: u32,
        _umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        reply_err!(reply, READ_ONLY);
    }

    fn mknod(
        &self,
        _req: &Request,
        _parent: INodeNo,
        _name: &OsStr,
        _mode: u32,
        _umask: u32,
        _rdev: u32,
        reply: ReplyEntry,
    ) {
        reply_err!(reply, READ_ONLY);
    }

    fn mkdir(
        &self,
        _req: &Request,
        _parent: INodeNo,
        _name: &OsStr,
        _mode: u32,
        _umask: u32,
        reply: ReplyEntry,
    ) {
        reply_err!(reply, READ_ONLY);
    }

    fn unlink(&self, _req: &Request, _parent: INodeNo, _name: &OsStr, reply: ReplyEmpty) {
        reply_err!(reply, READ_ONLY);
    }

    fn rmdir(&self, _req: &Request, _parent: INodeNo, _name: &OsStr, reply: ReplyEmpty) {
        reply_err!(reply, READ_ONLY);
    }

    fn setxattr(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _name: &OsStr,
        _value: &[u8],
        _flags: i32,
        _position: u32,
        reply: ReplyEmpty,
    ) {
        reply_err!(reply, READ_ONLY);
    }

    fn removexattr(&self, _req: &Request, _ino: INodeNo, _name: &OsStr, reply: ReplyEmpty) {
        reply_err!(reply, READ_ONLY);
    }
}
