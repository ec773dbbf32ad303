//! What a Caterva2 server serves, as arrays: each dataset opened as its
//! info describes it ([`open`]), and datasets the server keeps in a form of
//! its own read as the regions it builds ([`sliced`]): which regions a
//! chunk is asked for ([`split`]: the whole chunk, or boxes of its blocks
//! when it is larger than a region may be) and when their ETag is asked
//! again ([`recheck`]: at most once per TTL). Above the client
//! ([`super::caterva2`]) and the store locations it lists. Which names of
//! a mounted root or folder are folders, and what a dataset's version is,
//! the catalog decides (`crate::catalog::remote::caterva2`).

pub mod open;
pub(crate) mod recheck;
pub(crate) mod sliced;
pub(crate) mod split;

pub use open::open_dataset;
