//! Local folders as the tree lists them: which entries of a source
//! directory are shown, and as what (a folder, an array, a store), without
//! ever touching what must not be touched.
//!
//! Arrays are recognised by their extension or, for other regular files, by
//! sniffing their first bytes; stores by their extension; a directory
//! holding a sparse frame's index is an array; any other regular file is a
//! plain file (which the folder's listing rules,
//! [`super::folder_listing`], show as itself or leave out). FIFOs, sockets
//! and device nodes are never opened.
//!
//! The walk is fenced ([`Fence`]): the mount's own mountpoint, when it lies
//! in the source, is never stat'ed, listed or opened (the daemon would wait
//! on its own requests), nor anything on the mount's device. Symlinks are
//! resolved here component by component ([`resolve`]) rather than by the
//! kernel, so the fence holds for a link into the mountpoint too; they are
//! followed only when they resolve inside the source root.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use crate::format::Version;
use crate::format::SPARSE_INDEX;
use crate::source::fds::retry_exhausted;
use crate::source::store::StoreFormat;
use crate::source::{file_version, sniff_frame, FileSource};

use super::access::Access;
use super::folder_listing::Sort;
use super::index_sidecar::LocalSidecars;

/// Extensions shown without looking inside the file.
pub const KNOWN_EXTENSIONS: [&str; 4] = ["b2nd", "b2frame", "b2f", "b2"];

/// Most symlinks followed while resolving one path (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// What a local directory entry is shown as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// A folder.
    Dir,
    /// An array folder.
    Array,
    /// A store of this format, shown as a folder of its keys.
    Store(StoreFormat),
    /// Any other regular file, shown as itself.
    Plain,
}

/// A shown entry: its class, where it really is when it was reached
/// through a symlink, and, for a regular file, its version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownEntry {
    /// What it is shown as.
    pub class: Class,
    /// The resolved path, when the entry is a symlink.
    pub linked: Option<PathBuf>,
    /// A regular file's version as found (device, inode, size, mtime);
    /// `None` for a directory.
    pub file: Option<Version>,
}

impl ShownEntry {
    /// What the folder's listing rules see of it.
    pub fn sort(&self) -> Sort {
        match self.class {
            Class::Dir => Sort::Folder,
            Class::Plain => Sort::Plain,
            Class::Array | Class::Store(_) => Sort::Object {
                file: self.file.is_some(),
            },
        }
    }
}

/// What the walk never touches: the mount's own mountpoint and anything on
/// the mount's own device.
#[derive(Debug, Default)]
pub struct Fence {
    paths: Vec<PathBuf>,
    /// The mount's device number, once mounted (0: not known yet).
    dev: AtomicU64,
}

impl Fence {
    /// A fence around `mountpoint` (made canonical by the caller, before
    /// mounting).
    pub fn new(mountpoint: Option<&Path>) -> Fence {
        Fence {
            paths: mountpoint.map(Path::to_path_buf).into_iter().collect(),
            dev: AtomicU64::new(0),
        }
    }

    /// The mount is up: its device number, to refuse whatever lives on it.
    pub fn set_device(&self, dev: u64) {
        self.dev.store(dev, Ordering::Relaxed);
    }

    /// Whether `path` (real, absolute) is fenced off.
    pub fn blocks(&self, path: &Path) -> bool {
        self.paths.iter().any(|p| p == path)
    }

    /// Whether `meta` is of something on the mount's own device.
    fn on_mount(&self, meta: &std::fs::Metadata) -> bool {
        let dev = self.dev.load(Ordering::Relaxed);
        dev != 0 && meta.dev() == dev
    }
}

/// The real path of `path` (absolute), resolving symlinks one component at
/// a time and refusing any step onto the fence; `None` when it cannot be
/// resolved, loops, or crosses the fence.
pub fn resolve(path: &Path, fence: &Fence) -> Option<PathBuf> {
    let mut out = PathBuf::from("/");
    let mut pending: Vec<OsString> = components(path);
    pending.reverse();
    let mut links = 0;
    while let Some(part) = pending.pop() {
        if part == "." {
            continue;
        }
        if part == ".." {
            out.pop();
            continue;
        }
        let next = out.join(&part);
        if fence.blocks(&next) {
            return None;
        }
        let meta = std::fs::symlink_metadata(&next).ok()?;
        if fence.on_mount(&meta) {
            return None;
        }
        if meta.file_type().is_symlink() {
            links += 1;
            if links > MAX_LINKS {
                return None;
            }
            let target = std::fs::read_link(&next).ok()?;
            if target.is_absolute() {
                out = PathBuf::from("/");
            }
            pending.extend(components(&target).into_iter().rev());
        } else {
            out = next;
        }
    }
    Some(out)
}

fn components(path: &Path) -> Vec<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::CurDir => Some(OsString::from(".")),
            Component::RootDir | Component::Prefix(_) => None,
        })
        .collect()
}

