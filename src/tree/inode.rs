//! Inode numbers: deterministic from (node, role, chunk), never refcounted.
//!
//! The kernel sends no FORGET for invalidated inodes, so numbers must mean
//! the same thing for the whole life of a mount. A node is a source
//! directory or array (numbered in discovery order); its presented files
//! take the low 32 bits. FUSE's root (1) is node 0's own directory.

/// What an inode presents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The node itself: a mirrored source directory or an array's directory.
    Node,
    /// An array's `meta.json`.
    MetaJson,
    /// An array's `data` file: its bytes in C order.
    Data,
    /// An array's `data.npy`: an `.npy` header followed by the data.
    Npy,
    /// An array's `chunks/` directory.
    ChunksDir,
    /// The `.zarray` document inside `chunks/`.
    Zarray,
    /// The mount's `.stats` file (only node 0, the root, has one).
    Stats,
    /// An array's `data.txt`: its values as fixed-width text.
    Text,
    /// An array's `preview.png`: a picture of it.
    Preview,
    /// An ObjectArray/BatchArray's `items.jsonl`.
    Items,
    /// A CTable's `table.csv`.
    TableCsv,
    /// A chunk's file in `chunks/`, by chunk number (C order over the chunk
    /// grid); the number must be below [`MAX_CHUNK_FILES`].
    Chunk(u64),
}

const CHUNK_BASE: u64 = 16;
/// Most chunks a `chunks/` directory can name with this numbering.
pub const MAX_CHUNK_FILES: u64 = (1 << 32) - CHUNK_BASE;

fn role_code(role: Role) -> u64 {
    match role {
        Role::Node => 0,
        Role::MetaJson => 1,
        Role::Data => 2,
        Role::Npy => 3,
        Role::ChunksDir => 4,
        Role::Zarray => 5,
        Role::Stats => 6,
        Role::Text => 7,
        Role::Preview => 8,
        Role::Items => 9,
        Role::TableCsv => 10,
        Role::Chunk(c) => CHUNK_BASE + c,
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
        0 => Role::Node,
        1 => Role::MetaJson,
        2 => Role::Data,
        3 => Role::Npy,
        4 => Role::ChunksDir,
        5 => Role::Zarray,
        6 => Role::Stats,
        7 => Role::Text,
        8 => Role::Preview,
        9 => Role::Items,
        10 => Role::TableCsv,
        c if c >= CHUNK_BASE => Role::Chunk(c - CHUNK_BASE),
        _ => return None,
    };
    Some((node, role))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_one_and_roundtrips() {
        assert_eq!(encode(0, Role::Node), 1);
        for (node, role) in [(0, Role::Stats), (7, Role::Data), (2, Role::Text), (2, Role::Preview), (5, Role::Items), (6, Role::TableCsv), (u32::MAX - 1, Role::Chunk(MAX_CHUNK_FILES - 1)), (3, Role::Chunk(0))] {
            assert_eq!(decode(encode(node, role)), Some((node, role)));
        }
        assert_eq!(decode(0), None);
        assert_eq!(decode(12), None);
    }
}
