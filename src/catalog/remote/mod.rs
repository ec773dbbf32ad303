//! Remote sources in the catalog: a mount whose source is a URL.
//!
//! An object-store prefix is mirrored as a directory tree: each folder is
//! listed with a delimiter when it is looked up or read, and the listing is
//! kept for the attribute TTL ([`listings`]). Its names are classified as
//! local ones are ([`root`]): `.b2nd`/`.b2frame`/`.b2f`/`.b2` objects (and
//! other objects that start like a frame, sniffed once per ETag) are
//! arrays, a prefix holding `chunks.b2frame` is a sparse-frame array, `.b2z`
//! and `.b2e` objects are stores, and so are prefixes named `*.b2d` or
//! holding `embed.b2e` (their members read through the same listings,
//! [`members`]); other prefixes are folders. A Caterva2 server decides some
//! names itself (HDF5 files and stores are folders of datasets: see
//! [`caterva2`]).
//!
//! An object's version is its size and ETag as its folder's listing gives
//! them, so a replaced object is noticed without a HEAD per lookup; new
//! opens then see the new object, while open files keep the source they
//! opened (which refuses bytes of another object). An http(s) URL names one
//! object (the mount root), checked with a HEAD at most once per TTL.
//! [`object`] is one array's or store's origin under the root; [`keys`]
//! the pure rules of keys and names; [`plans`] nnU-Net's plans among the
//! objects.

pub mod caterva2;
pub mod keys;
pub mod listings;
pub mod members;
pub mod object;
pub mod plans;
pub mod root;

pub use keys::join;
pub use object::RemoteObject;
pub use root::{io_error, remote_access, RemoteClass, RemoteRoot};
