//! Fuzz harness for blosc2fs. The code that drives the library lives in
//! `harness.rs` so that `tests/fuzz_regressions.rs` can include the very same
//! calls with `#[path = "../fuzz/src/harness.rs"]`.

pub mod harness;
