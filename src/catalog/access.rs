//! Who may read what: every presented entry takes the owner, group and
//! read/execute bits of the source it presents, so a mount never shows
//! anyone what the source hides (the kernel enforces the bits: the mount
//! uses `default_permissions`).
//!
//! The mapping, in one place:
//! - a mirrored source directory keeps its own `r` and `x` bits;
//! - an array file with read bits `r` is presented as a folder with `r` plus
//!   the matching `x` bits (so whoever may read the file may enter the
//!   folder), holding files (`meta.json`, `data`, `chunks/…`, …) with `r`;
//!   the file's own `x` bits are ignored;
//! - a sparse frame (a directory) is read like a file whose read bits are
//!   those its index file grants and its directory lets through (`x`);
//!   owner and group are the directory's;
//! - write bits are always removed.
//!
//! The metadata is captured where the source's version stamp is taken, so an
//! entry's attributes come from the same `stat` as its identity; a `chmod` or
//! `chown` of the source makes a new version.

use std::os::unix::fs::MetadataExt;

/// The owner, group and mode bits of a source, as `stat` gave them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// The source's owner.
    pub uid: u32,
    /// The source's group.
    pub gid: u32,
    /// The source's permission bits (`st_mode & 0o7777`).
    pub mode: u32,
}

/// Read bits of user, group and other.
const READ: u32 = 0o444;
/// Execute (search) bits of user, group and other.
const EXEC: u32 = 0o111;

impl Access {
    /// Nobody but root may enter or read (used when a source cannot be stat'ed).
    pub const DENY: Access = Access {
        uid: 0,
        gid: 0,
        mode: 0,
    };

    /// The access of a file or directory from its metadata.
    pub fn of(meta: &std::fs::Metadata) -> Access {
        Access {
            uid: meta.uid(),
            gid: meta.gid(),
            mode: meta.mode() & 0o7777,
        }
    }

    /// The access of a sparse frame: its directory's owner and group, read
    /// bits that both its index file grants and its directory lets through.
    pub fn of_sparse(dir: &std::fs::Metadata, index: &std::fs::Metadata) -> Access {
        let dir_access = Access::of(dir);
        let read = index.mode() & READ & ((dir_access.mode & EXEC) << 2);
        Access {
            mode: read,
            ..dir_access
        }
    }

    /// The access of the source at `path`: a file's own, a sparse frame's
    /// (a directory holding `chunks.b2frame`) through [`Access::of_sparse`],
    /// any other directory's own (a `.b2d` store).
    pub fn of_path(path: &std::path::Path) -> std::io::Result<Access> {
        let meta = std::fs::metadata(path)?;
        let index = path.join(crate::format::SPARSE_INDEX);
        if meta.is_dir() && index.is_file() {
            Ok(Access::of_sparse(&meta, &std::fs::metadata(index)?))
        } else {
            Ok(Access::of(&meta))
        }
    }

    /// Permission bits of a mirrored source directory: its own `r` and `x`.
    pub fn dir_perm(&self) -> u16 {
        (self.mode & (READ | EXEC)) as u16
    }

    /// Permission bits of a file presented from an array: the source's `r`.
    pub fn file_perm(&self) -> u16 {
        (self.mode & READ) as u16
    }

    /// Permission bits of a folder presented from an array: the source's `r`,
    /// and `x` wherever it has `r`.
    pub fn folder_perm(&self) -> u16 {
        let read = self.mode & READ;
        (read | (read >> 2)) as u16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(mode: u32) -> Access {
        Access {
            uid: 1000,
            gid: 100,
            mode,
        }
    }

    #[test]
    fn write_bits_are_removed_and_read_bits_kept() {
        assert_eq!(access(0o644).file_perm(), 0o444);
        assert_eq!(access(0o600).file_perm(), 0o400);
        assert_eq!(access(0o640).file_perm(), 0o440);
        assert_eq!(access(0o222).file_perm(), 0);
        assert_eq!(access(0o4755).file_perm(), 0o444);
    }

    #[test]
    fn array_folders_can_be_entered_by_whoever_may_read() {
        assert_eq!(access(0o644).folder_perm(), 0o555);
        assert_eq!(access(0o600).folder_perm(), 0o500);
        assert_eq!(access(0o640).folder_perm(), 0o550);
        assert_eq!(access(0o604).folder_perm(), 0o505);
        // x without r on a file gives nothing.
        assert_eq!(access(0o711).folder_perm(), 0o500);
        assert_eq!(access(0o000).folder_perm(), 0);
    }

    #[test]
    fn mirrored_directories_keep_their_own_bits() {
        assert_eq!(access(0o755).dir_perm(), 0o555);
        assert_eq!(access(0o700).dir_perm(), 0o500);
        assert_eq!(access(0o711).dir_perm(), 0o511);
        assert_eq!(access(0o1777).dir_perm(), 0o555);
    }

    #[test]
    fn sparse_frames_need_the_index_r_and_the_directory_x() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("chunks.b2frame");
        std::fs::write(&index, b"").unwrap();
        use std::os::unix::fs::PermissionsExt;
        let set = |p: &std::path::Path, m: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
        };
        let get = || {
            Access::of_sparse(
                &std::fs::metadata(dir.path()).unwrap(),
                &std::fs::metadata(&index).unwrap(),
            )
            .mode
        };
        set(&index, 0o644);
        set(dir.path(), 0o755);
        assert_eq!(get(), 0o444);
        set(dir.path(), 0o750);
        assert_eq!(get(), 0o440);
        set(&index, 0o600);
        assert_eq!(get(), 0o400);
        set(dir.path(), 0o644);
        assert_eq!(get(), 0);
        set(dir.path(), 0o755);
    }
}
