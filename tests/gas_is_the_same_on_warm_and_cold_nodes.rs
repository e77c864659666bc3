//! Gas is consensus data (issue 19): CometBFT hashes every result's
//! `gas_wanted` and `gas_used`, so they must not depend on caches or thread
//! counts. The same blocks run on a warm node (every tx already decoded
//! and its signature verified by CheckTx, the Casbin model compiled and
//! cached, one thread) and on a cold one (restarted, so its decode and
//! signature caches are empty, the compiled-model cache cleared, four
//! threads) give the same app hash and, for every tx, the same
//! `(code, gas_wanted, gas_used)`.

mod inproc;

use bytes::Bytes;
use inproc::casbin::{add_model, add_rule, model_id, pubhex, RBAC};
use inproc::kv::{create, kvdb};
use inproc::rights::*;
use inproc::{del, key, set, CHAIN};
use stave::keyspaces::casbin::{cache, CacheUse};
use stave::keyspaces::kv::KvdbOp;
use stave::proto::rights::PolicyType;
use stave::tx::{build::sign_tx_with_gas, Action, Code};

const CID: &[u8] = b"cid-gas-warm-cold";
/// Signers of the bulk txs: two txs each, so a block holds more txs than
/// the node verifies on one thread (`stave::par::PARALLEL_FROM`).
const SIGNERS: std::ops::Range<u8> = 20..200;

/// The rights world with a ROLE_BASED policy on `CID`, and one grant
/// recorded so the consensus path has compiled the model once.
async fn world() -> World {
    let mut w = World::published(CID).await;
    let model = model_id(UPLOADER, "listeners");
    let obj = hex::encode(label_cid(CID));
    w.send(UPLOADER, vec![add_model(&model, RBAC)]).await.ok();
    let rules = vec![
        add_rule(&model, 0, "p", &["listener", &obj, "access"]),
        add_rule(&model, 1, "g", &[&pubhex(CONSUMER), "listener"]),
    ];
    w.send(UPLOADER, rules).await.ok();
    let p = policy(CID, PolicyType::RoleBased, &model, b"");
    w.send(UPLOADER, vec![p]).await.ok();
    w.send(VALIDATORS[0], vec![record(CID, CONSUMER, "GB")])
        .await
        .ok();
    w
}

/// The second tx of signer `s` in block `b`: a mix of every kind of work,
/// failures and a limit too low to finish.
fn second(s: u8, b: u64) -> (Vec<Action>, u64) {
    let k = format!("k{s}");
    match s % 6 {
        0 => {
            let members = (0..8).map(|m| vec![m, s, b as u8]).collect();
            (vec![kvdb("db", "set", KvdbOp::SAdd(members))], 1_000_000)
        }
        1 => (
            vec![create(s, &format!("t{b}"), "v", &["a", "b"], 1)],
            2_000_000,
        ),
        2 => (vec![del("never-written")], 1_000_000),
        // Above the intrinsic gas, below what the write needs: OUT_OF_GAS.
        3 => (vec![set(&k, "too little gas")], 130_000),
        4 => {
            let op = KvdbOp::ZAdd {
                member: vec![s],
                score: format!("{b}.25"),
            };
            (vec![kvdb("db", "z", op)], 1_000_000)
        }
        _ => (vec![set(&k, "again"), del(&k)], 1_000_000),
    }
}

/// Block `b` after the world's setup: two txs per bulk signer and three
/// grants (one allowed, one denied, one repeating the first in the block).
fn block(w: &World, b: u64) -> Vec<Bytes> {
    let mut txs = Vec::new();
    for s in SIGNERS {
        let n = w.nonce(s);
        let first = vec![set(&format!("k{s}"), &format!("v{b}"))];
        txs.push(sign_tx_with_gas(&key(s), CHAIN, n, first, "", 300_000));
        let (actions, gas) = second(s, b);
        txs.push(sign_tx_with_gas(&key(s), CHAIN, n + 1, actions, "", gas));
    }
    for (v, who) in [(0, CONSUMER), (1, STRANGER), (2, CONSUMER)] {
        let seed = VALIDATORS[v];
        let grant = vec![record(CID, who, "GB")];
        txs.push(sign_tx_with_gas(
            &key(seed),
            CHAIN,
            w.nonce(seed),
            grant,
            "",
            2_000_000,
        ));
    }
    txs.into_iter().map(Bytes::from).collect()
}

