//! Driving `blosc2fs::fs::Filesystem` in-process, as the FUSE adapter
//! does: look a path up, list a folder, read a file whole.

use std::ffi::OsStr;

use blosc2fs::fs::{Attr, Filesystem, FsError, Kind};

/// FUSE's root inode.
pub const ROOT: u64 = 1;

/// Look up a `/`-separated path from the root.
pub fn walk(fs: &Filesystem, path: &str) -> Result<Attr, FsError> {
    let mut attr = fs.getattr(ROOT)?;
    for part in path.split('/').filter(|p| !p.is_empty()) {
        attr = fs.lookup(attr.ino, OsStr::new(part))?;
    }
    Ok(attr)
}

/// Every entry of folder `ino`, `.` and `..` first (opendir, readdir to
/// the end, releasedir).
pub fn entries(fs: &Filesystem, ino: u64) -> Vec<(u64, Kind, String)> {
    let fh = fs.opendir(ino).unwrap();
    let mut out = Vec::new();
    loop {
        let batch = fs.readdir(ino, fh, out.len() as u64).unwrap();
        if batch.is_empty() {
            break;
        }
        out.extend(
            batch
                .into_iter()
                .map(|(i, k, n)| (i, k, n.to_string_lossy().into_owned())),
        );
    }
    fs.releasedir(fh);
    out
}

/// [`entries`] but `.` and `..`.
pub fn children(fs: &Filesystem, ino: u64) -> Vec<(u64, Kind, String)> {
    let mut out = entries(fs, ino);
    out.retain(|(_, _, n)| n != "." && n != "..");
    out
}

/// File `ino` whole (open, read to the end in 64 KiB requests, release).
pub fn read_ino(fs: &Filesystem, ino: u64) -> Result<Vec<u8>, FsError> {
    let fh = fs.open(ino, false)?.fh;
    let mut out = Vec::new();
    loop {
        let got = fs.read(fh, out.len() as u64, 1 << 16)?;
        if got.is_empty() {
            break;
        }
        out.extend_from_slice(&got);
    }
    fs.release(fh);
    Ok(out)
}
