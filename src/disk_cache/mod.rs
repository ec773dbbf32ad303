//! The disk cache (`--disk-cache DIR`). Its decoded tier keeps the `data`
//! bytes of arrays read before in sparse files keyed by the source's
//! version, so a re-read (in this mount or a later one, by this mount or another
//! sharing DIR) is served from a plain file instead of being decoded, and
//! a complete entry can be handed to the kernel for FUSE passthrough by the
//! layers above. Its remote tier keeps what remote objects sent, so a
//! remount or a second epoch costs no GET while the ETag holds.
//!
//! - [`cache_dir`]: [`DiskCache`], what a mount holds: entries shared per key,
//!   reads of whole granules, fills handed to the writer, `.stats`;
//! - [`key`]: the entry's name from the source identity and version;
//! - [`map`]: which granules of an entry are whole, and its form on disk;
//! - [`entry`]: one sparse file and its map; the crash-safe ordering;
//!   [`data_file`]: the few data files held open, reopened on demand;
//! - [`index`]: the directory, its lock, LRU eviction within the budget;
//!   [`dir_view`]: what this process knows of the directory, read again
//!   only when another mount changed it;
//! - [`pending`]: granules reads served by decoding, on their way to the
//!   disk: wanted (to be produced again when the mount is quiet), or handed
//!   over by a re-read from its own bytes ([`partial`]: in parts);
//! - [`producer`]: the thread that makes wanted granules again (decoding
//!   where needed) at quiet time;
//! - [`stored_objects`]: the remote tier: remote objects' bytes as stored
//!   and fetched (still encoded), by range, under their ETag, in front of
//!   the remote source;
//! - [`writer`]: the thread that writes fills off the read path;
//! - [`persister`]: the thread that syncs data files and replaces maps;
//! - [`shared`]: what those threads share with the cache;
//! - [`stats`]: counters for `.stats`.
//!
//! It knows nothing of FUSE: it answers "is this range whole, read it", "take
//! these bytes", and "here is the complete file".

mod cache_dir;
pub mod data_file;
mod dir_view;
pub mod entry;
pub mod error;
pub mod index;
pub mod key;
pub mod map;
mod partial;
pub mod pending;
mod persister;
mod producer;
mod shared;
pub mod stats;
pub mod stored_objects;
mod writer;

pub use cache_dir::{clear, describe, DiskCache};
pub use entry::Entry;
pub use error::{DiskError, RefillError};
pub use key::Key;
pub use pending::Refill;
pub use stats::DiskStats;
