//! The inodes of an array's Zarr v3 chunk tree `c/<i>/<j>/...`: its chunk
//! files are the chunk inodes of `chunks/` (the same file under a second
//! name, served by the same read path), and its folders take chunk numbers
//! from the top of the chunk range down, so every inode number stays a pure
//! function of (node, role) as the inode rule requires.
//!
//! The tree is reached by lookup only: the array folder does not list `c`
//! (so `ls`, `find`, `du` and `cp -r` never walk millions of chunk keys),
//! but each folder of the tree lists its own children.

use crate::format::linear;
use crate::views::zarr3::{parse_coord, CDirs};
use crate::views::Kind;

use super::inode::{Role, MAX_CHUNK_FILES};

/// What a chunk-numbered inode of an array with a chunk tree is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slot {
    /// Chunk file number `c` (C order over the grid).
    Chunk(u64),
    /// The tree folder at `prefix` (`c` itself for an empty prefix).
    Dir(Vec<u64>),
}

/// The chunk tree of an array whose chunk grid is `grid` and which has
/// `nchunks` chunks.
#[derive(Debug, Clone, Copy)]
pub struct ChunkTree<'a> {
    grid: &'a [u64],
    dirs: CDirs<'a>,
    nchunks: u64,
    /// Folders the numbering can name (0 when the tree does not fit, or
    /// for a 0-d array, whose only chunk is the file `c`).
    ndirs: u64,
}

impl<'a> ChunkTree<'a> {
    /// The tree of `grid`, `nchunks` chunks.
    pub fn new(grid: &'a [u64], nchunks: u64) -> ChunkTree<'a> {
        let dirs = CDirs::new(grid);
        let ndirs = dirs
            .count()
            .filter(|&n| nchunks.checked_add(n).is_some_and(|t| t <= MAX_CHUNK_FILES))
            .unwrap_or(0);
        ChunkTree {
            grid,
            dirs,
            nchunks,
            ndirs,
        }
    }

    /// What `c` names in the array folder: the tree's top folder, or for a
    /// 0-d array its one chunk.
    pub fn top(&self) -> Option<Role> {
        if self.dirs.rank() == 0 {
            return (self.nchunks == 1).then_some(Role::Chunk(0));
        }
        self.dir_role(&[])
    }

    fn dir_role(&self, prefix: &[u64]) -> Option<Role> {
        let n = self.dirs.number(prefix);
        (n < self.ndirs).then(|| Role::Chunk(MAX_CHUNK_FILES - 1 - n))
    }

    /// What the chunk number `c` of a [`Role::Chunk`] is.
    pub fn slot(&self, c: u64) -> Option<Slot> {
        if c < self.nchunks {
            return Some(Slot::Chunk(c));
        }
        let n = (MAX_CHUNK_FILES - 1).checked_sub(c)?;
        if n >= self.ndirs {
            return None;
        }
        self.dirs.prefix(n).map(Slot::Dir)
    }

    /// The entry `name` in the tree folder at `prefix`.
    pub fn child(&self, prefix: &[u64], name: &str) -> Option<Role> {
        let coord = parse_coord(name, self.dirs.extent(prefix.len()))?;
        let mut coords = prefix.to_vec();
        coords.push(coord);
        if coords.len() == self.dirs.rank() {
            Some(Role::Chunk(linear(&coords, self.grid)))
        } else {
            self.dir_role(&coords)
        }
    }

    /// The role of the folder holding the tree folder at `prefix` (`None`:
    /// the array folder itself).
    pub fn parent(&self, prefix: &[u64]) -> Option<Role> {
        let up = prefix.split_last()?.1;
        self.dir_role(up)
    }

    /// Entries `from..from + limit` of the tree folder at `prefix`.
    pub fn entries(&self, prefix: &[u64], from: u64, limit: usize) -> Vec<(Role, Kind, String)> {
        let extent = self.dirs.extent(prefix.len());
        let kind = if prefix.len() + 1 == self.dirs.rank() {
            Kind::File
        } else {
            Kind::Dir
        };
        (from..extent)
            .take(limit)
            .filter_map(|i| {
                let name = i.to_string();
                Some((self.child(prefix, &name)?, kind, name))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_and_chunks_of_a_3d_tree() {
        let grid = [2, 3, 4];
        let tree = ChunkTree::new(&grid, 24);
        let top = tree.top().unwrap();
        assert_eq!(top, Role::Chunk(MAX_CHUNK_FILES - 1));
        let Role::Chunk(c) = top else { unreachable!() };
        assert_eq!(tree.slot(c), Some(Slot::Dir(vec![])));
        let one = tree.child(&[], "1").unwrap();
        let Role::Chunk(c1) = one else { unreachable!() };
        assert_eq!(tree.slot(c1), Some(Slot::Dir(vec![1])));
        assert_eq!(tree.parent(&[1]), Some(top));
        assert_eq!(tree.parent(&[]), None);
        let Role::Chunk(c12) = tree.child(&[1], "2").unwrap() else {
            unreachable!()
        };
        assert_eq!(tree.slot(c12), Some(Slot::Dir(vec![1, 2])));
        // c/1/2/3 is chunk (1, 2, 3): 1*12 + 2*4 + 3.
        assert_eq!(tree.child(&[1, 2], "3"), Some(Role::Chunk(23)));
        assert_eq!(tree.slot(23), Some(Slot::Chunk(23)));
        assert_eq!(tree.child(&[1, 2], "4"), None);
        assert_eq!(tree.child(&[], "2"), None);
        assert_eq!(tree.child(&[], "01"), None);
        assert_eq!(tree.slot(24), None);
        let names: Vec<_> = tree
            .entries(&[0, 1], 1, 2)
            .into_iter()
            .map(|e| (e.0, e.1, e.2))
            .collect();
        assert_eq!(
            names,
            [
                (Role::Chunk(5), Kind::File, "1".to_string()),
                (Role::Chunk(6), Kind::File, "2".to_string())
            ]
        );
        assert_eq!(tree.entries(&[], 0, 10).len(), 2);
        assert_eq!(tree.entries(&[], 0, 10)[0].1, Kind::Dir);
    }

    #[test]
    fn a_0d_array_has_the_file_c_and_a_1d_one_a_flat_folder() {
        assert_eq!(ChunkTree::new(&[], 1).top(), Some(Role::Chunk(0)));
        let grid = [3];
        let tree = ChunkTree::new(&grid, 3);
        assert_eq!(tree.child(&[], "2"), Some(Role::Chunk(2)));
        assert_eq!(tree.entries(&[], 0, 9).len(), 3);
        // An empty array: a folder with no chunk in it.
        let grid = [0];
        let tree = ChunkTree::new(&grid, 0);
        assert!(tree.top().is_some() && tree.entries(&[], 0, 9).is_empty());
    }
}
