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
//! - write bits are always removed;
//! - a computed array shown to other users (`allow_other`) takes what its
//!   expression file and every file it reads allow together
//!   ([`Access::narrowed_by`]): its readers never learn values derived from
//!   a file they may not read.
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

    /// Who may pass through this folder to what it holds, as read bits: its
    /// `x` bits, in the `r` places (owner and group kept).
    pub fn search_as_read(&self) -> Access {
        Access {
            mode: (self.mode & EXEC) << 2,
            ..*self
        }
    }

    /// Whether anyone but root may read: some read bit is left.
    pub fn readable(&self) -> bool {
        self.mode & READ != 0
    }

    /// The access of something derived from this source and `other` (a
    /// computed array from its expression file and a file it reads), shown
    /// with this source's owner and group: a class of users keeps its read
    /// bit only where every user the kernel puts in that class may read
    /// both, whatever groups that user is in (which the mount cannot know).
    ///
    /// The kernel checks one class, the first that matches: the owner's
    /// bits for the owner, else the group's for members, else the other
    /// bits. So, with `other`'s bits `o`, `g`, `t` (owner, group, other):
    /// - the owner's bit needs `o` when `other` has the same owner, else
    ///   `g` and `t` (the owner reads `other` as a member or as anyone);
    /// - the group's bit needs `o` unless the owners agree (`other`'s owner
    ///   may be a member), and `g` when the groups agree, else `g` and `t`;
    /// - the other bit needs `o` unless the owners agree, and `t` when the
    ///   groups agree, else `g` and `t`.
    ///
    /// With the usual modes (each class granted no more than the one before
    /// it, 0644, 0640, 0600) that is: the AND of the bits where owner and
    /// group agree; where the owners differ, the owner keeps only what
    /// `other` grants everyone; where the groups differ, the group keeps
    /// only that too. Narrowing by several sources, in any order, gives
    /// what all of them allow together.
    pub fn narrowed_by(self, other: Access) -> Access {
        let bit = |mask: u32| other.mode & mask != 0;
        let (o, g, t) = (bit(0o400), bit(0o040), bit(0o004));
        let same_owner = other.uid == self.uid;
        let same_group = other.gid == self.gid;
        // Any user but the owner might be `other`'s owner, who needs `o`.
        let its_owner_reads = same_owner || o;
        let owner = if same_owner { o } else { g && t };
        let group = its_owner_reads && if same_group { g } else { g && t };
        let others = its_owner_reads && if same_group { t } else { g && t };
        let granted = [(owner, 0o400), (group, 0o040), (others, 0o004)]
            .iter()
            .filter(|(kept, _)| *kept)
            .fold(0, |mode, (_, bit)| mode | bit);
        Access {
            mode: self.mode & READ & granted,
            ..self
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

impl std::fmt::Display for Access {
    /// `owner 1000, group 100, mode 0640`, for messages.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "owner {}, group {}, mode {:04o}",
            self.uid, self.gid, self.mode
        )
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

    /// What the kernel decides for `uid` in `groups` (one class, the first
    /// that matches; root aside).
    fn may_read(a: Access, uid: u32, groups: &[u32]) -> bool {
        let class = if uid == a.uid {
            0o400
        } else if groups.contains(&a.gid) {
            0o040
        } else {
            0o004
        };
        a.mode & class != 0
    }

    #[test]
    fn a_computed_array_keeps_what_every_file_allows() {
        let (a, b, g, h) = (1000, 2000, 100, 200);
        let at = |uid, gid, mode| Access { uid, gid, mode };
        let narrowed = |e: Access, o: Access| e.narrowed_by(o).mode;
        // python-blosc2's 0600 store under a 0644 expression: owner only.
        assert_eq!(narrowed(at(a, g, 0o644), at(a, g, 0o600)), 0o400);
        // The same owner and group: the AND of the bits.
        assert_eq!(narrowed(at(a, g, 0o644), at(a, g, 0o640)), 0o440);
        assert_eq!(narrowed(at(a, g, 0o640), at(a, g, 0o644)), 0o440);
        // Another owner, readable by all: nothing lost.
        assert_eq!(narrowed(at(a, g, 0o644), at(b, h, 0o644)), 0o444);
        // Another owner, the same group: the group reads, the owner (maybe
        // not a member) and others do not.
        assert_eq!(narrowed(at(a, g, 0o644), at(b, g, 0o640)), 0o040);
        // Another owner and group, group-readable: nobody but root.
        assert_eq!(narrowed(at(a, g, 0o644), at(b, h, 0o640)), 0);
        assert_eq!(narrowed(at(a, g, 0o644), at(b, g, 0o600)), 0);
        // Another group, readable by all: what the expression grants.
        assert_eq!(narrowed(at(a, g, 0o640), at(b, h, 0o644)), 0o440);
        // Owner and group kept, write and execute bits gone.
        let e = at(a, g, 0o755).narrowed_by(at(b, h, 0o755));
        assert_eq!((e.uid, e.gid, e.mode), (a, g, 0o444));
        // A group shut out while others may read (0604): members may not.
        assert_eq!(narrowed(at(a, g, 0o644), at(a, g, 0o604)), 0o404);
        assert_eq!(narrowed(at(a, g, 0o644), at(b, h, 0o604)), 0);
        // An expression nobody may read stays so.
        assert_eq!(narrowed(at(a, g, 0), at(a, g, 0o644)), 0);
        // Several files, in any order: what they all allow.
        let files = [at(a, g, 0o644), at(b, g, 0o644), at(a, g, 0o640)];
        let forward = files.iter().fold(at(a, g, 0o644), |e, f| e.narrowed_by(*f));
        let backward = files
            .iter()
            .rev()
            .fold(at(a, g, 0o644), |e, f| e.narrowed_by(*f));
        assert_eq!((forward.mode, backward.mode), (0o440, 0o440));
        assert!(at(a, g, 0o400).readable() && !at(a, g, 0o311).readable());
    }

    /// Every pair of read modes and owner/group relations, against every
    /// user (the presented owner, the other file's owner, a stranger) in
    /// every set of groups: a presented bit lets read only users both
    /// files let read (sound), and each bit left out would let in someone
    /// one of them shuts out (nothing withheld that could be granted).
    #[test]
    fn narrowing_is_sound_and_withholds_nothing_it_could_grant() {
        let groups: Vec<Vec<u32>> = (0..8u32)
            .map(|set| {
                [10, 20, 30]
                    .into_iter()
                    .enumerate()
                    .filter(|(i, _)| set & (1 << i) != 0)
                    .map(|(_, gid)| gid)
                    .collect()
            })
            .collect();
        let readers: Vec<(u32, &[u32])> = [1, 2, 3]
            .into_iter()
            .flat_map(|uid| groups.iter().map(move |g| (uid, g.as_slice())))
            .collect();
        let modes: Vec<u32> = (0..8u32)
            .map(|m| ((m & 4) << 6) | ((m & 2) << 4) | ((m & 1) << 2))
            .collect();
        for &expr_mode in &modes {
            for &other_mode in &modes {
                for (uid, gid) in [(1, 10), (1, 20), (2, 10), (2, 20)] {
                    let expr = Access {
                        uid: 1,
                        gid: 10,
                        mode: expr_mode,
                    };
                    let other = Access {
                        uid,
                        gid,
                        mode: other_mode,
                    };
                    let shown = expr.narrowed_by(other);
                    let both = |u: u32, gs: &[u32]| may_read(expr, u, gs) && may_read(other, u, gs);
                    let case = format!("{expr:?} by {other:?}: {:04o}", shown.mode);
                    for &(u, gs) in &readers {
                        assert!(
                            !may_read(shown, u, gs) || both(u, gs),
                            "{case}: lets {u} {gs:?} in"
                        );
                    }
                    for class in [0o400, 0o040, 0o004] {
                        if shown.mode & class != 0 {
                            continue;
                        }
                        let wider = Access {
                            mode: shown.mode | class,
                            ..shown
                        };
                        assert!(
                            readers
                                .iter()
                                .any(|&(u, gs)| may_read(wider, u, gs) && !both(u, gs)),
                            "{case}: withholds {class:04o}"
                        );
                    }
                }
            }
        }
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