type Results = Vec<(u32, i64, i64)>;

/// Runs `blocks` blocks on `w`; returns each block's app hash and results.
async fn run(w: &mut World, warm: bool, blocks: u64) -> Vec<(Vec<u8>, Results)> {
    let mut out = Vec::new();
    for b in 0..blocks {
        let txs = block(w, b);
        if warm {
            for tx in &txs {
                let r = w.node.check_tx(tx.clone(), false).await;
                assert_eq!(r.code.value(), 0, "CheckTx: {}", r.log);
            }
        }
        w.height += 1;
        let (hash, r) = w.node.block(w.height, txs).await;
        let results = r
            .tx_results
            .iter()
            .map(|t| (t.code.value(), t.gas_wanted, t.gas_used))
            .collect();
        out.push((hash, results));
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn gas_and_app_hash_are_the_same_on_warm_and_cold_nodes() {
    stave::par::set_threads(1);
    let mut warm = world().await;
    assert!(cache::entries(CacheUse::Consensus) > 0, "model cached");
    let warm_run = run(&mut warm, true, 2).await;

    let cold = world().await;
    let mut cold = cold.restart();
    cache::clear();
    stave::tx::clear_identity_key_cache();
    stave::par::set_threads(4);
    let cold_run = run(&mut cold, false, 2).await;
    assert!(cache::entries(CacheUse::Consensus) > 0, "compiled again");

    // Simulate runs a grant as a block would, but never through the
    // consensus cache: a public call must not fill it.
    cache::clear();
    let seed = VALIDATORS[0];
    let grant = vec![record(CID, CONSUMER, "GB")];
    let raw = sign_tx_with_gas(&key(seed), CHAIN, cold.nonce(seed), grant, "", 2_000_000);
    let sim = stave::app::simulate(&cold.node.store, &raw).expect("simulates");
    assert!(sim.outcome.is_ok(), "{}", sim.outcome.log);
    assert!(sim.outcome.gas_used > sim.intrinsic_gas);
    assert_eq!(
        cache::entries(CacheUse::Consensus),
        0,
        "Simulate filled the consensus cache"
    );

    assert_eq!(warm_run.len(), cold_run.len());
    for (b, (w, c)) in warm_run.iter().zip(&cold_run).enumerate() {
        assert_eq!(w.1, c.1, "block {b}: (code, gas_wanted, gas_used) differ");
        assert_eq!(w.0, c.0, "block {b}: app hash differs");
    }
    // The blocks did what they were built to do.
    let codes: Vec<u32> = warm_run[0].1.iter().map(|r| r.0).collect();
    for code in [Code::Ok, Code::OutOfGas, Code::NotFound] {
        assert!(
            codes.contains(&code.value()),
            "no {} in block 0",
            code.name()
        );
    }
    // Each signer's set applies; its second tx fails only where built to.
    for (j, s) in SIGNERS.enumerate() {
        assert_eq!(codes[2 * j], 0, "signer {s}'s set: {codes:?}");
        let fails = matches!(s % 6, 2 | 3);
        let code = codes[2 * j + 1];
        assert_eq!(code != 0, fails, "signer {s} (kind {}): code {code}", s % 6);
    }
    let n = warm_run[0].1.len();
    assert_eq!(codes[n - 3], 0, "the allowed grant applies: {codes:?}");
    assert_ne!(codes[n - 2], 0, "the denied grant fails");
    for (code, wanted, used) in &warm_run[0].1 {
        assert!(
            *used > 0 && used <= wanted,
            "code {code}: {used} of {wanted}"
        );
        if *code == Code::OutOfGas.value() {
            assert_eq!(used, wanted, "out of gas uses the whole limit");
        }
    }
}
