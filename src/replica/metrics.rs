//! The replication's Prometheus metrics (registered with the node's, under
//! the `stave_` prefix).

use prometheus::{IntCounter, IntCounterVec, IntGauge, Opts, Registry};

pub struct ReplicaMetrics {
    /// Records held (own and peers').
    pub records: IntGauge,
    /// Records accepted from peers.
    pub accepted: IntCounter,
    /// Records refused, by reason (`signature`, `pow`, `hash`, ...).
    pub refused: IntCounterVec,
    /// Bytes of replica messages, by direction (`sent`, `received`).
    pub bytes: IntCounterVec,
    /// Anti-entropy rounds with a peer, by result (`ok`, `error`).
    pub rounds: IntCounterVec,
    /// Records purged: owner no longer a validator, aged past the horizon,
    /// or TTL ended.
    pub purged: IntCounter,
    /// CrcDiff and Sync calls this node refused past a peer's rate.
    pub throttled: IntCounter,
    /// Content fetches by the reconciler that succeeded, by whether the
    /// peer that served them announced the content (`announced`,
    /// `unannounced`).
    pub fetch_source: IntCounterVec,
}

pub fn register(registry: &Registry) -> Result<ReplicaMetrics, prometheus::Error> {
    let vec = |name: &str, help: &str, label: &str| -> Result<IntCounterVec, prometheus::Error> {
        let c = IntCounterVec::new(Opts::new(name, help), &[label])?;
        registry.register(Box::new(c.clone()))?;
        Ok(c)
    };
    let counter = |name: &str, help: &str| -> Result<IntCounter, prometheus::Error> {
        let c = IntCounter::new(name, help)?;
        registry.register(Box::new(c.clone()))?;
        Ok(c)
    };
    let records = IntGauge::new("replica_records", "Replica records held (own and peers')")?;
    registry.register(Box::new(records.clone()))?;
    Ok(ReplicaMetrics {
        records,
        accepted: counter(
            "replica_accepted_total",
            "Replica records accepted from peers",
        )?,
        refused: vec(
            "replica_refused_total",
            "Replica records or messages refused, by reason",
            "reason",
        )?,
        bytes: vec(
            "replica_bytes_total",
            "Bytes of anti-entropy messages, by direction",
            "direction",
        )?,
        rounds: vec(
            "replica_sync_rounds_total",
            "Anti-entropy rounds with a peer, by result",
            "result",
        )?,
        purged: counter(
            "replica_purged_total",
            "Replica records purged (owner left, past the horizon, TTL ended)",
        )?,
        throttled: counter(
            "replica_round_calls_throttled_total",
            "CrcDiff and Sync calls refused past the asking peer's rate",
        )?,
        fetch_source: vec(
            "content_fetch_source_total",
            "Reconciler content fetches that succeeded, by whether the peer that served them announced the content",
            "source",
        )?,
    })
}
