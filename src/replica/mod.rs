//! Replicated node-local data: CAD037 databases (`001_5d0a1075981af6be.txt`)
//! whose replicas travel between validators as signed per-owner records,
//! kept in step by UEP-20 anti-entropy (`003_57106af6b4b30d2d.txt`). Never
//! part of the app hash: this is what consensus should not carry (who
//! holds which content, operator notices, peer scores).
//!
//! # Records
//!
//! Each validator owns one record per (db, key) it wrote: its own writes
//! to that key, as a [`crate::crdt::Entry`] ([`codec::RecordValue`]), under
//! `datakey = SHA-256(owner ‖ len(db) ‖ db ‖ key)` and UEP-20's 128-byte
//! metadata ([`md::Metadata`]), signed by the owner's operator key with
//! proof of work ([`pow`]). A write is checked against what a reader sees,
//! the merge of every current owner's record ([`db`]), and only its delta
//! joins the writer's own record ([`crate::crdt::Entry::delta`]). Peers
//! store and forward owners' records as signed, never merged products;
//! merging happens at read time, over the records of the *current*
//! validators (ACTIVE and UNBONDING). A REMOVED validator's records stop
//! merging at once and are purged by the next sweep ([`own`]).
//!
//! # Anti-entropy
//!
//! On the peer listener, between ACTIVE validators ([`crate::grpc::replica`]
//! serves, [`sync`] asks):
//! - **UPDATE**: a batch of records a node accepted (its own writes, or
//!   UPDATEs it accepted, which it forwards). The receiver checks each
//!   ([`accept`]), pulls the values it lacks from the sender by hash,
//!   checks them, keeps the newer, and forwards. Rate-limited per peer.
//! - **CRC_DIFF**: the XOR of the CRC-32s of the metadata under a prefix,
//!   with a count; where the peer's differs it answers with its children's
//!   (which must XOR to its own, or the round is refused and counted).
//!   The asking node recurses until a prefix holds at most 16 records on
//!   one side, then SYNCs it.
//! - **SYNC**: the records under a prefix that the asker lacks or holds in
//!   another version, paged.
//!
//! Each node runs rounds with each ACTIVE peer in turn, pulling only: both
//! directions are covered by each side's own rounds. Records learned by
//! SYNC are not forwarded (every peer runs its own rounds).
//!
//! # The horizon
//!
//! A record stamped before `now − horizon` is refused and, held, purged.
//! Owners re-sign their live records every quarter horizon ([`own`]), so
//! only a dead owner's records age out, and on each re-sign an owner drops
//! what others' writes superseded ([`crate::crdt::Entry::drop_dominated`])
//! and collects its own removals older than the horizon. This is safe if
//! every validator syncs at least once per quarter horizon: a remover's
//! tombstone outlives the adder's superseded add on every node, so nothing
//! is resurrected. A node cut off for longer should be reset
//! (`stave reset`) and copy its peers afresh.

pub mod accept;
pub mod codec;
pub mod crc_index;
pub mod db;
pub mod diff;
pub mod inventory;
pub mod md;
pub mod metrics;
pub mod own;
pub mod params;
pub mod pow;
pub mod queues;
pub mod run;
pub mod stats;
pub mod store;
pub mod sync;
pub mod usage;

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::keyspaces::params::ParamsRead;
use crate::keyspaces::validators::{query::listed, ValidatorStatus};
use crate::local::peer_client::PeerTarget;
use crate::local::{LocalError, LocalStore};
use crate::store::ChainStore;

/// The proof-of-work base of tests and the localnet (`testnet/testnet`
/// sets it): one, so a record's work is only `size × ttl` hashes.
pub const LOCALNET_POW_BASE: u64 = 1;

/// `[replica]` in `stave.toml`: this node's pace and limits. What every
/// validator must share (the proof-of-work base, the horizon) is genesis
/// params ([`params::ReplicaParams`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReplicaConfig {
    /// Milliseconds between anti-entropy rounds with every peer.
    pub sync_interval_ms: u64,
    /// Milliseconds between UPDATE batches.
    pub push_interval_ms: u64,
    /// UPDATE requests a peer may send per second, and in a burst.
    pub update_per_sec: u32,
    pub update_burst: u32,
    /// CrcDiff and Sync requests a peer may send per second, and in a
    /// burst: a round makes one CrcDiff per 64 differing prefixes and one
    /// Sync per 1,000 records it pulls.
    pub round_calls_per_sec: u32,
    pub round_calls_burst: u32,
    /// Seconds between content-inventory publications (at most).
    pub inventory_interval_secs: u64,
    /// The most records, and metadata and value bytes, one validator's
    /// records may take on this node; past them its new records are
    /// refused (`reason="quota"`). Keep them the same on every validator.
    pub max_records_per_owner: u64,
    pub max_bytes_per_owner: u64,
    /// Ignored: genesis `params.replica` holds these now. Accepted so a
    /// `stave.toml` written before still loads; a warning says so.
    #[serde(default, skip_serializing)]
    pub pow_base: Option<u64>,
    #[serde(default, skip_serializing)]
    pub horizon_hours: Option<u64>,
}

