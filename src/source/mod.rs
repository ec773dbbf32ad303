//! Where bytes come from: the implementations of the format layer's
//! [`ByteSource`](crate::format::ByteSource) seam.
//!
//! - [`FileSource`]: a local file, read with `pread` (never mapped: a mapped
//!   file truncated under the mount would turn the next access into SIGBUS);
//!   its version is (device, inode, size, mtime) from `fstat`.
//! - [`WindowSource`]: a byte range of another source (a frame stored inside
//!   a zip archive at an offset).
//! - [`MemorySource`]: bytes held in memory (a frame embedded in another
//!   frame's decoded data, tests, fuzzing).
//! - [`fds`]: the pool of open descriptors every local file goes through
//!   (bounded by a share of the process's limit, whatever the tree).
//! - [`DirChunks`]: the chunk files of a sparse frame in a local directory.
//! - [`store`]: python-blosc2 stores (`.b2z`, `.b2d`, `.b2e`): which bytes
//!   make which key (zip directory, embed map).
//! - `remote` (cargo feature `remote`): objects in S3 / GCS / Azure stores
//!   or on a web server (`open_url` opens the array at a URL).
//! - [`open`]: an array opened from a local path, a URL or memory, and
//!   a local source's version.
//! - [`urls`]: telling a URL from a path and showing it without secrets
//!   (in every build: one without `remote` refuses URLs by name).

mod dir;
pub mod fds;
mod file;
mod memory;
mod open;
#[cfg(feature = "remote")]
pub mod remote;
pub mod store;
pub mod urls;
mod window;

pub use dir::DirChunks;
/// The version of a local file from its metadata (device, inode, size, mtime).
pub use file::version_of as file_version;
pub use file::FileSource;
pub use memory::MemorySource;
#[cfg(feature = "remote")]
pub use open::open_url;
pub use open::{is_sparse_dir, local_version, open_array, open_memory, sniff_frame};
pub use window::WindowSource;
