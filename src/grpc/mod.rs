//! gRPC (tonic) on three listeners, each with health:
//! - [`serve_client`], the public client API: `TxService`, `QueryService`,
//!   `GovernanceService`, `KvService`, `CasbinQueryService`,
//!   `RightsService`, `ContentService` (uploads), plus reflection,
//!   and `ReplicaQueryService` (who announces a cid);
//! - [`serve_peer`], the validator-to-validator `PeerService` and
//!   `ReplicaService` (anti-entropy), allow-listed to the IPs of ACTIVE and
//!   UNBONDING validators;
//! - [`serve_admin`], the operator's `LocalService`, `LocalKvService` and
//!   `LocalDbService` on a Unix socket with mode 0600.
//!
//! Every listener has a connection cap (a semaphore around accept), and the
//! TCP ones per-IP connection and request rates, tonic's per-connection
//! concurrency limit, HTTP/2 `max_concurrent_streams`, a maximum
//! connection age, a unary timeout and keepalive (`[limits]`,
//! [`crate::net`]). Queries run on the bounded [`pool`].

pub mod access;
pub mod answers;
pub mod casbin;
pub mod content;
pub mod governance;
pub mod kv;
pub mod local;
pub mod local_db;
pub mod local_kv;
pub mod peer;
pub mod pool;
pub mod query;
pub mod replica;
pub mod rights;
pub mod slots;
pub mod timed;
pub mod tx;

use std::sync::Arc;

use tokio::net::{TcpListener, UnixListener};
use tonic::server::NamedService;
use tonic::service::InterceptorLayer;
use tonic::transport::Server;

use crate::app::{CommitNotifier, Mempool};
use crate::client::CometRpc;
use crate::local::node::LocalNode;
use crate::net::allow::AllowList;
use crate::net::incoming::{self, Gate};
use crate::net::rate::{self, IpRate};
use crate::net::Limits;
use crate::proto::casbin::casbin_query_service_server::CasbinQueryServiceServer;
use crate::proto::content::content_service_server::ContentServiceServer;
use crate::proto::governance::governance_service_server::GovernanceServiceServer;
use crate::proto::kv::kv_service_server::KvServiceServer;
use crate::proto::local::local_service_server::LocalServiceServer;
use crate::proto::peer::peer_service_server::PeerServiceServer;
use crate::proto::query::query_service_server::QueryServiceServer;
use crate::proto::replica::replica_query_service_server::ReplicaQueryServiceServer;
use crate::proto::rights::rights_service_server::RightsServiceServer;
use crate::proto::tx::tx_service_server::TxServiceServer;
use crate::store::ChainStore;

/// What the public client API serves from.
pub struct ClientApi {
    pub store: ChainStore,
    pub comet: CometRpc,
    pub notifier: Arc<CommitNotifier>,
    /// For each account's next nonce as CheckTx sees it.
    pub mempool: Arc<Mempool>,
    /// Serves `ContentService` when present, with access and delivery.
    pub content: Option<(Arc<crate::content::Pipeline>, Arc<crate::access::Access>)>,
    /// Serves `ReplicaQueryService` (who announces a cid) when present.
    pub replica: Option<Arc<crate::replica::Replica>>,
}

/// A health service reporting `names` as serving.
async fn health(
    names: &[&str],
) -> tonic_health::pb::health_server::HealthServer<impl tonic_health::pb::health_server::Health> {
    let (reporter, service) = tonic_health::server::health_reporter();
    for name in names {
        reporter
            .set_service_status(*name, tonic_health::ServingStatus::Serving)
            .await;
    }
    service
}

/// The HTTP/2 limits every listener shares, and the request timeout
/// for the listeners that serve no long client stream.
fn server(limits: &Limits) -> Server {
    untimed_server(limits)
        // unary calls only in effect: a stream's body outlives its
        // handler's future, and stream handlers enforce idle timeouts
        .timeout(limits.request_timeout())
}

