//! Access and delivery benchmarks (BENCHMARKS.md section (j)).
//!
//! - `request_access <entitlements> <secs>`: a chain store with that many
//!   CONSUMER entitlements over 1,000 published uploads this node holds
//!   the DEKs of, served by the real public listener (`grpc::serve_client`,
//!   default `[limits]`, per-IP rates on) on 127.0.0.1; a client sends
//!   `RequestAccess` at 100 requests/s (open loop, one HTTP/2 connection)
//!   from 10,000 consumers for `secs` seconds; each answer includes the
//!   synced local-store write. Reports p50/p99/max latency.
//! - `download <MiB> <per-IP MiB/s>`: one PUBLIC upload's blob of that
//!   size, downloaded over the public listener and verified as a consumer
//!   does (`client::content::download`: every chunk opened, both cids
//!   hashed); MB/s. A per-IP rate of 0 leaves the default (64 MiB/s).
//! - `reconcile <uploads> <mine>`: a chain store with that many uploads,
//!   `mine` of them assigned to this validator, every one held; the time
//!   of a steady reconcile round (`Worker::round`) against reading every
//!   upload as the reconciler did before `assignments/`.
//!
//! Run: `cargo bench --bench access -- request_access 1000000 20`,
//! `… -- download 256 0`, `… -- reconcile 100000 1000`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ed25519_dalek::SigningKey;
use sha2::{Digest, Sha256};
use stave::access::{Access, AccessConfig};
use stave::client::content::{Consumer, Peer};
use stave::crypto::{dek_commitment, generate_dek, stream, wrap};
use stave::keyspaces::entitlements::EntitlementsWrite;
use stave::keyspaces::params::{Params, ParamsWrite};
use stave::keyspaces::releases::ReleasesWrite;
use stave::keyspaces::uploads::{handover, UploadsWrite};
use stave::keyspaces::validators::{ValidatorsWrite, STATUS_ACTIVE};
use stave::local::assignments::{AssignmentSource, ChainAssignments};
use stave::local::content::ContentStore;
use stave::local::deks::DeksExt;
use stave::local::node::LocalNode;
use stave::local::LocalStore;
use stave::proto::genesis::{GenesisValidator, ValidatorRecord};
use stave::proto::local::StoredDek;
use stave::proto::rights as pb;
use stave::store::{ChainStore, MemState, Overlay};

#[path = "support/settle.rs"]
mod settle;

const CHAIN: &str = "bench";
const CIDS: u64 = 1000;
const CONSUMERS: u64 = 10_000;

fn cid(i: u64) -> Vec<u8> {
    stave::media::cid::raw_cid(format!("bafk-bench-flac-{i:06}").as_bytes()).to_vec()
}

fn consumer(i: u64) -> SigningKey {
    SigningKey::from_bytes(&Sha256::digest(i.to_be_bytes()).into())
}

fn filler(i: u64) -> [u8; 32] {
    Sha256::digest([b"filler".as_slice(), &i.to_be_bytes()].concat()).into()
}

struct Bench {
    _dir: tempfile::TempDir,
    node: Arc<LocalNode>,
}

/// A node: its chain, local and content stores, keys, and an ACTIVE
/// validator record.
fn node() -> Bench {
    let dir = tempfile::tempdir().expect("tempdir");
    let chain = ChainStore::open(&dir.path().join("chain")).expect("chain");
    let node = LocalNode {
        chain,
        local: LocalStore::open(&dir.path().join("local")).expect("local"),
        content: ContentStore::open(&dir.path().join("content")).expect("content"),
        operator: SigningKey::from_bytes(&[1; 32]),
        x25519: x25519_dalek::StaticSecret::from([2; 32]).into(),
        assignments: Arc::new(ChainAssignments),
        takedown_retention_blocks: 0,
    };
    Bench {
        _dir: dir,
        node: Arc::new(node),
    }
}

fn validator(o: &mut Overlay<&MemState>, me: [u8; 32]) {
    o.put_validator(
        &me,
        &ValidatorRecord {
            status: STATUS_ACTIVE,
            validator: Some(GenesisValidator {
                operator_key: me.to_vec(),
                ..Default::default()
            }),
            ..Default::default()
        },
    );
}

