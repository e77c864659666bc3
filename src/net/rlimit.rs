//! `RLIMIT_NOFILE` raised to the hard limit at start, so a burst of
//! connections cannot leave RocksDB without descriptors (review M6).

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

/// Linux refuses an infinite `RLIMIT_NOFILE`; this is its usual `nr_open`.
const UNLIMITED_FALLBACK: u64 = 1 << 20;

/// Raises the soft descriptor limit to the hard one; returns the soft
/// limit in force afterwards (`None`: unlimited).
pub fn raise_nofile() -> Option<u64> {
    let now = getrlimit(Resource::Nofile);
    let target = now.maximum.unwrap_or(UNLIMITED_FALLBACK);
    if now.current.is_some_and(|c| c >= target) {
        return now.current;
    }
    let want = Rlimit {
        current: Some(target),
        maximum: now.maximum,
    };
    match setrlimit(Resource::Nofile, want) {
        Ok(()) => tracing::info!(from = ?now.current, to = target, "RLIMIT_NOFILE raised"),
        Err(e) => {
            tracing::warn!(error = %e, soft = ?now.current, hard = ?now.maximum, "RLIMIT_NOFILE not raised")
        }
    }
    getrlimit(Resource::Nofile).current
}
