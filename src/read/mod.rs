//! The cache and read planner: decoded blocks in an LRU with a byte budget,
//! reads turned into block fetches, and prefetch for sequential readers.

pub mod cache;
pub mod planner;
pub mod prefetch;
pub mod stats;

pub use cache::BlockCache;
pub use planner::Planner;
pub use stats::Stats;
