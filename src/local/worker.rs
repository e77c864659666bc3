//! The reconciler worker of `stave start`. It runs at start-up, after
//! every committed height the ABCI actor publishes, and on a short tick
//! (for retries). Each round reads committed chain state and the local
//! store, asks [`plan`] what is missing, writes the sync entries and starts
//! fetches, at most `concurrency` at once. A fetch moves an entry
//! `PENDING → DOWNLOADING → SEEDING/RECEIVED`, or `→ FAILED` with the error
//! and the time of the next attempt (exponential backoff).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::{watch, Semaphore};

use super::assignments::Assignment;
use super::deks::DeksExt;
use super::node::{serving_validator, LocalNode};
use super::peer_auth::{now_ms, PeerError};
use super::peer_client::{fetch_content, fetch_dek, PeerTarget};
use super::reconcile::{backoff_ms, plan, wanted, Kind, LocalView};
use super::status::{counts, keep_assigned, publish_gauges};
use super::sync::{SyncExt, SyncRecord};
use super::MetaExt;
use crate::crypto::Dek;
use crate::proto::local::{ContentSync, DekSync, SyncStatus};
use crate::store::View;

/// Fetches running now, by kind and cid.
type InFlight = BTreeSet<(Kind, Vec<u8>)>;
/// Fetches whose FAILED entry could not be written: (attempts, retry time)
/// kept in memory, so a failing disk does not turn retries into a loop.
type HeldOff = BTreeMap<(Kind, Vec<u8>), (u32, u64)>;

/// Worker settings (node-local).
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    pub concurrency: usize,
    pub tick: Duration,
    pub backoff_base_ms: u64,
    pub backoff_max_ms: u64,
    /// The longest a peer's content stream may go without a message.
    pub idle: Duration,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        WorkerConfig {
            concurrency: 4,
            tick: Duration::from_secs(2),
            backoff_base_ms: 1_000,
            backoff_max_ms: 60_000,
            idle: super::peer_client::IDLE,
        }
    }
}

/// Heights between two full rounds while nothing changes (they rehash
/// what is not SEEDING and notice files gone from disk).
pub const FULL_EVERY: u64 = 64;

/// A full round that found everything held: nothing written, nothing to
/// fetch, nothing in flight, every assigned entry SEEDING or RECEIVED.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Settled {
    /// `assignment_epoch` of this validator when it ran.
    epoch: u64,
    height: u64,
    /// The height the next held taken-down upload is deleted at.
    next_purge: Option<u64>,
}

impl Settled {
    /// Whether a round at `height` may skip the full read: nothing in
    /// flight, the same assignments, no takedown confirmed since, no purge
    /// due, and fewer than [`FULL_EVERY`] heights since.
    fn holds(&self, epoch: u64, height: u64, idle: bool, confirmed: u64) -> bool {
        self.epoch == epoch
            && idle
            && confirmed <= self.height
            && self.next_purge.is_none_or(|h| height < h)
            && height < self.height.saturating_add(FULL_EVERY)
    }
}

/// Which validators announce that they hold a cid (the replicated
/// content inventory, [`crate::replica::inventory`]).
pub trait Announcements: Send + Sync {
    fn announcing(&self, cid: &[u8]) -> BTreeSet<[u8; 32]>;
}

/// The reconciler worker.
#[derive(Clone)]
pub struct Worker {
    node: Arc<LocalNode>,
    /// Peers announcing a cid are asked first.
    announced: Option<Arc<dyn Announcements>>,
    cfg: WorkerConfig,
    in_flight: Arc<Mutex<InFlight>>,
    held_off: Arc<Mutex<HeldOff>>,
    permits: Arc<Semaphore>,
    /// The last settled round: until this validator's assignments change
    /// (or [`FULL_EVERY`] heights pass), a round reads one key and stops.
    settled: Arc<Mutex<Option<Settled>>>,
    /// The last committed height that confirmed a takedown.
    takedowns: Option<watch::Receiver<u64>>,
}

