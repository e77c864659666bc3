//! The mempool connection: CheckTx against the node's mempool view.
//!
//! One dedicated thread serves CheckTx, so RocksDB reads stay off the async
//! runtime and txs are admitted strictly in the order CometBFT sent them.
//! It drains whatever is queued (up to [`MAX_BATCH`]) and verifies those
//! signatures as one batch, which is what keeps CheckTx cheap under load.

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

type Job = (Bytes, CheckKind, oneshot::Sender<TxOutcome>);

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
        metrics().checktx_batch.observe(jobs.len() as f64);
        let items: Vec<(&[u8], CheckKind)> =
            jobs.iter().map(|(t, k, _)| (t.as_ref(), *k)).collect();
        let outcomes = mempool.check_batch(&items);
        for ((_, _, reply), outcome) in jobs.into_iter().zip(outcomes) {
            let _ = reply.send(outcome);
        }
    }
}

fn failed() -> TxOutcome {
    TxOutcome {
        class: crate::app::TxClass::Rejected,
        code: crate::tx::Code::NotReady,
        log: "CheckTx thread is gone".into(),
        events: vec![],
        tx_id: None,
    }
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
        gas_wanted: 1,
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
        metrics().checktx_total.inc();
        // Sent here, in call order, so the thread sees CometBFT's order.
        let (reply, rx) = oneshot::channel();
        let sent = self.tx.send((r.tx, kind, reply)).is_ok();
        Box::pin(async move {
            let outcome = match (sent, rx.await) {
                (true, Ok(o)) => o,
                _ => failed(),
            };
            Ok(MempoolResponse::CheckTx(check_response(&outcome)))
        })
    }
}
