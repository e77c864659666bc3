//! `TxService`: broadcast through the local CometBFT, and wait for commit.

use std::sync::Arc;
use std::time::Duration;

use tonic::{Request, Response, Status};

use crate::app::CommitNotifier;
use crate::client::CometRpc;
use crate::proto::tx::{
    tx_service_server::TxService, BroadcastAndWaitRequest, BroadcastAndWaitResponse,
    BroadcastRequest, BroadcastResponse,
};
use crate::tx::{build::tx_id_of, CODESPACE};

/// Default wait of `BroadcastAndWait`.
const DEFAULT_WAIT: Duration = Duration::from_secs(30);
/// Longest wait a client may ask for.
const MAX_WAIT: Duration = Duration::from_secs(300);
/// Largest tx bytes accepted over gRPC before CometBFT sees them.
const MAX_GRPC_TX: usize = 4 << 20;

pub struct TxServiceImpl {
    pub comet: CometRpc,
    pub notifier: Arc<CommitNotifier>,
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
            .map_err(|e| Status::unavailable(format!("cometbft broadcast_tx_sync: {e:#}")))?;
        Ok(BroadcastResponse {
            code: r.code,
            codespace: r.codespace,
            log: r.log,
            tx_hash: r.hash,
            tx_id: tx_id_of(tx).map(hex::encode).unwrap_or_default(),
        })
    }
}

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
            ms => Duration::from_millis(ms).min(MAX_WAIT),
        };
        // Register before broadcasting, so a fast commit is not missed.
        let id = tx_id_of(&req.tx);
        let rx = id.map(|id| self.notifier.wait_for(id));
        let check = self.broadcast(&req.tx).await?;
        let mut resp = BroadcastAndWaitResponse {
            check: Some(check.clone()),
            ..Default::default()
        };
        let (Some(id), Some(rx), 0) = (id, rx, check.code) else {
            if let Some(id) = id {
                self.notifier.forget(&id);
            }
            return Ok(Response::new(resp));
        };
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(c)) => {
                resp.committed = true;
                resp.height = c.height;
                resp.code = c.outcome.code.value();
                resp.codespace = if c.outcome.is_ok() { String::new() } else { CODESPACE.into() };
                resp.log = c.outcome.log;
            }
            _ => self.notifier.forget(&id),
        }
        Ok(Response::new(resp))
    }
}
