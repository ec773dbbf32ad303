//! The format layer: Blosc2 frames, chunks, codecs, filters and b2nd geometry.
//!
//! Knows nothing of FUSE or caching. Its answers: "give me block b of chunk
//! c" ([`array::Array::decode_block`]) and "which pieces make up this byte
//! range of the C-order array" ([`array::Array::data_pieces`]).

pub mod array;
pub mod chunk;
pub mod chunk_header;
pub mod codec;
pub mod error;
pub mod filter;
pub mod frame;
pub mod geometry;
pub mod meta;
pub mod msgpack;
pub mod source;

pub use array::Array;
pub use error::{Error, Problem};
