//! `QueryService`: reads of the latest committed state.

// tonic's `Status` is large; it is the error type every handler must return.
#![allow(clippy::result_large_err)]

use std::sync::Arc;

use tonic::{Request, Response, Status};

use crate::app::Mempool;

use crate::keyspaces::accounts::AccountsRead;
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
                app_version: crate::app::APP_VERSION,
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
        let pk = key32("pubkey", &req.into_inner().pubkey)?;
        let store = self.store.clone();
        let mempool = self.mempool.clone();
        blocking(move || {
            let view = store.view();
            let height = view.commit_info().map_err(internal)?.height.unwrap_or(0);
            let acct = view.account(&pk).map_err(internal)?;
            // Nonces only grow: the larger of the two reads, whichever
            // commit each saw.
            let next = |nonce: u64| mempool.next_nonce(&pk).unwrap_or(0).max(nonce);
            Ok(Response::new(match acct {
                None => AccountResponse {
                    found: false,
                    height,
                    next_nonce: next(0),
                    ..Default::default()
                },
                Some(a) => AccountResponse {
                    found: true,
                    nonce: a.nonce,
                    next_nonce: next(a.nonce),
                    created_at: a.created_at,
                    created_height: a.created_height,
                    stored_bytes: a.stored_bytes,
                    quota: a.quota,
                    height,
                },
            }))
        })
        .await
    }

    async fn kv_get(&self, req: Request<KvGetRequest>) -> Result<Response<KvGetResponse>, Status> {
        let req = req.into_inner();
        let signer = key32("signer", &req.signer)?;
        let store = self.store.clone();
        blocking(move || {
            let view = store.view();
            let height = view.commit_info().map_err(internal)?.height.unwrap_or(0);
            let Some(e) = kv::query::get(&view, &signer, &req.key).map_err(internal)? else {
                return Ok(Response::new(KvGetResponse {
                    found: false,
                    height,
                    ..Default::default()
                }));
            };
            let Some(value) = kv::query::rendered(&e) else {
                return Err(Status::failed_precondition(
                    kv::KvError::WrongType {
                        key: hex::encode(&req.key),
                        held: e.kind.name(),
                        wanted: "value or counter",
                    }
                    .to_string(),
                ));
            };
            Ok(Response::new(KvGetResponse {
                found: true,
                value,
                updated_height: e.updated_height,
                updated_at: e.updated_at,
                height,
                kind: e.kind.name().into(),
            }))
        })
        .await
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
