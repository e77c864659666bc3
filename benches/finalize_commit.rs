//! Benchmark (a): FinalizeBlock + Commit throughput in process, for blocks of
//! 1,000 and 5,000 signed `kv.Set` txs, on an empty store and on a store
//! prefilled with 1M keys. Reports tx/s, FinalizeBlock and Commit ms per
//! block, and peak RSS. Signatures are NOT in the node's verified cache
//! (as in block sync or replay), so every block pays full verification.
//!
//! Run: `cargo bench --bench finalize_commit` (all scenarios, each in its own
//! process so peak RSS is per scenario), or
//! `cargo bench --bench finalize_commit -- <empty|1m> <block size> <blocks>`.

/// The node's allocator (see `src/main.rs`), so the figures are the node's.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::Instant;

use stave::app::{App, AppConfig};
use stave::keyspaces::kv::KvSet;
use stave::store::ChainStore;
use stave::tx::{build::sign_tx_with_gas, Action};

/// Declared gas of a prefill tx (64 `kv.Set`s use about 9.7M).
const PREFILL_TX_GAS: u64 = 11_000_000;

#[path = "support/kv_blocks.rs"]
mod kv_blocks;
#[path = "support/rss.rs"]
mod rss;
use kv_blocks::{keys, CHAIN, GENESIS};
use rss::peak_rss_mib;

/// Prefills `n` keys through the app itself (64 sets per tx, 1,000 txs per block).
fn prefill(app: &mut App, n: usize, height: &mut u64) {
    let per_tx = 64;
    let signers = keys(1000, 0xAA);
    let mut nonces = vec![0u64; signers.len()];
    let mut written = 0usize;
    let start = Instant::now();
    while written < n {
        let mut txs = Vec::with_capacity(1000);
        for (i, sk) in signers.iter().enumerate() {
            if written >= n {
                break;
            }
            let actions = (0..per_tx)
                .map(|j| {
                    Action::KvSet(KvSet {
                        key: format!("prefill-{}", written + j).into_bytes(),
                        value: vec![7u8; 32],
                    })
                })
                .collect();
            txs.push(sign_tx_with_gas(
                sk,
                CHAIN,
                nonces[i],
                actions,
                "",
                PREFILL_TX_GAS,
            ));
            nonces[i] += 1;
            written += per_tx;
        }
        *height += 1;
        let out = app
            .finalize_block(*height, *height as i64 * 1_000_000_000, &txs)
            .expect("finalize");
        assert!(out.txs.iter().all(|t| t.is_ok()), "prefill tx failed");
        app.commit().expect("commit");
    }
    eprintln!(
        "prefilled {written} keys in {:.1}s",
        start.elapsed().as_secs_f64()
    );
}

fn scenario(store_kind: &str, block_size: usize, blocks: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = ChainStore::open(dir.path()).expect("open");
    let mut app = App::load(store, AppConfig::default()).expect("load");
    app.init_chain(CHAIN, 0, GENESIS, &[]).expect("genesis");
    let mut height = 0u64;
    if store_kind == "1m" {
        prefill(&mut app, 1_000_000, &mut height);
    }
    // One account per tx slot, so a block has block_size distinct signers,
    // each tx one 32-byte kv.Set to a fresh key.
    let signed = kv_blocks::signed_blocks(&keys(block_size, 0x11), blocks, "bench");
    let tx_bytes = signed[0][0].len();
    let t = kv_blocks::run_blocks(&mut app, &mut height, &signed);
    let (fin_ms, com_ms) = (t.finalize_ms, t.commit_ms);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let max = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
    println!(
        "| {store_kind:>5} | {block_size:>5} | {blocks:>3} | {tx_bytes} | {:>9.0} | {:>8.1} | {:>8.1} | {:>8.1} | {:>8.1} | {:>7.0} |",
        t.tx_per_sec,
        mean(&fin_ms),
        max(&fin_ms),
        mean(&com_ms),
        max(&com_ms),
        peak_rss_mib()
    );
}

fn main() {
    let args = kv_blocks::bench_args();
    if args.len() == 3 {
        let size = args[1].parse().expect("block size");
        let blocks = args[2].parse().expect("blocks");
        scenario(&args[0], size, blocks);
        return;
    }
    println!("| store | txs/block | blocks | tx bytes | tx/s (finalize+commit) | finalize ms mean | finalize ms max | commit ms mean | commit ms max | peak RSS MiB |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let exe = std::env::current_exe().expect("current exe");
    for (kind, size, blocks) in [
        ("empty", 1000, 20),
        ("empty", 5000, 8),
        ("1m", 1000, 20),
        ("1m", 5000, 8),
    ] {
        let status = std::process::Command::new(&exe)
            .args([kind, &size.to_string(), &blocks.to_string()])
            .status()
            .expect("run scenario");
        assert!(status.success(), "scenario {kind} {size} failed");
    }
}