/// What one round found: the committed height and what it started.
#[derive(Debug, Default)]
pub struct Round {
    pub height: Option<u64>,
    pub started: usize,
}

/// The takedown facts a round needs.
#[derive(Debug, Clone, Copy)]
struct Takedowns {
    /// The last committed height that confirmed a takedown (0: none seen;
    /// a worker without the feed runs full rounds as before).
    confirmed: u64,
    retention: u64,
}

impl Takedowns {
    fn new(feed: &Option<watch::Receiver<u64>>, retention: u64) -> Self {
        Takedowns {
            confirmed: feed.as_ref().map_or(0, |r| *r.borrow()),
            retention,
        }
    }
}

impl Worker {
    pub fn new(node: Arc<LocalNode>, cfg: WorkerConfig) -> Self {
        let permits = Arc::new(Semaphore::new(cfg.concurrency.max(1)));
        Worker {
            node,
            announced: None,
            cfg,
            in_flight: Arc::default(),
            held_off: Arc::default(),
            permits,
            settled: Arc::default(),
            takedowns: None,
        }
    }

    /// Follows the heights that confirm takedowns, so that a settled
    /// worker notices one at once (without it, within [`FULL_EVERY`]).
    pub fn with_takedowns(mut self, heights: watch::Receiver<u64>) -> Self {
        self.takedowns = Some(heights);
        self
    }

    /// Asks the peers `a` says announce a cid before the others.
    pub fn with_announcements(mut self, a: Arc<dyn Announcements>) -> Self {
        self.announced = Some(a);
        self
    }

    /// Runs until the task is dropped.
    pub async fn run(self, mut heights: watch::Receiver<u64>) {
        loop {
            if let Err(e) = self.round().await {
                tracing::warn!(error = %format!("{e:#}"), "reconcile failed");
            }
            tokio::select! {
                _ = heights.changed() => {}
                _ = tokio::time::sleep(self.cfg.tick) => {}
            }
        }
    }

    /// Fetches running now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.lock().len()
    }

    /// One reconcile: decide, write entries, start fetches.
    pub async fn round(&self) -> anyhow::Result<Round> {
        let node = self.node.clone();
        tokio::task::spawn_blocking(move || node.advance_x25519()).await?;
        let node = self.node.clone();
        let flying = self.in_flight.lock().clone();
        let settled = *self.settled.lock();
        let at = Takedowns::new(&self.takedowns, self.node.takedown_retention_blocks);
        let (height, fetches, now) =
            tokio::task::spawn_blocking(move || decide(&node, flying, settled, at)).await??;
        *self.settled.lock() = now;
        let Some(height) = height else {
            return Ok(Round::default());
        };
        let fetches = self.not_held_off(fetches);
        let started = fetches.len();
        for (kind, cid, a) in fetches {
            if !self.in_flight.lock().insert((kind, cid.clone())) {
                continue;
            }
            let w = self.clone();
            tokio::spawn(async move {
                let Ok(_permit) = w.permits.clone().acquire_owned().await else {
                    return;
                };
                w.fetch(kind, &cid, &a).await;
                w.in_flight.lock().remove(&(kind, cid));
            });
        }
        Ok(Round {
            height: Some(height),
            started,
        })
    }

    /// Drops fetches held off in memory; forgets hold-offs that ended a
    /// full backoff period ago (their attempt count starts again).
    fn not_held_off(&self, fetches: Fetches) -> Fetches {
        let now = now_ms();
        let mut held = self.held_off.lock();
        held.retain(|_, (_, at)| at.saturating_add(self.cfg.backoff_max_ms) > now);
        fetches
            .into_iter()
            .filter(|(k, c, _)| held.get(&(*k, c.clone())).is_none_or(|(_, at)| *at <= now))
            .collect()
    }

    async fn failed(&self, kind: Kind, cid: &[u8], error: String) {
        tracing::warn!(?kind, cid = %hex::encode(cid), %error, "fetch failed");
        let node = self.node.clone();
        let (base_ms, max_ms) = (self.cfg.backoff_base_ms, self.cfg.backoff_max_ms);
        let cid_v = cid.to_vec();
        let op = Op::Failed {
            error,
            base_ms,
            max_ms,
        };
        let written = blocking(move || mark(&node, kind, &cid_v, op)).await;
        if let Err(e) = written {
            tracing::error!(?kind, cid = %hex::encode(cid), error = %e, "FAILED entry not written; holding off in memory");
            let mut held = self.held_off.lock();
            let entry = held.entry((kind, cid.to_vec())).or_insert((0, 0));
            entry.0 = entry.0.saturating_add(1);
            entry.1 = now_ms().saturating_add(backoff_ms(entry.0, base_ms, max_ms));
        } else {
            self.held_off.lock().remove(&(kind, cid.to_vec()));
        }
    }
}

