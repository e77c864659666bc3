//! Content and rights benchmarks.
//!
//! - `check_access <n>`: a chain store holding `n` CONSUMER entitlements
//!   (territory-scoped, over 1,000 published cids) is served by the real
//!   `RightsService` over gRPC on 127.0.0.1; one client sends sequential
//!   `CheckAccess` requests for random holders (half inside, half outside
//!   their territory) and reports p50/p99/max latency.
//! - `grant_blocks <block size> <blocks>`: FinalizeBlock + Commit through
//!   the app for blocks of signed `GrantEntitlement` txs (one grant each,
//!   one OWNER signing, fresh grantees), tx/s and ms per block.
//!
//! Run: `cargo bench --bench rights` (both, 1M entitlements, 5 blocks of
//! 1,000 txs) or `cargo bench --bench rights -- check_access 100000`.

use std::time::{Duration, Instant};

use ed25519_dalek::SigningKey;
use rand::Rng;
use sha2::{Digest, Sha256};
use stave::app::{App, AppConfig};
use stave::keyspaces::entitlements::{EntitlementsWrite, GrantEntitlement};
use stave::keyspaces::params::{Params, ParamsWrite};
use stave::keyspaces::releases::ReleasesWrite;
use stave::keyspaces::uploads::UploadsWrite;
use stave::proto::rights as pb;
use stave::store::{ChainStore, MemState, Overlay};
use stave::tx::{build::sign_tx, Action};

#[path = "support/settle.rs"]
mod settle;
use settle::settle;
#[path = "support/upload.rs"]
mod upload;
use upload::upload_complete;

const CHAIN: &str = "bench";
const CIDS: u64 = 1000;

fn cid(i: u64) -> Vec<u8> {
    stave::media::cid::raw_cid(format!("bafk-bench-{i:06}").as_bytes()).to_vec()
}

fn holder(i: u64) -> [u8; 32] {
    Sha256::digest(i.to_be_bytes()).into()
}

fn prefill(store: &ChainStore, n: u64) {
    let t = Instant::now();
    let base = MemState::default();
    let mut o = Overlay::new(&base);
    o.put_params(&Params::default());
    for c in 0..CIDS {
        o.put_upload(&pb::Upload {
            flac_cid: cid(c),
            status: pb::UploadStatus::Published.into(),
            ..Default::default()
        })
        .expect("put");
        o.put_cid_deals(&cid(c), "bench", &stave::ddex::build::worldwide_deals());
    }
    for i in 0..n {
        let e = pb::Entitlement {
            cid: cid(i % CIDS),
            pubkey: holder(i).to_vec(),
            role: pb::Role::Consumer.into(),
            scope: Some(pb::Scope {
                territories: vec!["GB".into()],
                ..Default::default()
            }),
            ..Default::default()
        };
        o.put_entitlement(&holder(i), &e).expect("put");
    }
    let changes = o.into_changes();
    store.commit_genesis(CHAIN, 0, changes).expect("genesis");
    eprintln!(
        "prefilled {n} entitlements in {:.1}s",
        t.elapsed().as_secs_f64()
    );
    settle(store);
}

/// A request for holder `i`: inside its territory on even `k`, outside on odd.
fn request(i: u64, k: usize) -> pb::CheckAccessRequest {
    pb::CheckAccessRequest {
        cid: cid(i % CIDS),
        consumer_pubkey: holder(i).to_vec(),
        territory: if k.is_multiple_of(2) { "GB" } else { "US" }.into(),
        context: Vec::new(),
        use_type: 0,
    }
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

async fn check_access(n: u64, requests: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = ChainStore::open(dir.path()).expect("open");
    prefill(&store, n);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let svc = stave::grpc::rights::RightsServiceImpl {
        store: store.clone(),
    };
    // As the node's `serve(addr)` does: TCP_NODELAY on every connection.
    let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
    let server = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(pb::rights_service_server::RightsServiceServer::new(svc))
            .serve_with_incoming(incoming),
    );
    let mut c = stave::client::StaveClient::connect(&format!("http://{addr}"))
        .await
        .expect("connect");
    // Pass 1 starts with the block cache holding nothing of the 1M keys;
    // by pass 2 the index and filter blocks a running node keeps are cached.
    grpc_pass(&mut c, n, requests, "gRPC pass 1 (cold block cache)").await;
    inproc_baseline(&store, n, requests);
    grpc_pass(&mut c, n, requests, "gRPC pass 2 (warm)").await;
    server.abort();
}

async fn grpc_pass(c: &mut stave::client::StaveClient, n: u64, requests: usize, label: &str) {
    let mut rng = rand::thread_rng();
    let mut lat = Vec::with_capacity(requests);
    let mut allowed = 0usize;
    for k in 0..requests + 500 {
        let req = request(rng.gen_range(0..n), k);
        let t = Instant::now();
        let r = c
            .rights
            .check_access(req)
            .await
            .expect("check")
            .into_inner();
        if k >= 500 {
            lat.push(t.elapsed());
            allowed += r.allowed as usize;
        }
        assert_eq!(r.allowed, k.is_multiple_of(2), "{r:?}");
    }
    lat.sort();
    println!(
        "check_access {label} entitlements={n} requests={requests} allowed={allowed} p50={:.3}ms p99={:.3}ms max={:.3}ms",
        pct(&lat, 0.5),
        pct(&lat, 0.99),
        pct(&lat, 1.0)
    );
}

