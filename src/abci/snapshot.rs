//! The snapshot connection. State sync arrives in a later issue; until then
//! there are no snapshots, and offers are rejected.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tendermint::abci::response;
use tendermint::v0_38::abci::{SnapshotRequest, SnapshotResponse};
use tower::Service;
use tower_abci::BoxError;

#[derive(Clone, Default)]
pub struct SnapshotService;

impl Service<SnapshotRequest> for SnapshotService {
    type Response = SnapshotResponse;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<SnapshotResponse, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: SnapshotRequest) -> Self::Future {
        let resp = match req {
            SnapshotRequest::ListSnapshots => SnapshotResponse::ListSnapshots(Default::default()),
            SnapshotRequest::OfferSnapshot(_) => {
                SnapshotResponse::OfferSnapshot(response::OfferSnapshot::Reject)
            }
            SnapshotRequest::LoadSnapshotChunk(_) => {
                SnapshotResponse::LoadSnapshotChunk(Default::default())
            }
            SnapshotRequest::ApplySnapshotChunk(_) => {
                SnapshotResponse::ApplySnapshotChunk(response::ApplySnapshotChunk {
                    result: response::ApplySnapshotChunkResult::Abort,
                    refetch_chunks: vec![],
                    reject_senders: vec![],
                })
            }
        };
        Box::pin(async move { Ok(resp) })
    }
}
