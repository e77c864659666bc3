//! Prometheus metrics: block height, time, gas and app hash, txs applied,
//! the latency of each consensus-path ABCI call and of CheckTx, mempool
//! rejects by code, the stores' free disk, and the data plane's jobs.
//! Served as text on `[metrics] listen`; `deploy/` holds the dashboard and
//! alert rules built on them. Counters whose label values are known up
//! front start at zero ([`prime`]), so a rule's `rate()` sees the first
//! increase.

pub mod chain;
pub mod disk;
pub mod takedown;

use std::sync::OnceLock;

use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    IntGaugeVec, Opts, Registry, TextEncoder,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The node's metrics.
pub struct Metrics {
    pub registry: Registry,
    pub height: IntGauge,
    pub txs_applied: IntCounterVec,
    pub finalize_seconds: Histogram,
    pub commit_seconds: Histogram,
    pub prepare_proposal_seconds: Histogram,
    pub process_proposal_seconds: Histogram,
    /// CheckTx requests handled together (one signature batch).
    pub checktx_batch: Histogram,
    pub mempool_rejects: IntCounterVec,
    /// Proposals ProcessProposal rejected, by reason (a tx code's name or
    /// `OVER_MAX_BLOCK_GAS`).
    pub proposals_rejected: IntCounterVec,
    pub checktx_total: IntCounter,
    /// Local-store sync entries by kind (content, deks) and status.
    pub local_sync: IntGaugeVec,
    /// Local-store rows that did not decode and were skipped.
    pub local_corrupt_rows: IntCounter,
    /// Proofs sent with ABCI Query answers, by op type (`ics23`, `jmt`:
    /// where ICS23 cannot hold, [`crate::proof::choose`]).
    pub query_proofs: IntCounterVec,
    /// Ed25519 signatures checked by block verification (`tx::verify`).
    pub signature_checks: IntCounter,
    /// Tx decodes answered by the decode cache (`hit`) or done (`miss`).
    pub decode_cache: IntCounterVec,
    /// Connections closed at accept or requests refused, by listener and
    /// reason (`full`, `not_allowed`, `rate`, `request_rate`).
    pub listener_refused: IntCounterVec,
    /// Connections open, by listener.
    pub listener_connections: IntGaugeVec,
    /// Upload jobs that reached a state, by state.
    pub upload_jobs: IntCounterVec,
    /// Seconds upload jobs spent in a state, by state.
    pub upload_state_seconds: HistogramVec,
    /// Failed upload jobs, by reason code.
    pub upload_failures: IntCounterVec,
    /// Upload bytes: `in` (audio received), `out` (encrypted blobs made).
    pub upload_bytes: IntCounterVec,
    /// Uploads completed before their whole replication set confirmed.
    pub upload_under_replicated: IntCounter,
    /// The access service ([`AccessMetrics`]).
    pub access: AccessMetrics,
    /// State sync ([`SyncMetrics`]).
    pub sync: SyncMetrics,
    /// Replicated node-local data ([`crate::replica`]).
    pub replica: crate::replica::metrics::ReplicaMetrics,
    /// The last block's time, gas and app hash; CheckTx latency.
    pub chain: chain::ChainMetrics,
    /// Free disk under the stores.
    pub disk: disk::DiskMetrics,
    /// Takedowns reaching the disks.
    pub takedown: takedown::TakedownMetrics,
}

/// Snapshots taken and restores applied.
pub struct SyncMetrics {
    /// Seconds the last snapshot took to build.
    pub snapshot_seconds: prometheus::Gauge,
    /// The lowest height this process ran FinalizeBlock at (0: none yet).
    /// On a state-synced node it is above the snapshot's height.
    pub first_finalized_height: IntGauge,
    /// Snapshot chunks offered to this node, by result (`applied`,
    /// `refused`).
    pub restore_chunks: IntCounterVec,
    /// Seconds from the accepted OfferSnapshot to the restore's last write.
    pub restore_seconds: prometheus::Gauge,
    /// The height restored from a snapshot (0: none).
    pub restored_height: IntGauge,
}