/// The same decision without gRPC or the blocking pool: one view per
/// request, as the service builds it. Separates the store's share of the
/// latency from the transport's.
fn inproc_baseline(store: &ChainStore, n: u64, requests: usize) {
    let mut rng = rand::thread_rng();
    let mut lat = Vec::with_capacity(requests);
    for k in 0..requests + 500 {
        let req = request(rng.gen_range(0..n), k);
        let t = Instant::now();
        let r = stave::grpc::rights::check_access(&store.view(), &req).expect("check");
        if k >= 500 {
            lat.push(t.elapsed());
        }
        assert_eq!(r.allowed, k.is_multiple_of(2), "{r:?}");
    }
    lat.sort();
    println!(
        "check_access in-process (no gRPC) entitlements={n} requests={requests} p50={:.3}ms p99={:.3}ms max={:.3}ms",
        pct(&lat, 0.5),
        pct(&lat, 0.99),
        pct(&lat, 1.0)
    );
}

/// CometBFT's genesis validators: (consensus key, power).
type CometValidators = Vec<(Vec<u8>, u64)>;

fn genesis() -> (Vec<u8>, CometValidators, SigningKey) {
    let op = SigningKey::from_bytes(&[201; 32]);
    let cons = SigningKey::from_bytes(&[202; 32])
        .verifying_key()
        .to_bytes();
    let x = x25519_dalek::PublicKey::from(&x25519_dalek::StaticSecret::from([203; 32]));
    // one cid collects every grant of the run: lift its entitlement cap;
    // blocks of 1,000 txs declaring the default 5M gas: lift the block limit
    let g = serde_json::json!({
        "params": {"rights": {"max_entitlements_per_cid": u32::MAX},
            "gas": {"max_block_gas": 10_000_000_000_000u64},
            "storage": {"pow_base": 1, "pow_retention": 0, "unsponsored_block_bytes": 1u64 << 40}},
        "validators": [{
        "operator_key": hex::encode(op.verifying_key().to_bytes()),
        "consensus_key": hex::encode(cons), "x25519_key": hex::encode(x.as_bytes()),
        "address": "127.0.0.1:1", "power": 10}]});
    (
        serde_json::to_vec(&g).expect("json"),
        vec![(cons.to_vec(), 10)],
        op,
    )
}

fn block(app: &mut App, h: &mut u64, txs: &[Vec<u8>]) -> (f64, f64) {
    *h += 1;
    let t = Instant::now();
    let out = app
        .finalize_block(*h, *h as i64 * 1_000_000_000, txs)
        .expect("finalize");
    let fin = t.elapsed().as_secs_f64();
    assert!(out.txs.iter().all(|r| r.code.value() == 0), "a tx failed");
    let t = Instant::now();
    app.commit().expect("commit");
    (fin, t.elapsed().as_secs_f64())
}

fn grant_blocks(block_size: usize, blocks: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = App::load(
        ChainStore::open(dir.path()).expect("open"),
        AppConfig::default(),
    )
    .expect("load");
    let (g, comet, op) = genesis();
    app.init_chain(CHAIN, 0, &g, &comet).expect("genesis");
    let owner = SigningKey::from_bytes(&[1; 32]);
    let uc = upload_complete(CHAIN, &owner, &op, cid(0));
    let mut h = 0;
    block(&mut app, &mut h, &[sign_tx(&op, CHAIN, 0, vec![uc], "")]);
    let publish = Action::PublishRelease(stave::keyspaces::releases::PublishRelease::unsigned(
        stave::ddex::build::single(&cid(0)),
    ));
    block(
        &mut app,
        &mut h,
        &[sign_tx(&owner, CHAIN, 0, vec![publish], "")],
    );
    let mut nonce = 1u64;
    let (mut fin, mut com) = (0.0, 0.0);
    for b in 0..blocks {
        let txs: Vec<Vec<u8>> = (0..block_size)
            .map(|i| {
                let mut seed = [7u8; 32];
                seed[..8].copy_from_slice(&((b * block_size + i) as u64).to_le_bytes());
                let grantee = SigningKey::from_bytes(&seed)
                    .verifying_key()
                    .to_bytes()
                    .to_vec();
                let a = Action::GrantEntitlement(GrantEntitlement {
                    cid: cid(0),
                    pubkey: grantee,
                    role: pb::Role::Consumer,
                    scope: Some(pb::Scope {
                        territories: vec!["GB".into()],
                        ..Default::default()
                    }),
                });
                nonce += 1;
                sign_tx(&owner, CHAIN, nonce - 1, vec![a], "")
            })
            .collect();
        let (f, c) = block(&mut app, &mut h, &txs);
        fin += f;
        com += c;
    }
    let n = (block_size * blocks) as f64;
    println!(
        "grant_blocks block_size={block_size} blocks={blocks} finalize_ms_per_block={:.1} commit_ms_per_block={:.1} tx_per_s={:.0}",
        fin * 1e3 / blocks as f64,
        com * 1e3 / blocks as f64,
        n / (fin + com)
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let num = |i: usize, d: u64| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    match args.first().map(String::as_str) {
        Some("check_access") => {
            rt.block_on(check_access(num(1, 1_000_000), num(2, 20_000) as usize))
        }
        Some("grant_blocks") => grant_blocks(num(1, 1000) as usize, num(2, 5) as usize),
        _ => {
            rt.block_on(check_access(1_000_000, 20_000));
            grant_blocks(1000, 5);
        }
    }
}
