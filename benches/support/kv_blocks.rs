//! Shared by the benches that run blocks of signed one-key `kv.Set` txs
//! through FinalizeBlock + Commit (`finalize_commit`, `scale`).

use std::time::Instant;

use ed25519_dalek::SigningKey;
use stave::app::App;
use stave::keyspaces::kv::KvSet;
use stave::tx::{build::sign_tx_with_gas, Action};

pub const CHAIN: &str = "bench";

/// Genesis for these benches: `max_block_gas` raised so that blocks of
/// 5,000 txs, and `finalize_commit`'s prefill blocks of 1,000 txs of 64 sets,
/// fit (the default holds 2,500 txs declaring `TX_GAS`; the calibration is
/// `benches/gas_calibration/`). Metering still runs on every tx.
pub const GENESIS: &[u8] = br#"{"params":{"gas":{"max_block_gas":20000000000},"storage":{"pow_base":1,"pow_retention":0,"unsponsored_block_bytes":1099511627776}}}"#;

/// Declared gas of one measured `kv.Set` tx (it uses less).
pub const TX_GAS: u64 = 400_000;

/// `n` signing keys from seeds `salt…` with the index in the first 8 bytes.
pub fn keys(n: usize, salt: u8) -> Vec<SigningKey> {
    (0..n)
        .map(|i| {
            let mut seed = [salt; 32];
            seed[..8].copy_from_slice(&(i as u64).to_le_bytes());
            SigningKey::from_bytes(&seed)
        })
        .collect()
}

/// `blocks` blocks with one tx per signer, each one 32-byte `kv.Set` to a
/// fresh key `{prefix}-{block}-{signer}`; a signer's nonce is the block index.
pub fn signed_blocks(signers: &[SigningKey], blocks: usize, prefix: &str) -> Vec<Vec<Vec<u8>>> {
    (0..blocks)
        .map(|b| {
            signers
                .iter()
                .enumerate()
                .map(|(i, sk)| {
                    let a = Action::KvSet(KvSet {
                        key: format!("{prefix}-{b}-{i}").into_bytes(),
                        value: vec![1u8; 32],
                    });
                    sign_tx_with_gas(sk, CHAIN, b as u64, vec![a], "", TX_GAS)
                })
                .collect()
        })
        .collect()
}

/// Per-block timings of a measured run, in ms, and its tx/s.
pub struct Timings {
    pub finalize_ms: Vec<f64>,
    pub commit_ms: Vec<f64>,
    pub tx_per_sec: f64,
}

/// Runs each block through FinalizeBlock and Commit from `height + 1` on;
/// every tx must succeed.
pub fn run_blocks(app: &mut App, height: &mut u64, signed: &[Vec<Vec<u8>>]) -> Timings {
    let (mut finalize_ms, mut commit_ms) = (Vec::new(), Vec::new());
    let total = Instant::now();
    for txs in signed {
        *height += 1;
        let t = Instant::now();
        let out = app
            .finalize_block(*height, *height as i64 * 1_000_000_000, txs)
            .expect("finalize");
        finalize_ms.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(out.txs.iter().all(|t| t.is_ok()), "bench tx failed");
        let t = Instant::now();
        app.commit().expect("commit");
        commit_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let txs: usize = signed.iter().map(Vec::len).sum();
    Timings {
        finalize_ms,
        commit_ms,
        tx_per_sec: txs as f64 / total.elapsed().as_secs_f64(),
    }
}

/// Logs to stderr when `RUST_LOG` is set (`RUST_LOG=stave=debug` prints
/// each block's phases, "finalize phases" and "commit rows"), and returns
/// the bench's arguments without cargo's `--` flags.
pub fn bench_args() -> Vec<String> {
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .init();
    }
    std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect()
}