/// An upload of `c` (blob `enc` of `size` bytes) served by `sets`.
fn upload(c: &[u8], enc: &[u8], size: u64, commitment: [u8; 32], sets: Vec<Vec<u8>>) -> pb::Upload {
    pb::Upload {
        flac_cid: c.to_vec(),
        encrypted_cid: enc.to_vec(),
        encrypted_size: size,
        status: pb::UploadStatus::Published.into(),
        replication_set: sets.clone(),
        dek_holder_set: sets,
        dek_commitment: commitment.to_vec(),
        ..Default::default()
    }
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

/// Serves the public listener for `node` with `cfg`; returns its URL.
async fn serve(node: &Arc<LocalNode>, cfg: AccessConfig) -> (String, Arc<Access>) {
    let store = node.chain.clone();
    let app = stave::app::App::load(store.clone(), Default::default()).expect("app");
    let (notifier, mempool) = (app.notifier(), app.mempool());
    let comet = stave::client::CometRpc::new("http://127.0.0.1:1");
    let submitter = Arc::new(stave::content::Submitter::new(
        node.operator.clone(),
        store.clone(),
        comet.clone(),
        notifier.clone(),
        mempool.clone(),
    ));
    let kek = std::sync::Arc::new(stave::crypto::kek::Kek::from_bytes([3; 32]));
    let jobs = stave::local::processing::Jobs::new(node.local.clone(), kek);
    let scratch = tempfile::tempdir().expect("scratch").keep();
    let pipeline = stave::content::Pipeline::new(
        node.clone(),
        jobs,
        Default::default(),
        std::env::current_exe().expect("exe"),
        scratch,
        submitter,
    );
    // block time is known: a block was committed since start
    let (_tx, heights) = tokio::sync::watch::channel(1u64);
    std::mem::forget(_tx);
    let access = Arc::new(Access::new(node.clone(), cfg, heights).expect("access"));
    let api = stave::grpc::ClientApi {
        store,
        comet,
        notifier,
        mempool,
        content: Some((pipeline, access.clone())),
        replica: None,
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        let limits = stave::net::Limits::default();
        stave::grpc::serve_client(listener, api, &limits).await
    });
    (url, access)
}

/// A fresh DEK for `flac`, wrapped to this node and kept in its local
/// store.
fn hold_dek(b: &Bench, flac: &[u8]) -> stave::crypto::Dek {
    let dek = generate_dek();
    let me_x = b.node.x25519.own_public();
    let w = wrap::wrap_dek(&dek, &me_x, flac).expect("wrap");
    b.node
        .local
        .put_dek(&StoredDek {
            cid: flac.to_vec(),
            wrapped_dek: w.ciphertext,
            ephemeral_pubkey: w.ephemeral_pubkey.to_vec(),
            source_validator: Vec::new(),
            job_id: vec![],
        })
        .expect("dek");
    dek
}

fn prefill_access(b: &Bench, n: u64) {
    let t = Instant::now();
    let me = b.node.me();
    let base = MemState::default();
    let mut o = Overlay::new(&base);
    o.put_params(&Params::default());
    validator(&mut o, me);
    for c in 0..CIDS {
        let (flac, enc) = (cid(c), cid(c + 1_000_000));
        let dek = hold_dek(b, &flac);
        let u = upload(
            &flac,
            &enc,
            1 << 20,
            dek_commitment(&dek, &enc),
            vec![me.to_vec()],
        );
        o.put_upload(&u).expect("upload");
        o.put_cid_deals(&flac, "bench", &stave::ddex::build::worldwide_deals());
    }
    for i in 0..n {
        let who = if i < CONSUMERS {
            consumer(i).verifying_key().to_bytes()
        } else {
            filler(i)
        };
        let e = pb::Entitlement {
            cid: cid(i % CIDS),
            pubkey: who.to_vec(),
            role: pb::Role::Consumer.into(),
            scope: Some(pb::Scope {
                territories: vec!["GB".into()],
                ..Default::default()
            }),
            ..Default::default()
        };
        o.put_entitlement(&who, &e).expect("entitlement");
    }
    b.node
        .chain
        .commit_genesis(CHAIN, 1_700_000_000_000_000_000, o.into_changes())
        .expect("genesis");
    settle::settle(&b.node.chain);
    eprintln!(
        "prefilled {n} entitlements, {CIDS} uploads in {:.1}s",
        t.elapsed().as_secs_f64()
    );
}

async fn request_access(n: u64, secs: u64) {
    let b = node();
    prefill_access(&b, n);
    // no recorder runs here, so room for both passes' deliveries
    let cfg = AccessConfig {
        pending_blocks: 8,
        ..AccessConfig::default()
    };
    let (url, access) = serve(&b.node, cfg).await;
    for pass in 0..2u64 {
        access_pass(&b, &url, n, secs, pass).await;
    }
    in_process(&b, &access);
    synced_writes(&b);
}

