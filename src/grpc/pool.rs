//! The bounded query pool: gRPC reads run on tokio's blocking threads, but
//! at most `[limits] query_threads` at once, so ABCI `Info`/`Query` (which
//! use the same blocking pool) never wait behind gRPC (review M6).

// tonic's `Status` is large; it is the error type tonic's handlers return.
#![allow(clippy::result_large_err)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use tokio::sync::Semaphore;
use tonic::Status;

static POOL: OnceLock<Arc<Semaphore>> = OnceLock::new();
/// Queries waiting for the pool; past [`MAX_WAITING`] a query is refused
/// with `RESOURCE_EXHAUSTED` rather than held (decoded) in the queue.
static WAITING: AtomicUsize = AtomicUsize::new(0);
pub const MAX_WAITING: usize = 256;

/// One query's place in the queue.
struct Waiting;

impl Waiting {
    fn enter() -> Result<Self, Status> {
        if WAITING.fetch_add(1, Ordering::SeqCst) >= MAX_WAITING {
            WAITING.fetch_sub(1, Ordering::SeqCst);
            return Err(Status::resource_exhausted(format!(
                "{MAX_WAITING} queries are already waiting for the query pool; retry later"
            )));
        }
        Ok(Waiting)
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        WAITING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Sets the pool's size; the first call wins (the default is
/// [`crate::net::Limits`]'s).
pub fn init(threads: usize) {
    let _ = POOL.set(Arc::new(Semaphore::new(threads.max(1))));
}

fn pool() -> Arc<Semaphore> {
    POOL.get_or_init(|| Arc::new(Semaphore::new(crate::net::Limits::default().query_threads)))
        .clone()
}

/// Runs `f` on a blocking thread once the pool has room. The permit goes
/// with the work, which runs on if the caller leaves.
pub async fn run<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Status> + Send + 'static,
) -> Result<T, Status> {
    let waiting = Waiting::enter()?;
    let permit = pool()
        .acquire_owned()
        .await
        .map_err(|e| Status::internal(format!("query pool: {e}")))?;
    drop(waiting);
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        f()
    })
    .await
    .map_err(|e| Status::internal(format!("read task: {e}")))?
}
