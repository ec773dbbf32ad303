//! The node table: every folder, array and store node a mount has named,
//! a few words each.
//!
//! A node is stored as its parent's number plus its own name, never as a
//! full path: a tree of a million arrays costs a million small records
//! (about 50 bytes plus the name), and a path is built by walking up when
//! one is needed. An index from (parent, name) to the node presenting that
//! name now holds 4 bytes per node. Numbers are never reused (see the inode
//! rule in `docs/design.md`): a name whose source changed gets a new node,
//! and the old one stays, answering ESTALE once nothing holds its version.

use std::ffi::OsStr;
use std::hash::{BuildHasher, RandomState};

use hashbrown::HashTable;

/// Where a node's source lives, which decides what its names are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A local path: the root's path joined with the names up to the node.
    Local,
    /// Inside a store (its kind says which store version and key).
    InStore,
    /// Under a remote root: the names up to the node joined with `/`.
    Remote,
}

/// One record of the table.
#[derive(Debug)]
pub struct Node<K> {
    /// The node of the folder holding it (the root holds itself).
    pub parent: u32,
    /// Its presented name (empty for the root).
    pub name: Box<OsStr>,
    /// Where its source lives.
    pub place: Place,
    /// What it presents.
    pub kind: K,
}

/// The nodes of one mount, numbered from 0 (the root) in discovery order.
#[derive(Debug)]
pub struct Nodes<K> {
    list: Vec<Node<K>>,
    index: HashTable<u32>,
    hasher: RandomState,
}

impl<K> Nodes<K> {
    /// A table holding only the root (node 0).
    pub fn new(place: Place, root: K) -> Nodes<K> {
        let mut nodes = Nodes {
            list: Vec::new(),
            index: HashTable::new(),
            hasher: RandomState::new(),
        };
        nodes.list.push(Node {
            parent: 0,
            name: Box::from(OsStr::new("")),
            place,
            kind: root,
        });
        nodes
    }

    fn hash(&self, parent: u32, name: &OsStr) -> u64 {
        self.hasher.hash_one((parent, name))
    }

    /// Node number `n`.
    pub fn get(&self, n: u32) -> Option<&Node<K>> {
        self.list.get(n as usize)
    }

    /// Every node, in number order.
    pub fn iter(&self) -> impl Iterator<Item = &Node<K>> {
        self.list.iter()
    }

    /// Number of nodes ever named.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Always false: the root is always there.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The node presenting `name` in folder `parent` now.
    pub fn find(&self, parent: u32, name: &OsStr) -> Option<u32> {
        let list = &self.list;
        self.index
            .find(self.hash(parent, name), |&n| {
                list[n as usize].parent == parent && &*list[n as usize].name == name
            })
            .copied()
    }

    /// Add a node presenting `name` in folder `parent` (from now on the one
    /// [`Self::find`] gives); its number.
    pub fn add(&mut self, parent: u32, name: &OsStr, place: Place, kind: K) -> u32 {
        let n = self.list.len() as u32;
        let hash = self.hash(parent, name);
        let list = &self.list;
        match self.index.find_mut(hash, |&m| {
            list[m as usize].parent == parent && &*list[m as usize].name == name
        }) {
            Some(slot) => *slot = n,
            None => {
                let (list, hasher) = (&self.list, &self.hasher);
                self.index.insert_unique(hash, n, |&m| {
                    let node = &list[m as usize];
                    hasher.hash_one((node.parent, &*node.name))
                });
            }
        }
        self.list.push(Node {
            parent,
            name: Box::from(name),
            place,
            kind,
        });
        n
    }

    /// The names from the root down to node `n` (the root's own excluded).
    pub fn names(&self, n: u32) -> Vec<&OsStr> {
        let mut names = Vec::new();
        let mut at = n;
        while at != 0 {
            let Some(node) = self.get(at) else { break };
            names.push(&*node.name);
            at = node.parent;
        }
        names.reverse();
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_find_their_newest_node_and_paths_walk_up() {
        let mut nodes: Nodes<&str> = Nodes::new(Place::Local, "root");
        let a = nodes.add(0, OsStr::new("a"), Place::Local, "dir a");
        let x = nodes.add(a, OsStr::new("x.b2nd"), Place::Local, "array x");
        let other_x = nodes.add(0, OsStr::new("x.b2nd"), Place::Local, "array x at the root");
        assert_eq!(nodes.find(a, OsStr::new("x.b2nd")), Some(x));
        assert_eq!(nodes.find(0, OsStr::new("x.b2nd")), Some(other_x));
        assert_eq!(nodes.find(0, OsStr::new("y")), None);
        let newer = nodes.add(a, OsStr::new("x.b2nd"), Place::Local, "array x changed");
        assert_eq!(
            nodes.find(a, OsStr::new("x.b2nd")),
            Some(newer),
            "a changed source is a new node"
        );
        assert_eq!(
            nodes.get(x).unwrap().kind,
            "array x",
            "the old node keeps its number"
        );
        assert_eq!(nodes.names(newer), [OsStr::new("a"), OsStr::new("x.b2nd")]);
        assert!(nodes.names(0).is_empty());
        // Many names: the index grows and still finds each.
        for i in 0..5000 {
            nodes.add(a, OsStr::new(&format!("n{i}")), Place::Local, "many");
        }
        for i in (0..5000).step_by(97) {
            let n = nodes.find(a, OsStr::new(&format!("n{i}"))).unwrap();
            assert_eq!(&*nodes.get(n).unwrap().name, OsStr::new(&format!("n{i}")));
        }
        assert_eq!(nodes.len(), 5005);
    }
}
