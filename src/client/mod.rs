//! Clients: the CometBFT JSON-RPC (broadcast, status, blocks) and Stave's
//! gRPC services. Used by the gRPC tx service, the CLI, the load tool and
//! the tests. [`content`] is the consumer's side of access and delivery.

pub mod content;

use base64::Engine;
use serde_json::{json, Value};

use crate::proto::query::query_service_client::QueryServiceClient;
use crate::proto::tx::tx_service_client::TxServiceClient;

/// CheckTx's answer as `broadcast_tx_sync` returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckResult {
    pub code: u32,
    pub codespace: String,
    pub log: String,
    /// CometBFT's tx hash (upper-case hex of sha256 of the tx bytes).
    pub hash: String,
    pub gas_wanted: u64,
}

/// CometBFT's JSON renders int64 gas as a string.
fn json_gas(v: &Value) -> u64 {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .or_else(|| v.as_u64())
        .unwrap_or(0)
}

/// A tx CometBFT has committed, as its `tx` RPC reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommittedTx {
    pub height: u64,
    pub code: u32,
    pub codespace: String,
    pub log: String,
    pub gas_wanted: u64,
    pub gas_used: u64,
}

/// A minimal CometBFT JSON-RPC client over HTTP.
#[derive(Clone)]
pub struct CometRpc {
    url: String,
    http: reqwest::Client,
}

impl CometRpc {
    pub fn new(url: &str) -> Self {
        let url = url.replace("tcp://", "http://");
        CometRpc {
            url: url.trim_end_matches('/').to_string(),
            http: reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(30))
                .pool_max_idle_per_host(64)
                .build()
                .unwrap_or_default(),
        }
    }

    async fn call(&self, method: &str, params: Value) -> anyhow::Result<Value> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let resp: Value = self
            .http
            .post(&self.url)
            .json(&body)
            .send()
            .await?
            .json()
            .await?;
        if let Some(err) = resp.get("error") {
            anyhow::bail!("cometbft {method}: {err}");
        }
        resp.get("result")
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("cometbft {method}: no result in {resp}"))
    }

    /// `broadcast_tx_sync`: runs CheckTx and returns its result.
    pub async fn broadcast_tx_sync(&self, tx: &[u8]) -> anyhow::Result<CheckResult> {
        let b64 = base64::engine::general_purpose::STANDARD.encode(tx);
        let r = self.call("broadcast_tx_sync", json!({ "tx": b64 })).await?;
        Ok(CheckResult {
            code: r["code"].as_u64().unwrap_or(0) as u32,
            codespace: r["codespace"].as_str().unwrap_or_default().to_string(),
            log: r["log"].as_str().unwrap_or_default().to_string(),
            hash: r["hash"].as_str().unwrap_or_default().to_string(),
            gas_wanted: json_gas(&r["gas_wanted"]),
        })
    }

    /// `(latest height, latest app hash hex, chain id)`.
    pub async fn status(&self) -> anyhow::Result<(u64, String, String)> {
        let r = self.call("status", json!({})).await?;
        let height = r["sync_info"]["latest_block_height"]
            .as_str()
            .unwrap_or("0")
            .parse()
            .unwrap_or(0);
        let app_hash = r["sync_info"]["latest_app_hash"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let network = r["node_info"]["network"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        Ok((height, app_hash, network))
    }

    /// A committed tx by its CometBFT hash (sha256 of the tx bytes), through
    /// the node's tx indexer: `Ok(None)` when the node does not know it.
    pub async fn committed_tx(&self, tx: &[u8]) -> anyhow::Result<Option<CommittedTx>> {
        use sha2::Digest;
        let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(tx));
        let r = match self
            .call("tx", json!({ "hash": hash, "prove": false }))
            .await
        {
            Ok(r) => r,
            Err(e) if format!("{e:#}").contains("not found") => return Ok(None),
            Err(e) => return Err(e),
        };
        let height = r["height"].as_str().unwrap_or("0").parse().unwrap_or(0);
        let res = &r["tx_result"];
        Ok((height > 0).then(|| CommittedTx {
            height,
            code: res["code"].as_u64().unwrap_or(0) as u32,
            codespace: res["codespace"].as_str().unwrap_or_default().to_string(),
            log: res["log"].as_str().unwrap_or_default().to_string(),
            gas_wanted: json_gas(&res["gas_wanted"]),
            gas_used: json_gas(&res["gas_used"]),
        }))
    }

    /// Any JSON-RPC method, for tests and tools.
    pub async fn raw(&self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.call(method, params).await
    }
}

