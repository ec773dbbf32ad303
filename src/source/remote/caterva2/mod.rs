//! Caterva2 servers (`c2+https://HOST[/PREFIX]/@ROOT[/DIR]`): the Blosc
//! world's own dataset server, read through its HTTP API as one more
//! store behind [`super::store::Connection`].
//!
//! - [`session`]: the HTTP client of one server: the login (a `c2subauth`
//!   cookie from `CATERVA2_USERNAME` / `CATERVA2_PASSWORD` or the client's
//!   `caterva2.toml`, renewed on a 401), retries of 5xx answers and resets,
//!   and requests counted by endpoint.
//! - [`store`]: the server as an `object_store` store, so the sources,
//!   pools and listings of the other stores serve it too: `/api/list` is
//!   the delimiter listing, byte ranges of `/api/fetch` are the GETs.
//! - [`info`]: what `/api/info` says of a dataset (shape, grid, dtype,
//!   whether it is served in byte ranges, its ETag).
//! - [`names`]: what a dataset path says by itself (a stored frame, a
//!   leaf inside an HDF5 file or a store).
//!
//! The datasets it serves, as arrays, are [`super::served`]'s.

pub(crate) mod config;
pub(crate) mod info;
pub mod names;
pub(crate) mod session;
pub(crate) mod store;

pub use crate::source::remote::stats::Endpoint;
pub use info::DatasetInfo;
pub use names::{in_container, in_hdf5, is_stored_frame};