impl Default for ReplicaConfig {
    fn default() -> Self {
        ReplicaConfig {
            sync_interval_ms: 10_000,
            push_interval_ms: 200,
            update_per_sec: 20,
            update_burst: 40,
            round_calls_per_sec: 100,
            round_calls_burst: 200,
            inventory_interval_secs: 30,
            max_records_per_owner: 1_000_000,
            max_bytes_per_owner: 2 << 30,
            pow_base: None,
            horizon_hours: None,
        }
    }
}

/// Why a replica operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ReplicaError {
    #[error(transparent)]
    Local(#[from] LocalError),
    #[error("chain store: {0}")]
    Chain(String),
    #[error("invalid argument: {0}")]
    Invalid(String),
    #[error(
        "this node ({0}) is not an ACTIVE validator: its peers would refuse its records, or never ask for them"
    )]
    NotValidator(String),
}

impl From<codec::CodecError> for ReplicaError {
    fn from(e: codec::CodecError) -> Self {
        ReplicaError::Invalid(e.to_string())
    }
}

fn chain_err(e: impl std::fmt::Display) -> ReplicaError {
    ReplicaError::Chain(e.to_string())
}

/// The validators as the replication sees them at the latest committed
/// height.
#[derive(Debug, Clone, Default)]
pub struct Validators {
    /// ACTIVE and UNBONDING, by name: whose records are accepted and
    /// merged.
    pub current: BTreeSet<[u8; 32]>,
    /// The key that signs for each of `current` (its name unless a
    /// `RotateOperatorKey` handed signing to another): records are checked
    /// under it.
    pub signers: std::collections::BTreeMap<[u8; 32], [u8; 32]>,
    /// ACTIVE validators but this one: whom to sync with.
    pub peers: Vec<PeerTarget>,
    /// Whether this node is ACTIVE (only an ACTIVE validator's records
    /// travel: its peers talk to ACTIVE validators only).
    pub me_active: bool,
}

/// One node's replication: its records, keys, settings and queues.
pub struct Replica {
    pub records: store::Records,
    pub chain: ChainStore,
    operator: ed25519_dalek::SigningKey,
    pub config: ReplicaConfig,
    /// Held by own writes (one at a time: each reads then writes).
    own: parking_lot::Mutex<()>,
    pub stats: stats::Stats,
    pub queues: queues::Queues,
    /// When a round with a peer last succeeded (Unix ms, 0 for never).
    last_round_ms: std::sync::atomic::AtomicU64,
    /// The last own record a sweep looked at: the next sweep goes on
    /// after it, so records it skipped cannot keep others from their turn.
    refresh_after: parking_lot::Mutex<[u8; 32]>,
    /// The genesis params, once read.
    params: std::sync::OnceLock<params::ReplicaParams>,
    /// Own records stamped before this (Unix ms) were signed by a key a
    /// rotation retired: the sweep re-signs them first (0: none).
    resign_before: std::sync::atomic::AtomicU64,
}

impl Replica {
    /// Opens the replication over `local`'s records.
    pub fn open(
        local: LocalStore,
        chain: ChainStore,
        operator: ed25519_dalek::SigningKey,
        config: ReplicaConfig,
    ) -> Result<Arc<Self>, ReplicaError> {
        let quota = usage::Quota {
            records: config.max_records_per_owner,
            bytes: config.max_bytes_per_owner,
        };
        if config.pow_base.is_some() || config.horizon_hours.is_some() {
            tracing::warn!(
                "[replica] pow_base and horizon_hours in stave.toml are ignored: they are genesis params.replica now"
            );
        }
        let records = store::Records::open(local, quota)?;
        crate::metrics::metrics()
            .replica
            .records
            .set(records.len() as i64);
        let r = Replica {
            records,
            chain,
            operator,
            config,
            own: parking_lot::Mutex::new(()),
            stats: stats::Stats::default(),
            queues: queues::Queues::default(),
            last_round_ms: std::sync::atomic::AtomicU64::new(0),
            refresh_after: parking_lot::Mutex::new([0; 32]),
            params: std::sync::OnceLock::new(),
            resign_before: std::sync::atomic::AtomicU64::new(0),
        };
        r.note_signer()?;
        Ok(Arc::new(r))
    }

