//! The info connection: Info (for the handshake), Query and Echo, served from
//! committed state, never from the consensus actor's pending block.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tendermint::abci::response;
use tendermint::v0_38::abci::{InfoRequest, InfoResponse};
use tower::Service;
use tower_abci::BoxError;

use super::query::query;
use crate::keyspaces::upgrades::UpgradesRead;
use crate::store::ChainStore;

#[derive(Clone)]
pub struct InfoService {
    pub store: ChainStore,
}

fn info(store: &ChainStore) -> response::Info {
    // Reporting an unreadable store as empty would make CometBFT call
    // InitChain over a live chain; a node fault stops the process instead.
    let ci = match store.commit_info() {
        Ok(ci) => ci,
        Err(e) => {
            tracing::error!(error = %e, "chain store unreadable in Info; stopping");
            eprintln!("stave: fatal: chain store unreadable in Info: {e}");
            std::process::exit(70);
        }
    };
    let app_version = match store.view().app_version() {
        Ok(v) => v,
        Err(e) => {
            tracing::error!(error = %e, "chain store unreadable in Info; stopping");
            eprintln!("stave: fatal: chain store unreadable in Info: {e}");
            std::process::exit(70);
        }
    };
    response::Info {
        data: "stave".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        app_version,
        last_block_height: ci.height.unwrap_or(0).try_into().unwrap_or_default(),
        last_block_app_hash: tendermint::AppHash::try_from(ci.app_hash).unwrap_or_default(),
    }
}

impl Service<InfoRequest> for InfoService {
    type Response = InfoResponse;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<InfoResponse, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: InfoRequest) -> Self::Future {
        let store = self.store.clone();
        Box::pin(async move {
            let resp = match req {
                InfoRequest::Echo(e) => InfoResponse::Echo(response::Echo { message: e.message }),
                InfoRequest::Info(_) => {
                    match tokio::task::spawn_blocking(move || info(&store)).await {
                        Ok(i) => InfoResponse::Info(i),
                        Err(e) => {
                            tracing::error!(error = %e, "Info task failed; stopping");
                            std::process::exit(70);
                        }
                    }
                }
                InfoRequest::Query(q) => InfoResponse::Query(
                    tokio::task::spawn_blocking(move || query(&store, &q))
                        .await
                        .unwrap_or_else(|_| response::Query {
                            code: crate::tx::Code::NotReady.value().into(),
                            log: "query task failed".into(),
                            codespace: crate::tx::CODESPACE.into(),
                            ..Default::default()
                        }),
                ),
            };
            Ok(resp)
        })
    }
}
