//! The replication's worker: on its own thread with its own runtime (its
//! store reads and writes block, and must not hold the node's runtime).
//! It pushes UPDATE batches every `push_interval_ms`, pulls the values of
//! UPDATEs it accepted, runs an anti-entropy round with every ACTIVE peer
//! every `sync_interval_ms` (one at a time, so a node catching up copies
//! each record once), sweeps every minute and publishes the content
//! inventory every `inventory_interval_secs`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::sync::Syncer;
use super::{Replica, Validators};
use crate::grpc::replica::MAX_UPDATE;
use crate::local::content::ContentStore;
use crate::local::peer_auth::now_ms;
use crate::local::peer_client::PeerTarget;

const SWEEP_EVERY: Duration = Duration::from_secs(60);
/// The longest one round with one peer may take; the next round resumes
/// where the CRCs still differ.
const ROUND_TIMEOUT: Duration = Duration::from_secs(600);

/// Starts the worker thread; it runs until the process ends.
pub fn spawn(replica: Arc<Replica>, content: Option<ContentStore>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("replica".into())
        .spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    tracing::error!(error = %e, "replica worker: no runtime");
                    return;
                }
            };
            rt.block_on(Arc::new(Syncer::new(replica)).run(content));
        })
        .map(|_| ())
}

impl Syncer {
    /// The worker loop (see the module docs). Rounds run in a task of
    /// their own, so a slow peer's round never holds up UPDATEs.
    pub async fn run(self: Arc<Self>, content: Option<ContentStore>) {
        let cfg = self.replica.config.clone();
        let push = Duration::from_millis(cfg.push_interval_ms.max(10));
        let mut rounds = tokio::spawn(Arc::clone(&self).round_loop());
        let (mut next_sweep, mut next_inventory) = (Instant::now(), Instant::now());
        loop {
            if rounds.is_finished() {
                if let Err(e) = (&mut rounds).await {
                    tracing::error!(error = %e, "replica rounds stopped; restarting them after sync_interval_ms");
                }
                let (me, wait) = (
                    Arc::clone(&self),
                    Duration::from_millis(cfg.sync_interval_ms.max(100)),
                );
                rounds = tokio::spawn(async move {
                    tokio::time::sleep(wait).await;
                    me.round_loop().await
                });
            }
            tokio::select! {
                _ = self.replica.queues.wake.notified() => tokio::time::sleep(push).await,
                _ = tokio::time::sleep(push) => {}
            }
            let Some((chain_id, v)) = self.context() else {
                continue;
            };
            self.push(&chain_id, &v).await;
            self.pull_wanted(&chain_id, &v).await;
            let now = Instant::now();
            if now >= next_sweep {
                self.sweep_in_background();
                next_sweep = now + SWEEP_EVERY;
            }
            if let (Some(c), true) = (&content, now >= next_inventory) {
                if let Err(e) = self.replica.publish_content(c) {
                    tracing::warn!(error = %e, "publishing the content inventory");
                }
                next_inventory = now + Duration::from_secs(cfg.inventory_interval_secs.max(1));
            }
        }
    }

    /// A round with every ACTIVE peer at start and every
    /// `sync_interval_ms` after the last ended.
    async fn round_loop(self: Arc<Self>) {
        let every = Duration::from_millis(self.replica.config.sync_interval_ms.max(100));
        loop {
            if let Some((chain_id, v)) = self.context() {
                self.rounds(&chain_id, &v).await;
            }
            tokio::time::sleep(every).await;
        }
    }

    /// Starts a sweep on the blocking pool unless one is still running:
    /// a sweep reads every record, and the rounds must not wait for it.
    fn sweep_in_background(&self) {
        use std::sync::atomic::Ordering;
        if self.sweeping.swap(true, Ordering::AcqRel) {
            return;
        }
        let (replica, flag) = (Arc::clone(&self.replica), Arc::clone(&self.sweeping));
        tokio::task::spawn_blocking(move || {
            match replica.sweep() {
                Ok(s) if s != Default::default() => tracing::info!(?s, "replica sweep"),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "replica sweep"),
            }
            flag.store(false, Ordering::Release);
        });
    }

    fn context(&self) -> Option<(String, Validators)> {
        let got = self
            .replica
            .chain_id()
            .and_then(|c| Ok((c, self.replica.validators()?)));
        match got {
            Ok(x) => Some(x),
            Err(e) => {
                tracing::debug!(error = %e, "replica worker: no chain state yet");
                None
            }
        }
    }

    /// One round with every ACTIVE peer, in turn.
    pub async fn rounds(&self, chain_id: &str, v: &Validators) {
        for t in &v.peers {
            let result = tokio::time::timeout(ROUND_TIMEOUT, self.round(chain_id, v, t))
                .await
                .unwrap_or_else(|_| {
                    Err(super::sync::SyncError::Remote {
                        peer: hex::encode(t.operator),
                        reason: "the round took too long".into(),
                    })
                });
            let m = &crate::metrics::metrics().replica.rounds;
            match result {
                Ok(st) => {
                    m.with_label_values(&["ok"]).inc();
                    self.replica.mark_synced(now_ms());
                    self.replica.stats.with(t.operator, |s| {
                        s.rounds += 1;
                        s.last_sync_ms = now_ms();
                        s.last_error.clear();
                    });
                    if st.accepted > 0 {
                        tracing::info!(peer = %hex::encode(t.operator), accepted = st.accepted, syncs = st.syncs, "replica round");
                    }
                }
                Err(e) => {
                    m.with_label_values(&["error"]).inc();
                    let why = e.to_string();
                    // a warning when it starts failing or fails otherwise
                    let new = self.replica.stats.with(t.operator, |s| {
                        let new = s.last_error != why;
                        s.last_error = why;
                        new
                    });
                    if new {
                        tracing::warn!(peer = %hex::encode(t.operator), error = %e, "replica round failed");
                    } else {
                        tracing::debug!(peer = %hex::encode(t.operator), error = %e, "replica round failed again");
                    }
                }
            }
        }
    }

    /// Sends what was queued to announce to every ACTIVE peer but the one
    /// it came from, in UPDATE batches.
    pub async fn push(&self, chain_id: &str, v: &Validators) {
        let out = self.replica.queues.take_outgoing();
        if out.is_empty() {
            return;
        }
        let sends = v.peers.iter().map(|t| {
            let records: Vec<_> = out
                .iter()
                .filter(|o| o.from != Some(t.operator))
                .map(|o| o.record.to_pb())
                .collect();
            async move {
                for batch in records.chunks(MAX_UPDATE) {
                    if let Err(e) = self.update(chain_id, t, batch.to_vec()).await {
                        tracing::debug!(peer = %hex::encode(t.operator), error = %e, "UPDATE not delivered");
                        return;
                    }
                }
            }
        });
        futures::future::join_all(sends).await;
    }

    /// Pulls the values of accepted UPDATEs from the peers that sent them,
    /// keeps the records and forwards them.
    pub async fn pull_wanted(&self, chain_id: &str, v: &Validators) {
        let by_peer: BTreeMap<[u8; 32], &PeerTarget> =
            v.peers.iter().map(|t| (t.operator, t)).collect();
        for (from, records) in self.replica.queues.take_wanted() {
            let Some(t) = by_peer.get(&from) else {
                continue;
            };
            match self.keep(chain_id, t, records).await {
                Ok(kept) => self.replica.queues.announce(kept.to_vec(), Some(from)),
                Err(e) => {
                    tracing::debug!(peer = %hex::encode(from), error = %e, "pulling UPDATE values")
                }
            }
        }
    }
}
