//! `TxService`: broadcast through the local CometBFT, and wait for commit.

use std::sync::Arc;
use std::time::Duration;

use tonic::{Request, Response, Status};

use crate::app::CommitNotifier;
use crate::client::{CometRpc, CommittedTx};
use crate::proto::tx::{
    tx_service_server::TxService, BroadcastAndWaitRequest, BroadcastAndWaitResponse,
    BroadcastRequest, BroadcastResponse, SimulateRequest, SimulateResponse,
};
use crate::tx::{build::tx_id_of, CODESPACE};

/// Default wait of `BroadcastAndWait`.
const DEFAULT_WAIT: Duration = Duration::from_secs(30);
/// Longest wait a client may ask for.
const MAX_WAIT: Duration = Duration::from_secs(300);
/// Largest tx bytes accepted over gRPC before CometBFT sees them.
const MAX_GRPC_TX: usize = 4 << 20;

/// Maps a CometBFT broadcast error to a gRPC status a client can act on.
fn broadcast_status(msg: &str) -> Status {
    let msg = format!("cometbft broadcast_tx_sync: {msg}");
    if msg.contains("already exists in cache") {
        Status::already_exists(msg)
    } else if msg.contains("mempool is full") {
        Status::resource_exhausted(msg)
    } else if msg.contains("too large") {
        Status::invalid_argument(msg)
    } else {
        Status::unavailable(msg)
    }
}

/// Drops a commit registration when the waiting handler ends, whatever
/// way it ends: the receiver is closed first, then the entry is forgotten.
struct ForgetOnDrop {
    notifier: Arc<CommitNotifier>,
    id: [u8; 32],
    rx: Option<tokio::sync::oneshot::Receiver<crate::app::Committed>>,
}

impl Drop for ForgetOnDrop {
    fn drop(&mut self) {
        self.rx.take();
        self.notifier.forget(&self.id);
    }
}

pub struct TxServiceImpl {
    pub comet: CometRpc,
    pub notifier: Arc<CommitNotifier>,
    /// The longest `BroadcastAndWait` wait: [`MAX_WAIT`], or less, so the
    /// listener's unary timeout (`[limits] request_timeout_secs`) never
    /// cuts a wait off.
    pub max_wait: Duration,
    /// Committed state, for `Simulate`.
    pub store: crate::store::ChainStore,
}

impl TxServiceImpl {
    /// Waits at most a second less than `request_timeout`.
    pub fn new(
        comet: CometRpc,
        notifier: Arc<CommitNotifier>,
        request_timeout: Duration,
        store: crate::store::ChainStore,
    ) -> Self {
        let max_wait = request_timeout
            .saturating_sub(Duration::from_secs(1))
            .clamp(Duration::from_secs(1), MAX_WAIT);
        TxServiceImpl {
            comet,
            notifier,
            max_wait,
            store,
        }
    }
}

impl TxServiceImpl {
    async fn broadcast(&self, tx: &[u8]) -> Result<BroadcastResponse, Status> {
        if tx.len() > MAX_GRPC_TX {
            return Err(Status::invalid_argument(format!(
                "tx is {} bytes, over {MAX_GRPC_TX}",
                tx.len()
            )));
        }
        let r = self
            .comet
            .broadcast_tx_sync(tx)
            .await
            .map_err(|e| broadcast_status(&format!("{e:#}")))?;
        Ok(BroadcastResponse {
            code: r.code,
            codespace: r.codespace,
            log: r.log,
            tx_hash: r.hash,
            tx_id: tx_id_of(tx).map(hex::encode).unwrap_or_default(),
            gas_wanted: r.gas_wanted,
        })
    }
}

/// How often a retried tx's commit is looked up in CometBFT's tx index.
const INDEX_POLL: Duration = Duration::from_millis(250);

impl TxServiceImpl {
    /// Waits for the commit notice; for a retry, also polls the tx index.
    async fn wait_commit(
        &self,
        rx: tokio::sync::oneshot::Receiver<crate::app::Committed>,
        tx: &[u8],
        retry: bool,
        wait: Duration,
    ) -> Option<CommittedTx> {
        let notice = async {
            rx.await.ok().map(|c| CommittedTx {
                height: c.height,
                code: c.outcome.code.value(),
                codespace: if c.outcome.is_ok() {
                    String::new()
                } else {
                    CODESPACE.into()
                },
                log: c.outcome.log,
                gas_wanted: c.outcome.gas_wanted,
                gas_used: c.outcome.gas_used,
            })
        };
        let index = async {
            if retry {
                self.poll_index(tx, wait).await
            } else {
                std::future::pending().await
            }
        };
        tokio::time::timeout(wait, async {
            tokio::select! {
                c = notice => c,
                c = index => c,
            }
        })
        .await
        .ok()
        .flatten()
    }

