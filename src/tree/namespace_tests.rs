//! The namespace's own rules, with no mount: which node a name gets and
//! keeps, how a symlink up the tree is shown, where a node is, and which
//! inodes a `--views` choice hides.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::tree::inode::{decode, encode};
use crate::views::ViewSet;

/// A 2-D `<f4` array of 45 x 37 (python-blosc2 made it; see the fixtures'
/// manifest).
fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codec_blosclz_shuffle.b2nd")
}

/// A source folder: `sub/a.b2nd`, `sub/up` (a symlink to the source root),
/// `sub/here` (to `sub` itself) and `elsewhere` (a symlink to `sub`, not
/// above itself).
fn source() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::copy(fixture(), sub.join("a.b2nd")).unwrap();
    std::os::unix::fs::symlink("..", sub.join("up")).unwrap();
    std::os::unix::fs::symlink(".", sub.join("here")).unwrap();
    std::os::unix::fs::symlink("sub", dir.path().join("elsewhere")).unwrap();
    dir
}

fn tree(root: &Path) -> Tree {
    Tree::new(root, None, Arc::new(MetaCache::new(1 << 20))).unwrap()
}

fn node_of(tree: &Tree, parent: u64, name: &str) -> u32 {
    let attr = tree.lookup(parent, OsStr::new(name)).unwrap();
    let (node, role) = decode(attr.ino).unwrap();
    assert_eq!(role, Role::Node, "{name}");
    node
}

#[test]
fn loop_targets_climb_one_folder_per_level() {
    assert_eq!(loop_target(0), PathBuf::from("."));
    assert_eq!(loop_target(1), PathBuf::from(".."));
    assert_eq!(loop_target(3), PathBuf::from("../../.."));
}

/// A name keeps its node while it presents the same thing; the root is
/// node 0 at the canonical source path, and a child's place is its
/// presented path.
#[test]
fn a_name_keeps_its_node_and_its_place() {
    let dir = source();
    let tree = tree(dir.path());
    let root_path = std::fs::canonicalize(dir.path()).unwrap();
    assert!(matches!(tree.location(0), Ok(Location::Local(p)) if p == root_path));
    let root = encode(0, Role::Node);
    let sub = node_of(&tree, root, "sub");
    assert_eq!(node_of(&tree, root, "sub"), sub);
    assert!(matches!(tree.node_info(sub), Ok((0, NodeKind::Dir(None)))));
    assert!(matches!(tree.location(sub), Ok(Location::Local(p)) if p == root_path.join("sub")));
    let a = node_of(&tree, encode(sub, Role::Node), "a.b2nd");
    assert!(matches!(tree.node_info(a), Ok((p, NodeKind::Array(_))) if p == sub));
    assert_eq!(node_of(&tree, encode(sub, Role::Node), "a.b2nd"), a);
    assert_eq!(tree.folder_ino(a), encode(a, Role::Node));
    // Not a node of this tree (yet).
    assert!(matches!(tree.node_info(1000), Err(FsError::NotFound)));
}

/// A directory symlink to its own folder or one above it is shown as a
/// symlink with a relative target, so a walk sees each folder once; one
/// that points elsewhere is a folder that knows where it really is.
#[test]
fn symlinks_up_the_tree_become_links() {
    let dir = source();
    let tree = tree(dir.path());
    let root = encode(0, Role::Node);
    let sub = encode(node_of(&tree, root, "sub"), Role::Node);
    let up = node_of(&tree, sub, "up");
    assert!(matches!(tree.node_info(up), Ok((_, NodeKind::Link(_)))));
    assert_eq!(
        tree.readlink(encode(up, Role::Node)).unwrap(),
        OsStr::new("..")
    );
    let here = node_of(&tree, sub, "here");
    assert_eq!(
        tree.readlink(encode(here, Role::Node)).unwrap(),
        OsStr::new(".")
    );
    let elsewhere = node_of(&tree, root, "elsewhere");
    assert!(!matches!(
        tree.node_info(elsewhere),
        Ok((_, NodeKind::Link(_)))
    ));
    let real = std::fs::canonicalize(dir.path().join("sub")).unwrap();
    assert!(matches!(tree.node_info(elsewhere), Ok((0, NodeKind::Dir(Some(r)))) if *r == real));
    // Reached through `elsewhere` (whose real folder is `sub`), `up` still
    // names the root, one level above the folder showing it.
    let through = encode(elsewhere, Role::Node);
    let up2 = node_of(&tree, through, "up");
    assert_eq!(
        tree.readlink(encode(up2, Role::Node)).unwrap(),
        OsStr::new("..")
    );
    assert!(tree.readlink(sub).is_err());
}

/// A name whose entry changed class gets a new node (a file replaced by
/// a folder), so an old inode never presents the new thing.
#[test]
fn a_changed_entry_gets_a_new_node() {
    let dir = source();
    let tree = tree(dir.path());
    let sub = encode(node_of(&tree, encode(0, Role::Node), "sub"), Role::Node);
    let a = node_of(&tree, sub, "a.b2nd");
    let path = dir.path().join("sub/a.b2nd");
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    let again = node_of(&tree, sub, "a.b2nd");
    assert_ne!(again, a);
    assert!(matches!(tree.node_info(again), Ok((_, NodeKind::Dir(_)))));
}

/// A mount of one array: the root (inode 1) is its folder, and its files
/// are numbered by a hidden child presenting the current version, whose
/// folder inode is still the root's.
#[test]
fn a_root_array_numbers_its_files_by_a_hidden_child() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("one.b2nd");
    std::fs::copy(fixture(), &file).unwrap();
    let tree = tree(&file);
    let (_, kind) = tree.node_info(0).unwrap();
    assert!(matches!(kind, NodeKind::Array(_)));
    let files = tree.files_node(0, &kind);
    assert_ne!(files, 0);
    assert_eq!(tree.files_node(0, &kind), files);
    assert_eq!(tree.folder_ino(files), encode(0, Role::Node));
    let data = tree
        .lookup(encode(0, Role::Node), OsStr::new("data"))
        .unwrap();
    assert_eq!(decode(data.ino).unwrap().0, files);
    assert_eq!(data.size, 45 * 37 * 4);
}

/// Inodes of files a `--views` choice leaves out are not found, even when
/// asked by number; `data` and the node itself always are.
#[test]
fn views_left_out_are_not_found_by_number() {
    let dir = source();
    let all = tree(dir.path());
    let sub = encode(node_of(&all, encode(0, Role::Node), "sub"), Role::Node);
    let a = encode(node_of(&all, sub, "a.b2nd"), Role::Node);
    let npy = all.lookup(a, OsStr::new("data.npy")).unwrap().ino;
    let data = all.lookup(a, OsStr::new("data")).unwrap().ino;
    let plain = tree(dir.path()).with_views(ViewSet::PLAIN);
    // The same walk numbers the same nodes.
    let sub2 = encode(node_of(&plain, encode(0, Role::Node), "sub"), Role::Node);
    assert_eq!(sub2, sub);
    assert_eq!(encode(node_of(&plain, sub2, "a.b2nd"), Role::Node), a);
    assert!(matches!(plain.decode(npy), Err(FsError::NotFound)));
    assert!(plain.decode(data).is_ok());
    assert!(plain.decode(a).is_ok());
    assert!(matches!(plain.decode(0), Err(FsError::NotFound)));
}