/// The HTTP/2 limits without a server-wide request timeout (the public
/// listener times each unary service itself, [`timed::Timed`]).
fn untimed_server(limits: &Limits) -> Server {
    Server::builder()
        .concurrency_limit_per_connection(limits.concurrency_per_connection)
        .max_concurrent_streams(limits.max_concurrent_streams)
        .max_connection_age(limits.max_connection_age())
        // a peer that goes silent is dropped, with the streams it held
        .http2_keepalive_interval(Some(limits.keepalive_interval()))
        .http2_keepalive_timeout(Some(limits.keepalive_timeout()))
        .tcp_keepalive(Some(limits.keepalive_interval()))
}

/// The largest request a query service decodes (queries are small; a
/// decoded request can take many times its wire size). `TxService` keeps
/// tonic's 4 MiB, the block size.
pub const MAX_QUERY_BYTES: usize = 64 * 1024;

/// A gate for a TCP listener: its cap, the per-IP connection rate and the
/// per-IP cap of open connections.
fn tcp_gate(name: &'static str, max: usize, limits: &Limits) -> Gate {
    Gate::new(name, max)
        .rate(Arc::new(IpRate::new(
            limits.per_ip_connections_per_sec,
            limits.per_ip_connection_burst,
        )))
        .per_ip(limits.per_ip_max_connections)
}

fn request_rate(limits: &Limits) -> Arc<IpRate> {
    Arc::new(IpRate::new(
        limits.per_ip_requests_per_sec,
        limits.per_ip_request_burst,
    ))
}

