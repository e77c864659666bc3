//! The per-block flow: genesis, proposals, FinalizeBlock, Commit, Info.
//!
//! [`App`] is the domain core. It is driven by one consensus actor (see
//! `abci::consensus`) and is a function of committed state and its inputs:
//! block height, block time, and tx bytes. No wall clock, no randomness that
//! reaches state, no `HashMap` iteration that reaches the app hash.

mod decode_cache;
mod dispatch;
mod execute;
mod genesis;
mod mempool;
mod notify;
mod outcome;
mod proposal;
mod sigcache;
mod simulate;

use std::sync::Arc;

pub use decode_cache::{
    DecodeCache, DecodeStats, DEFAULT_BYTES as DECODE_CACHE_BYTES,
    DEFAULT_ENTRIES as DECODE_CACHE_ENTRIES,
};
pub use dispatch::dispatch;
pub use execute::{authenticate, authenticate_tx, execute_tx, Actions, BlockEnv, BlockMemo};
pub use genesis::{block_max_gas, AppState, GenesisAccount, GenesisError};
pub use mempool::{CheckKind, Mempool};
pub use notify::{CommitNotifier, Committed};
pub use outcome::{BlockOutcome, TxClass, TxOutcome};
pub use proposal::Rejection;
pub use sigcache::SigCache;
pub use simulate::{simulate, Simulation};

use thiserror::Error;

use crate::keyspaces::params::{Params, ParamsRead};
use crate::store::{ChainStore, Overlay, PendingCommit, PruneConfig, StoreError};
use crate::tx::{DecodedTx, TxError, UnverifiedTx};

/// The app version of a new chain (CometBFT's genesis `version.app`); an
/// upgrade raises the chain's version in state (`upgrades/app_version`).
pub const APP_VERSION: u64 = crate::keyspaces::upgrades::GENESIS_APP_VERSION;

/// ProcessProposal decodes this many txs at a time (in parallel) and stops
/// at the first chunk with a tx that does not decode.
const STRICT_DECODE_CHUNK: usize = 256;

/// Decoding is split over threads by work once a batch's txs weigh this
/// much: each tx weighs its bytes plus [`DECODE_TX_WEIGHT`].
pub(crate) const DECODE_PARALLEL_FROM: u64 = 64 * 1024;
/// The fixed part of a tx's decode weight (its signer key, its canonical
/// re-encoding), in bytes' worth.
pub(crate) const DECODE_TX_WEIGHT: u64 = 256;

/// A tx's decode weight.
pub(crate) fn decode_weight(raw: &[u8]) -> u64 {
    raw.len() as u64 + DECODE_TX_WEIGHT
}

/// FinalizeBlock's block gas rule, which also holds in block sync (where
/// ProcessProposal is skipped): a decoded tx adds its declared limit to
/// `declared`, and every tx that takes the sum past `max` fails with
/// BLOCK_GAS_EXCEEDED and changes nothing.
fn over_block_gas(
    d: &Result<DecodedTx, TxError>,
    declared: &mut u64,
    max: u64,
) -> Option<TxOutcome> {
    let tx = d.as_ref().ok()?;
    let before = *declared;
    *declared = before.saturating_add(tx.gas_limit);
    (*declared > max).then(|| {
        let e = TxError::BlockGasExceeded {
            before,
            limit: tx.gas_limit,
            max,
        };
        TxOutcome::err(Some(tx.id), &e).with_gas(tx.gas_limit, 0)
    })
}

/// A fault of the node itself. Never the result of a tx; the ABCI layer
/// stops the process on one, and CometBFT replays after the restart.
#[derive(Debug, Error)]
pub enum AppError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Genesis(#[from] GenesisError),
    #[error("FinalizeBlock for height {got}, but the committed height is {committed:?}")]
    HeightMismatch { committed: Option<u64>, got: u64 },
    #[error("Commit without a FinalizeBlock")]
    NothingToCommit,
    #[error("no genesis: InitChain has not run")]
    NoGenesis,
    #[error("end of block: {0}")]
    EndBlock(String),
    /// A scheduled upgrade is due and this binary cannot run it: the node
    /// stops (exit [`UPGRADE_NEEDED_EXIT`]) having changed nothing.
    #[error(transparent)]
    UpgradeNeeded(#[from] crate::keyspaces::upgrades::UpgradeNeeded),
    /// The chain store runs rules newer than this binary knows (a snapshot
    /// or backup taken after an upgrade, opened by an older binary).
    #[error(
        "UPGRADE NEEDED: the chain store runs app_version {chain}, and this binary \
         (stave {binary}) knows rules up to app_version {known}: install the binary of the \
         upgrade that raised it. Nothing was changed."
    )]
    VersionAhead {
        chain: u64,
        known: u64,
        binary: &'static str,
    },
}