/// A change to a sync entry.
enum Op {
    Downloading,
    Done {
        source: Vec<u8>,
        size: u64,
    },
    Failed {
        error: String,
        base_ms: u64,
        max_ms: u64,
    },
}

fn apply<R: SyncRecord>(e: &mut R, op: Op) {
    match op {
        Op::Downloading => {
            e.set_sync_status(SyncStatus::Downloading);
            *e.attempts_mut() = e.attempts_mut().saturating_add(1);
        }
        Op::Done { source, size } => {
            e.set_sync_status(R::HELD);
            *e.source_mut() = source;
            e.note_size(size, true);
            e.error_mut().clear();
            *e.retry_at_mut() = 0;
            *e.attempts_mut() = 0;
        }
        Op::Failed {
            error,
            base_ms,
            max_ms,
        } => {
            let at = now_ms().saturating_add(backoff_ms(*e.attempts_mut(), base_ms, max_ms));
            e.set_sync_status(SyncStatus::Failed);
            *e.error_mut() = error;
            *e.retry_at_mut() = at;
        }
    }
}

fn update<R: SyncRecord>(node: &LocalNode, cid: &[u8], op: Op) -> anyhow::Result<()> {
    // a corrupt entry is rewritten whole
    let mut e: R = match node.local.sync_entry(cid) {
        Err(super::LocalError::Corrupt { .. }) => R::default(),
        other => other?.unwrap_or_default(),
    };
    *e.cid_mut() = cid.to_vec();
    apply(&mut e, op);
    node.local.put_sync(&e)?;
    Ok(())
}

/// Reads, changes and writes one sync entry.
fn mark(node: &LocalNode, kind: Kind, cid: &[u8], op: Op) -> anyhow::Result<()> {
    match kind {
        Kind::Content => update::<ContentSync>(node, cid, op),
        Kind::Dek => update::<DekSync>(node, cid, op),
    }
}

type Fetches = Vec<(Kind, Vec<u8>, Assignment)>;

