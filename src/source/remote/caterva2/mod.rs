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
//! - [`folder`]: a mounted root, folder or dataset: which listed names
//!   are folders and which datasets, their versions, how each is opened,
//!   and which `c2array` operands resolve to them.
//! - [`sliced`]: datasets the server does not keep as a Blosc2 frame
//!   (HDF5 leaves, proxies): each chunk read as the frame `/api/fetch?slice_=`
//!   builds of its region, checked against the ETag it was opened with.

pub(crate) mod config;
pub mod folder;
pub(crate) mod info;
pub mod names;
pub(crate) mod session;
pub(crate) mod sliced;
pub(crate) mod store;

pub use info::DatasetInfo;
pub use names::{in_container, in_hdf5, is_stored_frame};
pub use session::Endpoint;
