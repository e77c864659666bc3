//! The consensus actor: one dedicated thread owns the mutable [`App`] and
//! serves consensus requests in order. RocksDB work stays off the async
//! runtime. A node fault (never a bad tx) stops the process, so that
//! CometBFT replays the block after the restart instead of the node going on
//! with a state it cannot trust.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tendermint::abci::response;
use tendermint::v0_38::abci::{ConsensusRequest, ConsensusResponse};
use tokio::sync::{mpsc, oneshot};
use tower::Service;
use tower_abci::BoxError;

use super::convert;
use crate::app::{App, AppError};
use crate::metrics::metrics;

type Job = (ConsensusRequest, oneshot::Sender<ConsensusResponse>);

/// A cloneable handle to the consensus actor.
#[derive(Clone)]
pub struct Consensus {
    tx: mpsc::Sender<Job>,
}

impl Consensus {
    /// Starts the actor thread over `app`.
    pub fn spawn(app: App) -> Self {
        Self::spawn_with_handle(app).0
    }

    /// Starts the actor thread; the handle joins once every `Consensus`
    /// clone is dropped (and the app with its store is closed).
    pub fn spawn_with_handle(app: App) -> (Self, std::thread::JoinHandle<()>) {
        let (tx, rx) = mpsc::channel::<Job>(16);
        let handle = std::thread::Builder::new()
            .name("stave-consensus".into())
            .spawn(move || run(app, rx))
            .expect("spawning the consensus thread at start-up");
        (Consensus { tx }, handle)
    }
}

fn run(mut app: App, mut rx: mpsc::Receiver<Job>) {
    while let Some((req, reply)) = rx.blocking_recv() {
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handle(&mut app, req)));
        match outcome {
            Ok(Ok(resp)) => {
                let _ = reply.send(resp);
            }
            Ok(Err(AppError::UpgradeNeeded(u))) => {
                halt_for_upgrade(&u.to_string(), UPGRADE_HALT_GRACE)
            }
            Ok(Err(e @ AppError::VersionAhead { .. })) => {
                halt_for_upgrade(&e.to_string(), Duration::ZERO)
            }
            Ok(Err(e)) => fatal(&format!("{e}")),
            Err(_) => fatal("panic in the consensus path"),
        }
    }
}

fn fatal(msg: &str) -> ! {
    tracing::error!(
        error = msg,
        "node fault in the consensus path; stopping so CometBFT replays after restart"
    );
    if let Some(note) = disk_full_note(msg) {
        tracing::error!("{note}");
        eprintln!("stave: {note}");
    }
    eprintln!("stave: fatal: {msg}");
    std::process::exit(70)
}

/// How long a node that stops at an upgrade height stays up first. Its
/// CometBFT, waiting on FinalizeBlock, still gossips the block's votes: this
/// node's precommit may be the last one a peer needs to decide the block
/// (and so to stop at the same height instead of below it).
pub(crate) const UPGRADE_HALT_GRACE: Duration = Duration::from_secs(5);

/// Stops the node at an upgrade this binary cannot run, after `grace`.
/// Nothing was written for the block; CometBFT, whose ABCI connection
/// closes, stops too and replays the block to the binary that knows the
/// migration.
pub(crate) fn halt_for_upgrade(msg: &str, grace: Duration) -> ! {
    tracing::error!("{msg}");
    eprintln!("stave: {msg}");
    if !grace.is_zero() {
        tracing::info!(
            seconds = grace.as_secs(),
            "staying up so that this node's votes for the block reach its peers"
        );
        std::thread::sleep(grace);
    }
    std::process::exit(crate::app::UPGRADE_NEEDED_EXIT)
}

/// An operator-facing line for a write that failed on a full disk: RocksDB
/// reports it as `IO error: No space left on device: While ... file: PATH`,
/// which names the path but not the errno.
pub(crate) fn disk_full_note(msg: &str) -> Option<String> {
    msg.contains("No space left on device").then(|| {
        format!(
            "disk full (ENOSPC): {msg}; free space and the node resumes \
             (CometBFT replays the block that was not committed)"
        )
    })
}