/// gRPC clients of one node. A clone shares the connection (HTTP/2
/// streams), so concurrent callers need not open one each.
#[derive(Clone)]
pub struct StaveClient {
    pub tx: TxServiceClient<tonic::transport::Channel>,
    pub query: QueryServiceClient<tonic::transport::Channel>,
    pub governance: crate::proto::governance::governance_service_client::GovernanceServiceClient<
        tonic::transport::Channel,
    >,
    pub rights:
        crate::proto::rights::rights_service_client::RightsServiceClient<tonic::transport::Channel>,
    pub kv: crate::proto::kv::kv_service_client::KvServiceClient<tonic::transport::Channel>,
    pub content: crate::proto::content::content_service_client::ContentServiceClient<
        tonic::transport::Channel,
    >,
    /// Who announces a cid (the replicated content inventory).
    pub replica: crate::proto::replica::replica_query_service_client::ReplicaQueryServiceClient<
        tonic::transport::Channel,
    >,
}

/// The largest answer the read clients accept: a proven page carries each
/// value twice and up to [`crate::proof::MAX_PROVEN_KEYS`] proofs of a few
/// KB each, well past tonic's 4 MiB default.
pub const MAX_PROVEN_ANSWER: usize = 32 << 20;

impl StaveClient {
    /// Connects to `http://host:port`.
    pub async fn connect(url: &str) -> anyhow::Result<Self> {
        let url = if url.starts_with("http") {
            url.to_string()
        } else {
            format!("http://{url}")
        };
        let channel = tonic::transport::Endpoint::from_shared(url.clone())?
            .connect_timeout(std::time::Duration::from_secs(5))
            .connect()
            .await
            .map_err(|e| anyhow::anyhow!("connecting to {url}: {e}"))?;
        Ok(StaveClient {
            tx: TxServiceClient::new(channel.clone()),
            query: QueryServiceClient::new(channel.clone())
                .max_decoding_message_size(MAX_PROVEN_ANSWER),
            governance:
                crate::proto::governance::governance_service_client::GovernanceServiceClient::new(
                    channel.clone(),
                )
                .max_decoding_message_size(MAX_PROVEN_ANSWER),
            rights: crate::proto::rights::rights_service_client::RightsServiceClient::new(
                channel.clone(),
            )
            .max_decoding_message_size(MAX_PROVEN_ANSWER),
            kv: crate::proto::kv::kv_service_client::KvServiceClient::new(channel.clone())
                .max_decoding_message_size(MAX_PROVEN_ANSWER),
            content: crate::proto::content::content_service_client::ContentServiceClient::new(
                channel.clone(),
            )
            .max_encoding_message_size(crate::grpc::content::MAX_UPLOAD_MESSAGE),
            replica:
                crate::proto::replica::replica_query_service_client::ReplicaQueryServiceClient::new(
                    channel,
                ),
        })
    }
}

/// A channel to the admin socket (`<home>/admin.sock`).
async fn admin_channel(socket: &std::path::Path) -> anyhow::Result<tonic::transport::Channel> {
    let path = socket.to_path_buf();
    // the URI is required and ignored: the connector dials the socket
    tonic::transport::Endpoint::from_static("http://admin.sock")
        .connect_with_connector(tower::service_fn(move |_: tonic::transport::Uri| {
            let path = path.clone();
            async move {
                tokio::net::UnixStream::connect(path)
                    .await
                    .map(hyper_util::rt::TokioIo::new)
            }
        }))
        .await
        .map_err(|e| anyhow::anyhow!("connecting to the admin socket {}: {e}", socket.display()))
}

/// A `LocalService` client on the admin socket (`<home>/admin.sock`).
pub async fn admin_client(
    socket: &std::path::Path,
) -> anyhow::Result<
    crate::proto::local::local_service_client::LocalServiceClient<tonic::transport::Channel>,
> {
    let channel = admin_channel(socket).await?;
    Ok(crate::proto::local::local_service_client::LocalServiceClient::new(channel))
}

/// A `LocalKvService` client on the admin socket (`<home>/admin.sock`).
pub async fn admin_kv_client(
    socket: &std::path::Path,
) -> anyhow::Result<
    crate::proto::local::local_kv_service_client::LocalKvServiceClient<tonic::transport::Channel>,
> {
    let channel = admin_channel(socket).await?;
    Ok(crate::proto::local::local_kv_service_client::LocalKvServiceClient::new(channel))
}

/// A `LocalDbService` client on the admin socket (`<home>/admin.sock`):
/// this node's replicated databases and the replication's status.
pub async fn admin_db_client(
    socket: &std::path::Path,
) -> anyhow::Result<
    crate::proto::replica::local_db_service_client::LocalDbServiceClient<tonic::transport::Channel>,
> {
    let channel = admin_channel(socket).await?;
    Ok(crate::proto::replica::local_db_service_client::LocalDbServiceClient::new(channel))
}
