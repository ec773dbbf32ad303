//! The member files of a `.b2d` store kept somewhere other than a local
//! directory (a prefix of an object store): the store reads its listing and
//! opens its members through this trait, so the key logic (which files are
//! values, the embed frame, `__vlmeta__`) stays the same wherever the files
//! live.

use std::sync::Arc;

use crate::format::byte_source::ByteSource;
use crate::format::Problem;

/// The files of one `.b2d` directory kept elsewhere.
pub trait MemberFiles: Send + Sync + std::fmt::Debug {
    /// Every file under the directory (nested ones too), as a path relative
    /// to it (`/`-separated), in name order.
    fn list(&self) -> Result<Vec<String>, Problem>;

    /// Whether the file `rel` (no value extension) starts like a frame.
    fn is_frame(&self, rel: &str) -> bool;

    /// Open the file `rel` as a byte source.
    fn open(&self, rel: &str) -> Result<Arc<dyn ByteSource>, Problem>;

    /// Open the embed frame (`embed.b2e`), or `None` when the directory has none.
    fn open_embed(&self) -> Result<Option<Arc<dyn ByteSource>>, Problem>;
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::source::file::FileSource;
    use crate::source::store::{Store, StoreFormat, EMBED_NAME};

    /// A local `.b2d` reached through the trait, as a remote prefix is.
    #[derive(Debug)]
    struct Local(PathBuf);

    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let mut items: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        items.sort();
        for p in items {
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push(p.strip_prefix(root).unwrap().to_str().unwrap().to_string());
            }
        }
    }

    impl MemberFiles for Local {
        fn list(&self) -> Result<Vec<String>, Problem> {
            let mut out = Vec::new();
            walk(&self.0, &self.0, &mut out);
            Ok(out)
        }
        fn is_frame(&self, rel: &str) -> bool {
            FileSource::open(&self.0.join(rel)).is_ok_and(|s| crate::source::open::sniff_frame(&s))
        }
        fn open(&self, rel: &str) -> Result<Arc<dyn ByteSource>, Problem> {
            Ok(Arc::new(FileSource::open(&self.0.join(rel))?))
        }
        fn open_embed(&self) -> Result<Option<Arc<dyn ByteSource>>, Problem> {
            Ok(Some(self.open(EMBED_NAME)?))
        }
    }

    /// Through the trait a `.b2d` has the keys, class and bytes it has when
    /// opened as a local directory.
    #[test]
    fn a_b2d_through_member_files_is_the_local_store() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stores");
        for name in ["dict.b2d", "table.b2d"] {
            let path = dir.join(name);
            let local = Store::open(&path, StoreFormat::Dir).unwrap();
            let version = local.version().clone();
            let listed =
                Store::open_members(&path, Arc::new(Local(path.clone())), version).unwrap();
            assert_eq!(listed.class(), local.class(), "{name}");
            assert_eq!(
                listed.values().keys().collect::<Vec<_>>(),
                local.values().keys().collect::<Vec<_>>(),
                "{name}"
            );
            for key in local.values().keys() {
                let (a, b) = (
                    local.value_source(key).unwrap(),
                    listed.value_source(key).unwrap(),
                );
                let (mut x, mut y) = (vec![0u8; a.len() as usize], vec![0u8; b.len() as usize]);
                a.read_at(0, &mut x).unwrap();
                b.read_at(0, &mut y).unwrap();
                assert!(x == y, "{name}{key}");
            }
        }
    }
}