/// `VersionAhead` unless this binary knows the rules of the version the
/// committed state runs.
fn check_rules_version(store: &ChainStore) -> Result<(), AppError> {
    use crate::store::StateRead;
    let chain = store.committed().rules_version()?;
    let known = crate::keyspaces::upgrades::migrations::newest_known();
    if chain > known {
        return Err(AppError::VersionAhead {
            chain,
            known,
            binary: env!("CARGO_PKG_VERSION"),
        });
    }
    Ok(())
}

/// The exit status of a node that stopped at an upgrade it cannot run.
/// Supervisors must not restart it on the same binary (systemd:
/// `RestartPreventExitStatus=3`).
pub const UPGRADE_NEEDED_EXIT: i32 = 3;

impl From<crate::keyspaces::upgrades::DueError> for AppError {
    fn from(e: crate::keyspaces::upgrades::DueError) -> Self {
        match e {
            crate::keyspaces::upgrades::DueError::Needed(n) => AppError::UpgradeNeeded(n),
            crate::keyspaces::upgrades::DueError::Store(s) => AppError::Store(s),
        }
    }
}

/// Node-local settings of the app (from `stave.toml`, never consensus).
#[derive(Debug, Clone, Copy)]
pub struct AppConfig {
    pub prune: PruneConfig,
    /// Blocks CometBFT must keep (0: all). Reported as Commit's retain_height.
    pub retain_blocks: u64,
    pub max_pending_per_account: u32,
    /// Byte budget and entry bound of the decode cache (CheckTx's decoded
    /// txs, reused by the block phases).
    pub decode_cache_bytes: usize,
    pub decode_cache_entries: usize,
}

impl Default for AppConfig {
    fn default() -> Self {
        AppConfig {
            prune: PruneConfig::default(),
            retain_blocks: 0,
            max_pending_per_account: 10_000,
            decode_cache_bytes: decode_cache::DEFAULT_BYTES,
            decode_cache_entries: decode_cache::DEFAULT_ENTRIES,
        }
    }
}

/// The result of Commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitOutcome {
    pub height: u64,
    pub app_hash: [u8; 32],
    pub retain_height: u64,
}

struct Pending {
    commit: PendingCommit,
    outcomes: Vec<crate::app::TxOutcome>,
    /// The block ran an upgrade's migration, which may have changed params.
    upgraded: bool,
}

/// The state machine. Owned by the consensus actor.
pub struct App {
    store: ChainStore,
    config: AppConfig,
    chain_id: String,
    params: Option<Params>,
    pending: Option<Pending>,
    sigs: Arc<SigCache>,
    decoded: Arc<DecodeCache>,
    mempool: Arc<Mempool>,
    notifier: Arc<CommitNotifier>,
    /// CometBFT's evidence max age in blocks: blocks it must keep whatever
    /// `retain_blocks` says (`None` until genesis: keep everything).
    evidence_age: Option<u64>,
    /// Takes snapshots after Commit (`None`: this node takes none).
    taker: Option<crate::snapshot::Taker>,
}

impl App {
    /// Loads the app over an open chain store.
    pub fn load(store: ChainStore, config: AppConfig) -> Result<Self, AppError> {
        check_rules_version(&store)?;
        let sigs = Arc::new(SigCache::default());
        let decoded = Arc::new(DecodeCache::new(
            config.decode_cache_bytes,
            config.decode_cache_entries,
        ));
        let mempool = Arc::new(Mempool::new(
            store.clone(),
            sigs.clone(),
            decoded.clone(),
            config.max_pending_per_account,
        ));
        let info = store.commit_info()?;
        let params = store.committed().params()?;
        if let Some(p) = &params {
            mempool.set_chain(info.chain_id.clone(), p.clone());
        }
        let notifier = Arc::new(CommitNotifier::default());
        let evidence_age = store.meta_u64(crate::store::cf::meta::EVIDENCE_AGE)?;
        Ok(App {
            taker: None,
            evidence_age,
            store,
            config,
            chain_id: info.chain_id,
            params,
            pending: None,
            sigs,
            decoded,
            mempool,
            notifier,
        })
    }

