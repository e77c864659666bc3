//! Data parallelism that pays for itself, without a resident thread pool.
//!
//! A validator shares its cores with CometBFT (on a localnet, with other
//! nodes too). A rayon pool's threads spin for a while after every parallel
//! call before they sleep, and a call from outside the pool waits for a pool
//! thread to wake: under a steady stream of small blocks and CheckTx batches
//! that spinning took a fifth of a node's CPU samples. So small inputs run on
//! the calling thread, and large ones on scoped threads that exit when done.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Inputs shorter than this are mapped on the calling thread.
pub const PARALLEL_FROM: usize = 256;

/// Threads set by [`set_threads`]; 0 means the machine's cores.
static THREADS: AtomicUsize = AtomicUsize::new(0);

/// Threads to split large inputs over: the machine's cores, unless
/// [`set_threads`] chose a number.
pub fn threads() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    match THREADS.load(Ordering::Relaxed) {
        0 => *N.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        n => n,
    }
}

/// Splits large inputs over `n` threads from now on (0: the machine's
/// cores). No result depends on it; tests use it to show that.
pub fn set_threads(n: usize) {
    THREADS.store(n, Ordering::Relaxed);
}

/// `items.iter().map(f)`, in parallel when there are [`PARALLEL_FROM`] or more.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    map_from(items, PARALLEL_FROM, f)
}

/// `items.iter().map(f)`, split over [`threads`] contiguous parts when there
/// are `parallel_from` items or more. The order of the results is kept; a
/// panic in `f` is resumed on the calling thread.
pub fn map_from<T: Sync, R: Send>(
    items: &[T],
    parallel_from: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    split_over(items, parallel_from, threads(), f)
}

/// As [`map_from`], over `n` parts.
fn split_over<T: Sync, R: Send>(
    items: &[T],
    parallel_from: usize,
    n: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    if items.len() < parallel_from.max(2) || n < 2 {
        return items.iter().map(f).collect();
    }
    let per = items.len().div_ceil(n);
    let f = &f;
    std::thread::scope(|s| {
        let mut parts = items.chunks(per);
        let first = parts.next().unwrap_or_default();
        // A part whose thread the OS refuses runs here instead.
        let rest: Vec<_> = parts
            .map(|p| {
                std::thread::Builder::new()
                    .name("stave-par".into())
                    .spawn_scoped(s, move || p.iter().map(f).collect::<Vec<R>>())
                    .map_err(|e| {
                        tracing::warn!(error = %e, "no thread for a parallel part; running it inline");
                        p
                    })
            })
            .collect();
        let mut out: Vec<R> = first.iter().map(f).collect();
        for part in rest {
            match part {
                Ok(h) => out.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))),
                Err(p) => out.extend(p.iter().map(f)),
            }
        }
        out
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn both_paths_keep_the_order() {
        for n in [
            0,
            1,
            2,
            3,
            super::PARALLEL_FROM - 1,
            super::PARALLEL_FROM,
            1001,
        ] {
            let v: Vec<usize> = (0..n).collect();
            let want: Vec<usize> = (0..n).map(|x| x * 2).collect();
            assert_eq!(super::map(&v, |x| x * 2), want);
            assert_eq!(super::map_from(&v, 2, |x| x * 2), want);
            assert_eq!(super::split_over(&v, 2, 3, |x| x * 2), want);
        }
    }

    #[test]
    fn a_panic_on_another_thread_reaches_the_caller() {
        let v: Vec<usize> = (0..1000).collect();
        // Four parts whatever the machine: 999 is in the last, on its own thread.
        let r = std::panic::catch_unwind(|| {
            super::split_over(&v, 2, 4, |x| {
                assert!(*x != 999, "boom");
                *x
            })
        });
        assert!(r.is_err());
    }
}
