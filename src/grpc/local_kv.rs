//! `stave.local.v1.LocalKvService`: the node's private KV
//! ([`crate::local::kv`]), on the admin socket only. Each call runs on the
//! blocking pool (RocksDB, synced writes), one at a time: a call reads a
//! row before it writes, so two calls must not interleave.
//!
//! Status codes: a bad context, key or value size is `INVALID_ARGUMENT`; a
//! row that does not decode or decrypt is `DATA_LOSS` (never a value);
//! relinquishing a healthy entry is `FAILED_PRECONDITION`.

use std::sync::Arc;

use tonic::{Request, Response, Status};

use crate::crypto::kek::Kek;
use crate::local::kv::{KvError, LocalKv};
use crate::local::LocalStore;
use crate::proto::local::local_kv_service_server::LocalKvService;
use crate::proto::local::{
    LocalKvGetRequest, LocalKvGetResponse, LocalKvListRequest, LocalKvListResponse,
    LocalKvRelinquishRequest, LocalKvRelinquishResponse, LocalKvRemoveRequest,
    LocalKvRemoveResponse, LocalKvSetRequest, LocalKvSetResponse,
};

pub struct LocalKvServiceImpl {
    store: LocalStore,
    kek: Arc<Kek>,
    /// Held by the call running: `relinquish` reads a row then deletes it,
    /// and a `set` between the two must not be lost.
    one: Arc<parking_lot::Mutex<()>>,
}

impl LocalKvServiceImpl {
    pub fn new(store: LocalStore, kek: Arc<Kek>) -> Self {
        LocalKvServiceImpl {
            store,
            kek,
            one: Arc::default(),
        }
    }

    /// Runs `f` on the blocking pool with the store and KEK.
    async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(LocalKv<'_, LocalStore>) -> Result<T, KvError> + Send + 'static,
    ) -> Result<Response<T>, Status> {
        let (store, kek, one) = (self.store.clone(), self.kek.clone(), self.one.clone());
        tokio::task::spawn_blocking(move || {
            let _one = one.lock();
            f(LocalKv {
                store: &store,
                kek: &kek,
            })
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))?
        .map(Response::new)
        .map_err(status)
    }
}

fn status(e: KvError) -> Status {
    let msg = e.to_string();
    match e {
        KvError::BadContext(_) | KvError::BadKey(_) | KvError::TooLarge(_) => {
            Status::invalid_argument(msg)
        }
        KvError::Corrupt { .. } => Status::data_loss(msg),
        KvError::Healthy { .. } => Status::failed_precondition(msg),
        KvError::Local(_) => Status::internal(msg),
    }
}

#[tonic::async_trait]
impl LocalKvService for LocalKvServiceImpl {
    async fn get(
        &self,
        request: Request<LocalKvGetRequest>,
    ) -> Result<Response<LocalKvGetResponse>, Status> {
        let r = request.into_inner();
        self.run(move |kv| {
            Ok(match kv.get(&r.context, &r.key)? {
                Some(f) => LocalKvGetResponse {
                    found: true,
                    value: f.value,
                    encrypted: f.encrypted,
                    updated_ms: f.updated_ms,
                },
                None => LocalKvGetResponse::default(),
            })
        })
        .await
    }

    async fn set(
        &self,
        request: Request<LocalKvSetRequest>,
    ) -> Result<Response<LocalKvSetResponse>, Status> {
        let r = request.into_inner();
        self.run(move |kv| {
            let now = crate::local::peer_auth::now_ms();
            let replaced = kv.set(&r.context, &r.key, &r.value, r.plaintext, now)?;
            Ok(LocalKvSetResponse {
                replaced,
                updated_ms: now,
            })
        })
        .await
    }

    async fn remove(
        &self,
        request: Request<LocalKvRemoveRequest>,
    ) -> Result<Response<LocalKvRemoveResponse>, Status> {
        let r = request.into_inner();
        self.run(move |kv| {
            Ok(LocalKvRemoveResponse {
                removed: kv.remove(&r.context, &r.key)?,
            })
        })
        .await
    }

    async fn list(
        &self,
        request: Request<LocalKvListRequest>,
    ) -> Result<Response<LocalKvListResponse>, Status> {
        let r = request.into_inner();
        self.run(move |kv| {
            let (entries, more) = kv.list(
                &r.context,
                &r.prefix,
                &r.start_after,
                r.limit as usize,
                r.values,
            )?;
            Ok(LocalKvListResponse { entries, more })
        })
        .await
    }

    async fn relinquish(
        &self,
        request: Request<LocalKvRelinquishRequest>,
    ) -> Result<Response<LocalKvRelinquishResponse>, Status> {
        let r = request.into_inner();
        self.run(move |kv| {
            Ok(LocalKvRelinquishResponse {
                removed: kv.relinquish(&r.context, &r.key)?,
            })
        })
        .await
    }
}
