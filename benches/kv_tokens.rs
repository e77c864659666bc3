//! KV token benchmarks, in process over a real RocksDB store.
//!
//! 1. Create then update throughput through FinalizeBlock + Commit: one
//!    token per tx (two ed25519 verifications per token: the tx's and the
//!    controller's), blocks of `block` txs, signatures not cached.
//! 2. Tag lookup latency (limit 50) over the same store, served from the
//!    indexes: p50/p99 over 2,000 random tags (`all` with one tag).
//!
//! Run: `cargo bench --bench kv_tokens -- <tokens> <block> <tags>`
//! (defaults 20000 2000 10000).

use std::time::Instant;

use ed25519_dalek::SigningKey;
use rand::{Rng, SeedableRng};
use stave::app::{App, AppConfig};
use stave::keyspaces::kv::token::{client, query, token_id};
use stave::store::ChainStore;
use stave::tx::build::{sign_tx, tx_id_of};
use stave::tx::Action;

const CHAIN: &str = "bench";
const PID: &str = "[1,\"bench profile\"]";

fn key(i: u64, salt: u8) -> SigningKey {
    let mut seed = [salt; 32];
    seed[..8].copy_from_slice(&i.to_le_bytes());
    SigningKey::from_bytes(&seed)
}

fn arg(n: usize, default: usize) -> usize {
    std::env::args()
        .filter(|a| !a.starts_with('-'))
        .nth(n)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

/// Signs one block of txs; returns the txs and the ids of the tokens they mint.
fn block_txs(
    first: u64,
    n: usize,
    nonce: u64,
    tags: usize,
    prev: Option<&[[u8; 32]]>,
) -> (Vec<Vec<u8>>, Vec<[u8; 32]>) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(first ^ nonce);
    let ctl = key(0, 0xC0);
    let (mut txs, mut ids) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for j in 0..n {
        let i = first + j as u64;
        let t = client::tags_json(
            &[
                format!("tag{}", rng.gen_range(0..tags)),
                format!("tag{}", rng.gen_range(0..tags)),
            ]
            .iter()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>(),
        );
        let k = format!("key{i}");
        let action = match prev {
            None => Action::KvTokenCreate(client::create(&ctl, CHAIN, PID, &k, b"value", &t, 1)),
            Some(p) => Action::KvTokenUpdate(client::update(
                &ctl,
                CHAIN,
                PID,
                &k,
                b"value2",
                &t,
                nonce + 1,
                p[j],
            )),
        };
        let tx = sign_tx(&key(i, 0xA0), CHAIN, nonce, vec![action], "");
        ids.push(token_id(&tx_id_of(&tx).unwrap_or([0; 32]), 0));
        txs.push(tx);
    }
    (txs, ids)
}

/// Finalize and commit seconds of one block.
fn run(app: &mut App, height: &mut u64, txs: &[Vec<u8>]) -> (f64, f64) {
    *height += 1;
    let t = Instant::now();
    let out = app
        .finalize_block(*height, *height as i64 * 1_000_000_000, txs)
        .expect("finalize");
    let f = t.elapsed().as_secs_f64();
    app.commit().expect("commit");
    let s = (f, t.elapsed().as_secs_f64() - f);
    assert!(
        out.txs.iter().all(|t| t.is_ok()),
        "a bench tx failed: {:?}",
        out.txs.iter().find(|t| !t.is_ok())
    );
    s
}

fn main() {
    // `RUST_LOG=stave=debug` prints FinalizeBlock's phases per block.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init();
    let (tokens, block, tags) = (arg(1, 20_000), arg(2, 2_000), arg(3, 10_000));
    let dir = tempfile::tempdir().expect("tempdir");
    let store = ChainStore::open(dir.path()).expect("store");
    let mut app = App::load(store.clone(), AppConfig::default()).expect("app");
    // Blocks of thousands of txs, each declaring the default 5M gas: lift the block limit.
    let genesis = serde_json::json!({"params": {"max_stored_bytes_per_account": 1u64 << 40,
        "gas": {"max_block_gas": 10_000_000_000_000u64},
        "kv_tokens": {"max_live_tokens_per_controller": 10_000_000u64},
        "storage": {"pow_base": 1, "pow_retention": 0, "unsponsored_block_bytes": 1u64 << 40}}});
    app.init_chain(CHAIN, 0, genesis.to_string().as_bytes(), &[])
        .expect("genesis");
    let mut height = 0;
    let mut last: Vec<[u8; 32]> = Vec::new();
    for (phase, nonce) in [("create", 0u64), ("update", 1)] {
        let (mut fin, mut com, mut done) = (0.0, 0.0, 0usize);
        let mut ids_all: Vec<[u8; 32]> = Vec::new();
        let prev_all = if nonce == 0 {
            None
        } else {
            Some(std::mem::take(&mut last))
        };
        while done < tokens {
            let n = block.min(tokens - done);
            let prev = prev_all.as_ref().map(|p| &p[done..done + n]);
            let (txs, ids) = block_txs(done as u64, n, nonce, tags, prev);
            let (f, c) = run(&mut app, &mut height, &txs);
            (fin, com) = (fin + f, com + c);
            ids_all.extend(ids);
            done += n;
        }
        last = ids_all;
        let secs = fin + com;
        println!(
            "{phase}: {tokens} tokens in blocks of {block}: {:.0} tokens/s \
             (finalize {fin:.2}s + commit {com:.2}s)",
            tokens as f64 / secs
        );
    }
    let view = store.view();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut lat: Vec<f64> = (0..2000)
        .map(|_| {
            let q = query::Lookup {
                tags: vec![format!("tag{}", rng.gen_range(0..tags))],
                limit: 50,
                ..Default::default()
            };
            let t = Instant::now();
            let r = query::lookup(&view, &q).expect("lookup");
            std::hint::black_box(r);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    lat.sort_by(|a, b| a.total_cmp(b));
    println!(
        "tag lookup (limit 50, {tokens} live tokens, {tags} tags): p50 {:.3} ms, p99 {:.3} ms",
        lat[lat.len() / 2],
        lat[lat.len() * 99 / 100]
    );
}
