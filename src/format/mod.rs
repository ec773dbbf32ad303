//! The format layer: Blosc2 frames, chunks, codecs, filters and b2nd geometry.
//!
//! Knows nothing of FUSE and keeps no cache. Its answers, all through
//! [`Array`]: "which pieces make up this byte range" ([`Array::pieces`]),
//! "the layout of chunk c" ([`Array::read_layout`]) and "decode block b of
//! chunk c, given block 0 where DELTA needs it" ([`Array::decode_block`]).
//! Every byte it reads comes through the [`ByteSource`] trait declared here
//! and implemented in `crate::source`; the values of a computed array
//! (a saved expression) come from a [`BlockProducer`] handed down the same way.
//!
//! The public face is what `info`, `cat`, the tree and the read layer need,
//! and [`dtype`]: the one reading of NumPy dtype strings, for every layer.
//! The parsers behind it (`chunk`, `codec`, `filter`, `msgpack`) are public
//! for the layers above that show what they decode, and for the fuzz
//! targets and tests: `views/` names codecs and filters in `meta.json`
//! (`codec::codec_name`, `filter::filter_name`, `filter::filter_id`) and
//! turns vlmeta and BatchArray items into JSON (`msgpack`); the table
//! reader (`catalog/table/`) reads a table's msgpack metadata; `cli.rs`
//! prints which Zstd backend was built (`codec::zstd::BACKEND`); `fuzz/`
//! and `tests/` drive `chunk`, `codec` and `msgpack` directly. They stay hidden from the documentation:
//! their shape follows the format's, not a promise to callers.

mod array;
pub mod byte_source;
mod bytes;
#[doc(hidden)]
pub mod chunk;
mod chunk_reads;
#[doc(hidden)]
pub mod codec;
mod described;
pub mod dtype;
mod elsewhere;
mod error;
#[doc(hidden)]
pub mod filter;
mod frame;
mod geometry;
mod growth;
mod hints;
mod item_dtype;
mod meta;
#[doc(hidden)]
pub mod msgpack;
mod plain;
mod produced;

pub use array::{Array, Region, Shape, SPARSE_INDEX};
pub use byte_source::{ByteSource, Need, SparseChunks, Version, VersionTag};
pub use chunk::{ChunkLayout, Fork, Special};
pub use chunk_reads::MAX_BLOCK_BYTES;
pub use codec::{codec_support, Support};
pub use described::{Description, MAX_DESCRIBED_CHUNKS};
pub use elsewhere::Elsewhere;
pub use error::{Error, PResult, Problem};
pub use filter::filter_support;
pub use frame::{looks_like_frame, ChunkOffset, Frame, MAX_VLMETA_BYTES};
pub use geometry::{grid_coords, linear, Geometry, Piece, PieceSource};
pub use growth::Seen;
pub use meta::{simple_dtype_itemsize, Flavor, NdMeta};
pub use produced::BlockProducer;