    /// This validator's name: the owner of the records it writes (they
    /// are signed by [`Replica::key`]).
    pub fn me(&self) -> [u8; 32] {
        crate::local::node::name_of(&self.chain, &self.key())
    }

    /// The public half of the key this node signs with.
    pub fn key(&self) -> [u8; 32] {
        self.operator.verifying_key().to_bytes()
    }

    /// Records the key that signs from now on; when an earlier key signed
    /// this node's records (an operator-key rotation), has the sweep
    /// re-sign them under this one first, so peers that check them under
    /// the key the chain names take them again. The stamp is kept: a
    /// restart goes on with the same records, not all of them again.
    fn note_signer(&self) -> Result<(), ReplicaError> {
        use crate::local::MetaExt;
        let key = self.key();
        let local = self.records.local();
        let since = match local.replica_signer()? {
            None => {
                local.set_replica_signer(&key, None)?;
                return Ok(());
            }
            Some((k, None)) if k == key => return Ok(()),
            Some((k, Some(t))) if k == key => t,
            Some(_) => {
                let now = crate::local::peer_auth::now_ms();
                local.set_replica_signer(&key, Some(now))?;
                tracing::info!("operator key changed: re-signing this node's replicated records");
                now
            }
        };
        self.resign_before
            .store(since, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// Own records stamped before this were signed by a retired key.
    pub(super) fn resign_before(&self) -> u64 {
        self.resign_before
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Every own record a retired key signed has been re-signed or aged
    /// out: the current key is now the one on record.
    pub(super) fn resigned(&self) -> Result<(), ReplicaError> {
        use crate::local::MetaExt;
        self.records.local().set_replica_signer(&self.key(), None)?;
        self.resign_before
            .store(0, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    pub fn chain_id(&self) -> Result<String, ReplicaError> {
        Ok(self.chain.view().commit_info().map_err(chain_err)?.chain_id)
    }

    /// The validators at the latest committed height, by name, with the
    /// key that signs for each.
    pub fn validators(&self) -> Result<Validators, ReplicaError> {
        let view = self.chain.view();
        let me = crate::local::node::name_in(&view, &self.key()).map_err(chain_err)?;
        let mut v = Validators::default();
        for (op, status, rec) in listed(&view).map_err(chain_err)? {
            let key = crate::local::node::signing_key_in(&view, &op).map_err(chain_err)?;
            v.current.insert(op);
            v.signers.insert(op, key);
            if status == ValidatorStatus::Active && op == me {
                v.me_active = true;
            }
            if status == ValidatorStatus::Active && op != me {
                v.peers.push(PeerTarget {
                    operator: op,
                    address: rec.address,
                });
            }
        }
        Ok(v)
    }

    /// The network's replica params, from the chain's genesis params
    /// (read once: they never change).
    pub fn params(&self) -> Result<params::ReplicaParams, ReplicaError> {
        if let Some(p) = self.params.get() {
            return Ok(*p);
        }
        let p = self
            .chain
            .view()
            .params()
            .map_err(chain_err)?
            .ok_or_else(|| ReplicaError::Chain("no genesis params yet".into()))?
            .replica;
        Ok(*self.params.get_or_init(|| p))
    }

    /// The checks' context at `now_ms`.
    pub fn ctx<'a>(
        &self,
        chain_id: &'a str,
        v: &'a Validators,
        now_ms: u64,
    ) -> Result<accept::Ctx<'a>, ReplicaError> {
        let p = self.params()?;
        Ok(accept::Ctx {
            chain_id,
            now_ms,
            horizon_ms: p.horizon_ms(),
            pow_base: p.pow_base,
            current: &v.current,
            signers: &v.signers,
        })
    }

    /// Notes a round with a peer that succeeded at `now_ms`.
    pub fn mark_synced(&self, now_ms: u64) {
        self.last_round_ms
            .fetch_max(now_ms, std::sync::atomic::Ordering::Relaxed);
    }

    /// When a round with a peer last succeeded (Unix ms, 0 for never).
    pub fn last_round_ms(&self) -> u64 {
        self.last_round_ms
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    fn publish_count(&self) {
        crate::metrics::metrics()
            .replica
            .records
            .set(self.records.len() as i64);
    }
}
