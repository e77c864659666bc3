//! The snapshot connection: serves this node's snapshots
//! ([`crate::snapshot::SnapshotFiles`]) and restores from a peer's
//! ([`crate::snapshot::Restorer`]). The work runs on a blocking thread;
//! CometBFT sends one snapshot request at a time.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tendermint::abci::response::{self, ApplySnapshotChunkResult as Apply};
use tendermint::abci::types::Snapshot;
use tendermint::v0_38::abci::{SnapshotRequest, SnapshotResponse};
use tower::Service;
use tower_abci::BoxError;

use crate::snapshot::restore::OfferResult;
use crate::snapshot::{ApplyResult, Restorer, SnapshotFiles, FORMAT};

#[derive(Clone)]
pub struct SnapshotService {
    files: Option<SnapshotFiles>,
    restorer: Arc<parking_lot::Mutex<Restorer>>,
}

impl SnapshotService {
    pub fn new(files: Option<SnapshotFiles>, restorer: Restorer) -> Self {
        SnapshotService {
            files,
            restorer: Arc::new(parking_lot::Mutex::new(restorer)),
        }
    }

    fn list(&self) -> response::ListSnapshots {
        let listed = match &self.files {
            Some(f) => f.list().unwrap_or_else(|e| {
                tracing::warn!(error = %e, "listing snapshots failed");
                vec![]
            }),
            None => vec![],
        };
        let snapshots = listed
            .into_iter()
            .filter_map(|(h, m)| {
                Some(Snapshot {
                    height: h.try_into().ok()?,
                    format: FORMAT,
                    chunks: u32::try_from(m.chunk_hashes.len()).ok()?,
                    hash: m.hash().to_vec().into(),
                    metadata: m.encode().into(),
                })
            })
            .collect();
        response::ListSnapshots { snapshots }
    }

    fn handle(&self, req: SnapshotRequest) -> SnapshotResponse {
        match req {
            SnapshotRequest::ListSnapshots => SnapshotResponse::ListSnapshots(self.list()),
            SnapshotRequest::LoadSnapshotChunk(r) => {
                let chunk = match (&self.files, r.format == FORMAT) {
                    (Some(f), true) => f.chunk(r.height.value(), r.chunk).unwrap_or_default(),
                    _ => vec![],
                };
                SnapshotResponse::LoadSnapshotChunk(response::LoadSnapshotChunk {
                    chunk: chunk.into(),
                })
            }
            SnapshotRequest::OfferSnapshot(r) => {
                let s = &r.snapshot;
                let result = self.restorer.lock().offer(
                    s.height.value(),
                    s.format,
                    s.chunks,
                    &s.hash,
                    &s.metadata,
                    r.app_hash.as_bytes(),
                );
                SnapshotResponse::OfferSnapshot(offer_response(s.height.value(), result))
            }
            SnapshotRequest::ApplySnapshotChunk(r) => {
                let result = self.restorer.lock().apply(r.index, &r.chunk);
                SnapshotResponse::ApplySnapshotChunk(apply_response(r.index, &r.sender, result))
            }
        }
    }
}

fn offer_response(
    height: u64,
    r: Result<OfferResult, crate::store::StoreError>,
) -> response::OfferSnapshot {
    match r {
        Ok(OfferResult::Accept) => response::OfferSnapshot::Accept,
        Ok(OfferResult::Reject(why)) => {
            tracing::warn!(height, reason = %why, "snapshot rejected");
            response::OfferSnapshot::Reject
        }
        Ok(OfferResult::RejectFormat(f)) => {
            tracing::warn!(height, format = f, "snapshot format rejected");
            response::OfferSnapshot::RejectFormat
        }
        Ok(OfferResult::Abort(why)) => {
            tracing::error!(height, reason = %why, "state sync aborted");
            response::OfferSnapshot::Abort
        }
        Err(e) => {
            tracing::error!(height, error = %e, "offer failed on this node's store; aborting");
            response::OfferSnapshot::Abort
        }
    }
}

/// `sender` as `reject_senders` (none when CometBFT names no sender).
fn senders_of(sender: &str) -> Vec<String> {
    match sender.is_empty() {
        true => vec![],
        false => vec![sender.to_string()],
    }
}

fn apply_response(
    index: u32,
    sender: &str,
    r: Result<ApplyResult, crate::store::StoreError>,
) -> response::ApplySnapshotChunk {
    let reply = |result, refetch_chunks, reject_senders| response::ApplySnapshotChunk {
        result,
        refetch_chunks,
        reject_senders,
    };
    match r {
        Ok(ApplyResult::Accept { .. }) => reply(Apply::Accept, vec![], vec![]),
        Ok(ApplyResult::Retry { refetch, reason }) => {
            tracing::warn!(index, %sender, %reason, "snapshot chunk refused; fetching it again");
            reply(Apply::Retry, vec![refetch], senders_of(sender))
        }
        Ok(ApplyResult::RetrySnapshot(why)) => {
            tracing::warn!(index, reason = %why, "snapshot to be offered again");
            reply(Apply::RetrySnapshot, vec![], vec![])
        }
        Ok(ApplyResult::RejectSnapshot {
            reason,
            reject_sender,
        }) => {
            tracing::error!(index, %sender, %reason, "snapshot rejected; store wiped");
            let senders = match reject_sender {
                true => senders_of(sender),
                false => vec![],
            };
            reply(Apply::RejectSnapshot, vec![], senders)
        }
        Err(e) => {
            tracing::error!(index, error = %e, "applying a chunk failed on this node's store");
            reply(Apply::Abort, vec![], vec![])
        }
    }
}

impl Service<SnapshotRequest> for SnapshotService {
    type Response = SnapshotResponse;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<SnapshotResponse, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: SnapshotRequest) -> Self::Future {
        let me = self.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || me.handle(req))
                .await
                .map_err(|e| -> BoxError { format!("snapshot task failed: {e}").into() })
        })
    }
}
