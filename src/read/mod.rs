//! The read layer: decoded blocks and chunk layouts in caches with byte
//! budgets, the planner that answers reads of presented files (views),
//! the assembly that turns a read into pieces and copies them into the
//! reply, and the read policy (sequential readers, prefetch, layout
//! preloading). It sits above the format layer and asks it for decodes;
//! nothing below calls back up.

pub mod assemble;
pub mod block_cache;
pub mod blocks;
pub mod budget;
pub mod buffers;
pub mod cores;
pub mod fill;
pub mod helper;
pub mod interleave;
pub mod layouts;
pub mod planner;
pub mod prefetch;
pub mod rows;
pub mod stats;
pub mod stream;
pub mod view;
pub mod whole;

pub use block_cache::BlockCache;
pub use blocks::Blocks;
pub use budget::ByteLru;
pub use fill::{fill_in_background, fill_scan, read_uncached};
pub use interleave::Interleave;
pub use planner::{Planner, Served, StreamRead};
pub use prefetch::Prefetcher;
pub use rows::{row_bytes, RowMap};
pub use stats::Stats;
pub use stream::StreamState;
pub use view::{RowSelection, View};
pub use whole::read_whole;

/// Fixtures for the read layer's unit tests: arrays python-blosc2 wrote
/// (`tests/fixtures`, see its manifest), and the helpers their tests share.
#[cfg(test)]
pub(crate) mod testing {
    use sha2::{Digest, Sha256};

    use super::{Planner, View};
    use crate::format::Array;

    /// The fixture `name` of `tests/fixtures/manifest.json`, opened, and its
    /// manifest entry.
    pub fn fixture(name: &str) -> (Array, serde_json::Value) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
        let entry = manifest[name].clone();
        let array = crate::source::open_array(&dir.join(entry["path"].as_str().unwrap())).unwrap();
        (array, entry)
    }

    /// `data` read front to back in reads of `steps` bytes, in turn, joined.
    pub fn read_in_steps(planner: &Planner, array: &Array, steps: &[u64]) -> Vec<u8> {
        let mut joined = Vec::new();
        for (i, step) in steps.iter().cycle().enumerate() {
            let got = planner
                .read(array, &View::Data, joined.len() as u64, *step)
                .unwrap();
            if got.is_empty() {
                break;
            }
            joined.extend_from_slice(&got);
            assert!(i < 10_000, "reads never reached the end");
        }
        joined
    }

    /// The sha256 of `bytes`, in hex (as the manifest gives it).
    pub fn sha256_hex(bytes: &[u8]) -> String {
        Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}