/// The same requests answered in process, one after another: the node's
/// own share of the latency, without gRPC, HTTP/2 or the client.
fn in_process(b: &Bench, access: &Access) {
    let me = b.node.me();
    let mut lat = Vec::new();
    for k in 0..500u64 {
        let i = (k * 104_729) % CONSUMERS;
        let c = Consumer {
            key: consumer(i),
            x25519: x25519_dalek::StaticSecret::from([5; 32]),
            use_type: 0,
        };
        let r = c.request(CHAIN, &cid(i % CIDS), Some(me), "GB", &[]);
        let t = Instant::now();
        access.request_access(&r).expect("delivered");
        lat.push(t.elapsed());
    }
    lat.sort();
    println!(
        "request_access in process (no gRPC): p50={:.3}ms p99={:.3}ms max={:.3}ms",
        pct(&lat, 0.5),
        pct(&lat, 0.99),
        pct(&lat, 1.0)
    );
}

/// What one synced local-store batch (a delivery's nonce and pending
/// row) costs on this disk, alone.
fn synced_writes(b: &Bench) {
    use stave::local::LocalRaw;
    let mut lat = Vec::new();
    for i in 0..500u64 {
        let rows = [
            (format!("bench/nonce/{i}").into_bytes(), vec![0; 8]),
            (format!("bench/pending/{i}").into_bytes(), vec![0; 120]),
        ];
        let t = Instant::now();
        b.node.local.put_raw_all(&rows).expect("write");
        lat.push(t.elapsed());
    }
    lat.sort();
    println!(
        "synced local-store batch alone: p50={:.3}ms p99={:.3}ms max={:.3}ms",
        pct(&lat, 0.5),
        pct(&lat, 0.99),
        pct(&lat, 1.0)
    );
}

/// One pass of `secs` seconds at 100 requests/s; `pass` keeps nonces
/// fresh.
async fn access_pass(b: &Bench, url: &str, n: u64, secs: u64, pass: u64) {
    let _ = pass;
    let me = b.node.me();
    let total = (secs * 100) as usize;
    let reqs: Vec<_> = (0..total as u64)
        .map(|k| {
            let i = (k * 7919) % CONSUMERS;
            let c = Consumer {
                key: consumer(i),
                x25519: x25519_dalek::StaticSecret::from([5; 32]),
                use_type: 0,
            };
            c.request(CHAIN, &cid(i % CIDS), Some(me), "GB", &[])
        })
        .collect();
    let client = stave::client::StaveClient::connect(url)
        .await
        .expect("connect");
    let mut tick = tokio::time::interval(Duration::from_millis(10));
    let mut tasks = Vec::with_capacity(total);
    for r in reqs {
        tick.tick().await;
        let mut c = client.content.clone();
        tasks.push(tokio::spawn(async move {
            let t = Instant::now();
            let ok = c.request_access(r).await.is_ok();
            (t.elapsed(), ok)
        }));
    }
    let mut lat = Vec::with_capacity(total);
    let mut ok = 0;
    for t in tasks {
        let (d, good) = t.await.expect("task");
        lat.push(d);
        ok += usize::from(good);
    }
    lat.sort();
    println!(
        "request_access pass {} entitlements={n} requests={total} at 100/s delivered={ok} p50={:.3}ms p99={:.3}ms max={:.3}ms",
        pass + 1,
        pct(&lat, 0.5),
        pct(&lat, 0.99),
        pct(&lat, 1.0)
    );
}

async fn download(mib: u64, per_ip_mib: u32) {
    let b = node();
    let me = b.node.me();
    let plain: Vec<u8> = (0..mib << 20).map(|i| (i % 251) as u8).collect();
    let flac = stave::media::cid::raw_cid(&plain).to_vec();
    let dek = generate_dek();
    let mut sealed = Vec::new();
    stream::encrypt(&dek, &plain[..], &mut sealed).expect("encrypt");
    drop(plain);
    let enc = stave::media::cid::raw_cid(&sealed).to_vec();
    b.node
        .content
        .put_reader(&enc, sealed.len() as u64, &sealed[..])
        .expect("store blob");
    let size = sealed.len() as u64;
    drop(sealed);
    let base = MemState::default();
    let mut o = Overlay::new(&base);
    o.put_params(&Params::default());
    validator(&mut o, me);
    let u = upload(
        &flac,
        &enc,
        size,
        dek_commitment(&dek, &enc),
        vec![me.to_vec()],
    );
    o.put_upload(&u).expect("upload");
    o.put_cid_deals(&flac, "bench", &stave::ddex::build::worldwide_deals());
    o.put_raw_policy(&flac);
    b.node
        .chain
        .commit_genesis(CHAIN, 1, o.into_changes())
        .expect("genesis");
    let mut cfg = AccessConfig::default();
    if per_ip_mib > 0 {
        cfg.per_ip_bytes_per_sec = per_ip_mib.saturating_mul(1 << 20);
    }
    let limit = cfg.per_ip_bytes_per_sec;
    let (url, _) = serve(&b.node, cfg).await;
    let peers = [Peer::unrotated(me, url)];
    let out = b._dir.path().join("out.flac");
    for pass in 1..=3 {
        let t = Instant::now();
        let n = stave::client::content::download(&peers, None, &u, &dek, &out, &mut |_, _| {})
            .await
            .expect("download");
        let s = t.elapsed().as_secs_f64();
        println!(
            "download pass {pass}: {size} encrypted bytes ({n} plain) in {s:.3}s = {:.0} MB/s (per-IP limit {limit} B/s), verified",
            size as f64 / s / 1e6
        );
    }
}

