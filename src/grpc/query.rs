//! `QueryService`: reads of the latest committed state.

// tonic's `Status` is large; it is the error type every handler must return.
#![allow(clippy::result_large_err)]

use std::sync::Arc;

use tonic::{Request, Response, Status};

use super::answers::{self, AsksProof, CarriesProof};
use crate::app::Mempool;

use crate::keyspaces::kv;
use crate::proto::query::{
    query_service_server::QueryService, AccountRequest, AccountResponse, KvGetRequest,
    KvGetResponse, KvListRequest, KvListResponse, KvPair, StatusRequest, StatusResponse,
};
use crate::store::{ChainStore, StoreError};

pub struct QueryServiceImpl {
    pub store: ChainStore,
    pub mempool: Arc<Mempool>,
}

pub(crate) fn key32(field: &str, b: &[u8]) -> Result<[u8; 32], Status> {
    b.try_into()
        .map_err(|_| Status::invalid_argument(format!("{field} must be 32 bytes, got {}", b.len())))
}

/// A store error as a status: UNAVAILABLE while a restored node waits for
/// its first block's time, INTERNAL (a node fault) otherwise.
pub(crate) fn internal(e: StoreError) -> Status {
    match e {
        StoreError::NoBlockTime { .. } => Status::unavailable(e.to_string()),
        e => Status::internal(e.to_string()),
    }
}

/// Runs a blocking store read off the async runtime, on the bounded
/// query pool ([`super::pool`]).
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Status> + Send + 'static,
) -> Result<T, Status> {
    super::pool::run(f).await
}

/// Runs `f` on one view of the latest committed state, with its height,
/// on the bounded query pool.
pub(crate) async fn read<T: Send + 'static>(
    store: &ChainStore,
    f: impl FnOnce(&crate::store::View<'_>, u64) -> Result<T, Status> + Send + 'static,
) -> Result<Response<T>, Status> {
    let store = store.clone();
    blocking(move || {
        let view = store.view();
        let height = view.commit_info().map_err(internal)?.height.unwrap_or(0);
        f(&view, height).map(Response::new)
    })
    .await
}

/// Answers `req` with `f` over one view of the latest committed state, on
/// the bounded query pool; with the proof of every state key `f` read when
/// the request asks to prove (`crate::proof`).
pub(crate) async fn answer<Q, A>(
    store: &ChainStore,
    req: Q,
    f: super::answers::Answer<Q, A>,
) -> Result<Response<A>, Status>
where
    Q: AsksProof + Send + 'static,
    A: CarriesProof + Send + 'static,
{
    let store = store.clone();
    blocking(move || {
        let view = store.view();
        let height = view.commit_info().map_err(internal)?.height.unwrap_or(0);
        if !req.prove() {
            return f(&view, &req, height).map(Response::new);
        }
        let rec = crate::proof::Recorder::new(&view);
        let mut out = f(&rec, &req, height)?;
        let proof = crate::proof::prove(&store, &view, height, rec).map_err(|e| match e {
            crate::proof::ProveError::Store(s) => internal(s),
            e @ crate::proof::ProveError::TooLarge { .. } => {
                Status::resource_exhausted(e.to_string())
            }
        })?;
        out.set_proof(Some(proof));
        Ok(Response::new(out))
    })
    .await
}

#[tonic::async_trait]
impl QueryService for QueryServiceImpl {
    async fn status(&self, _: Request<StatusRequest>) -> Result<Response<StatusResponse>, Status> {
        let store = self.store.clone();
        blocking(move || {
            let ci = store.commit_info().map_err(internal)?;
            let storage = {
                use crate::keyspaces::params::ParamsRead;
                store
                    .view()
                    .params()
                    .map_err(internal)?
                    .unwrap_or_default()
                    .storage
            };
            Ok(Response::new(StatusResponse {
                chain_id: ci.chain_id,
                height: ci.height.unwrap_or(0),
                app_hash: hex::encode(ci.app_hash),
                schema_version: crate::store::SCHEMA_VERSION,
                app_version: {
                    use crate::keyspaces::upgrades::UpgradesRead;
                    store.view().app_version().map_err(internal)?
                },
                earliest_height: ci.earliest_version,
                pow_base: storage.pow_base,
                pow_retention: storage.pow_retention,
            }))
        })
        .await
    }

    async fn account(
        &self,
        req: Request<AccountRequest>,
    ) -> Result<Response<AccountResponse>, Status> {
        let req = req.into_inner();
        let pk = key32("pubkey", &req.pubkey)?;
        let mut resp = answer(&self.store, req, answers::account).await?;
        // Nonces only grow: the larger of the stored nonce and this node's
        // mempool's next, whichever commit each saw.
        let a = resp.get_mut();
        a.next_nonce = self.mempool.next_nonce(&pk).unwrap_or(0).max(a.nonce);
        Ok(resp)
    }

    async fn kv_get(&self, req: Request<KvGetRequest>) -> Result<Response<KvGetResponse>, Status> {
        answer(&self.store, req.into_inner(), answers::kv_get).await
    }

    async fn kv_list(
        &self,
        req: Request<KvListRequest>,
    ) -> Result<Response<KvListResponse>, Status> {
        let req = req.into_inner();
        let signer = key32("signer", &req.signer)?;
        let limit = match req.limit {
            0 => 100,
            n => (n as usize).min(kv::query::MAX_PAGE),
        };
        let store = self.store.clone();
        blocking(move || {
            let view = store.view();
            let height = view.commit_info().map_err(internal)?.height.unwrap_or(0);
            let (rows, next) =
                kv::query::list(&view, &signer, &req.start_after, limit).map_err(internal)?;
            Ok(Response::new(KvListResponse {
                entries: rows
                    .into_iter()
                    .map(|(key, e)| KvPair {
                        key,
                        value: kv::query::rendered(&e).unwrap_or_default(),
                        updated_height: e.updated_height,
                        kind: e.kind.name().into(),
                    })
                    .collect(),
                next_key: next.unwrap_or_default(),
                height,
            }))
        })
        .await
    }
}
