//! KV token tag lookup over gRPC at the scale.
//!
//! A chain store holding `tokens` live tokens (default 1,000,000) over
//! `tags` tags (default 10,000; two distinct tags per token, 1,000
//! controllers, 10 protocols) is served by the real `KvService` on
//! 127.0.0.1. One client sends sequential `Lookup` requests with `limit` 50,
//! a mixture of single-tag, `all` (two tags: half of the pairs taken from a
//! live token, half random) and `any` (three random tags) selectors, and
//! reports p50/p99/max per kind and overall after a warm-up.
//!
//! The store is prefilled through the kv keyspace's typed writes
//! (`TokenWrite`) in committed batches of 100,000 tokens, not through signed
//! txs; token signatures are placeholders (lookups never verify them).
//!
//! Run: `cargo bench --bench kv_lookup -- <tokens> <tags> <queries>`
//! (defaults 1000000 10000 20000).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use stave::keyspaces::kv::token::{
    postings, token_id, tuple_hash, KvToken, Op, StoredToken, TokenWrite, Tuple, POSTING_BYTES,
};
use stave::keyspaces::kv::KvTokenParams;
use stave::keyspaces::params::{Params, ParamsWrite};
use stave::proto::kv as pb;
use stave::store::{ChainStore, MemState, Overlay, PruneConfig};

const CHAIN: &str = "bench";
const BATCH: u64 = 100_000;
const CONTROLLERS: u64 = 1000;
const PROTOCOLS: u64 = 10;

fn arg(n: usize, default: u64) -> u64 {
    std::env::args()
        .filter(|a| !a.starts_with('-'))
        .nth(n)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

fn controller(i: u64) -> String {
    use ed25519_dalek::SigningKey;
    let mut seed = [0xC0u8; 32];
    seed[..8].copy_from_slice(&i.to_le_bytes());
    hex::encode(SigningKey::from_bytes(&seed).verifying_key().to_bytes())
}

/// The two distinct tags of token `i`.
fn tags_of(i: u64, tags: u64) -> (u64, u64) {
    let mut rng = StdRng::seed_from_u64(i);
    let a = rng.gen_range(0..tags);
    let mut b = rng.gen_range(0..tags - 1);
    if b >= a {
        b += 1;
    }
    (a.min(b), a.max(b))
}

fn token(i: u64, tags: u64, ctls: &[String]) -> KvToken {
    let (a, b) = tags_of(i, tags);
    KvToken {
        protocol_id: format!("[1,\"bench profile {}\"]", i % PROTOCOLS),
        key: format!("key{i}"),
        value: format!("value of token {i}").into_bytes(),
        controller: ctls[(i % CONTROLLERS) as usize].clone(),
        tags: serde_json::to_string(&[format!("tag{a}"), format!("tag{b}")]).expect("json"),
        signature: [7; 64],
    }
}

/// Writes tokens `from..to` as height `height`, the way a create does:
/// record, postings, history entry, tuple and the controller's live count.
fn write_batch(store: &ChainStore, height: u64, from: u64, to: u64, tags: u64, ctls: &[String]) {
    let p = KvTokenParams::default();
    let base = store.committed();
    let mut o = Overlay::new(&base);
    let mut live: BTreeMap<[u8; 32], u64> = BTreeMap::new();
    for i in from..to {
        let t = token(i, tags, ctls);
        let id = token_id(&sha(i), 0);
        let tuple = tuple_hash(&t.protocol_id, &t.key, &t.controller);
        let post = postings(&t, &p);
        let stored = StoredToken {
            index_bytes: post.len() as u64 * POSTING_BYTES,
            token: t,
            id,
            generation: 1,
            created_height: height,
            seq: o.next_token_seq().expect("seq"),
            spent_height: 0,
            spent_by: None,
            op: Op::Create as u32,
            replaces: None,
        };
        o.put_stored_token(&stored);
        o.reindex(None, Some((&stored, &post)));
        o.put_history_entry(&tuple, 0, &id);
        o.put_tuple(
            &tuple,
            &Tuple {
                generation: 1,
                live: Some(id),
                history_len: 1,
            },
        );
        let ctl: [u8; 32] = hex::decode(&stored.token.controller)
            .expect("hex")
            .try_into()
            .expect("32");
        *live.entry(ctl).or_default() += 1;
    }
    for (ctl, n) in live {
        let had = stave::keyspaces::kv::token::TokenRead::live_tokens_of(&o, &ctl).expect("count");
        o.put_live_tokens_of(&ctl, had + n);
    }
    let changes = o.into_changes();
    let pending = store
        .prepare(height, height as i64 * 1_000_000_000, changes)
        .expect("prepare");
    store
        .commit(pending, PruneConfig::default())
        .expect("commit");
}

fn sha(i: u64) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(i.to_be_bytes()).into()
}