    pub fn store(&self) -> &ChainStore {
        &self.store
    }

    /// Takes a snapshot every `config.snapshot_interval` heights into `files`.
    pub fn with_snapshots(
        mut self,
        files: crate::snapshot::SnapshotFiles,
        config: crate::snapshot::SnapshotConfig,
    ) -> Self {
        self.taker = Some(crate::snapshot::Taker::new(
            self.store.clone(),
            files,
            config,
        ));
        self
    }

    /// The snapshots this node serves, if it takes any.
    pub fn snapshot_files(&self) -> Option<crate::snapshot::SnapshotFiles> {
        self.taker.as_ref().map(|t| t.files().clone())
    }

    /// The restorer of the snapshot connection, over this app's store and
    /// mempool.
    pub fn restorer(&self) -> crate::snapshot::Restorer {
        let delay = self
            .taker
            .as_ref()
            .map_or(0, |t| t.config().fault_restore_delay_ms);
        crate::snapshot::Restorer::new(self.store.clone(), Some(self.mempool.clone()))
            .with_chunk_delay(delay)
    }

    /// After a state-sync restore (which never calls InitChain) the app
    /// knows no chain id or params until it reads them from the restored
    /// store; the consensus actor calls this before each request.
    pub fn reload_if_restored(&mut self) -> Result<(), AppError> {
        if self.params.is_some() {
            return Ok(());
        }
        let Some(params) = self.store.committed().params()? else {
            return Ok(());
        };
        check_rules_version(&self.store)?;
        let info = self.store.commit_info()?;
        self.mempool
            .set_chain(info.chain_id.clone(), params.clone());
        self.chain_id = info.chain_id;
        self.params = Some(params);
        self.evidence_age = self.store.meta_u64(crate::store::cf::meta::EVIDENCE_AGE)?;
        tracing::info!(height = ?info.height, chain_id = %self.chain_id, "app loaded from restored state");
        Ok(())
    }
    pub fn mempool(&self) -> Arc<Mempool> {
        self.mempool.clone()
    }
    pub fn notifier(&self) -> Arc<CommitNotifier> {
        self.notifier.clone()
    }
    pub fn chain_id(&self) -> &str {
        &self.chain_id
    }

    /// InitChain: writes genesis as version 0 and persists it at once. Safe
    /// to repeat while no block has been committed.
    ///
    /// `comet_validators` are CometBFT's genesis validators as (ed25519
    /// consensus key, power); when `app_state.validators` is not empty it
    /// must name exactly the same set.
    pub fn init_chain(
        &mut self,
        chain_id: &str,
        genesis_time_ns: i64,
        app_state: &[u8],
        comet_validators: &[(Vec<u8>, u64)],
    ) -> Result<[u8; 32], AppError> {
        self.init_chain_with(
            chain_id,
            genesis_time_ns,
            app_state,
            comet_validators,
            0,
            Vec::new(),
        )
    }

