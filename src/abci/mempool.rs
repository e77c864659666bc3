//! The mempool connection: CheckTx against the node's mempool view.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tendermint::abci::{request::CheckTxKind, response};
use tendermint::v0_38::abci::{MempoolRequest, MempoolResponse};
use tokio::sync::oneshot;
use tower::Service;
use tower_abci::BoxError;

use super::convert::codespace;
use crate::app::{CheckKind, Mempool, TxOutcome};
use crate::metrics::metrics;

/// CheckTx in two stages: decoding and signature checks run in parallel on
/// blocking threads; the nonce step then runs strictly in arrival order (each
/// request waits for the one before it), so an account's txs sent back to
/// back are admitted in nonce order.
#[derive(Clone)]
pub struct MempoolService {
    mempool: Arc<Mempool>,
    last: Arc<parking_lot::Mutex<Option<oneshot::Receiver<()>>>>,
}

impl MempoolService {
    pub fn new(mempool: Arc<Mempool>) -> Self {
        MempoolService {
            mempool,
            last: Arc::new(parking_lot::Mutex::new(None)),
        }
    }
}

fn failed() -> TxOutcome {
    TxOutcome {
        class: crate::app::TxClass::Rejected,
        code: crate::tx::Code::NotReady,
        log: "check task failed".into(),
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
        data: o
            .tx_id
            .map(|id| bytes::Bytes::copy_from_slice(&id))
            .unwrap_or_default(),
        log: o.log.clone(),
        info: o.code.name().to_string(),
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
        let mempool = self.mempool.clone();
        let (done, done_rx) = oneshot::channel::<()>();
        let prev = self.last.lock().replace(done_rx);
        Box::pin(async move {
            let MempoolRequest::CheckTx(r) = req;
            let kind = match r.kind {
                CheckTxKind::New => CheckKind::New,
                CheckTxKind::Recheck => CheckKind::Recheck,
            };
            metrics().checktx_total.inc();
            let m = mempool.clone();
            let pre = tokio::task::spawn_blocking(move || m.precheck(&r.tx, kind))
                .await
                .unwrap_or_else(|_| Err(failed()));
            if let Some(prev) = prev {
                let _ = prev.await;
            }
            let outcome = match pre {
                // The nonce read touches RocksDB: off the async workers.
                Ok(tx) => tokio::task::spawn_blocking(move || mempool.admit(&tx))
                    .await
                    .unwrap_or_else(|_| failed()),
                Err(o) => o,
            };
            let _ = done.send(());
            Ok(MempoolResponse::CheckTx(check_response(&outcome)))
        })
    }
}