    /// Polls CometBFT's tx index for `tx` until it is found or `wait` passes.
    async fn poll_index(&self, tx: &[u8], wait: Duration) -> Option<CommittedTx> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Ok(Some(c)) = self.comet.committed_tx(tx).await {
                return Some(c);
            }
            if tokio::time::Instant::now() + INDEX_POLL > deadline {
                return None;
            }
            tokio::time::sleep(INDEX_POLL).await;
        }
    }
}

/// Simulations that may run at once on this node.
const SIMULATIONS: usize = 2;
static SIMULATING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(SIMULATIONS);

#[tonic::async_trait]
impl TxService for TxServiceImpl {
    async fn broadcast(
        &self,
        req: Request<BroadcastRequest>,
    ) -> Result<Response<BroadcastResponse>, Status> {
        Ok(Response::new(self.broadcast(&req.into_inner().tx).await?))
    }

    async fn broadcast_and_wait(
        &self,
        req: Request<BroadcastAndWaitRequest>,
    ) -> Result<Response<BroadcastAndWaitResponse>, Status> {
        let req = req.into_inner();
        let wait = match req.timeout_ms {
            0 => DEFAULT_WAIT,
            ms => Duration::from_millis(ms),
        }
        .min(self.max_wait);
        // Register before broadcasting, so a fast commit is not missed. The
        // guard forgets the registration however this handler ends
        // (error, timeout, or the client going away).
        let id = tx_id_of(&req.tx);
        let mut guard = match id {
            Some(id) => Some(ForgetOnDrop {
                notifier: self.notifier.clone(),
                id,
                rx: Some(self.notifier.wait_for(id).ok_or_else(|| {
                    Status::resource_exhausted("too many clients are waiting for commits")
                })?),
            }),
            None => None,
        };
        let check = match self.broadcast(&req.tx).await {
            Ok(c) => c,
            // Already in this node's mempool cache: a retry of a tx that is
            // pending or committed recently. Keep waiting for its commit.
            Err(s) if s.code() == tonic::Code::AlreadyExists => BroadcastResponse {
                log: s.message().to_string(),
                tx_id: id.map(hex::encode).unwrap_or_default(),
                ..Default::default()
            },
            Err(s) => return Err(s),
        };
        let mut resp = BroadcastAndWaitResponse {
            check: Some(check.clone()),
            ..Default::default()
        };
        // A retry of a tx that is already in the cache or already committed
        // (its nonce is spent): its commit may have been announced already,
        // so CometBFT's tx index is asked too (it indexes just after commit).
        // A spent nonce may mean it committed long ago: one lookup settles it.
        let retry = check.log.contains("already exists");
        let rx = guard.as_mut().and_then(|g| g.rx.take());
        let committed = match rx {
            Some(rx) if check.code == 0 => self.wait_commit(rx, &req.tx, retry, wait).await,
            _ if check.code == crate::tx::Code::Nonce.value() => {
                self.comet.committed_tx(&req.tx).await.ok().flatten()
            }
            _ => None,
        };
        if let Some(c) = committed {
            resp.committed = true;
            resp.height = c.height;
            resp.code = c.code;
            resp.codespace = c.codespace;
            resp.log = c.log;
            resp.gas_wanted = c.gas_wanted;
            resp.gas_used = c.gas_used;
        }
        Ok(Response::new(resp))
    }

    // The pool's closure returns tonic's `Status`, as every query read does.
    #[allow(clippy::result_large_err)]
    async fn simulate(
        &self,
        req: Request<SimulateRequest>,
    ) -> Result<Response<SimulateResponse>, Status> {
        let tx = req.into_inner().tx;
        if tx.len() > MAX_GRPC_TX {
            return Err(Status::invalid_argument(format!(
                "tx is {} bytes, over {MAX_GRPC_TX}",
                tx.len()
            )));
        }
        // A simulation may run up to `max_block_gas` of work: at most
        // SIMULATIONS at once, node-wide, beside the per-IP rate limit.
        let Ok(_permit) = SIMULATING.try_acquire() else {
            return Err(Status::resource_exhausted(format!(
                "{SIMULATIONS} simulations are running; retry later"
            )));
        };
        let store = self.store.clone();
        // On the bounded query pool, like every read of state.
        let sim = super::pool::run(move || {
            crate::app::simulate(&store, &tx).map_err(|e| Status::unavailable(e.to_string()))
        })
        .await?;
        let o = &sim.outcome;
        Ok(Response::new(SimulateResponse {
            code: o.code.value(),
            codespace: crate::abci::convert::codespace(o.code),
            log: o.log.clone(),
            gas_used: o.gas_used,
            intrinsic_gas: sim.intrinsic_gas,
            max_block_gas: sim.max_block_gas,
            height: sim.height,
        }))
    }
}
