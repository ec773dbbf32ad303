//! Remote byte sources: arrays that live on object storage (S3 and
//! S3-compatible stores, Google Cloud Storage, Azure Blob) or behind a web
//! server with Range support, read with the `object_store` client.
//!
//! The client is async; the filesystem is not. The client therefore runs
//! on a small runtime owned by this module ([`runtime`]), and every call
//! here blocks its caller for at most the configured timeout. The format
//! layer sees only [`RemoteSource`], one more [`ByteSource`](crate::format::ByteSource).
//!
//! All of it is behind the cargo feature `remote` (on by default), with the
//! client's dependencies (`object_store` and its TLS stack, tokio).
//!
//! - [`url`]: which store a URL names; [`redact_url`] and [`redact_text`]
//!   (from [`crate::source::urls`]) keep credentials out of every message.
//! - [`store`]: the client for one bucket or server, built from the URL,
//!   the environment and [`RemoteOptions`]; counts its requests in
//!   [`RemoteStats`].
//! - [`object_source`]: one object as a byte source, shaped for round trips and
//!   checked against the identity it was opened with.
//! - [`pool`]: the bytes a connection holds and has in flight for reads to
//!   come (spans, hinted ranges), within one budget.
//! - [`location`]: objects and prefixes, listing, sparse-frame chunks.
//! - [`listing_filter`]: which listed keys a folder can show; `connector`:
//!   the HTTP layer that sees every attempt (retries counted and logged,
//!   listings cleaned of keys no folder can show).
//! - [`caterva2`]: Caterva2 servers (`c2+https://`), as one more store;
//!   [`served`]: the datasets they serve, as arrays.

pub mod caterva2;
mod connector;
pub(crate) mod error;
pub mod listing_filter;
mod location;
mod object_source;
mod pool;
mod profile;
mod runtime;
pub mod served;
pub(crate) mod stats;
pub(crate) mod store;
mod url;

pub use crate::source::urls::{is_remote_url, redact_text, redact_url, Scheme};
pub use caterva2::info::InfoKind;
pub use caterva2::DatasetInfo;
pub use error::RemoteError;
pub use location::{ListedObject, Listing, RemoteChunks, RemoteLocation};
pub use object_source::{RemoteSource, HINT};
pub use stats::{RemoteStats, RequestKind, StatsSnapshot};
pub use store::{RemoteOptions, MIN_BUDGET};
pub use url::RemoteUrl;