/// Serves the public client API on `listener` until the future is dropped.
pub async fn serve_client(
    listener: TcpListener,
    api: ClientApi,
    limits: &Limits,
) -> anyhow::Result<()> {
    let health = health(&[
        <TxServiceServer<tx::TxServiceImpl> as NamedService>::NAME,
        <QueryServiceServer<query::QueryServiceImpl> as NamedService>::NAME,
        <GovernanceServiceServer<governance::GovernanceServiceImpl> as NamedService>::NAME,
        <KvServiceServer<kv::KvServiceImpl> as NamedService>::NAME,
        <CasbinQueryServiceServer<casbin::CasbinQueryServiceImpl> as NamedService>::NAME,
        <RightsServiceServer<rights::RightsServiceImpl> as NamedService>::NAME,
        <ContentServiceServer<content::ContentServiceImpl> as NamedService>::NAME,
        <ReplicaQueryServiceServer<local_db::LocalDbServiceImpl> as NamedService>::NAME,
    ])
    .await;
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(crate::proto::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let store = api.store;
    let gate = tcp_gate("client", limits.client_max_connections, limits);
    untimed_server(limits)
        .layer(InterceptorLayer::new(rate::interceptor(
            request_rate(limits),
            "client",
        )))
        .add_service(timed::Timed::new(health, limits.request_timeout()))
        .add_service(reflection)
        .add_service(timed::Timed::new(
            TxServiceServer::new(tx::TxServiceImpl::new(
                api.comet,
                api.notifier,
                limits.request_timeout(),
                store.clone(),
            )),
            limits.request_timeout(),
        ))
        .add_service(timed::Timed::new(
            QueryServiceServer::new(query::QueryServiceImpl {
                store: store.clone(),
                mempool: api.mempool,
            })
            .max_decoding_message_size(MAX_QUERY_BYTES),
            limits.request_timeout(),
        ))
        .add_service(timed::Timed::new(
            GovernanceServiceServer::new(governance::GovernanceServiceImpl {
                store: store.clone(),
            })
            .max_decoding_message_size(MAX_QUERY_BYTES),
            limits.request_timeout(),
        ))
        .add_service(timed::Timed::new(
            KvServiceServer::new(kv::KvServiceImpl {
                store: store.clone(),
            })
            .max_decoding_message_size(MAX_QUERY_BYTES),
            limits.request_timeout(),
        ))
        .add_service(timed::Timed::new(
            CasbinQueryServiceServer::new(casbin::CasbinQueryServiceImpl {
                store: store.clone(),
            })
            .max_decoding_message_size(MAX_QUERY_BYTES),
            limits.request_timeout(),
        ))
        .add_service(timed::Timed::new(
            RightsServiceServer::new(rights::RightsServiceImpl { store })
                .max_decoding_message_size(MAX_QUERY_BYTES),
            limits.request_timeout(),
        ))
        .add_optional_service(api.replica.map(|replica| {
            timed::Timed::new(
                ReplicaQueryServiceServer::new(local_db::LocalDbServiceImpl { replica })
                    .max_decoding_message_size(MAX_QUERY_BYTES),
                limits.request_timeout(),
            )
        }))
        // Upload and Download have their own idle timeouts and minimum rates
        .add_optional_service(api.content.map(|(pipeline, access)| {
            timed::Timed::new(
                ContentServiceServer::new(content::ContentServiceImpl { pipeline, access })
                    .max_decoding_message_size(content::MAX_UPLOAD_MESSAGE),
                limits.request_timeout(),
            )
            .except(content::UPLOAD_PATH)
            .except(access::DOWNLOAD_PATH)
        }))
        .serve_with_incoming(incoming::admitted(listener, gate))
        .await?;
    Ok(())
}

/// Serves `PeerService` and `ReplicaService` on `listener` to the IPs on
/// `allow` only.
pub async fn serve_peer(
    listener: TcpListener,
    node: Arc<LocalNode>,
    replica: Arc<crate::replica::Replica>,
    allow: Arc<AllowList>,
    limits: &Limits,
) -> anyhow::Result<()> {
    use crate::proto::peer::replica_service_server::ReplicaServiceServer;
    let health = health(&[
        <PeerServiceServer<peer::PeerServiceImpl> as NamedService>::NAME,
        <ReplicaServiceServer<replica::ReplicaServiceImpl> as NamedService>::NAME,
    ])
    .await;
    let gate = tcp_gate("peer", limits.peer_max_connections, limits).allow(allow);
    server(limits)
        .layer(InterceptorLayer::new(rate::interceptor(
            request_rate(limits),
            "peer",
        )))
        .add_service(health)
        .add_service(
            PeerServiceServer::new(peer::PeerServiceImpl::new(node))
                .max_decoding_message_size(peer::MAX_REQUEST_BYTES),
        )
        .add_service(
            ReplicaServiceServer::new(replica::ReplicaServiceImpl::new(replica))
                .max_decoding_message_size(replica::MAX_REQUEST_BYTES),
        )
        .serve_with_incoming(incoming::admitted(listener, gate))
        .await?;
    Ok(())
}

/// Serves `LocalService`, `LocalKvService` and `LocalDbService` on the
/// admin socket (bound with mode 0600 by [`crate::net::unix::bind_private`]).
pub async fn serve_admin(
    listener: UnixListener,
    node: Arc<LocalNode>,
    kek: Arc<crate::crypto::kek::Kek>,
    replica: Arc<crate::replica::Replica>,
    limits: &Limits,
) -> anyhow::Result<()> {
    use crate::proto::local::local_kv_service_server::LocalKvServiceServer;
    use crate::proto::replica::local_db_service_server::LocalDbServiceServer;
    let health = health(&[
        <LocalServiceServer<local::LocalServiceImpl> as NamedService>::NAME,
        <LocalKvServiceServer<local_kv::LocalKvServiceImpl> as NamedService>::NAME,
        <LocalDbServiceServer<local_db::LocalDbServiceImpl> as NamedService>::NAME,
    ])
    .await;
    let gate = Gate::new("admin", limits.admin_max_connections);
    let kv = local_kv::LocalKvServiceImpl::new(node.local.clone(), kek);
    server(limits)
        .add_service(health)
        .add_service(LocalKvServiceServer::new(kv))
        .add_service(LocalDbServiceServer::new(local_db::LocalDbServiceImpl {
            replica,
        }))
        .add_service(LocalServiceServer::new(local::LocalServiceImpl::new(node)))
        .serve_with_incoming(incoming::admitted(listener, gate))
        .await?;
    Ok(())
}
