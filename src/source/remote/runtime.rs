//! The remote module's own small tokio runtime, so synchronous callers (the
//! FUSE daemon's threads, the CLI) can wait for the async client: every
//! wait is bounded by a deadline, so a stalled server never hangs a caller.

use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

use tokio::runtime::Runtime;

/// Worker threads driving the client's sockets and timers.
const WORKERS: usize = 2;

fn runtime() -> Result<&'static Runtime, String> {
    static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(WORKERS)
                .thread_name("blosc2fs-remote")
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the remote runtime: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Why [`run`] gave no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Wait {
    /// The deadline passed first.
    TimedOut,
    /// The runtime could not be started (the message says why).
    NoRuntime(String),
}

/// Run `fut` to completion on the remote runtime and wait for it from this
/// (synchronous) thread, giving up after `deadline`.
pub(crate) fn run<F>(fut: F, deadline: Duration) -> Result<F::Output, Wait>
where
    F: Future + Send,
    F::Output: Send,
{
    let rt = runtime().map_err(Wait::NoRuntime)?;
    let wait = async move {
        tokio::time::timeout(deadline, fut)
            .await
            .map_err(|_| Wait::TimedOut)
    };
    if tokio::runtime::Handle::try_current().is_ok() {
        // Called from inside some runtime (an async test, an embedding
        // program): blocking here would stall it, so wait on a scoped thread.
        return std::thread::scope(|s| {
            s.spawn(|| rt.block_on(wait))
                .join()
                .unwrap_or(Err(Wait::TimedOut))
        });
    }
    rt.block_on(wait)
}

/// Start `fut` on the remote runtime without waiting for it.
pub(crate) fn spawn<F>(fut: F) -> Result<(), Wait>
where
    F: Future<Output = ()> + Send + 'static,
{
    let rt = runtime().map_err(Wait::NoRuntime)?;
    rt.spawn(fut);
    Ok(())
}
