//! Local folders as the tree lists them: which entries of a source
//! directory are shown, and as what (a folder, an array, a store).
//!
//! Arrays are recognised by their extension or, for other regular files, by
//! sniffing their first bytes; stores by their extension; a directory
//! holding a sparse frame's index is an array. Symlinks are followed only
//! when they resolve inside the source root.

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::time::SystemTime;

use crate::format::SPARSE_INDEX;
use crate::source::store::StoreFormat;
use crate::source::{sniff_frame, FileSource};

use super::access::Access;

/// Extensions shown without looking inside the file.
pub const KNOWN_EXTENSIONS: [&str; 4] = ["b2nd", "b2frame", "b2f", "b2"];

/// What a local directory entry is shown as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// A folder.
    Dir,
    /// An array folder.
    Array,
    /// A store of this format, shown as a folder of its keys.
    Store(StoreFormat),
}

/// Decide whether a source directory entry is shown, and as what.
/// Symlinks are followed only when they resolve inside the source root.
pub fn classify(root: &Path, path: &Path) -> Option<Class> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let target = if meta.file_type().is_symlink() {
        let resolved = std::fs::canonicalize(path).ok()?;
        if !resolved.starts_with(root) {
            log::debug!("not following {} (points outside the source)", path.display());
            return None;
        }
        resolved
    } else {
        path.to_path_buf()
    };
    if let Some(format) = StoreFormat::of_path(&target) {
        return Some(Class::Store(format));
    }
    let meta = std::fs::metadata(&target).ok()?;
    if meta.is_dir() {
        return Some(if target.join(SPARSE_INDEX).is_file() { Class::Array } else { Class::Dir });
    }
    if !meta.is_file() {
        return None;
    }
    let known = path.extension().and_then(OsStr::to_str).is_some_and(|e| KNOWN_EXTENSIONS.contains(&e));
    if known || FileSource::open(&target).is_ok_and(|source| sniff_frame(&source)) {
        Some(Class::Array)
    } else {
        None
    }
}

/// Children of a mirrored source directory: (name, class), sorted by name.
pub fn scan(root: &Path, dir: &Path) -> std::io::Result<Vec<(OsString, Class)>> {
    let mut out = Vec::new();
    for item in std::fs::read_dir(dir)? {
        let Ok(item) = item else { continue };
        let name = item.file_name();
        if let Some(class) = classify(root, &item.path()) {
            out.push((name, class));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// Modification time and access of a mirrored directory (a directory that
/// cannot be stat'ed any more is shown to root only).
pub fn node_meta(path: &Path) -> (SystemTime, Access) {
    match std::fs::metadata(path) {
        Ok(meta) => (meta.modified().unwrap_or(SystemTime::UNIX_EPOCH), Access::of(&meta)),
        Err(_) => (SystemTime::UNIX_EPOCH, Access::DENY),
    }
}
