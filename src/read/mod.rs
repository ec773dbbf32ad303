//! The read layer: decoded blocks and chunk layouts in caches with byte
//! budgets, the planner that turns a read into pieces and copies them into
//! the reply, and the read policy (sequential readers, prefetch, layout
//! preloading). It sits above the format layer and asks it for decodes;
//! nothing below calls back up.

pub mod blocks;
pub mod budget;
pub mod buffers;
pub mod cache;
pub mod helper;
pub mod layouts;
pub mod planner;
pub mod prefetch;
pub mod rows;
pub mod stats;
pub mod stream;
pub mod whole;

pub use blocks::Blocks;
pub use budget::ByteLru;
pub use cache::BlockCache;
pub use planner::{read_uncached, Planner, RowSelection, Served, StreamRead, View};
pub use prefetch::Prefetcher;
pub use rows::{row_bytes, RowMap};
pub use stats::Stats;
pub use stream::StreamState;
pub use whole::read_whole;