fn sync_metrics(registry: &Registry) -> Result<SyncMetrics, prometheus::Error> {
    let snapshot_seconds = prometheus::Gauge::new(
        "snapshot_build_seconds",
        "Seconds the last snapshot took to build",
    )?;
    let first_finalized_height = IntGauge::new(
        "first_finalized_height",
        "Lowest height this process ran FinalizeBlock at (0: none yet)",
    )?;
    let restore_chunks = IntCounterVec::new(
        Opts::new(
            "restore_chunks_total",
            "Snapshot chunks offered to this node, by result",
        ),
        &["result"],
    )?;
    let restore_seconds = prometheus::Gauge::new(
        "restore_seconds",
        "Seconds from the accepted OfferSnapshot to the restore's last write",
    )?;
    let restored_height = IntGauge::new(
        "restored_height",
        "Height restored from a snapshot (0: none)",
    )?;
    registry.register(Box::new(snapshot_seconds.clone()))?;
    registry.register(Box::new(first_finalized_height.clone()))?;
    registry.register(Box::new(restore_chunks.clone()))?;
    registry.register(Box::new(restore_seconds.clone()))?;
    registry.register(Box::new(restored_height.clone()))?;
    Ok(SyncMetrics {
        snapshot_seconds,
        first_finalized_height,
        restore_chunks,
        restore_seconds,
        restored_height,
    })
}

/// What the access service delivered, refused and has yet to record.
pub struct AccessMetrics {
    /// DEKs delivered to consumers.
    pub delivered: IntCounter,
    /// Access and download requests refused, by code name.
    pub refused: IntCounterVec,
    /// Deliveries not yet recorded on chain.
    pub pending: IntGauge,
    /// Deliveries recorded on chain.
    pub recorded: IntCounter,
    /// Deliveries whose grant the chain refused (the policy changed).
    pub grant_refused: IntCounter,
    /// Encrypted bytes served by Download.
    pub download_bytes: IntCounter,
    /// Uploads whose sets are changing hands or name validators that left.
    pub under_replicated: IntGauge,
}

fn access_metrics(registry: &Registry) -> Result<AccessMetrics, prometheus::Error> {
    let counter = |name: &str, help: &str| -> Result<IntCounter, prometheus::Error> {
        let c = IntCounter::new(name, help)?;
        registry.register(Box::new(c.clone()))?;
        Ok(c)
    };
    let refused = IntCounterVec::new(
        Opts::new(
            "access_refused_total",
            "Access and download requests refused, by code",
        ),
        &["code"],
    )?;
    registry.register(Box::new(refused.clone()))?;
    let pending = IntGauge::new(
        "access_pending_grants",
        "Deliveries not yet recorded on chain",
    )?;
    registry.register(Box::new(pending.clone()))?;
    let under_replicated = IntGauge::new(
        "under_replicated_uploads",
        "Uploads whose sets are changing hands or name validators that left",
    )?;
    registry.register(Box::new(under_replicated.clone()))?;
    Ok(AccessMetrics {
        delivered: counter("access_delivered_total", "DEKs delivered to consumers")?,
        refused,
        pending,
        recorded: counter("access_recorded_total", "Deliveries recorded on chain")?,
        grant_refused: counter(
            "access_grant_refused_total",
            "Deliveries whose grant the chain refused to record",
        )?,
        download_bytes: counter(
            "access_download_bytes_total",
            "Encrypted bytes served by Download",
        )?,
        under_replicated,
    })
}

// Bucket bounds must rise strictly: a largest batch of 1 would repeat the bound 1.
const _: () = assert!(crate::abci::mempool::MAX_BATCH >= 2);

/// Powers of two up to the largest CheckTx batch.
fn batch_buckets() -> Vec<f64> {
    let max = crate::abci::mempool::MAX_BATCH as f64;
    std::iter::successors(Some(1.0), |b| (b * 2.0 < max).then_some(b * 2.0))
        .chain([max])
        .collect()
}

