//! Allocator settings for the daemon's allocation pattern.
//!
//! Decoded blocks (typically 256 KiB .. 8 MiB) are allocated by one thread
//! and freed by another, over and over. With glibc's defaults this costs in
//! two ways, both measured:
//! - per-thread arenas keep memory freed by other threads: peak RSS reached
//!   cache + 110 MiB in the mount benchmark (one arena: cache + 13 MiB);
//! - blocks above the mmap threshold are mapped and unmapped, and a freed
//!   heap top is trimmed: every decode then pays fresh page faults (about 15 %
//!   of a random block read in `perf`).
//!
//! So: one arena, no mmap for block-sized allocations, and no trimming below
//! 64 MiB of free heap.

/// Apply the settings; call before any thread starts.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; called before threads exist.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
}
