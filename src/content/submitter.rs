//! Submits txs signed with this validator's operator key: `UploadComplete`
//! now, delivery records and attestations later.
//!
//! One tx at a time, in its own nonce sequence: the nonce is the largest of
//! the chain's, this node's mempool's (the key's pending txs) and the one
//! after this submitter's last accepted tx. A nonce refusal of a new tx
//! (the operator also signed one by hand) reads them again and signs
//! again. A tx not committed within `commit_wait`, or a
//! CometBFT that does not answer (restarting, say), is tried again after a
//! backoff (1, 2, 4, 8 s, …), up to `tries` times: the same bytes, after
//! asking the tx index whether they landed. Bytes once broadcast are never
//! signed anew: if their nonce is spent and the tx index (when CometBFT
//! keeps one) does not have them, `submit` answers `Spent` and the caller
//! reads state to learn whether its actions took effect (`UploadComplete`
//! is also refused on chain if it already did).

use std::sync::Arc;
use std::time::Duration;

use ed25519_dalek::SigningKey;

use crate::app::{CommitNotifier, Mempool};
use crate::client::{CometRpc, CommittedTx};
use crate::keyspaces::accounts::AccountsRead;
use crate::keyspaces::params::ParamsRead;
use crate::store::ChainStore;
use crate::tx::build::{sign_tx_with_gas, tx_id_of, with_pow, MAX_POW_TRIES};
use crate::tx::{Action, Code};

/// Why a tx was not committed.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    #[error("CheckTx refused the tx: code {code}: {log}")]
    Refused { code: u32, log: String },
    #[error("simulation: code {code}: {log}")]
    Simulation { code: u32, log: String },
    #[error("not committed after {tries} broadcasts")]
    NotCommitted { tries: u32 },
    #[error("nonce {nonce} was spent while the tx waited: it committed unseen or another tx took it; read state before submitting again")]
    Spent { nonce: u64 },
    #[error("{0}")]
    Node(String),
}

/// The operator key's submitter.
pub struct Submitter {
    key: SigningKey,
    store: ChainStore,
    comet: CometRpc,
    notifier: Arc<CommitNotifier>,
    mempool: Arc<Mempool>,
    /// The nonce after this submitter's last accepted tx; the lock makes
    /// submissions one at a time.
    next: tokio::sync::Mutex<u64>,
    pub commit_wait: Duration,
    pub tries: u32,
}

/// What `--gas-adjustment` is to the CLI: simulated gas times 13/10.
fn with_margin(gas: u64, max: u64) -> u64 {
    (gas.saturating_mul(13) / 10).max(gas).min(max)
}

/// The wait before attempt `n + 1`: 1, 2, 4, 8 s, then 8 s.
fn backoff(n: u32) -> Duration {
    Duration::from_secs(1 << n.min(3))
}

impl Submitter {
    pub fn new(
        key: SigningKey,
        store: ChainStore,
        comet: CometRpc,
        notifier: Arc<CommitNotifier>,
        mempool: Arc<Mempool>,
    ) -> Self {
        Submitter {
            key,
            store,
            comet,
            notifier,
            mempool,
            next: tokio::sync::Mutex::new(0),
            commit_wait: Duration::from_secs(20),
            tries: 8,
        }
    }

    /// Signs `actions` and waits until they commit (with any result code).
    ///
    /// # Errors
    /// `Refused` by CheckTx (after nonce retries), `Simulation`,
    /// `NotCommitted`, `Node`.
    pub async fn submit(&self, actions: Vec<Action>) -> Result<CommittedTx, SubmitError> {
        let mut next = self.next.lock().await;
        let mut last = SubmitError::NotCommitted { tries: 0 };
        let mut signed: Option<(Vec<u8>, u64)> = None;
        for attempt in 0..self.tries {
            let broadcast_before = signed.is_some();
            let (raw, nonce) = match signed.take() {
                Some(s) => s,
                None => self.sign(&actions, *next).await?,
            };
            match self.broadcast_and_wait(&raw).await {
                Ok(c) => {
                    *next = nonce + 1;
                    return Ok(c);
                }
                Err(SubmitError::Refused { code, .. }) if code == Code::Nonce.value() => {
                    if broadcast_before {
                        // these bytes were accepted once: they committed
                        // unseen, or another tx took the nonce. Never sign
                        // the actions again here: the caller reads state.
                        return Err(SubmitError::Spent { nonce });
                    }
                    // someone else used the key: the chain and this node's
                    // mempool say what is next, and the tx is signed for it
                    *next = 0;
                    tokio::time::sleep(backoff(attempt)).await;
                }
                // CometBFT down or restarting, or the tx not committed yet:
                // wait, then sign and broadcast again
                Err(e @ (SubmitError::Node(_) | SubmitError::NotCommitted { .. })) => {
                    tracing::info!(attempt, "operator tx not committed yet: {e}");
                    last = e;
                    signed = Some((raw, nonce));
                    tokio::time::sleep(backoff(attempt)).await;
                }
                Err(e) => return Err(e),
            }
        }
        Err(match last {
            SubmitError::NotCommitted { .. } => SubmitError::NotCommitted { tries: self.tries },
            e => e,
        })
    }

