//! Takedowns reaching this node's disks ([`crate::local::purge`]).

use prometheus::{IntCounter, IntGauge, Registry};

/// `stave_takedown_purges_total`, `stave_takedown_purged_bytes_total` and
/// `stave_takedown_awaiting_purge`.
pub struct TakedownMetrics {
    /// Uploads under a CONFIRMED takedown whose data this node deleted.
    pub purges: IntCounter,
    /// Bytes of content files those deletions freed.
    pub purged_bytes: IntCounter,
    /// Uploads under a CONFIRMED takedown whose data is held until the
    /// retention ends.
    pub awaiting: IntGauge,
}

pub fn register(registry: &Registry) -> Result<TakedownMetrics, prometheus::Error> {
    let purges = IntCounter::new(
        "takedown_purges_total",
        "Uploads under a CONFIRMED takedown whose files and DEK this node deleted",
    )?;
    let purged_bytes = IntCounter::new(
        "takedown_purged_bytes_total",
        "Bytes of content files deleted because of CONFIRMED takedowns",
    )?;
    let awaiting = IntGauge::new(
        "takedown_awaiting_purge",
        "Uploads under a CONFIRMED takedown whose data is held until the retention ends",
    )?;
    registry.register(Box::new(purges.clone()))?;
    registry.register(Box::new(purged_bytes.clone()))?;
    registry.register(Box::new(awaiting.clone()))?;
    Ok(TakedownMetrics {
        purges,
        purged_bytes,
        awaiting,
    })
}