    /// [`Self::init_chain`], recording CometBFT's evidence max age (from
    /// InitChain's consensus params; 0 = unknown) in verifiable state and
    /// in meta, so that Commit never lets CometBFT prune blocks younger
    /// than that, on this node or on one restored from a snapshot.
    /// `consensus_params` (protobuf, as InitChain returns them) are kept in
    /// state for upgrades, which send them back with a new `version.app`.
    pub fn init_chain_with(
        &mut self,
        chain_id: &str,
        genesis_time_ns: i64,
        app_state: &[u8],
        comet_validators: &[(Vec<u8>, u64)],
        evidence_age: u64,
        consensus_params: Vec<u8>,
    ) -> Result<[u8; 32], AppError> {
        let state = AppState::parse(app_state)?;
        state.check_validator_set(comet_validators)?;
        let mut changes = state.changes(genesis_time_ns)?;
        let facts = crate::keyspaces::chain::ChainFacts {
            chain_id: chain_id.to_string(),
            evidence_max_age_blocks: evidence_age,
            consensus_params,
        };
        for (k, v) in crate::keyspaces::chain::facts_rows(&facts) {
            changes.state.insert(k, Some(v));
        }
        let app_hash = self
            .store
            .commit_genesis(chain_id, genesis_time_ns, changes)?;
        self.chain_id = chain_id.to_string();
        self.params = Some(state.params.clone());
        self.pending = None;
        self.mempool.set_chain(chain_id.to_string(), state.params);
        if evidence_age > 0 {
            self.set_evidence_age(evidence_age)?;
        }
        Ok(app_hash)
    }

    /// Records CometBFT's evidence max age in meta: Commit never lets
    /// CometBFT prune blocks younger than that.
    fn set_evidence_age(&mut self, blocks: u64) -> Result<(), AppError> {
        self.store
            .put_meta_u64(crate::store::cf::meta::EVIDENCE_AGE, blocks)?;
        self.evidence_age = Some(blocks);
        Ok(())
    }

    /// Reads the params again from committed state: a migration may have
    /// changed them, and they are in force from the block after it (its own
    /// block ran under the params it started with).
    fn reload_params(&mut self) -> Result<(), AppError> {
        if let Some(params) = self.store.committed().params()? {
            self.mempool
                .set_chain(self.chain_id.clone(), params.clone());
            self.params = Some(params);
        }
        Ok(())
    }

    fn params(&self) -> Result<&Params, AppError> {
        self.params.as_ref().ok_or(AppError::NoGenesis)
    }

    /// The gas a block may use under the params in force (none before genesis).
    pub fn max_block_gas(&self) -> Option<u64> {
        self.params.as_ref().map(|p| p.gas.max_block_gas)
    }

    /// Decodes every tx and checks every signature (the txs' and those
    /// their actions carry) in one set of parallel batches.
    fn decode_and_verify(
        &self,
        txs: &[impl AsRef<[u8]> + Sync],
        params: &Params,
        last: bool,
    ) -> (Vec<Result<DecodedTx, TxError>>, Vec<bool>) {
        let unverified = self.decode_all(txs, params, last);
        self.sigs.verify_block(unverified)
    }

    /// Decodes `txs` through the decode cache, split over threads by work;
    /// `last` for FinalizeBlock, after which a tx is not decoded again
    /// (`DecodeCache::decode_last`).
    fn decode_all(
        &self,
        txs: &[impl AsRef<[u8]> + Sync],
        params: &Params,
        last: bool,
    ) -> Vec<UnverifiedTx> {
        crate::par::map_weighted(
            txs,
            |t| decode_weight(t.as_ref()),
            DECODE_PARALLEL_FROM,
            |t| match last {
                true => self.decoded.decode_last(t.as_ref(), params),
                false => self.decoded.decode(t.as_ref(), params),
            },
        )
    }

    /// ProcessProposal's decode and verify: decodes in chunks and stops at
    /// the first chunk holding a tx that does not decode, then checks every
    /// signature with no attribution (review m3). Any tx failing either way
    /// rejects the proposal without paying for the rest: the first that does
    /// not decode is named, a bad signature is not attributed.
    fn decode_and_verify_strict(
        &self,
        txs: &[impl AsRef<[u8]> + Sync],
        params: &Params,
    ) -> Result<Vec<DecodedTx>, proposal::Rejection> {
        let mut unverified = Vec::with_capacity(txs.len());
        for (n, chunk) in txs.chunks(STRICT_DECODE_CHUNK).enumerate() {
            let part = self.decode_all(chunk, params, false);
            if let Some((i, e)) = part
                .iter()
                .enumerate()
                .find_map(|(i, t)| t.decoded().err().map(|e| (i, e)))
            {
                return Err(proposal::Rejection::Tx {
                    index: n * STRICT_DECODE_CHUNK + i,
                    code: e.code(),
                });
            }
            unverified.extend(part);
        }
        self.sigs
            .verify_block_strict(unverified)
            .ok_or(proposal::Rejection::Signature)
    }