    /// The signed tx at nonce `max(chain's, floor)`, gas simulated.
    async fn sign(&self, actions: &[Action], floor: u64) -> Result<(Vec<u8>, u64), SubmitError> {
        let store = self.store.clone();
        let key = self.key.clone();
        let actions = actions.to_vec();
        let mempool = self.mempool.clone();
        tokio::task::spawn_blocking(move || {
            let view = store.view();
            let node = |e: String| SubmitError::Node(e);
            let info = view.commit_info().map_err(|e| node(e.to_string()))?;
            let params = view
                .params()
                .map_err(|e| node(e.to_string()))?
                .unwrap_or_default();
            let me = key.verifying_key().to_bytes();
            // after a RotateOperatorKey the key signs for the validator's
            // name, whose account and nonce its txs take
            let name = crate::local::node::name_in(&view, &me).map_err(|e| node(e.to_string()))?;
            let account = view.account(&name).map_err(|e| node(e.to_string()))?;
            // this node's mempool may hold the key's earlier txs
            let pending = mempool.next_nonce(&me).unwrap_or(0);
            let nonce = account
                .as_ref()
                .map_or(0, |a| a.nonce)
                .max(pending)
                .max(floor);
            let sponsored =
                crate::keyspaces::accounts::storage::is_sponsored(&view, &name, account.as_ref())
                    .map_err(|e| node(e.to_string()))?;
            let sign =
                |gas| sign_tx_with_gas(&key, &info.chain_id, nonce, actions.clone(), "", gas);
            let sim =
                crate::app::simulate(&store, &sign(u64::MAX)).map_err(|e| node(e.to_string()))?;
            if !sim.outcome.is_ok() {
                return Err(SubmitError::Simulation {
                    code: sim.outcome.code.value(),
                    log: sim.outcome.log,
                });
            }
            let raw = sign(with_margin(sim.outcome.gas_used, sim.max_block_gas));
            // an ACTIVE validator sponsors itself; otherwise proof of work
            let raw = if sponsored {
                raw
            } else {
                with_pow(&raw, &params.storage, MAX_POW_TRIES)
                    .ok_or_else(|| node("no proof of work found".into()))?
            };
            Ok((raw, nonce))
        })
        .await
        .map_err(|e| SubmitError::Node(e.to_string()))?
    }

    /// Broadcasts `raw` once (unless the tx index already has it) and
    /// waits `commit_wait` for its commit.
    async fn broadcast_and_wait(&self, raw: &[u8]) -> Result<CommittedTx, SubmitError> {
        let id = tx_id_of(raw).ok_or_else(|| SubmitError::Node("unsigned tx".into()))?;
        if let Ok(Some(c)) = self.comet.committed_tx(raw).await {
            return Ok(c);
        }
        let rx = self.notifier.wait_for(id);
        let check = match self.comet.broadcast_tx_sync(raw).await {
            Ok(c) => c,
            Err(e) => {
                self.notifier.forget(&id);
                return Err(SubmitError::Node(format!("{e:#}")));
            }
        };
        let cached = check.log.contains("already exists");
        if check.code != 0 && !cached {
            self.notifier.forget(&id);
            return Err(SubmitError::Refused {
                code: check.code,
                log: check.log,
            });
        }
        let waited = match rx {
            Some(rx) => tokio::time::timeout(self.commit_wait, rx).await.ok(),
            None => None,
        };
        self.notifier.forget(&id);
        match waited {
            Some(Ok(c)) => Ok(CommittedTx {
                height: c.height,
                code: c.outcome.code.value(),
                codespace: String::new(),
                log: c.outcome.log,
                gas_wanted: c.outcome.gas_wanted,
                gas_used: c.outcome.gas_used,
            }),
            _ => match self.comet.committed_tx(raw).await {
                Ok(Some(c)) => Ok(c),
                _ => Err(SubmitError::NotCommitted { tries: 1 }),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_margin_is_thirty_percent_capped_at_the_block() {
        assert_eq!(super::with_margin(1000, 10_000), 1300);
        assert_eq!(super::with_margin(9000, 10_000), 10_000);
        assert_eq!(super::with_margin(u64::MAX, u64::MAX), u64::MAX);
    }
}
