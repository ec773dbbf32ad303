//! Inode numbers: deterministic from (node, role, chunk), never refcounted.
//!
//! The kernel sends no FORGET for invalidated inodes, so numbers must mean
//! the same thing for the whole life of a mount. A node is a source
//! directory or array (numbered in discovery order); its presented files
//! take the low 32 bits. FUSE's root (1) is node 0's own directory.

use crate::views::{FileId, FolderFileId};

/// What an inode presents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The node itself: a mirrored source directory, an array's or a
    /// store folder's directory.
    Node,
    /// One of the fixed-name entries of an array folder (or its `chunks/`),
    /// as the views' table lists them; a folder's own `meta.json` and
    /// `zarr.json` are these too (see [`folder_file_role`]).
    File(FileId),
    /// One of a folder's own files that no array folder has (`.stats`,
    /// `table.csv`, `table.arrow`), as the views' folder-files table lists them.
    Folder(FolderFileId),
    /// A chunk's file in `chunks/`, by chunk number (C order over the chunk
    /// grid); the number must be below [`MAX_CHUNK_FILES`].
    Chunk(u64),
}

const CHUNK_BASE: u64 = 32;
/// Most chunks a `chunks/` directory can name with this numbering.
pub const MAX_CHUNK_FILES: u64 = (1 << 32) - CHUNK_BASE;

/// Each role's number in the low 32 bits; fixed for good (they are inode
/// numbers the kernel and its users may keep).
const CODES: [(Role, u64); 19] = [
    (Role::Node, 0),
    (Role::File(FileId::MetaJson), 1),
    (Role::File(FileId::Data), 2),
    (Role::File(FileId::Npy), 3),
    (Role::File(FileId::ChunksDir), 4),
    (Role::File(FileId::Zarray), 5),
    (Role::Folder(FolderFileId::Stats), 6),
    (Role::File(FileId::Text), 7),
    (Role::File(FileId::Preview), 8),
    (Role::File(FileId::Items), 9),
    (Role::Folder(FolderFileId::TableCsv), 10),
    (Role::File(FileId::Nrrd), 11),
    (Role::File(FileId::MetaImage), 12),
    (Role::File(FileId::Envi), 13),
    (Role::File(FileId::ZarrJson), 14),
    (Role::Folder(FolderFileId::TableArrow), 15),
    (Role::File(FileId::Valid), 16),
    (Role::File(FileId::ValidNpy), 17),
    (Role::File(FileId::Interleaved), 18),
];

/// The role of a folder's own file `id`: a folder's `meta.json` and
/// `zarr.json` share the roles (and numbers) of an array folder's files of
/// those names; the others are [`Role::Folder`].
pub fn folder_file_role(id: FolderFileId) -> Role {
    match id {
        FolderFileId::MetaJson => Role::File(FileId::MetaJson),
        FolderFileId::ZarrJson => Role::File(FileId::ZarrJson),
        id => Role::Folder(id),
    }
}

fn role_code(role: Role) -> u64 {
    match role {
        Role::Chunk(c) => CHUNK_BASE + c,
        role => CODES
            .iter()
            .find(|(r, _)| *r == role)
            .map_or(0, |(_, code)| *code),
    }
}

/// The inode number of `role` of node `node`: never 0, the same for the same
/// inputs for the whole mount, and 1 for node 0's [`Role::Node`] (the FUSE
/// root). Distinct inputs give distinct numbers as long as chunk numbers stay
/// below [`MAX_CHUNK_FILES`] (and `node` below `u32::MAX`).
pub fn encode(node: u32, role: Role) -> u64 {
    (((node as u64) << 32) | role_code(role)) + 1
}

/// The node and role `ino` was made from by [`encode`]; `None` for 0 and
/// for numbers no role encodes to.
pub fn decode(ino: u64) -> Option<(u32, Role)> {
    let raw = ino.checked_sub(1)?;
    let node = (raw >> 32) as u32;
    let role = match raw & 0xffff_ffff {
        c if c >= CHUNK_BASE => Role::Chunk(c - CHUNK_BASE),
        c => CODES.iter().find(|(_, code)| *code == c)?.0,
    };
    Some((node, role))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_one_and_roundtrips() {
        assert_eq!(encode(0, Role::Node), 1);
        for (node, role) in [
            (0, Role::Folder(FolderFileId::Stats)),
            (7, Role::File(FileId::Data)),
            (2, Role::File(FileId::Text)),
            (2, Role::File(FileId::Preview)),
            (5, Role::File(FileId::Items)),
            (6, Role::Folder(FolderFileId::TableCsv)),
            (6, Role::Folder(FolderFileId::TableArrow)),
            (u32::MAX - 1, Role::Chunk(MAX_CHUNK_FILES - 1)),
            (3, Role::Chunk(0)),
        ] {
            assert_eq!(decode(encode(node, role)), Some((node, role)));
        }
        // The numbers of a mount's files do not move between releases.
        assert_eq!(encode(0, Role::File(FileId::MetaJson)), 2);
        assert_eq!(encode(1, Role::File(FileId::Zarray)), (1 << 32) + 6);
        assert_eq!(encode(0, Role::Folder(FolderFileId::TableCsv)), 11);
        assert_eq!(encode(0, Role::Folder(FolderFileId::Stats)), 7);
        assert_eq!(encode(0, Role::Chunk(0)), CHUNK_BASE + 1);
        assert_eq!(decode(0), None);
        assert_eq!(encode(0, Role::File(FileId::Envi)), 14);
        assert_eq!(encode(0, Role::File(FileId::ZarrJson)), 15);
        assert_eq!(encode(0, Role::Folder(FolderFileId::TableArrow)), 16);
        // Every file id has its own number.
        for f in crate::views::ARRAY_FILES {
            let ino = encode(4, Role::File(f.id));
            assert_eq!(decode(ino), Some((4, Role::File(f.id))), "{}", f.name);
        }
        // Every folder file has a number, a folder's meta.json and zarr.json
        // those of the array files of the same names.
        for f in crate::views::FOLDER_FILES {
            let role = folder_file_role(f.id);
            assert_eq!(decode(encode(4, role)), Some((4, role)), "{}", f.name);
            assert_ne!(encode(4, role), encode(4, Role::Node), "{}", f.name);
        }
        assert_eq!(
            folder_file_role(FolderFileId::MetaJson),
            Role::File(FileId::MetaJson)
        );
    }
}