    /// FinalizeBlock: applies the txs in order and computes the app hash,
    /// writing nothing to disk. Repeating it for an uncommitted height gives
    /// the same result.
    pub fn finalize_block(
        &mut self,
        height: u64,
        time_ns: i64,
        txs: &[impl AsRef<[u8]> + Sync],
    ) -> Result<BlockOutcome, AppError> {
        self.pending = None;
        let committed = self.store.commit_info()?.height;
        if committed.map(|h| h + 1) != Some(height) {
            return Err(AppError::HeightMismatch {
                committed,
                got: height,
            });
        }
        let params = self.params()?.clone();
        let t0 = std::time::Instant::now();
        let (decoded, sig_ok) = self.decode_and_verify(txs, &params, true);
        let t_verify = t0.elapsed();
        let memo = BlockMemo::new(&params);
        let env = BlockEnv {
            height,
            time_ns,
            chain_id: &self.chain_id,
            params: &params,
            memo: &memo,
        };
        let base = self.store.committed();
        let mut block = Overlay::new(base);
        let upgrade = crate::keyspaces::upgrades::run_due(&mut block, height)?;
        let mut outcomes = Vec::with_capacity(decoded.len());
        let mut declared = 0u64;
        for (d, ok) in decoded.iter().zip(sig_ok) {
            if let Some(over) = over_block_gas(d, &mut declared, params.gas.max_block_gas) {
                outcomes.push(over);
                continue;
            }
            outcomes.push(execute_tx(&mut block, &env, d.as_ref(), ok)?);
        }
        let end = crate::keyspaces::validators::end_block(&mut block, height, &params.governance)
            .map_err(|e| match e {
            TxError::Store(s) => AppError::Store(s),
            other => AppError::EndBlock(other.to_string()),
        })?;
        crate::keyspaces::kv::end_block(&mut block, time_ns, &params)?;
        crate::keyspaces::uploads::churn::end_block(&mut block, height, &params.rights).map_err(
            |e| match e {
                TxError::Store(s) => AppError::Store(s),
                other => AppError::EndBlock(other.to_string()),
            },
        )?;
        let changes = block.into_changes();
        let t_exec = t0.elapsed();
        let commit = self.store.prepare(height, time_ns, changes)?;
        tracing::debug!(
            height,
            txs = txs.len(),
            verify_ms = t_verify.as_secs_f64() * 1e3,
            execute_ms = (t_exec - t_verify).as_secs_f64() * 1e3,
            tree_ms = (t0.elapsed() - t_exec).as_secs_f64() * 1e3,
            "finalize phases"
        );
        let app_hash = commit.app_hash;
        self.pending = Some(Pending {
            commit,
            outcomes: outcomes.clone(),
            upgraded: upgrade.is_some(),
        });
        let mut events = end.events;
        if let Some(u) = &upgrade {
            tracing::info!(height, app_version = u.app_version, "upgrade applied");
            events.insert(0, u.event.clone());
        }
        Ok(BlockOutcome {
            height,
            app_hash,
            txs: outcomes,
            validator_updates: end.updates,
            events,
            upgrade: upgrade.map(|u| (u.app_version, u.consensus_params)),
        })
    }

    /// Commit: one synced write, then the mempool view is rebuilt (before the
    /// recheck that follows) and waiters are told.
    pub fn commit(&mut self) -> Result<CommitOutcome, AppError> {
        let pending = self.pending.take().ok_or(AppError::NothingToCommit)?;
        let height = pending.commit.height;
        let app_hash = pending.commit.app_hash;
        self.store.commit(pending.commit, self.config.prune)?;
        if pending.upgraded {
            self.reload_params()?;
        }
        self.mempool.reset();
        self.notifier.committed(height, &pending.outcomes);
        if let Some(t) = &self.taker {
            t.committed(height);
        }
        let retain_height = match (self.config.retain_blocks, self.evidence_age) {
            (0, _) | (_, None) => 0,
            (n, Some(age)) => height.saturating_sub(n.max(age)).max(1),
        };
        Ok(CommitOutcome {
            height,
            app_hash,
            retain_height,
        })
    }
}
