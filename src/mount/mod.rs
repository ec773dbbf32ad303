//! The mount layer, thin: the fuser adapter translating FUSE calls into the
//! tree's filesystem calls, the daemon (fork, readiness, signals, unmount),
//! and allocator tuning. Nothing below this folder knows FUSE.

pub mod alloc;
pub mod fuse;