fn build() -> Result<Metrics, prometheus::Error> {
    let registry = Registry::new_custom(Some("stave".into()), None)?;
    let height = IntGauge::new("block_height", "Last committed height")?;
    let txs_applied = IntCounterVec::new(
        Opts::new(
            "txs_applied_total",
            "Txs applied in FinalizeBlock, by result code",
        ),
        &["code"],
    )?;
    let buckets = vec![
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    ];
    let latency = |name: &str, help: &str| {
        Histogram::with_opts(HistogramOpts::new(name, help).buckets(buckets.clone()))
    };
    let finalize_seconds = latency("finalize_block_seconds", "FinalizeBlock latency")?;
    let commit_seconds = latency("commit_seconds", "Commit latency")?;
    let prepare_proposal_seconds = latency("prepare_proposal_seconds", "PrepareProposal latency")?;
    let process_proposal_seconds = latency("process_proposal_seconds", "ProcessProposal latency")?;
    let checktx_batch = Histogram::with_opts(
        HistogramOpts::new(
            "checktx_batch_size",
            "CheckTx requests handled as one batch",
        )
        .buckets(batch_buckets()),
    )?;
    let mempool_rejects = IntCounterVec::new(
        Opts::new("mempool_rejects_total", "CheckTx rejections, by code"),
        &["code"],
    )?;
    let proposals_rejected = IntCounterVec::new(
        Opts::new(
            "proposals_rejected_total",
            "Proposals ProcessProposal rejected, by reason",
        ),
        &["reason"],
    )?;
    registry.register(Box::new(proposals_rejected.clone()))?;
    let checktx_total = IntCounter::new("checktx_total", "CheckTx requests")?;
    registry.register(Box::new(height.clone()))?;
    registry.register(Box::new(txs_applied.clone()))?;
    registry.register(Box::new(finalize_seconds.clone()))?;
    registry.register(Box::new(commit_seconds.clone()))?;
    registry.register(Box::new(prepare_proposal_seconds.clone()))?;
    registry.register(Box::new(process_proposal_seconds.clone()))?;
    registry.register(Box::new(checktx_batch.clone()))?;
    registry.register(Box::new(mempool_rejects.clone()))?;
    registry.register(Box::new(checktx_total.clone()))?;
    let local_sync = IntGaugeVec::new(
        Opts::new(
            "local_sync_entries",
            "Local-store sync entries, by kind and status",
        ),
        &["kind", "status"],
    )?;
    registry.register(Box::new(local_sync.clone()))?;
    let local_corrupt_rows = IntCounter::new(
        "local_corrupt_rows_total",
        "Local-store rows that did not decode and were skipped (refetched)",
    )?;
    registry.register(Box::new(local_corrupt_rows.clone()))?;
    let query_proofs = IntCounterVec::new(
        Opts::new(
            "query_proofs_total",
            "Proofs sent with ABCI Query answers, by op type",
        ),
        &["type"],
    )?;
    registry.register(Box::new(query_proofs.clone()))?;
    let signature_checks = IntCounter::new(
        "signature_checks_total",
        "Ed25519 signatures checked by block and CheckTx batch verification (a bisected batch counts again)",
    )?;
    registry.register(Box::new(signature_checks.clone()))?;
    let decode_cache = IntCounterVec::new(
        Opts::new(
            "decode_cache_total",
            "Tx decodes answered by the decode cache (hit) or done (miss)",
        ),
        &["result"],
    )?;
    registry.register(Box::new(decode_cache.clone()))?;
    let listener_refused = IntCounterVec::new(
        Opts::new(
            "listener_refused_total",
            "Connections closed at accept, or requests refused, by listener and reason",
        ),
        &["listener", "reason"],
    )?;
    registry.register(Box::new(listener_refused.clone()))?;
    let listener_connections = IntGaugeVec::new(
        Opts::new("listener_connections", "Open connections, by listener"),
        &["listener"],
    )?;
    registry.register(Box::new(listener_connections.clone()))?;
    let u = upload_metrics(&registry)?;
    let access = access_metrics(&registry)?;
    let sync = sync_metrics(&registry)?;
    let replica = crate::replica::metrics::register(&registry)?;
    let chain = chain::register(&registry)?;
    let disk = disk::register(&registry)?;
    let takedown = takedown::register(&registry)?;
    Ok(Metrics {
        registry,
        height,
        txs_applied,
        finalize_seconds,
        commit_seconds,
        prepare_proposal_seconds,
        process_proposal_seconds,
        checktx_batch,
        mempool_rejects,
        proposals_rejected,
        checktx_total,
        local_sync,
        local_corrupt_rows,
        query_proofs,
        signature_checks,
        decode_cache,
        listener_refused,
        listener_connections,
        upload_jobs: u.0,
        upload_state_seconds: u.1,
        upload_failures: u.2,
        upload_bytes: u.3,
        upload_under_replicated: u.4,
        access,
        sync,
        replica,
        chain,
        disk,
        takedown,
    })
}