fn handle(app: &mut App, req: ConsensusRequest) -> Result<ConsensusResponse, AppError> {
    app.reload_if_restored()?;
    Ok(match req {
        ConsensusRequest::InitChain(r) => {
            if r.initial_height.value() != 1 {
                return Err(AppError::Genesis(crate::app::GenesisError::InitialHeight(
                    r.initial_height.value(),
                )));
            }
            let time = r.time.unix_timestamp_nanos() as i64;
            let comet: Vec<(Vec<u8>, u64)> = r
                .validators
                .iter()
                .map(|v| (v.pub_key.to_bytes(), v.power.value()))
                .collect();
            // Refuse a CometBFT genesis whose block gas limit disagrees
            // before anything is written.
            let max_gas =
                crate::app::block_max_gas(&r.app_state_bytes, r.consensus_params.block.max_gas)?;
            let mut consensus_params = r.consensus_params.clone();
            consensus_params.block.max_gas = max_gas;
            // the chain starts at the genesis app version, whatever
            // CometBFT's genesis says (its default is 0)
            consensus_params.version = Some(tendermint::consensus::params::VersionParams {
                app: crate::app::APP_VERSION,
            });
            let hash = app.init_chain_with(
                &r.chain_id,
                time,
                &r.app_state_bytes,
                &comet,
                r.consensus_params.evidence.max_age_num_blocks,
                convert::consensus_params_bytes(&consensus_params),
            )?;
            tracing::info!(chain_id = %r.chain_id, app_hash = %hex::encode(hash), max_gas, "genesis committed");
            ConsensusResponse::InitChain(response::InitChain {
                consensus_params: Some(consensus_params),
                validators: vec![],
                app_hash: app_hash(&hash),
            })
        }
        ConsensusRequest::PrepareProposal(r) => {
            let time = r.time.unix_timestamp_nanos() as i64;
            let txs = timed(&metrics().prepare_proposal_seconds, || {
                app.prepare_proposal(r.height.value(), time, &r.txs, r.max_tx_bytes)
            })?;
            ConsensusResponse::PrepareProposal(response::PrepareProposal { txs })
        }
        ConsensusRequest::ProcessProposal(r) => {
            let time = r.time.unix_timestamp_nanos() as i64;
            let verdict = timed(&metrics().process_proposal_seconds, || {
                app.process_proposal(r.height.value(), time, &r.txs)
            })?;
            if let Err(why) = verdict {
                metrics()
                    .proposals_rejected
                    .with_label_values(&[why.reason()])
                    .inc();
                tracing::warn!(
                    height = r.height.value(),
                    proposer = %r.proposer_address,
                    reason = why.reason(),
                    tx = ?why.index(),
                    txs = r.txs.len(),
                    "rejecting the proposal"
                );
            }
            ConsensusResponse::ProcessProposal(match verdict {
                Ok(()) => response::ProcessProposal::Accept,
                Err(_) => response::ProcessProposal::Reject,
            })
        }
        ConsensusRequest::ExtendVote(_) => ConsensusResponse::ExtendVote(response::ExtendVote {
            vote_extension: Default::default(),
        }),
        ConsensusRequest::VerifyVoteExtension(_) => {
            ConsensusResponse::VerifyVoteExtension(response::VerifyVoteExtension::Accept)
        }
        ConsensusRequest::FinalizeBlock(r) => finalize(app, r)?,
        ConsensusRequest::Commit => {
            let c = timed(&metrics().commit_seconds, || app.commit())?;
            // a scrape reads the two in no fixed order: compare nodes' hashes
            // only at heights that stay put across scrapes (deploy/ rules do)
            metrics().committed(c.height, &c.app_hash);
            ConsensusResponse::Commit(response::Commit {
                data: Default::default(),
                retain_height: c.retain_height.try_into().unwrap_or_default(),
            })
        }
    })
}

fn finalize(
    app: &mut App,
    r: tendermint::v0_38::abci::request::FinalizeBlock,
) -> Result<ConsensusResponse, AppError> {
    let time = r.time.unix_timestamp_nanos() as i64;
    let first = &metrics().sync.first_finalized_height;
    if first.get() == 0 {
        first.set(r.height.value() as i64);
    }
    let out = timed(&metrics().finalize_seconds, || {
        app.finalize_block(r.height.value(), time, &r.txs)
    })?;
    for t in &out.txs {
        metrics()
            .txs_applied
            .with_label_values(&[t.code.name()])
            .inc();
    }
    let gas = crate::metrics::chain::Gas::of(&out.txs);
    metrics().chain.finalized(time, gas, app.max_block_gas());
    tracing::debug!(height = out.height, txs = out.txs.len(), app_hash = %hex::encode(out.app_hash), "finalized");
    Ok(ConsensusResponse::FinalizeBlock(response::FinalizeBlock {
        events: out.events.iter().map(convert::event).collect(),
        tx_results: out.txs.iter().map(convert::exec_result).collect(),
        validator_updates: convert::validator_updates(&out.validator_updates),
        consensus_param_updates: convert::consensus_param_updates(out.upgrade.as_ref())?,
        app_hash: app_hash(&out.app_hash),
    }))
}

/// Runs `f`, recording its wall time in `h`.
fn timed<R>(h: &prometheus::Histogram, f: impl FnOnce() -> R) -> R {
    let start = Instant::now();
    let r = f();
    h.observe(start.elapsed().as_secs_f64());
    r
}

fn app_hash(h: &[u8; 32]) -> tendermint::AppHash {
    tendermint::AppHash::try_from(h.to_vec()).unwrap_or_default()
}

impl Service<ConsensusRequest> for Consensus {
    type Response = ConsensusResponse;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<ConsensusResponse, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: ConsensusRequest) -> Self::Future {
        let tx = self.tx.clone();
        Box::pin(async move {
            let (reply, rx) = oneshot::channel();
            if tx.send((req, reply)).await.is_err() {
                fatal("consensus actor is gone");
            }
            match rx.await {
                Ok(resp) => Ok(resp),
                Err(_) => fatal("consensus actor dropped a request"),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::disk_full_note;

    #[test]
    fn a_full_disk_is_named_with_its_errno_and_path() {
        let rocks = "store: IO error: No space left on device: While appending to file: \
                     /n/data/chain/000012.log: No space left on device";
        let note = disk_full_note(rocks).expect("a disk-full error is recognised");
        assert!(note.contains("ENOSPC"), "{note}");
        assert!(note.contains("/n/data/chain/000012.log"), "{note}");
        assert_eq!(disk_full_note("store: Corruption: bad block"), None);
    }
}
