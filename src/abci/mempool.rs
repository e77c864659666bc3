//! The mempool connection: CheckTx against the node's mempool view.
//!
//! [`answer_batch`] checks a run of CheckTx requests as one batch, in the
//! order CometBFT sent them; the socket server calls it on the mempool
//! connection's own thread. [`MempoolService`] wraps it as a tower service
//! on one dedicated thread that drains whatever is queued (up to
//! [`MAX_BATCH`]), for the `tower` server and in-process callers.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use tendermint::abci::{request::CheckTxKind, response};
use tendermint::v0_38::abci::{MempoolRequest, MempoolResponse};
use tokio::sync::{mpsc, oneshot};
use tower::Service;
use tower_abci::BoxError;

use super::convert::codespace;
use crate::app::{CheckKind, Mempool, TxOutcome};
use crate::metrics::metrics;

/// Most CheckTx requests handled as one batch.
pub const MAX_BATCH: usize = 256;

type Job = (Bytes, CheckKind, oneshot::Sender<response::CheckTx>);

/// A cloneable handle to the CheckTx thread.
#[derive(Clone)]
pub struct MempoolService {
    tx: mpsc::UnboundedSender<Job>,
}

impl MempoolService {
    /// Starts the CheckTx thread over `mempool`.
    pub fn new(mempool: Arc<Mempool>) -> Self {
        Self::spawn_with_handle(mempool).0
    }

    /// Starts the CheckTx thread; the handle joins once every clone of the
    /// service is dropped (and the thread has released the store).
    pub fn spawn_with_handle(mempool: Arc<Mempool>) -> (Self, std::thread::JoinHandle<()>) {
        let (tx, rx) = mpsc::unbounded_channel::<Job>();
        let handle = std::thread::Builder::new()
            .name("stave-checktx".into())
            .spawn(move || run(mempool, rx))
            .expect("spawning the CheckTx thread at start-up");
        (MempoolService { tx }, handle)
    }
}

fn run(mempool: Arc<Mempool>, mut rx: mpsc::UnboundedReceiver<Job>) {
    while let Some(first) = rx.blocking_recv() {
        let mut jobs = vec![first];
        while jobs.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(j) => jobs.push(j),
                Err(_) => break,
            }
        }
        let items: Vec<(&[u8], CheckKind)> =
            jobs.iter().map(|(t, k, _)| (t.as_ref(), *k)).collect();
        let answers = answer_batch(&mempool, &items);
        for ((_, _, reply), answer) in jobs.into_iter().zip(answers) {
            let _ = reply.send(answer);
        }
    }
}

/// Answers CheckTx requests in the order CometBFT sent them, as one batch
/// (the signatures still unverified are checked together). Both servers
/// come through here. A panic (a bug, whatever the tx) refuses the batch
/// with NOT_READY and leaves the caller's thread, and CheckTx, running.
pub fn answer_batch(mempool: &Mempool, items: &[(&[u8], CheckKind)]) -> Vec<response::CheckTx> {
    let m = metrics();
    m.checktx_total.inc_by(items.len() as u64);
    m.checktx_batch.observe(items.len() as f64);
    let _timer = m.chain.checktx_seconds.start_timer();
    let answers: Option<Vec<response::CheckTx>> =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            mempool
                .check_batch(items)
                .iter()
                .map(check_response)
                .collect()
        }))
        .ok()
        // One answer per request, or CometBFT would pair answers with the wrong txs.
        .filter(|a: &Vec<_>| a.len() == items.len());
    answers.unwrap_or_else(|| {
        tracing::error!(
            txs = items.len(),
            "internal error (a panic) while checking a CheckTx batch; refused"
        );
        items.iter().map(|_| internal_error()).collect()
    })
}

fn failed() -> response::CheckTx {
    refused("CheckTx thread is gone")
}

/// The answer to a tx whose check failed inside the node (a bug), not
/// because of the tx: NOT_READY, so the client may resubmit it.
pub fn internal_error() -> response::CheckTx {
    refused("internal error while checking this tx; see the node log")
}

fn refused(log: &str) -> response::CheckTx {
    check_response(&TxOutcome {
        class: crate::app::TxClass::Rejected,
        code: crate::tx::Code::NotReady,
        log: log.into(),
        events: vec![],
        tx_id: None,
        gas_wanted: 0,
        gas_used: 0,
    })
}

fn check_response(o: &TxOutcome) -> response::CheckTx {
    if !o.is_ok() {
        metrics()
            .mempool_rejects
            .with_label_values(&[o.code.name()])
            .inc();
    }
    response::CheckTx {
        code: o.code.value().into(),
        log: o.log.clone(),
        gas_wanted: super::convert::gas_i64(o.gas_wanted),
        codespace: codespace(o.code),
        ..Default::default()
    }
}

impl Service<MempoolRequest> for MempoolService {
    type Response = MempoolResponse;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<MempoolResponse, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: MempoolRequest) -> Self::Future {
        let MempoolRequest::CheckTx(r) = req;
        let kind = match r.kind {
            CheckTxKind::New => CheckKind::New,
            CheckTxKind::Recheck => CheckKind::Recheck,
        };
        // Sent here, in call order, so the thread sees CometBFT's order.
        let (reply, rx) = oneshot::channel();
        let sent = self.tx.send((r.tx, kind, reply)).is_ok();
        Box::pin(async move {
            let answer = match (sent, rx.await) {
                (true, Ok(a)) => a,
                _ => failed(),
            };
            Ok(MempoolResponse::CheckTx(answer))
        })
    }
}