/// Decide whether entry `name` of the source directory really at `dir` is
/// shown, and as what. Symlinks are followed only when they resolve inside
/// the source root; nothing on the fence is touched. An index sidecar its
/// array names is not shown (it is under the array's `indexes/`).
pub fn classify(root: &Path, fence: &Fence, dir: &Path, name: &OsStr) -> Option<ShownEntry> {
    classify_among(root, fence, dir, name, &mut LocalSidecars::default())
}

/// [`classify`], with the sidecars of the listing so far in `sidecars`.
fn classify_among(
    root: &Path,
    fence: &Fence,
    dir: &Path,
    name: &OsStr,
    sidecars: &mut LocalSidecars,
) -> Option<ShownEntry> {
    let path = dir.join(name);
    if fence.blocks(&path) {
        log::debug!("not listing {}: the mount's own mountpoint", path.display());
        return None;
    }
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if fence.on_mount(&meta) {
        return None;
    }
    let (target, linked) = if meta.file_type().is_symlink() {
        let resolved = resolve(&path, fence)?;
        if !resolved.starts_with(root) {
            log::debug!(
                "not following {} (points outside the source)",
                path.display()
            );
            return None;
        }
        (resolved.clone(), Some(resolved))
    } else {
        (path.clone(), None)
    };
    let meta = if linked.is_some() {
        std::fs::metadata(&target).ok()?
    } else {
        meta
    };
    let file = meta.is_file().then(|| file_version(&meta));
    let found = |class| {
        Some(ShownEntry {
            class,
            linked: linked.clone(),
            file: file.clone(),
        })
    };
    if let Some(format) = StoreFormat::of_path(&target) {
        return found(Class::Store(format));
    }
    if meta.is_dir() {
        let index = target.join(SPARSE_INDEX);
        let sparse = !fence.blocks(&index) && index.is_file();
        return found(if sparse { Class::Array } else { Class::Dir });
    }
    if !meta.is_file() {
        // FIFOs, sockets, devices: never opened.
        return None;
    }
    let known = path
        .extension()
        .and_then(OsStr::to_str)
        .is_some_and(|e| KNOWN_EXTENSIONS.contains(&e));
    if let Some(name) = name.to_str() {
        if sidecars.is_sidecar(dir, name, |base| !fence.blocks(base)) {
            return None;
        }
    }
    if known || FileSource::open_once(&target).is_ok_and(|source| sniff_frame(&source)) {
        found(Class::Array)
    } else {
        found(Class::Plain)
    }
}

/// Children of the source directory really at `dir`: (name, what it is),
/// sorted by name.
pub fn scan(
    root: &Path,
    fence: &Fence,
    dir: &Path,
) -> std::io::Result<Vec<(OsString, ShownEntry)>> {
    let mut out = Vec::new();
    let mut sidecars = LocalSidecars::default();
    for item in retry_exhausted(|| std::fs::read_dir(dir))? {
        let Ok(item) = item else { continue };
        let name = item.file_name();
        if let Some(found) = classify_among(root, fence, dir, &name, &mut sidecars) {
            out.push((name, found));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// Modification time and access of a mirrored directory (a directory that
/// cannot be stat'ed any more is shown to root only).
pub fn node_meta(path: &Path) -> (SystemTime, Access) {
    match std::fs::metadata(path) {
        Ok(meta) => (
            meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            Access::of(&meta),
        ),
        Err(_) => (SystemTime::UNIX_EPOCH, Access::DENY),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn resolve_follows_links_by_hand_and_stops_at_the_fence() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir(root.join("mnt")).unwrap();
        symlink("a/b", root.join("tob")).unwrap();
        symlink("../mnt", root.join("a/tomnt")).unwrap();
        symlink("self", root.join("self")).unwrap();
        let open = Fence::default();
        assert_eq!(
            resolve(&root.join("tob/../b"), &open),
            Some(root.join("a/b"))
        );
        assert_eq!(
            resolve(&root.join("a/tomnt"), &open),
            Some(root.join("mnt"))
        );
        assert_eq!(
            resolve(&root.join("self"), &open),
            None,
            "a link to itself loops"
        );
        let fenced = Fence::new(Some(&root.join("mnt")));
        assert_eq!(
            resolve(&root.join("a/tomnt"), &fenced),
            None,
            "never onto the mountpoint"
        );
        assert_eq!(
            classify(&root, &fenced, &root.join("a"), OsStr::new("tomnt")),
            None
        );
        assert_eq!(classify(&root, &fenced, &root, OsStr::new("mnt")), None);
        assert_eq!(
            classify(&root, &fenced, &root, OsStr::new("tob")),
            Some(ShownEntry {
                class: Class::Dir,
                linked: Some(root.join("a/b")),
                file: None,
            })
        );
    }
}