trait PolicyExt {
    fn put_raw_policy(&mut self, cid: &[u8]);
}

impl PolicyExt for Overlay<&MemState> {
    fn put_raw_policy(&mut self, cid: &[u8]) {
        use stave::keyspaces::policies::PoliciesWrite;
        self.put_policy(&pb::Policy {
            cid: cid.to_vec(),
            r#type: pb::PolicyType::Public.into(),
            ..Default::default()
        });
    }
}

fn reconcile(uploads: u64, mine: u64) {
    let b = node();
    let me = b.node.me();
    let others: Vec<Vec<u8>> = (10..13u8).map(|k| vec![k; 32]).collect();
    let base = MemState::default();
    let mut o = Overlay::new(&base);
    o.put_params(&Params::default());
    validator(&mut o, me);
    let every = uploads / mine.max(1);
    let t = Instant::now();
    for i in 0..uploads {
        let (flac, enc) = (cid(i), cid(i + 10_000_000));
        let assigned = i % every == 0 && i / every < mine;
        let mut sets = others.clone();
        if assigned {
            sets[0] = me.to_vec();
            let blob = format!("blob {i}").into_bytes();
            let enc = stave::media::cid::raw_cid(&blob).to_vec();
            b.node
                .content
                .put_reader(&enc, blob.len() as u64, &blob[..])
                .expect("blob");
            let dek = hold_dek(&b, &flac);
            let u = upload(
                &flac,
                &enc,
                blob.len() as u64,
                dek_commitment(&dek, &enc),
                sets,
            );
            o.put_upload(&u).expect("upload");
            handover::assign_new(&mut o, &u, 1);
            continue;
        }
        let u = upload(&flac, &enc, 1000, [0; 32], sets);
        o.put_upload(&u).expect("upload");
        handover::assign_new(&mut o, &u, 1);
    }
    b.node
        .chain
        .commit_genesis(CHAIN, 1, o.into_changes())
        .expect("genesis");
    eprintln!(
        "prefilled {uploads} uploads ({mine} mine) in {:.1}s",
        t.elapsed().as_secs_f64()
    );
    let rt = tokio::runtime::Runtime::new().expect("rt");
    let worker = stave::local::worker::Worker::new(b.node.clone(), Default::default());
    // the first rounds write the sync entries and verify the blobs; the
    // first round that finds everything held is a full one
    let mut full = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        rt.block_on(worker.round()).expect("round");
        full.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let mut steady = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        rt.block_on(worker.round()).expect("round");
        steady.push(t.elapsed());
    }
    steady.sort();
    println!("reconcile: the first three rounds {full:.2?} ms (writing entries, hashing blobs, then a full round that finds all held)");
    let view = b.node.chain.view();
    let mut old = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let all = ChainAssignments.all(&view).expect("all");
        let w = stave::local::reconcile::wanted(&me, &all);
        assert_eq!(w.deks.len() as u64, mine);
        old.push(t.elapsed());
    }
    old.sort();
    println!(
        "reconcile uploads={uploads} mine={mine}: steady round p50={:.2}ms max={:.2}ms (held: {}); reading every upload instead: p50={:.2}ms",
        pct(&steady, 0.5),
        pct(&steady, 1.0),
        worker.in_flight(),
        pct(&old, 0.5)
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let num = |i: usize, d: u64| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    match args.first().map(String::as_str) {
        Some("request_access") => rt.block_on(request_access(num(1, 1_000_000), num(2, 20))),
        Some("download") => rt.block_on(download(num(1, 256), num(2, 0) as u32)),
        Some("reconcile") => reconcile(num(1, 100_000), num(2, 1000)),
        _ => {
            rt.block_on(request_access(1_000_000, 20));
            rt.block_on(download(256, 0));
            reconcile(100_000, 1000);
        }
    }
}
