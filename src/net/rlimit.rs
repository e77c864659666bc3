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

/// Descriptors kept for everything but the listeners' connections: the two
/// RocksDB stores' files, CometBFT's ABCI connections, peer calls, content.
pub const RESERVED_DESCRIPTORS: u64 = 1024;

/// Whether the listeners' caps plus [`RESERVED_DESCRIPTORS`] fit `limit`;
/// if not, the caps could again exhaust descriptors (review M6), and `run`
/// logs a warning naming both.
pub fn caps_fit(limits: &super::Limits, limit: Option<u64>) -> Result<(), String> {
    let caps = [
        limits.client_max_connections,
        limits.peer_max_connections,
        limits.admin_max_connections,
        limits.metrics_max_connections,
    ]
    .iter()
    .map(|c| *c as u64)
    .sum::<u64>();
    match limit {
        Some(l) if caps.saturating_add(RESERVED_DESCRIPTORS) > l => Err(format!(
            "the listeners' connection caps ({caps}) plus {RESERVED_DESCRIPTORS} reserved exceed the descriptor limit {l}: raise the hard RLIMIT_NOFILE or lower [limits]"
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_caps_need_a_limit_above_the_usual_1024() {
        let l = crate::net::Limits::default();
        assert!(caps_fit(&l, Some(1024)).is_err());
        assert!(caps_fit(&l, Some(65_536)).is_ok());
        assert!(caps_fit(&l, None).is_ok());
    }
}
