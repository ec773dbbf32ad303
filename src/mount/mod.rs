//! The mount layer, kept thin: [`fuse`] is the fuser adapter that translates
//! FUSE calls into tree and read calls (and errors into errno), [`daemon`]
//! mounts with a [`MountConfig`] (preflight checks, fork with a readiness
//! report, signals, unmount, also of a dead mount), [`fusermount`] mounts for
//! users other than root through the setuid helper, [`alloc`] tunes the
//! allocator for the daemon and [`sched`] the FUSE threads' scheduling;
//! [`passthrough`] hands complete disk cache files to the kernel;
//! [`secrets`] keeps passwords and signed queries out of `ps` and `/proc`.
//! Nothing below this layer knows FUSE, and nothing in it knows the command
//! line.

pub mod alloc;
pub mod config;
pub mod daemon;
pub mod fuse;
pub mod fusermount;
pub mod passthrough;
pub mod sched;
pub mod secrets;
pub mod waiting;

pub use config::MountConfig;
