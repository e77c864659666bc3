//! gRPC (tonic): one server ([`serve`]) with `TxService`, `QueryService`,
//! `GovernanceService`, `KvService`, `CasbinQueryService`, `RightsService`,
//! the validator-to-validator `PeerService` and the local-store
//! `LocalService`, plus reflection and health.

pub mod casbin;
pub mod governance;
pub mod kv;
pub mod local;
pub mod peer;
pub mod query;
pub mod rights;
pub mod tx;

use std::net::SocketAddr;
use std::sync::Arc;

use crate::app::CommitNotifier;
use crate::client::CometRpc;
use crate::local::node::LocalNode;
use crate::proto::casbin::casbin_query_service_server::CasbinQueryServiceServer;
use crate::proto::governance::governance_service_server::GovernanceServiceServer;
use crate::proto::kv::kv_service_server::KvServiceServer;
use crate::proto::local::local_service_server::LocalServiceServer;
use crate::proto::peer::peer_service_server::PeerServiceServer;
use crate::proto::query::query_service_server::QueryServiceServer;
use crate::proto::rights::rights_service_server::RightsServiceServer;
use crate::proto::tx::tx_service_server::TxServiceServer;
use crate::store::ChainStore;
use tonic::server::NamedService;

/// Serves the gRPC API on `addr` until the future is dropped.
pub async fn serve(
    addr: SocketAddr,
    store: ChainStore,
    comet: CometRpc,
    notifier: Arc<CommitNotifier>,
    local_node: Arc<LocalNode>,
) -> anyhow::Result<()> {
    let (health, health_service) = tonic_health::server::health_reporter();
    for service in [
        <TxServiceServer<tx::TxServiceImpl> as NamedService>::NAME,
        <QueryServiceServer<query::QueryServiceImpl> as NamedService>::NAME,
        <GovernanceServiceServer<governance::GovernanceServiceImpl> as NamedService>::NAME,
        <KvServiceServer<kv::KvServiceImpl> as NamedService>::NAME,
        <CasbinQueryServiceServer<casbin::CasbinQueryServiceImpl> as NamedService>::NAME,
        <RightsServiceServer<rights::RightsServiceImpl> as NamedService>::NAME,
        <PeerServiceServer<peer::PeerServiceImpl> as NamedService>::NAME,
        <LocalServiceServer<local::LocalServiceImpl> as NamedService>::NAME,
    ] {
        health
            .set_service_status(service, tonic_health::ServingStatus::Serving)
            .await;
    }
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(crate::proto::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    tonic::transport::Server::builder()
        // a peer that goes silent is dropped, with the streams it held
        .http2_keepalive_interval(Some(std::time::Duration::from_secs(10)))
        .http2_keepalive_timeout(Some(std::time::Duration::from_secs(20)))
        .add_service(health_service)
        .add_service(reflection)
        .add_service(TxServiceServer::new(tx::TxServiceImpl { comet, notifier }))
        .add_service(QueryServiceServer::new(query::QueryServiceImpl {
            store: store.clone(),
        }))
        .add_service(GovernanceServiceServer::new(
            governance::GovernanceServiceImpl {
                store: store.clone(),
            },
        ))
        .add_service(KvServiceServer::new(kv::KvServiceImpl {
            store: store.clone(),
        }))
        .add_service(CasbinQueryServiceServer::new(
            casbin::CasbinQueryServiceImpl {
                store: store.clone(),
            },
        ))
        .add_service(RightsServiceServer::new(rights::RightsServiceImpl {
            store: store.clone(),
        }))
        .add_service(
            PeerServiceServer::new(peer::PeerServiceImpl::new(local_node.clone()))
                .max_decoding_message_size(peer::MAX_REQUEST_BYTES),
        )
        .add_service(LocalServiceServer::new(local::LocalServiceImpl::new(
            local_node,
        )))
        .serve(addr)
        .await?;
    Ok(())
}
