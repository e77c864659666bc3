//! One validator's own cost per tx in a live network, phase by phase: the
//! CPU a Stave node spends on each `kv.Set` tx from the moment it reaches
//! the mempool to the moment it is committed, with no CometBFT around it.
//!
//! It replays what a validator sees under load (the end-to-end benchmark's
//! shape: 256 accounts, consecutive nonces): CheckTx in batches, then
//! ProcessProposal, FinalizeBlock and Commit of the block (the signatures
//! now hit the verified cache, as they do live), then the recheck of the
//! next block's txs that CometBFT sends after every Commit. PrepareProposal
//! runs on one validator in four, so it is reported but weighed 1/4.
//!
//! Figures are process CPU time (every thread, RocksDB's included) divided
//! by txs, so they stay comparable on a busy machine and across commits.
//! Limits: RocksDB's background flushes and compactions land in whichever
//! phase they overlap; the store starts empty (no 1M-key tree); the recheck
//! is always one block deep.
//!
//! Run: `cargo bench --bench validator_path [-- <txs per block> <blocks> <check batch>]`
//! (defaults 2000 20 25; 25 is the mean CheckTx batch the localnet showed).

/// The node's allocator (see `src/main.rs`), so the figures are the node's.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::Duration;

use ed25519_dalek::SigningKey;
use stave::app::{App, AppConfig, CheckKind};
use stave::keyspaces::kv::KvSet;
use stave::store::ChainStore;
use stave::tx::{build::sign_tx, Action};

const CHAIN: &str = "bench";
const ACCOUNTS: usize = 256;

/// CPU time of the whole process (all threads, dead ones included).
fn cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write into.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Accumulated CPU per phase.
#[derive(Default)]
struct Phases {
    check: Duration,
    prepare: Duration,
    process: Duration,
    finalize: Duration,
    commit: Duration,
    recheck: Duration,
}

fn timed<R>(acc: &mut Duration, f: impl FnOnce() -> R) -> R {
    let t = cpu();
    let r = f();
    *acc += cpu() - t;
    r
}

/// `blocks + 1` blocks of `per_block` txs, round-robin over the accounts.
fn blocks(per_block: usize, blocks: usize) -> Vec<Vec<Vec<u8>>> {
    let signers: Vec<SigningKey> = (0..ACCOUNTS)
        .map(|i| {
            let mut seed = [0x5a; 32];
            seed[..8].copy_from_slice(&(i as u64).to_le_bytes());
            SigningKey::from_bytes(&seed)
        })
        .collect();
    let mut nonces = vec![0u64; ACCOUNTS];
    let mut n = 0usize;
    (0..=blocks)
        .map(|_| {
            (0..per_block)
                .map(|_| {
                    let a = n % ACCOUNTS;
                    let action = Action::KvSet(KvSet {
                        key: format!("key-{n}").into_bytes(),
                        value: vec![1u8; 32],
                    });
                    n += 1;
                    nonces[a] += 1;
                    sign_tx(&signers[a], CHAIN, nonces[a] - 1, vec![action], "")
                })
                .collect()
        })
        .collect()
}

fn check(app: &App, txs: &[Vec<u8>], batch: usize, kind: CheckKind) {
    let mempool = app.mempool();
    for chunk in txs.chunks(batch) {
        let items: Vec<(&[u8], CheckKind)> = chunk.iter().map(|t| (t.as_slice(), kind)).collect();
        let out = mempool.check_batch(&items);
        assert!(out.iter().all(|o| o.is_ok()), "CheckTx refused a bench tx");
    }
}

fn run(per_block: usize, n_blocks: usize, batch: usize) -> Phases {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = ChainStore::open(dir.path()).expect("open");
    let mut app = App::load(store, AppConfig::default()).expect("load");
    app.init_chain(CHAIN, 0, br#"{"params":{"gas":{"max_block_gas":10000000000000},"storage":{"pow_base":1,"pow_retention":0,"unsponsored_block_bytes":1099511627776}}}"#, &[]).expect("genesis");
    let all = blocks(per_block, n_blocks);
    let mut p = Phases::default();
    // The first block's txs reach the mempool before anything is measured.
    check(&app, &all[0], batch, CheckKind::New);
    for (i, pair) in all.windows(2).enumerate() {
        let (txs, next) = (&pair[0], &pair[1]);
        let height = i as u64 + 1;
        let time = height as i64 * 1_000_000_000;
        // The next block's txs arrive while this one is being decided.
        timed(&mut p.check, || check(&app, next, batch, CheckKind::New));
        let kept = timed(&mut p.prepare, || {
            app.prepare_proposal(height, time, txs, i64::MAX)
        })
        .expect("prepare");
        assert_eq!(kept.len(), txs.len(), "PrepareProposal dropped bench txs");
        let ok = timed(&mut p.process, || app.process_proposal(height, time, txs));
        let verdict = ok.expect("process");
        assert!(
            verdict.is_ok(),
            "ProcessProposal rejected the block: {verdict:?}"
        );
        let out = timed(&mut p.finalize, || app.finalize_block(height, time, txs));
        assert!(out.expect("finalize").txs.iter().all(|t| t.is_ok()));
        timed(&mut p.commit, || app.commit()).expect("commit");
        timed(&mut p.recheck, || {
            check(&app, next, batch, CheckKind::Recheck)
        });
    }
    p
}

/// The positional arguments (cargo's own `--bench` flag aside), each a
/// positive whole number, at most three; anything else is refused.
fn parse_args() -> Result<Vec<usize>, String> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.len() > 3 {
        return Err(format!("at most 3 arguments, got {args:?}"));
    }
    args.iter()
        .map(|a| match a.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!("{a:?} is not a positive whole number")),
        })
        .collect()
}

fn main() {
    let args = parse_args().unwrap_or_else(|e| {
        eprintln!(
            "validator_path: {e}\nusage: validator_path [<txs per block> <blocks> <check batch>]"
        );
        std::process::exit(2)
    });
    let per_block = args.first().copied().unwrap_or(2000);
    let n_blocks = args.get(1).copied().unwrap_or(20);
    let batch = args.get(2).copied().unwrap_or(25);
    let p = run(per_block, n_blocks, batch);
    let n = (per_block * n_blocks) as f64;
    let us = |d: Duration| d.as_secs_f64() * 1e6 / n;
    let total = us(p.check)
        + us(p.prepare) / 4.0
        + us(p.process)
        + us(p.finalize)
        + us(p.commit)
        + us(p.recheck);
    println!("{per_block} txs/block, {n_blocks} blocks, CheckTx batches of {batch}: CPU µs per tx");
    println!("| CheckTx | PrepareProposal (×¼) | ProcessProposal | FinalizeBlock | Commit | recheck | total |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | **{:.1}** |",
        us(p.check),
        us(p.prepare) / 4.0,
        us(p.process),
        us(p.finalize),
        us(p.commit),
        us(p.recheck),
        total
    );
}