fn prefill(store: &ChainStore, tokens: u64, tags: u64, ctls: &[String]) {
    let t = Instant::now();
    let base = MemState::default();
    let mut g = Overlay::new(&base);
    g.put_params(&Params::default());
    store
        .commit_genesis(CHAIN, 0, g.into_changes())
        .expect("genesis");
    let mut from = 0;
    let mut height = 1;
    while from < tokens {
        let to = (from + BATCH).min(tokens);
        write_batch(store, height, from, to, tags, ctls);
        eprintln!("  {to} tokens written ({:.0}s)", t.elapsed().as_secs_f64());
        from = to;
        height += 1;
    }
    eprintln!(
        "prefilled {tokens} tokens over {tags} tags in {:.1}s",
        t.elapsed().as_secs_f64()
    );
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

fn request(kind: usize, rng: &mut StdRng, tokens: u64, tags: u64) -> pb::LookupRequest {
    let tag = |n: u64| format!("tag{n}");
    let (tags_v, mode) = match kind {
        0 => (vec![tag(rng.gen_range(0..tags))], ""),
        1 if rng.gen_bool(0.5) => {
            let (a, b) = tags_of(rng.gen_range(0..tokens), tags);
            (vec![tag(a), tag(b)], "all")
        }
        1 => (
            vec![tag(rng.gen_range(0..tags)), tag(rng.gen_range(0..tags))],
            "all",
        ),
        _ => ((0..3).map(|_| tag(rng.gen_range(0..tags))).collect(), "any"),
    };
    pb::LookupRequest {
        tags: tags_v,
        tag_query_mode: mode.into(),
        limit: 50,
        ..Default::default()
    }
}

/// Flushes and compacts the state and index column families, as a node
/// that grew to this size over many blocks would have in the background;
/// otherwise the queries compete with the bulk load's compactions.
fn settle(store: &ChainStore) {
    use stave::store::{cf, db::handle};
    let t = Instant::now();
    let db = store.db();
    for name in [cf::STATE, cf::INDEX] {
        let h = handle(db, name);
        db.flush_cf(h).expect("flush");
        db.compact_range_cf(h, None::<&[u8]>, None::<&[u8]>);
    }
    eprintln!("compacted in {:.1}s", t.elapsed().as_secs_f64());
}

/// The same query mix without gRPC: `query::lookup` on a fresh view.
fn in_process(store: &ChainStore, tokens: u64, tags: u64, queries: usize) {
    let mut rng = StdRng::seed_from_u64(51);
    let mut lat = Vec::with_capacity(queries);
    for k in 0..queries + 1000 {
        let q = stave::grpc::kv::to_lookup(request(k % 3, &mut rng, tokens, tags)).expect("query");
        let t = Instant::now();
        let view = store.view();
        let r = stave::keyspaces::kv::token::query::lookup(&view, &q).expect("lookup");
        std::hint::black_box(r);
        if k >= 1000 {
            lat.push(t.elapsed());
        }
    }
    lat.sort();
    println!(
        "in process (no gRPC), all kinds: p50={:.3}ms p99={:.3}ms max={:.3}ms",
        pct(&lat, 0.5),
        pct(&lat, 0.99),
        pct(&lat, 1.0)
    );
}

async fn serve_and_query(store: ChainStore, tokens: u64, tags: u64, queries: usize) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let svc = stave::grpc::kv::KvServiceImpl { store };
    // As the node's `serve(addr)` does: TCP_NODELAY on every connection
    // (a 50-token response spans several segments; Nagle would hold the last).
    let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
    let server = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(pb::kv_service_server::KvServiceServer::new(svc))
            .serve_with_incoming(incoming),
    );
    let mut c = stave::client::StaveClient::connect(&format!("http://{addr}"))
        .await
        .expect("connect");
    let mut rng = StdRng::seed_from_u64(50);
    let names = ["tag", "all", "any"];
    let mut lat: [Vec<Duration>; 3] = Default::default();
    let mut returned = [0usize; 3];
    let warmup = 1000;
    for k in 0..queries + warmup {
        let kind = k % 3;
        let req = request(kind, &mut rng, tokens, tags);
        let t = Instant::now();
        let r = c.kv.lookup(req).await.expect("lookup").into_inner();
        let d = t.elapsed();
        assert!(r.tokens.len() <= 50);
        if k >= warmup {
            lat[kind].push(d);
            returned[kind] += r.tokens.len();
        }
        if (k + 1) % 5000 == 0 {
            eprintln!("  {} queries", k + 1);
        }
    }
    let mut all: Vec<Duration> = lat.iter().flatten().copied().collect();
    all.sort();
    for (i, l) in lat.iter_mut().enumerate() {
        l.sort();
        println!(
            "lookup {:>3}: n={} mean tokens={:.1} p50={:.3}ms p99={:.3}ms max={:.3}ms",
            names[i],
            l.len(),
            returned[i] as f64 / l.len().max(1) as f64,
            pct(l, 0.5),
            pct(l, 0.99),
            pct(l, 1.0)
        );
    }
    println!(
        "lookup all kinds: tokens={tokens} tags={tags} queries={} limit=50 p50={:.3}ms p99={:.3}ms max={:.3}ms",
        all.len(),
        pct(&all, 0.5),
        pct(&all, 0.99),
        pct(&all, 1.0)
    );
    server.abort();
}

#[tokio::main]
async fn main() {
    let (tokens, tags, queries) = (arg(1, 1_000_000), arg(2, 10_000), arg(3, 20_000));
    let dir = tempfile::tempdir().expect("tempdir");
    let store = ChainStore::open(dir.path()).expect("open");
    let ctls: Vec<String> = (0..CONTROLLERS).map(controller).collect();
    let s = store.clone();
    tokio::task::spawn_blocking(move || {
        prefill(&s, tokens, tags, &ctls);
        settle(&s);
        in_process(&s, tokens, tags, queries as usize);
    })
    .await
    .expect("prefill");
    serve_and_query(store, tokens, tags, queries as usize).await;
}
