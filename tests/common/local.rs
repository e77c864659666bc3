//! In-process peers for local-store tests: N validators, each with its own
//! chain store (the same genesis, validator records naming every peer's
//! address), local store, content store, peer gRPC service on a loopback
//! port, and reconciler worker. No CometBFT.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use stave::app::{App, AppConfig};
use stave::crypto::{generate_dek, stream, wrap, Dek};
use stave::local::assignments::{Assignment, FixedAssignments};
use stave::local::content::ContentStore;
use stave::local::deks::DeksExt;
use stave::local::node::LocalNode;
use stave::local::worker::{Worker, WorkerConfig};
use stave::local::LocalStore;
use stave::proto::local::StoredDek;
use stave::proto::peer::peer_service_server::{PeerService, PeerServiceServer};
use stave::store::ChainStore;
use x25519_dalek::{PublicKey, StaticSecret};

pub const CHAIN: &str = "stave-local-test";

pub fn operator(i: usize) -> ed25519_dalek::SigningKey {
    ed25519_dalek::SigningKey::from_bytes(&[10 + i as u8; 32])
}
pub fn x25519(i: usize) -> StaticSecret {
    StaticSecret::from([40 + i as u8; 32])
}
pub fn op_key(i: usize) -> [u8; 32] {
    operator(i).verifying_key().to_bytes()
}

/// One upload's content, encrypted, with its ids.
pub struct Upload {
    pub plain: Vec<u8>,
    pub dek: Dek,
    pub blob: Vec<u8>,
    pub dek_cid: Vec<u8>,
    pub content_cid: Vec<u8>,
}

/// Random plaintext of `size` bytes, encrypted under a fresh DEK.
pub fn upload(size: usize, seed: u8) -> Upload {
    let plain: Vec<u8> = (0..size)
        .map(|i| (i as u8).wrapping_mul(seed) ^ seed)
        .collect();
    let dek = generate_dek();
    let mut blob = Vec::new();
    stream::encrypt(&dek, &plain[..], &mut blob).unwrap();
    Upload {
        dek_cid: stave::media::cid::raw_cid(&plain).to_vec(),
        content_cid: stave::media::cid::raw_cid(&blob).to_vec(),
        plain,
        dek,
        blob,
    }
}

impl Upload {
    pub fn assignment(&self, replicas: &[usize], holders: &[usize]) -> Assignment {
        Assignment {
            dek_cid: self.dek_cid.clone(),
            content_cid: self.content_cid.clone(),
            encrypted_size: self.blob.len() as u64,
            replication_set: replicas.iter().map(|i| op_key(*i)).collect(),
            dek_holder_set: holders.iter().map(|i| op_key(*i)).collect(),
            dek_commitment: stave::crypto::dek_commitment(&self.dek, &self.content_cid).to_vec(),
            images: vec![],
        }
    }
}

/// Genesis `app_state` naming validators `0..n` at `addrs`.
pub fn app_state(addrs: &[SocketAddr]) -> Vec<u8> {
    let vals: Vec<_> = addrs
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let cons = ed25519_dalek::SigningKey::from_bytes(&[70 + i as u8; 32]);
            serde_json::json!({
                "operator_key": hex::encode(op_key(i)),
                "consensus_key": hex::encode(cons.verifying_key().to_bytes()),
                "x25519_key": hex::encode(PublicKey::from(&x25519(i)).to_bytes()),
                "address": a.to_string(),
                "power": 10,
            })
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({ "validators": vals })).unwrap()
}

fn comet_validators(n: usize) -> Vec<(Vec<u8>, u64)> {
    (0..n)
        .map(|i| {
            let cons = ed25519_dalek::SigningKey::from_bytes(&[70 + i as u8; 32]);
            (cons.verifying_key().to_bytes().to_vec(), 10)
        })
        .collect()
}

