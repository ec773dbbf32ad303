//! An array's whole `data`, in order, decoded (or computed) by several
//! threads at once: what `blosc2fs cat` streams.
//!
//! The data is cut into steps of [`STEP`] bytes. Worker threads take the
//! next step and read it through one planner; the caller's thread writes
//! the steps out in order, holding at most two steps per worker, so memory
//! stays bounded whatever the array's size.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;

use crate::format::{Array, Error};

use super::planner::Planner;
use super::view::View;

/// Bytes each worker reads at a time.
pub const STEP: u64 = 4 << 20;

/// Why streaming stopped.
#[derive(Debug, thiserror::Error)]
pub enum WholeError {
    /// Reading the array failed.
    #[error("{0}")]
    Read(#[from] Error),
    /// Writing the bytes failed (`BrokenPipe` included: the caller decides).
    #[error("writing: {0}")]
    Write(std::io::Error),
}

/// Read `array`'s data from `planner` with `threads` workers (at least 1)
/// and hand each stretch, in order, to `write`. `ahead`: bytes past each
/// step to hint to a remote source ([`Planner::hint_ahead`]).
pub fn read_whole(
    array: &Array,
    planner: &Planner,
    threads: usize,
    ahead: u64,
    write: impl FnMut(&[u8]) -> std::io::Result<()>,
) -> Result<(), WholeError> {
    read_in_steps(array, planner, threads, STEP, ahead, write)
}

fn read_in_steps(
    array: &Array,
    planner: &Planner,
    threads: usize,
    step_len: u64,
    ahead: u64,
    mut write: impl FnMut(&[u8]) -> std::io::Result<()>,
) -> Result<(), WholeError> {
    let total = array.data_len();
    let steps = total.div_ceil(step_len);
    let threads = threads.clamp(1, steps.max(1) as usize);
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    // Workers wait for a free slot before reading a step: at most 2 per worker ahead.
    let (slots_tx, slots_rx) = mpsc::sync_channel::<()>(2 * threads);
    let slots_rx = parking_lot::Mutex::new(slots_rx);
    for _ in 0..2 * threads {
        let _ = slots_tx.send(());
    }
    let (done_tx, done_rx) = mpsc::channel::<(u64, Result<Vec<u8>, Error>)>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let done_tx = done_tx.clone();
            let (next, stop, slots_rx) = (&next, &stop, &slots_rx);
            scope.spawn(move || loop {
                if slots_rx.lock().recv().is_err() || stop.load(Ordering::Relaxed) {
                    return;
                }
                let step = next.fetch_add(1, Ordering::Relaxed);
                if step >= steps {
                    return;
                }
                planner.hint_ahead(array, (step + 1) * step_len, ahead);
                let result = planner.read(array, &View::Data, step * step_len, step_len);
                if done_tx.send((step, result)).is_err() {
                    return;
                }
            });
        }
        drop(done_tx);
        let mut pending = BTreeMap::new();
        let mut written = 0u64;
        let mut outcome = Ok(());
        for (step, result) in done_rx.iter() {
            pending.insert(step, result);
            while let Some(result) = pending.remove(&written) {
                let bytes = match result {
                    Ok(bytes) => bytes,
                    Err(e) => {
                        outcome = Err(WholeError::Read(e));
                        break;
                    }
                };
                if let Err(e) = write(&bytes) {
                    outcome = Err(WholeError::Write(e));
                    break;
                }
                written += 1;
                let _ = slots_tx.send(());
            }
            if outcome.is_err() {
                break;
            }
        }
        if outcome.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        // Wake every worker waiting for a slot so they see `stop` or the end.
        drop(slots_tx);
        outcome
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::testing::fixture;

    /// Every thread count writes the same bytes, in order, as one plain read.
    #[test]
    fn threads_write_the_data_in_order() {
        let array = fixture("dtype_le_f8.b2nd");
        let planner = Planner::one_pass(1 << 20);
        let want = planner.read(&array, &View::Data, 0, u64::MAX).unwrap();
        for threads in [1, 2, 5] {
            let mut got = Vec::new();
            // Steps of 1,000 bytes: 6 of them, the last one short.
            read_in_steps(&array, &planner, threads, 1000, 0, |b| {
                got.extend_from_slice(b);
                Ok(())
            })
            .unwrap();
            assert_eq!(got, want, "{threads} threads");
        }
    }

    /// A writer that fails stops the workers and reports the failure.
    #[test]
    fn a_failed_write_stops_and_is_reported() {
        let array = fixture("dtype_le_f8.b2nd");
        let planner = Planner::one_pass(1 << 20);
        let err = read_in_steps(&array, &planner, 2, 1000, 0, |_| {
            Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
        })
        .unwrap_err();
        assert!(matches!(err, WholeError::Write(e) if e.kind() == std::io::ErrorKind::BrokenPipe));
    }
}