/// Starts at zero every series whose label values are known up front: txs
/// applied and CheckTx rejections by code, replica rounds by result and
/// refusals by reason, upload jobs by state and node-side failures
/// (`INTERNAL`, `CHAIN`), listener refusals by listener and reason.
fn prime(m: &Metrics) {
    for code in crate::tx::Code::ALL {
        m.txs_applied.with_label_values(&[code.name()]);
        if code != crate::tx::Code::Ok {
            m.mempool_rejects.with_label_values(&[code.name()]);
        }
    }
    for result in ["ok", "error"] {
        m.replica.rounds.with_label_values(&[result]);
    }
    for r in crate::replica::accept::Refusal::ALL {
        m.replica.refused.with_label_values(&[r.label()]);
    }
    for reason in ["INTERNAL", "CHAIN"] {
        m.upload_failures.with_label_values(&[reason]);
    }
    // every listener has a cap; only the TCP gRPC ones have per-IP limits
    for listener in ["client", "peer", "admin", "metrics"] {
        m.listener_refused.with_label_values(&[listener, "full"]);
    }
    for listener in ["client", "peer"] {
        for reason in ["rate", "per_ip", "request_rate"] {
            m.listener_refused.with_label_values(&[listener, reason]);
        }
    }
    m.listener_refused
        .with_label_values(&["peer", "not_allowed"]);
    use crate::proto::local::JobStatus;
    for s in [
        JobStatus::Receiving,
        JobStatus::Transcoding,
        JobStatus::Encrypting,
        JobStatus::Seeding,
        JobStatus::Complete,
        JobStatus::Failed,
    ] {
        let name = crate::local::processing::job_status_name(s);
        m.upload_jobs.with_label_values(&[name]);
    }
}

type UploadMetrics = (
    IntCounterVec,
    HistogramVec,
    IntCounterVec,
    IntCounterVec,
    IntCounter,
);

fn upload_metrics(registry: &Registry) -> Result<UploadMetrics, prometheus::Error> {
    let jobs = IntCounterVec::new(
        Opts::new(
            "upload_jobs_total",
            "Upload jobs that reached a state, by state",
        ),
        &["state"],
    )?;
    let seconds = HistogramVec::new(
        HistogramOpts::new(
            "upload_state_seconds",
            "Seconds upload jobs spent in a state",
        )
        .buckets(vec![
            0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0,
        ]),
        &["state"],
    )?;
    let failures = IntCounterVec::new(
        Opts::new(
            "upload_failures_total",
            "Failed upload jobs, by reason code",
        ),
        &["reason"],
    )?;
    let bytes = IntCounterVec::new(
        Opts::new(
            "upload_bytes_total",
            "Upload bytes: in (audio received), out (encrypted blobs made)",
        ),
        &["direction"],
    )?;
    let under = IntCounter::new(
        "upload_under_replicated_total",
        "Uploads completed before their whole replication set confirmed the blob",
    )?;
    registry.register(Box::new(jobs.clone()))?;
    registry.register(Box::new(seconds.clone()))?;
    registry.register(Box::new(failures.clone()))?;
    registry.register(Box::new(bytes.clone()))?;
    registry.register(Box::new(under.clone()))?;
    Ok((jobs, seconds, failures, bytes, under))
}

impl Metrics {
    /// A commit at `height` under `app_hash` (consensus, or a restored
    /// snapshot): the hash first, then the height.
    pub fn committed(&self, height: u64, app_hash: &[u8; 32]) {
        self.chain.committed(app_hash);
        self.height.set(height as i64);
    }
}

/// The process-wide metrics.
pub fn metrics() -> &'static Metrics {
    static M: OnceLock<Metrics> = OnceLock::new();
    M.get_or_init(|| {
        let m = build().expect("metric names and labels are static and valid");
        prime(&m);
        m
    })
}

/// The metrics in Prometheus text format.
pub fn render() -> String {
    let mut buf = Vec::new();
    let enc = TextEncoder::new();
    metrics().disk.refresh();
    let _ = enc.encode(&metrics().registry.gather(), &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// Serves `GET /metrics` (any path) over plain HTTP/1.1 until the task is
/// dropped, at most `max_connections` at once (more are closed at accept).
pub async fn serve(listener: tokio::net::TcpListener, max_connections: usize) {
    let gate = crate::net::incoming::Gate::new("metrics", max_connections);
    loop {
        let Ok((mut sock, peer)) = listener.accept().await else {
            // e.g. out of file descriptors: back off instead of spinning
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            continue;
        };
        let permit = match gate.admit(None) {
            Ok(p) => p,
            Err(why) => {
                gate.refused(why, &peer);
                continue;
            }
        };
        tokio::spawn(async move {
            let _permit = permit;
            let mut buf = [0u8; 1024];
            let _ =
                tokio::time::timeout(std::time::Duration::from_secs(2), sock.read(&mut buf)).await;
            let body = render();
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let write = async {
                sock.write_all(head.as_bytes()).await?;
                sock.write_all(body.as_bytes()).await?;
                sock.shutdown().await
            };
            // a reader that stops reading cannot hold its place
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), write).await;
        });
    }
}