/// A chain store at genesis (height 0) with `app_state`.
pub fn chain_at_genesis(dir: &Path, app_state: &[u8], n: usize) -> ChainStore {
    let store = ChainStore::open(&dir.join("chain")).unwrap();
    let mut app = App::load(store.clone(), AppConfig::default()).unwrap();
    // Fresh test keys act without sponsors: proof of work off, as in the
    // in-process harness, unless the scenario sets `params.storage`.
    let mut state: serde_json::Value = serde_json::from_slice(app_state).unwrap();
    if state["params"]["storage"].is_null() {
        state["params"]["storage"] = serde_json::json!({"pow_base": 1, "pow_retention": 0, "unsponsored_block_bytes": 1u64 << 40});
    }
    // The replicas' documented low proof-of-work base of tests.
    if state["params"]["replica"].is_null() {
        state["params"]["replica"] =
            serde_json::json!({"pow_base": stave::replica::LOCALNET_POW_BASE});
    }
    let app_state = serde_json::to_vec(&state).unwrap();
    app.init_chain(CHAIN, 0, &app_state, &comet_validators(n))
        .unwrap();
    store
}

/// A validator's local side over `dir` (local store and content store).
pub fn local_node(
    dir: &Path,
    chain: ChainStore,
    who: usize,
    operator_key: ed25519_dalek::SigningKey,
    assignments: Vec<Assignment>,
) -> Arc<LocalNode> {
    Arc::new(LocalNode {
        chain,
        local: LocalStore::open(&dir.join("local")).unwrap(),
        content: ContentStore::open(&dir.join("content")).unwrap(),
        operator: operator_key,
        x25519: x25519(who).into(),
        assignments: Arc::new(FixedAssignments(assignments)),
        takedown_retention_blocks: 3,
    })
}

/// Serves `svc` on `listener` in the background.
pub fn serve<S: PeerService>(listener: std::net::TcpListener, svc: S) {
    listener.set_nonblocking(true).unwrap();
    let l = tokio::net::TcpListener::from_std(listener).unwrap();
    tokio::spawn(async move {
        let _ = tonic::transport::Server::builder()
            .add_service(PeerServiceServer::new(svc))
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(l))
            .await;
    });
}

/// Places content and this node's own wrapped DEK, as the upload
/// pipeline does on the validator that processed the upload.
pub fn seed(node: &LocalNode, who: usize, u: &Upload) {
    node.content
        .put_reader(&u.content_cid, u.blob.len() as u64, &u.blob[..])
        .unwrap();
    seed_dek(node, who, u);
}

/// Places `u`'s DEK, wrapped to validator `who`, in `node`'s local store.
pub fn seed_dek(node: &LocalNode, who: usize, u: &Upload) {
    let w = wrap::wrap_dek(
        &u.dek,
        &PublicKey::from(&x25519(who)).to_bytes(),
        &u.dek_cid,
    )
    .unwrap();
    node.local
        .put_dek(&StoredDek {
            cid: u.dek_cid.clone(),
            wrapped_dek: w.ciphertext,
            ephemeral_pubkey: w.ephemeral_pubkey.to_vec(),
            source_validator: vec![],
            job_id: vec![],
        })
        .unwrap();
}

/// Fast retries for tests.
pub fn worker(node: Arc<LocalNode>) -> Worker {
    Worker::new(
        node,
        WorkerConfig {
            concurrency: 4,
            tick: Duration::from_millis(100),
            backoff_base_ms: 200,
            backoff_max_ms: 1_000,
            idle: Duration::from_secs(2),
        },
    )
}

/// Runs worker rounds until `done` holds or `timeout` passes.
pub async fn reconcile_until(
    w: &Worker,
    timeout: Duration,
    mut done: impl FnMut() -> bool,
) -> bool {
    let start = Instant::now();
    while start.elapsed() < timeout {
        w.round().await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        if w.in_flight() == 0 && done() {
            return true;
        }
    }
    false
}

/// N validators with peer services running; returns their nodes.
pub async fn cluster(dir: &Path, n: usize, assignments: Vec<Assignment>) -> Vec<Arc<LocalNode>> {
    let listeners: Vec<_> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    let addrs: Vec<SocketAddr> = listeners.iter().map(|l| l.local_addr().unwrap()).collect();
    let state = app_state(&addrs);
    let mut nodes = Vec::new();
    for (i, l) in listeners.into_iter().enumerate() {
        let d = dir.join(format!("node{i}"));
        let chain = chain_at_genesis(&d, &state, n);
        let node = local_node(&d, chain, i, operator(i), assignments.clone());
        serve(l, stave::grpc::peer::PeerServiceImpl::new(node.clone()));
        nodes.push(node);
    }
    nodes
}
