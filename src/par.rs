//! Data parallelism that pays for itself, without a resident thread pool.
//!
//! A validator shares its cores with CometBFT (on a localnet, with other
//! nodes too). A rayon pool's threads spin for a while after every parallel
//! call before they sleep, and a call from outside the pool waits for a pool
//! thread to wake: under a steady stream of small blocks and CheckTx batches
//! that spinning took a fifth of a node's CPU samples. So small inputs run on
//! the calling thread, and large ones on scoped threads that exit when done.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

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

/// Set by [`set_split_always`].
static SPLIT_ALWAYS: AtomicBool = AtomicBool::new(false);

/// From now on, splits every input of two or more items over the threads,
/// whatever its size or weight (`false`: the thresholds again). No result
/// depends on it; the fuzz oracle and tests use it to show that on small
/// blocks.
pub fn set_split_always(on: bool) {
    SPLIT_ALWAYS.store(on, Ordering::Relaxed);
}

fn split_always() -> bool {
    SPLIT_ALWAYS.load(Ordering::Relaxed)
}

/// Held while a test or fuzz case sets the process-wide split settings, so
/// that cases running in parallel cannot change each other's mid-run.
static OVERRIDE: Mutex<()> = Mutex::new(());

/// The split settings of one test or fuzz case ([`Override::hold`]): the
/// machine's again on drop, a failed assertion included.
pub struct Override(#[allow(dead_code)] MutexGuard<'static, ()>);

impl Override {
    /// Waits for any other holder, then splits over `threads` (0: the
    /// machine's cores), always when `split_always`.
    pub fn hold(threads: usize, split_always: bool) -> Self {
        let guard = OVERRIDE.lock().unwrap_or_else(PoisonError::into_inner);
        let o = Override(guard);
        o.set(threads, split_always);
        o
    }

    /// Changes the settings while held.
    pub fn set(&self, threads: usize, split_always: bool) {
        set_threads(threads);
        set_split_always(split_always);
    }
}

impl Drop for Override {
    fn drop(&mut self) {
        self.set(0, false);
    }
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

/// `items.iter().map(f)`, split by work rather than by count: in parallel
/// when the items' summed `weight` reaches `parallel_from`, over
/// [`threads`] contiguous parts of about equal weight. A few large items
/// (the costly txs an attacker would pick) are thus spread as well as many
/// small ones. Order and panics as [`map_from`].
pub fn map_weighted<T: Sync, R: Send>(
    items: &[T],
    weight: impl Fn(&T) -> u64,
    parallel_from: u64,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    map_weighted_on(items, weight, parallel_from, threads(), f)
}

/// As [`map_weighted`], over at most `n` threads.
pub fn map_weighted_on<T: Sync, R: Send>(
    items: &[T],
    weight: impl Fn(&T) -> u64,
    parallel_from: u64,
    n: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let weights: Vec<u64> = items.iter().map(weight).collect();
    let total = weights.iter().fold(0u64, |a, w| a.saturating_add(*w));
    if items.len() < 2 || n < 2 || (total < parallel_from && !split_always()) {
        return items.iter().map(f).collect();
    }
    run_parts(weighted_parts(items, &weights, total, n), f)
}

/// Cuts `items` into at most `n` contiguous non-empty parts, each ending
/// once its running weight reaches its share of `total`.
fn weighted_parts<'a, T>(items: &'a [T], weights: &[u64], total: u64, n: usize) -> Vec<&'a [T]> {
    let mut parts = Vec::with_capacity(n);
    let (mut start, mut acc) = (0usize, 0u128);
    for (i, w) in weights.iter().enumerate() {
        acc += u128::from(*w);
        let share = u128::from(total) * (parts.len() as u128 + 1) / n as u128;
        if acc >= share && parts.len() + 1 < n {
            parts.push(&items[start..=i]);
            start = i + 1;
        }
    }
    if start < items.len() {
        parts.push(&items[start..]);
    }
    parts
}

/// As [`map_from`], over `n` parts.
fn split_over<T: Sync, R: Send>(
    items: &[T],
    parallel_from: usize,
    n: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let parallel_from = if split_always() { 2 } else { parallel_from };
    if items.len() < parallel_from.max(2) || n < 2 {
        return items.iter().map(f).collect();
    }
    let per = items.len().div_ceil(n);
    run_parts(items.chunks(per).collect(), f)
}

/// Maps each part on its own scoped thread (the first on this one) and
/// concatenates the results in order.
fn run_parts<T: Sync, R: Send>(parts: Vec<&[T]>, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let f = &f;
    std::thread::scope(|s| {
        let mut parts = parts.into_iter();
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
    fn weighted_parts_cover_everything_in_order_and_balance_the_weight() {
        let items: Vec<u64> = vec![1, 1, 1, 1, 100, 1, 1, 100];
        let parts = super::weighted_parts(&items, &items, items.iter().sum(), 2);
        assert_eq!(parts, vec![&items[..5], &items[5..]]);
        let two_big = [1000u64, 1000];
        assert_eq!(super::weighted_parts(&two_big, &two_big, 2000, 2).len(), 2);
        for n in 1..6 {
            let v: Vec<u64> = (0..50).map(|i| i % 7).collect();
            let parts = super::weighted_parts(&v, &v, v.iter().sum(), n);
            assert!(parts.len() <= n && parts.iter().all(|p| !p.is_empty()));
            assert_eq!(parts.concat(), v);
        }
        let v: Vec<u64> = (0..300).collect();
        let want: Vec<u64> = v.iter().map(|x| x * 2).collect();
        assert_eq!(super::map_weighted(&v, |x| *x, 0, |x| x * 2), want);
        assert_eq!(super::map_weighted(&v, |x| *x, u64::MAX, |x| x * 2), want);
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