/// The blocking half of a round: read, plan, write; returns the fetches,
/// and whether the round found everything settled. A round after a
/// settled one, with this validator's assignments unchanged and nothing in
/// flight, reads one key and stops (a full round every [`FULL_EVERY`]
/// heights).
fn decide(
    node: &LocalNode,
    in_flight: BTreeSet<(Kind, Vec<u8>)>,
    settled: Option<Settled>,
    td: Takedowns,
) -> anyhow::Result<(Option<u64>, Fetches, Option<Settled>)> {
    use crate::keyspaces::uploads::UploadsRead;
    let view = node.chain.view();
    let Some(height) = view.commit_info()?.height else {
        return Ok((None, Vec::new(), None));
    };
    let epoch = view.assignment_epoch(&node.me())?;
    let idle = in_flight.is_empty();
    if let Some(s) = settled.filter(|s| s.holds(epoch, height, idle, td.confirmed)) {
        node.local.set_last_reconcile_height(height)?;
        return Ok((Some(height), Vec::new(), Some(s)));
    }
    let all = node.assignments.for_validator(&view, &node.me())?;
    let (assignments, taken) = super::purge::partition(&view, all, (height, td.retention))?;
    drop(view);
    let want = wanted(&node.me(), &assignments);
    let local = read_local(node, &want.content, in_flight)?;
    let p = plan(&want, &local, now_ms());
    node.local.put_sync_all(&p.content_writes, &p.dek_writes)?;
    let purged = takedowns::step(node, taken, (&want, &p), height, td.retention);
    if !p.unassigned_content.is_empty() {
        tracing::info!(
            count = p.unassigned_content.len(),
            "content held but no longer assigned (kept)"
        );
    }
    node.local.set_last_reconcile_height(height)?;
    // the same definition as `stave query local status`: assigned entries
    let mut content = node.local.all_content_sync()?;
    let mut deks = node.local.all_dek_sync()?;
    keep_assigned(&want, &mut content, &mut deks);
    publish_gauges(&counts(&content, &deks));
    let held = |s: SyncStatus| matches!(s, SyncStatus::Seeding | SyncStatus::Received);
    let all_held = content.values().all(|e| held(e.status()))
        && deks.values().all(|e| held(e.status()))
        && content.len() == want.content.len()
        && deks.len() == want.deks.len();
    let quiet = p.fetch.is_empty() && p.content_writes.is_empty() && p.dek_writes.is_empty();
    let now = (idle && quiet && all_held && purged.ok).then_some(Settled {
        epoch,
        height,
        next_purge: purged.next_due,
    });
    let by_cid: BTreeMap<(Kind, &[u8]), &Assignment> = assignments
        .iter()
        .flat_map(|a| {
            a.blobs()
                .map(move |(c, _)| ((Kind::Content, c.as_slice()), a))
                .chain([((Kind::Dek, a.dek_cid.as_slice()), a)])
        })
        .collect();
    let fetches = p
        .fetch
        .into_iter()
        .filter_map(|(k, c)| {
            by_cid
                .get(&(k, c.as_slice()))
                .map(|a| (k, c.clone(), (*a).clone()))
        })
        .collect();
    Ok((Some(height), fetches, now))
}

/// The local side; a content file counts as held once its hash verified
/// (files not yet `SEEDING` are rehashed, and deleted if they fail).
fn read_local(
    node: &LocalNode,
    wanted_content: &BTreeMap<Vec<u8>, u64>,
    in_flight: BTreeSet<(Kind, Vec<u8>)>,
) -> anyhow::Result<LocalView> {
    let content_sync = node.local.all_content_sync()?;
    let mut files = BTreeSet::new();
    for cid in node.content.list()? {
        let seeding = content_sync
            .get(&cid)
            .is_some_and(|e| e.status() == SyncStatus::Seeding);
        let verify = wanted_content.contains_key(&cid) && !seeding;
        if !verify {
            files.insert(cid);
            continue;
        }
        match node.content.verify(&cid) {
            Ok(true) => {
                files.insert(cid);
            }
            // a file that fails its hash is no copy at all: delete it once
            // rather than rehash it every round; the cid is fetched again
            Ok(false) => match node.content.remove(&cid) {
                Ok(()) => {
                    tracing::warn!(cid = %hex::encode(&cid), "content file fails its hash; deleted")
                }
                Err(e) => {
                    tracing::warn!(cid = %hex::encode(&cid), error = %e, "content file fails its hash; cannot delete it")
                }
            },
            // a read fault is no verdict: not held this round, kept on disk
            Err(e) => {
                tracing::warn!(cid = %hex::encode(&cid), error = %e, "cannot verify content file")
            }
        }
    }
    Ok(LocalView {
        content_sync,
        dek_sync: node.local.all_dek_sync()?,
        files,
        held_deks: node.local.dek_cids()?.into_iter().collect(),
        in_flight,
    })
}

mod fetch;
mod takedowns;
use fetch::blocking;
