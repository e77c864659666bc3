//! End-to-end tests on a real localnet: the real `stave` and `cometbft`
//! binaries, started by `testnet/testnet` with its supervisor, real RocksDB,
//! gRPC and CometBFT RPC over 127.0.0.1. Nothing is mocked.
//!
//! - `four_validator_localnet`: one 4-validator network runs the scenarios in
//!   sequence (each step asserts): it comes up and commits blocks; 8 fresh
//!   accounts commit 240 signed `kv.Set` txs sent over gRPC to all 4 nodes;
//!   every node agrees on the app hash and serves every value; SIGKILL of one
//!   node's Stave, then of another node's CometBFT, while every account keeps
//!   sending txs to the other nodes: the supervisor restarts the pair, it
//!   catches up to the same app hash, and every tx that `BroadcastAndWait`
//!   reported committed is readable on every node; bad-signature, wrong-chain and wrong-nonce txs are rejected
//!   with codes 3, 4 and 5 and change nothing; the CLI signs, submits and
//!   reads back from every node; `query validators` lists every node's
//!   public client endpoint (its gRPC listener, from genesis), each of which
//!   answers, and `tx validator endpoints` replaces one.
//! - `init_chain_repeats_after_crash_before_block_1`: a 2-validator network
//!   where only one validator runs, so InitChain runs but block 1 cannot be
//!   committed; crashing that node's Stave, then its CometBFT, makes CometBFT
//!   call InitChain again, which must give the same genesis app hash; then
//!   the second validator joins and block 1 carries exactly that hash.
//!
//! Binaries: `STAVE_BIN` (default `$CARGO_TARGET_DIR/release/stave`) and
//! `COMETBFT_BIN` (default `cometbft` on PATH or `~/go/bin/cometbft`). With
//! `CI=true` a missing binary fails; otherwise the tests print a notice and pass.

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::localnet::{binaries, sample, Localnet, LocalnetConfig, Proc};
use ed25519_dalek::SigningKey;
use prost::Message;
use stave::client::StaveClient;
use stave::keyspaces::kv::KvSet;
use stave::proto::tx::{BroadcastAndWaitRequest, BroadcastRequest, BroadcastResponse};
use stave::tx::{build::sign_tx, Action, Code};

/// Upper bound of every wait in these tests.
const WAIT: Duration = Duration::from_secs(90);
/// Fresh accounts sending txs.
const ACCOUNTS: usize = 8;
/// `kv.Set` txs per account in the bulk step (8 x 30 = 240 >= 200).
const BULK_PER_ACCOUNT: u64 = 30;
/// How long a loader waits for one tx's commit before failing the test.
const TX_COMMIT_TIMEOUT_MS: u64 = 30_000;

// -------------------------------------------------------------------------
// Accounts and the expected state

struct Acct {
    key: SigningKey,
    pubkey: Vec<u8>,
    /// The next nonce this account will use (= its committed nonce once
    /// everything it sent is committed).
    next_nonce: u64,
    /// Every key this account set, with its last value.
    kv: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl Acct {
    fn fresh() -> Self {
        let key = SigningKey::generate(&mut rand::rngs::OsRng);
        let pubkey = key.verifying_key().to_bytes().to_vec();
        Acct {
            key,
            pubkey,
            next_nonce: 0,
            kv: BTreeMap::new(),
        }
    }
}

/// A signed tx with one `kv.Set`.
fn kv_set_tx(key: &SigningKey, chain_id: &str, nonce: u64, k: &[u8], v: &[u8]) -> Vec<u8> {
    sign_tx(
        key,
        chain_id,
        nonce,
        vec![Action::KvSet(KvSet {
            key: k.to_vec(),
            value: v.to_vec(),
        })],
        "",
    )
}

fn run_tag() -> String {
    format!("{:08x}", rand::random::<u32>())
}

fn step(name: &str) -> Instant {
    eprintln!("\n=== {name}");
    Instant::now()
}

fn done(name: &str, t: Instant) {
    eprintln!("=== {name}: ok ({:.1}s)", t.elapsed().as_secs_f64());
}

/// Waits until every node reports every account's nonce as expected, then
/// checks, on every node, that `KvList` returns exactly the expected entries
/// and `KvGet` returns every expected value.
async fn assert_state_everywhere(net: &Localnet, accts: &[Acct]) {
    for node in 0..net.nodes {
        for (a, acct) in accts.iter().enumerate() {
            let want = acct.next_nonce;
            let pubkey = acct.pubkey.clone();
            net.wait_for(
                &format!("node{node} to commit account {a}'s nonce {want}"),
                WAIT,
                || {
                    let pubkey = pubkey.clone();
                    async move {
                        match net.account(node, &pubkey).await? {
                            (true, n) if n == want => Ok(()),
                            (true, n) if n > want => net.fail(&format!(
                                "node{node}: account {a} has nonce {n}, more than the {want} txs it sent"
                            )),
                            other => Err(format!("(found, nonce) = {other:?}")),
                        }
                    }
                },
            )
            .await;
        }
        let mut client = net.client(node).await;
        let mut gets = 0;
        for (a, acct) in accts.iter().enumerate() {
            let listed = match Localnet::kv_list_all(&mut client, &acct.pubkey).await {
                Ok(l) => l,
                Err(e) => net.fail(&format!("node{node} account {a}: {e}")),
            };
            let listed: BTreeMap<Vec<u8>, Vec<u8>> = listed.into_iter().collect();
            if listed != acct.kv {
                let missing: Vec<_> = acct
                    .kv
                    .keys()
                    .filter(|k| !listed.contains_key(*k))
                    .map(|k| String::from_utf8_lossy(k).into_owned())
                    .collect();
                let extra: Vec<_> = listed
                    .keys()
                    .filter(|k| !acct.kv.contains_key(*k))
                    .map(|k| String::from_utf8_lossy(k).into_owned())
                    .collect();
                net.fail(&format!(
                    "node{node}: account {a}'s KvList differs from what was committed: {} listed, {} expected; missing {missing:?}; unexpected {extra:?}",
                    listed.len(),
                    acct.kv.len()
                ));
            }
            for (k, v) in &acct.kv {
                match Localnet::kv_get(&mut client, &acct.pubkey, k).await {
                    Ok(Some(got)) if &got == v => gets += 1,
                    other => net.fail(&format!(
                        "node{node}: KvGet(account {a}, {:?}) = {other:?}, want {:?}",
                        String::from_utf8_lossy(k),
                        String::from_utf8_lossy(v)
                    )),
                }
            }
        }
        eprintln!("node{node}: {gets} KvGet reads match, every account's KvList matches");
    }
}

// -------------------------------------------------------------------------
// Load: each account sends rounds of LOAD_BATCH kv.Set txs in nonce order to
// one node: the first ones with Broadcast (CheckTx only), the last one with
// BroadcastAndWait. Once the last one is reported committed with code 0, every
// lower nonce is committed too (a nonce is consumed only in order), so the
// whole round counts as reported committed.

/// Txs per account per round of load.
const LOAD_BATCH: u64 = 5;

struct LoadResult {
    acct: usize,
    /// (key, value, committed height) of every tx reported committed with code 0.
    writes: Vec<(Vec<u8>, Vec<u8>, u64)>,
    next_nonce: u64,
}

#[allow(clippy::too_many_arguments)]
async fn load_account(
    a: usize,
    node: usize,
    url: String,
    key: SigningKey,
    chain_id: String,
    start_nonce: u64,
    label: String,
    stop: Arc<AtomicBool>,
    committed: Arc<AtomicUsize>,
) -> Result<LoadResult, String> {
    let mut c = StaveClient::connect(&url)
        .await
        .map_err(|e| format!("account {a} -> node{node}: {e:#}"))?;
    let mut writes = Vec::new();
    let mut nonce = start_nonce;
    while !stop.load(Ordering::SeqCst) {
        let mut round = Vec::new();
        for i in 0..LOAD_BATCH {
            let n = nonce + i;
            let k = format!("{label}/{a}/{n}").into_bytes();
            let v = format!("{label} value of account {a} nonce {n}").into_bytes();
            let tx = kv_set_tx(&key, &chain_id, n, &k, &v);
            round.push((k, v));
            if i + 1 < LOAD_BATCH {
                let r = c
                    .tx
                    .broadcast(BroadcastRequest { tx })
                    .await
                    .map_err(|e| format!("account {a} nonce {n} -> node{node}: Broadcast: {e}"))?
                    .into_inner();
                if r.code != 0 {
                    return Err(format!(
                        "account {a} nonce {n} -> node{node}: CheckTx code {} ({}): {}",
                        r.code, r.codespace, r.log
                    ));
                }
                continue;
            }
            let r =
                c.tx.broadcast_and_wait(BroadcastAndWaitRequest {
                    tx,
                    timeout_ms: TX_COMMIT_TIMEOUT_MS,
                })
                .await
                .map_err(|e| format!("account {a} nonce {n} -> node{node}: BroadcastAndWait: {e}"))?
                .into_inner();
            let check = r.check.clone().unwrap_or_default();
            if check.code != 0 {
                return Err(format!(
                    "account {a} nonce {n} -> node{node}: CheckTx code {} ({}): {}",
                    check.code, check.codespace, check.log
                ));
            }
            if !r.committed {
                return Err(format!(
                    "account {a} nonce {n} -> node{node}: not committed within {TX_COMMIT_TIMEOUT_MS} ms"
                ));
            }
            if r.code != 0 {
                return Err(format!(
                    "account {a} nonce {n} -> node{node}: committed at height {} with code {} ({}): {}",
                    r.height, r.code, r.codespace, r.log
                ));
            }
            // The earlier txs of the round committed at this height or before.
            writes.extend(round.drain(..).map(|(k, v)| (k, v, r.height)));
        }
        nonce += LOAD_BATCH;
        committed.fetch_add(LOAD_BATCH as usize, Ordering::SeqCst);
    }
    Ok(LoadResult {
        acct: a,
        writes,
        next_nonce: nonce,
    })
}

// -------------------------------------------------------------------------
// The 4-validator network

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn four_validator_localnet() {
    let Some(bins) = binaries("four_validator_localnet") else {
        return;
    };
    let started = Instant::now();
    let net = Localnet::new(&bins, LocalnetConfig::new(4, 11000));
    let mut accts: Vec<Acct> = (0..ACCOUNTS).map(|_| Acct::fresh()).collect();
    let tag = run_tag();

    step_1_four_validators_come_up_and_commit_blocks(&net).await;
    step_2_signed_txs_from_8_accounts_over_grpc_all_commit(&net, &mut accts, &tag).await;
    step_3_app_hashes_agree_and_every_node_serves_every_value(&net, &accts).await;
    step_4_crash_under_load(&net, &mut accts, 2, Proc::Stave, "kill-stave").await;
    step_4_crash_under_load(&net, &mut accts, 1, Proc::Cometbft, "kill-cometbft").await;
    step_6_bad_txs_are_rejected_and_change_nothing(&net, &mut accts, &tag).await;
    step_7_cli_keys_tx_and_query_on_every_node(&net, &tag).await;
    step_8_validators_publish_their_client_endpoints(&net).await;

    eprintln!(
        "four_validator_localnet: all steps passed in {:.1}s",
        started.elapsed().as_secs_f64()
    );
}

async fn step_1_four_validators_come_up_and_commit_blocks(net: &Localnet) {
    let name = "step 1: `testnet up 4` starts 4 validators that commit blocks";
    let t = step(name);
    net.up();
    for i in 0..net.nodes {
        let s = net.wait_stave_height(i, 1, WAIT).await;
        assert_eq!(
            s.chain_id, net.chain_id,
            "node{i}: Stave reports the wrong chain id"
        );
        assert_eq!(
            s.app_hash.len(),
            64,
            "node{i}: app hash is not 32 bytes of hex: {s:?}"
        );
        let (.., network) = net.comet(i).status().await.expect("cometbft status");
        assert_eq!(
            network, net.chain_id,
            "node{i}: CometBFT runs another chain"
        );
    }
    // Blocks keep coming after block 1.
    let h = net.max_comet_height().await;
    net.wait_all_comet_height(h + 2, WAIT).await;
    net.pid(0, Proc::Stave).expect("node0 stave runs");
    assert_every_grpc_service_reports_serving(net).await;
    done(name, t);
}

/// gRPC health: every service of the public listener reports SERVING; the
/// peer and admin services are not registered there (they have their own
/// listeners).
async fn assert_every_grpc_service_reports_serving(net: &Localnet) {
    use tonic_health::pb::{
        health_check_response::ServingStatus, health_client::HealthClient, HealthCheckRequest,
    };
    let channel = tonic::transport::Endpoint::from_shared(net.grpc_url(0))
        .expect("grpc url")
        .connect()
        .await
        .expect("connect to node0's gRPC");
    let mut health = HealthClient::new(channel);
    for service in [
        "stave.tx.v1.TxService",
        "stave.query.v1.QueryService",
        "stave.governance.v1.GovernanceService",
        "stave.kv.v1.KvService",
        "stave.casbin.v1.CasbinQueryService",
        "stave.rights.v1.RightsService",
    ] {
        let r = health
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .unwrap_or_else(|e| panic!("health check of {service}: {e}"))
            .into_inner();
        assert_eq!(
            r.status,
            ServingStatus::Serving as i32,
            "{service} is not serving"
        );
    }
    for service in ["stave.peer.v1.PeerService", "stave.local.v1.LocalService"] {
        let e = health
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .expect_err(service);
        assert_eq!(
            e.code(),
            tonic::Code::NotFound,
            "{service} on the public port: {e}"
        );
    }
}

async fn step_2_signed_txs_from_8_accounts_over_grpc_all_commit(
    net: &Localnet,
    accts: &mut [Acct],
    tag: &str,
) {
    let name = "step 2: 8 accounts send 240 signed kv.Set txs over gRPC Broadcast to the 4 nodes; all commit";
    let t = step(name);
    let mut tasks = tokio::task::JoinSet::new();
    for (a, acct) in accts.iter().enumerate() {
        // Each account sends in nonce order to one node; the accounts spread over all nodes.
        let node = a % net.nodes;
        let url = net.grpc_url(node);
        let key = acct.key.clone();
        let chain_id = net.chain_id.clone();
        let start = acct.next_nonce;
        let tag = tag.to_string();
        tasks.spawn(async move {
            let mut c = StaveClient::connect(&url)
                .await
                .map_err(|e| format!("account {a} -> node{node}: {e:#}"))?;
            let mut writes = Vec::new();
            for nonce in start..start + BULK_PER_ACCOUNT {
                let k = format!("bulk/{a}/{nonce}").into_bytes();
                let v = format!("bulk {tag} account {a} nonce {nonce}").into_bytes();
                let tx = kv_set_tx(&key, &chain_id, nonce, &k, &v);
                let r =
                    c.tx.broadcast(BroadcastRequest { tx })
                        .await
                        .map_err(|e| {
                            format!("account {a} nonce {nonce} -> node{node}: Broadcast: {e}")
                        })?
                        .into_inner();
                if r.code != 0 {
                    return Err(format!(
                        "account {a} nonce {nonce} -> node{node}: CheckTx code {} ({}): {}",
                        r.code, r.codespace, r.log
                    ));
                }
                if r.tx_id.len() != 64 {
                    return Err(format!(
                        "account {a} nonce {nonce}: bad tx_id {:?}",
                        r.tx_id
                    ));
                }
                writes.push((k, v));
            }
            Ok::<_, String>((a, writes))
        });
    }
    let mut sent = 0;
    while let Some(joined) = tasks.join_next().await {
        match joined.expect("sender task panicked") {
            Ok((a, writes)) => {
                sent += writes.len();
                accts[a].next_nonce += writes.len() as u64;
                accts[a].kv.extend(writes);
            }
            Err(e) => net.fail(&format!("a tx was refused at CheckTx: {e}")),
        }
    }
    assert!(sent >= 200, "sent only {sent} txs");
    eprintln!("CheckTx accepted all {sent} txs; waiting for every node to commit them");
    assert_state_everywhere(net, accts).await;
    done(name, t);
}

async fn step_3_app_hashes_agree_and_every_node_serves_every_value(net: &Localnet, accts: &[Acct]) {
    let name = "step 3: every node has the same app hash at the same height and serves every value";
    let t = step(name);
    let h = net.assert_app_hashes_agree(WAIT).await;
    let status = net.wait_status_ok(WAIT).await;
    eprintln!("app hashes agree (common height {h}); testnet status:\n{status}");
    assert_state_everywhere(net, accts).await;
    assert_abci_metrics(net).await;
    done(name, t);
}

/// After step 2's txs, every node has timed its consensus calls and batched
/// every CheckTx it received, and some node has proposed a block.
async fn assert_abci_metrics(net: &Localnet) {
    let mut prepared = 0.0;
    for i in 0..net.nodes {
        // A CheckTx counted on arrival but not yet batched is in flight;
        // poll until the node is quiet.
        let what = format!("node{i}'s ABCI metrics");
        prepared += net
            .wait_for(&what, Duration::from_secs(30), || async move {
                abci_metrics_of(&net.metrics(i).await?)
            })
            .await;
    }
    assert!(prepared >= 1.0, "no node timed a PrepareProposal");
}

/// Checks one node's metrics; returns its PrepareProposal count.
fn abci_metrics_of(m: &str) -> Result<f64, String> {
    for name in [
        "stave_finalize_block_seconds_count",
        "stave_commit_seconds_count",
        "stave_process_proposal_seconds_count",
        "stave_checktx_batch_size_count",
    ] {
        let n = sample(m, name).unwrap_or(0.0);
        if n < 1.0 {
            return Err(format!("{name} is {n}, want at least 1"));
        }
    }
    let batched = sample(m, "stave_checktx_batch_size_sum").unwrap_or(0.0);
    let checked = sample(m, "stave_checktx_total").unwrap_or(0.0);
    if batched != checked {
        return Err(format!(
            "{batched} CheckTx requests in batches, {checked} received"
        ));
    }
    Ok(sample(m, "stave_prepare_proposal_seconds_count").unwrap_or(0.0))
}

/// SIGKILLs `victim`'s `what` while every account sends txs to the other
/// nodes; the supervisor restarts the pair; the victim catches up to the
/// same app hash and every tx reported committed is readable on every node.
async fn step_4_crash_under_load(
    net: &Localnet,
    accts: &mut [Acct],
    victim: usize,
    what: Proc,
    label: &str,
) {
    let name = format!(
        "step 4 ({label}): SIGKILL node{victim}'s {} under load; the pair restarts, catches up, nothing committed is lost",
        what.as_str()
    );
    let t = step(&name);
    let targets: Vec<usize> = (0..net.nodes).filter(|&i| i != victim).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let committed = Arc::new(AtomicUsize::new(0));
    let errors: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut loaders = Vec::new();
    for (a, acct) in accts.iter().enumerate() {
        let node = targets[a % targets.len()];
        let fut = load_account(
            a,
            node,
            net.grpc_url(node),
            acct.key.clone(),
            net.chain_id.clone(),
            acct.next_nonce,
            label.to_string(),
            stop.clone(),
            committed.clone(),
        );
        let errors = errors.clone();
        loaders.push(tokio::spawn(async move {
            let r = fut.await;
            if let Err(e) = &r {
                errors.lock().expect("errors lock").push(e.clone());
            }
            r
        }));
    }
    // Fails at once if a loader failed; otherwise reports the committed count.
    let loaders_ok = || {
        let errs = errors.lock().expect("errors lock").clone();
        if !errs.is_empty() {
            net.fail(&format!("load failed: {}", errs.join("; ")));
        }
        committed.load(Ordering::SeqCst)
    };
    let wait_committed = |at_least: usize, what: String| {
        let loaders_ok = &loaders_ok;
        async move {
            net.wait_for(&what, WAIT, || async move {
                let n = loaders_ok();
                if n >= at_least {
                    Ok(n)
                } else {
                    Err(format!("{n} committed"))
                }
            })
            .await
        }
    };

    // Load is flowing before the kill.
    wait_committed(
        2 * ACCOUNTS * LOAD_BATCH as usize,
        "txs to commit under load before the kill".into(),
    )
    .await;
    let old = (
        net.pid(victim, Proc::Stave),
        net.pid(victim, Proc::Cometbft),
    );
    assert!(
        old.0.is_some() && old.1.is_some(),
        "node{victim}'s pair is not running before the kill: {old:?}"
    );
    let height_at_kill = net.max_comet_height().await;
    let committed_at_kill = loaders_ok();
    net.kill(victim, what);
    eprintln!("SIGKILLed node{victim}'s {} (pids {old:?}) at height {height_at_kill}, {committed_at_kill} txs committed so far", what.as_str());

    // The supervisor restarts both processes.
    let new = net.wait_pair_restarted(victim, old, WAIT).await;
    loaders_ok();
    eprintln!("node{victim} restarted: (stave, cometbft) pids {new:?}");

    // The victim follows the chain again: it reaches the others' height and goes on.
    let mut others_max = 0;
    for &i in &targets {
        others_max = others_max.max(net.comet_height(i).await.unwrap_or(0));
    }
    net.wait_comet_height(victim, others_max + 2, WAIT).await;
    loaders_ok();

    // The load went on through the crash and after it.
    wait_committed(
        committed_at_kill + 2 * ACCOUNTS * LOAD_BATCH as usize,
        "txs to commit after the kill".into(),
    )
    .await;
    stop.store(true, Ordering::SeqCst);
    let mut max_height = 0;
    let mut after_kill = 0;
    let mut total = 0;
    for l in loaders {
        match l.await.expect("loader task panicked") {
            Ok(r) => {
                let acct = &mut accts[r.acct];
                assert_eq!(r.next_nonce, acct.next_nonce + r.writes.len() as u64);
                acct.next_nonce = r.next_nonce;
                for (k, v, h) in r.writes {
                    max_height = max_height.max(h);
                    if h > height_at_kill {
                        after_kill += 1;
                    }
                    total += 1;
                    acct.kv.insert(k, v);
                }
            }
            Err(e) => net.fail(&format!("load failed: {e}")),
        }
    }
    assert!(
        after_kill > 0,
        "no tx was committed above height {height_at_kill} (the kill height)"
    );
    eprintln!(
        "{total} txs reported committed (up to height {max_height}), {after_kill} of them above the kill height {height_at_kill}"
    );

    // The restarted pair is still the one running (no crash loop).
    assert_eq!(
        (
            net.pid(victim, Proc::Stave),
            net.pid(victim, Proc::Cometbft)
        ),
        (Some(new.0), Some(new.1)),
        "node{victim}'s pair restarted again after recovering"
    );
    // Every node, the victim included, has committed every reported tx...
    for i in 0..net.nodes {
        net.wait_stave_height(i, max_height, WAIT).await;
    }
    assert_state_everywhere(net, accts).await;
    // ... and every node has the same app hash.
    let h = net.assert_app_hashes_agree(WAIT).await;
    net.wait_status_ok(WAIT).await;
    eprintln!("app hashes agree at common height {h}, node{victim} included");
    done(&name, t);
}

async fn broadcast(net: &Localnet, node: usize, tx: Vec<u8>) -> BroadcastResponse {
    let mut c = net.client(node).await;
    match c.tx.broadcast(BroadcastRequest { tx }).await {
        Ok(r) => r.into_inner(),
        Err(e) => net.fail(&format!("node{node}: Broadcast: {e}")),
    }
}

fn assert_rejected(net: &Localnet, what: &str, r: &BroadcastResponse, want: Code) {
    if r.code != want.value() || r.codespace != stave::tx::CODESPACE {
        net.fail(&format!(
            "{what}: want code {} ({}) in codespace {:?}, got code {} codespace {:?}: {}",
            want.value(),
            want.name(),
            stave::tx::CODESPACE,
            r.code,
            r.codespace,
            r.log
        ));
    }
    eprintln!(
        "{what}: rejected with code {} ({}): {}",
        r.code,
        want.name(),
        r.log
    );
}

async fn step_6_bad_txs_are_rejected_and_change_nothing(
    net: &Localnet,
    accts: &mut [Acct],
    tag: &str,
) {
    let name = "step 6: bad signature (3), wrong chain (4) and wrong nonce (5) are rejected over gRPC; state is unchanged";
    let t = step(name);
    let chain = net.chain_id.clone();
    let acct = &accts[0];
    let nonce = acct.next_nonce;
    assert!(nonce > 1, "account 0 should have committed txs by now");
    let bad_keys: Vec<Vec<u8>> = ["sig", "chain", "nonce-high", "nonce-low", "fresh-sig"]
        .iter()
        .map(|s| format!("bad/{tag}/{s}").into_bytes())
        .collect();

    // 1. A valid tx whose signature is then corrupted.
    let raw = kv_set_tx(
        &acct.key,
        &chain,
        nonce,
        &bad_keys[0],
        b"must not be stored",
    );
    let mut env = stave::proto::tx::Tx::decode(raw.as_slice()).expect("decoding our own tx");
    env.signature[0] ^= 0x01;
    let r = broadcast(net, 0, env.encode_to_vec()).await;
    assert_rejected(
        net,
        "bad signature via node0 Broadcast",
        &r,
        Code::Signature,
    );
    // BroadcastAndWait reports the same CheckTx result and does not wait.
    let mut env2 = stave::proto::tx::Tx::decode(raw.as_slice()).expect("decoding our own tx");
    let last = env2.signature.len() - 1;
    env2.signature[last] ^= 0x80;
    let mut c = net.client(1).await;
    let w =
        c.tx.broadcast_and_wait(BroadcastAndWaitRequest {
            tx: env2.encode_to_vec(),
            timeout_ms: 5_000,
        })
        .await
        .expect("BroadcastAndWait")
        .into_inner();
    assert_rejected(
        net,
        "bad signature via node1 BroadcastAndWait",
        &w.check.clone().unwrap_or_default(),
        Code::Signature,
    );
    assert!(
        !w.committed,
        "a tx rejected at CheckTx is reported committed: {w:?}"
    );

    // 2. Signed for another chain.
    let raw = kv_set_tx(
        &acct.key,
        &format!("{chain}-other"),
        nonce,
        &bad_keys[1],
        b"must not be stored",
    );
    let r = broadcast(net, 2, raw).await;
    assert_rejected(
        net,
        "wrong chain id via node2 Broadcast",
        &r,
        Code::WrongChain,
    );

    // 3. Nonces other than the next one: ahead, and already used.
    let raw = kv_set_tx(
        &acct.key,
        &chain,
        nonce + 1,
        &bad_keys[2],
        b"must not be stored",
    );
    let r = broadcast(net, 3, raw).await;
    assert_rejected(net, "nonce ahead via node3 Broadcast", &r, Code::Nonce);
    let raw = kv_set_tx(
        &acct.key,
        &chain,
        nonce - 1,
        &bad_keys[3],
        b"must not be stored",
    );
    let r = broadcast(net, 0, raw).await;
    assert_rejected(
        net,
        "nonce already used via node0 Broadcast",
        &r,
        Code::Nonce,
    );

    // 4. A fresh key with a bad signature does not create an account.
    let fresh = Acct::fresh();
    let raw = kv_set_tx(&fresh.key, &chain, 0, &bad_keys[4], b"must not be stored");
    let mut env = stave::proto::tx::Tx::decode(raw.as_slice()).expect("decoding our own tx");
    env.signature[10] ^= 0x10;
    let r = broadcast(net, 1, env.encode_to_vec()).await;
    assert_rejected(
        net,
        "bad signature from a fresh key via node1 Broadcast",
        &r,
        Code::Signature,
    );

    // Two more blocks on every node: still nothing of it in state.
    let h = net.max_comet_height().await;
    for i in 0..net.nodes {
        net.wait_stave_height(i, h + 2, WAIT).await;
    }
    for i in 0..net.nodes {
        match net.account(i, &acct.pubkey).await {
            Ok((true, n)) if n == nonce => {}
            other => net.fail(&format!(
                "node{i}: account 0 should still have nonce {nonce}, got {other:?}"
            )),
        }
        match net.account(i, &fresh.pubkey).await {
            Ok((false, _)) => {}
            other => net.fail(&format!(
                "node{i}: the fresh key's account exists after a rejected tx: {other:?}"
            )),
        }
        let mut c = net.client(i).await;
        for k in &bad_keys[..4] {
            match Localnet::kv_get(&mut c, &acct.pubkey, k).await {
                Ok(None) => {}
                other => net.fail(&format!(
                    "node{i}: rejected key {:?} is readable: {other:?}",
                    String::from_utf8_lossy(k)
                )),
            }
        }
        match Localnet::kv_get(&mut c, &fresh.pubkey, &bad_keys[4]).await {
            Ok(None) => {}
            other => net.fail(&format!(
                "node{i}: the fresh key's rejected write is readable: {other:?}"
            )),
        }
    }

    // The nonce is still free: a valid tx with it commits.
    let k = format!("good/{tag}/after-rejects").into_bytes();
    let v = b"accepted after the rejects".to_vec();
    let raw = kv_set_tx(&acct.key, &chain, nonce, &k, &v);
    let w =
        c.tx.broadcast_and_wait(BroadcastAndWaitRequest {
            tx: raw.clone(),
            timeout_ms: TX_COMMIT_TIMEOUT_MS,
        })
        .await
        .expect("BroadcastAndWait")
        .into_inner();
    if !(w.committed && w.code == 0 && w.check.as_ref().map(|c| c.code) == Some(0)) {
        net.fail(&format!(
            "a valid tx with nonce {nonce} after the rejects did not commit: {w:?}"
        ));
    }
    // A client retrying the committed tx gets its commit back at once, from
    // CometBFT's tx index (waiting could never see it: it committed already).
    let again =
        c.tx.broadcast_and_wait(BroadcastAndWaitRequest {
            tx: raw,
            timeout_ms: 60_000,
        })
        .await
        .expect("BroadcastAndWait retry")
        .into_inner();
    if !(again.committed && again.height == w.height && again.code == 0) {
        net.fail(&format!(
            "retrying a committed tx did not report its commit at height {}: {again:?}",
            w.height
        ));
    }
    accts[0].next_nonce += 1;
    accts[0].kv.insert(k, v);
    for i in 0..net.nodes {
        net.wait_stave_height(i, w.height, WAIT).await;
    }
    assert_state_everywhere(net, accts).await;
    done(name, t);
}

async fn step_7_cli_keys_tx_and_query_on_every_node(net: &Localnet, tag: &str) {
    let name = "step 7: CLI `keys add`, `tx kv set` and `query kv get` on every node";
    let t = step(name);
    let keyring = net.scratch.join("keyring");
    let keyring = keyring.to_str().expect("utf-8 path");

    let out = net.stave_cmd(&[
        "--output",
        "json",
        "keys",
        "add",
        "alice",
        "--keyring-dir",
        keyring,
    ]);
    net.expect_success("stave keys add alice", &out);
    let added = net.json_of("stave keys add alice", &out);
    let pubkey = added["pubkey"].as_str().unwrap_or_default().to_string();
    assert_eq!(pubkey.len(), 64, "keys add printed no hex pubkey: {added}");
    let out = net.stave_cmd(&[
        "--output",
        "json",
        "keys",
        "show",
        "alice",
        "--keyring-dir",
        keyring,
    ]);
    net.expect_success("stave keys show alice", &out);
    assert_eq!(
        net.json_of("stave keys show", &out)["pubkey"],
        added["pubkey"],
        "keys show disagrees with keys add"
    );

    // Two txs, through two different nodes.
    let entries = [
        ("greeting", format!("hello from the CLI {tag}"), 0usize),
        ("second", format!("second value {tag}"), 3usize),
    ];
    let mut last_height = 0;
    for (i, (key, value, node)) in entries.iter().enumerate() {
        // The CLI takes the nonce from the node's committed state: let the
        // node see the previous tx first.
        net.wait_stave_height(*node, last_height, WAIT).await;
        let url = net.grpc_url(*node);
        let args = [
            "--output",
            "json",
            "tx",
            "kv",
            "set",
            key,
            value,
            "--from",
            "alice",
            "--node",
            &url,
            "--keyring-dir",
            keyring,
        ];
        let out = net.stave_cmd(&args);
        let what = format!("stave tx kv set {key} via node{node}");
        net.expect_success(&what, &out);
        let r = net.json_of(&what, &out);
        if r["committed"] != true
            || r["code"] != 0
            || r["check_code"] != 0
            || r["nonce"] != i as u64
        {
            net.fail(&format!("{what}: not committed as expected: {r}"));
        }
        last_height = r["height"].as_u64().unwrap_or(0);
        assert!(last_height > 0, "{what}: no commit height in {r}");
    }

    for node in 0..net.nodes {
        net.wait_stave_height(node, last_height, WAIT).await;
        let url = net.grpc_url(node);
        for (key, value, _) in &entries {
            let out = net.stave_cmd(&[
                "--output",
                "json",
                "query",
                "kv",
                "get",
                "alice",
                key,
                "--node",
                &url,
                "--keyring-dir",
                keyring,
            ]);
            let what = format!("stave query kv get alice {key} on node{node}");
            net.expect_success(&what, &out);
            let r = net.json_of(&what, &out);
            if r["found"] != true || r["value"] != value.as_str() {
                net.fail(&format!("{what}: want value {value:?}, got {r}"));
            }
        }
        // A missing key: found=false and a failing exit status.
        let out = net.stave_cmd(&[
            "--output",
            "json",
            "query",
            "kv",
            "get",
            "alice",
            "no-such-key",
            "--node",
            &url,
            "--keyring-dir",
            keyring,
        ]);
        assert!(
            !out.status.success(),
            "node{node}: query of a missing key exited 0"
        );
        assert_eq!(net.json_of("query of a missing key", &out)["found"], false);
        // The account (by hex pubkey) has used two nonces.
        let out = net.stave_cmd(&[
            "--output", "json", "query", "account", &pubkey, "--node", &url,
        ]);
        net.expect_success("stave query account", &out);
        let r = net.json_of("stave query account", &out);
        assert_eq!(
            (r["found"].clone(), r["nonce"].clone()),
            (serde_json::Value::from(true), serde_json::Value::from(2)),
            "node{node}: account {r}"
        );
    }
    done(name, t);
}

/// `stave query validators` on `node`: operator key → (address,
/// client_endpoint).
fn published_endpoints(net: &Localnet, node: usize) -> BTreeMap<String, (String, String)> {
    let url = net.grpc_url(node);
    let out = net.stave_cmd(&["--output", "json", "query", "validators", "--node", &url]);
    net.expect_success("stave query validators", &out);
    let r = net.json_of("stave query validators", &out);
    let list = r["validators"].as_array().cloned().unwrap_or_default();
    list.iter()
        .map(|v| {
            let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
            (s("operator_key"), (s("address"), s("client_endpoint")))
        })
        .collect()
}

async fn step_8_validators_publish_their_client_endpoints(net: &Localnet) {
    let name = "step 8: every validator's client endpoint is in chain state and answers; \
                `tx validator endpoints` replaces one";
    let t = step(name);
    let operator = |i: usize| -> String {
        let path = net.stave_home(i).join("config/genesis-fragment.json");
        let text = std::fs::read_to_string(&path).expect("genesis fragment");
        let v: serde_json::Value = serde_json::from_str(&text).expect("fragment JSON");
        v["operator_key"].as_str().unwrap_or_default().to_string()
    };
    let listed = published_endpoints(net, 0);
    assert_eq!(listed.len(), net.nodes, "{listed:?}");
    for i in 0..net.nodes {
        let want = (net.peer_addr(i), format!("127.0.0.1:{}", net.port(i)));
        assert_eq!(listed.get(&operator(i)), Some(&want), "node{i}");
        // a client needs nothing but chain state to reach the node
        let mut c = StaveClient::connect(&format!("http://{}", want.1))
            .await
            .unwrap_or_else(|e| net.fail(&format!("node{i} at {}: {e}", want.1)));
        let s = c
            .query
            .status(stave::proto::query::StatusRequest {})
            .await
            .unwrap_or_else(|e| net.fail(&format!("status of node{i} at {}: {e}", want.1)));
        assert_eq!(s.into_inner().chain_id, net.chain_id);
    }
    // node3 publishes `localhost` instead; the CLI keeps its peer address
    let node = 3;
    let moved = format!("localhost:{}", net.port(node));
    let home = net.stave_home(node);
    let home = home.to_str().expect("utf-8 path");
    let url = net.grpc_url(node);
    let out = net.stave_cmd(&[
        "--output",
        "json",
        "tx",
        "validator",
        "endpoints",
        "--client-endpoint",
        &moved,
        "--home",
        home,
        "--node",
        &url,
    ]);
    net.expect_success("stave tx validator endpoints", &out);
    let r = net.json_of("stave tx validator endpoints", &out);
    let height = r["height"].as_u64().unwrap_or(0);
    assert!(r["committed"] == true && r["code"] == 0, "{r}");
    net.wait_stave_height(0, height, WAIT).await;
    let listed = published_endpoints(net, 0);
    assert_eq!(
        listed.get(&operator(node)),
        Some(&(net.peer_addr(node), moved)),
        "{listed:?}"
    );
    done(name, t);
}

// -------------------------------------------------------------------------
// InitChain repeated after a crash before block 1

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_chain_repeats_after_crash_before_block_1() {
    let Some(bins) = binaries("init_chain_repeats_after_crash_before_block_1") else {
        return;
    };
    let started = Instant::now();
    let net = Localnet::new(&bins, LocalnetConfig::new(2, 12000));
    const GENESIS_LOG: &str = "genesis committed";

    // Homes, keys and a 2-validator genesis from the script; the genesis app
    // hash is the app hash in block 1's header.
    let name =
        "genesis step 1: a 2-validator network comes up; block 1 carries the genesis app hash";
    let t = step(name);
    net.up();
    let g0 = match net.block_app_hash(0, 1).await {
        Ok(h) => h,
        Err(e) => net.fail(&e),
    };
    assert_eq!(g0.len(), 64, "block 1 app hash {g0:?}");
    assert_eq!(net.block_app_hash(1, 1).await.as_deref(), Ok(g0.as_str()));
    done(name, t);

    let name = "genesis step 2: stop; wipe both nodes back to before genesis (cometbft unsafe-reset-all, stave reset)";
    let t = step(name);
    net.down();
    for i in 0..net.nodes {
        let comet_home = net.comet_home(i);
        let out = net.cometbft_cmd(&[
            "unsafe-reset-all",
            "--home",
            comet_home.to_str().expect("utf-8"),
        ]);
        net.expect_success(&format!("cometbft unsafe-reset-all node{i}"), &out);
        let stave_home = net.stave_home(i);
        let out = net.stave_cmd(&["reset", "--home", stave_home.to_str().expect("utf-8")]);
        net.expect_success(&format!("stave reset node{i}"), &out);
    }
    done(name, t);

    // Only node0 runs: it holds half the voting power, so CometBFT runs
    // InitChain but can never commit block 1.
    let name = "genesis step 3: only node0 runs: InitChain commits genesis (height 0), no block 1";
    let t = step(name);
    let logged = net.count_in_log(0, "stave", GENESIS_LOG);
    net.restart(0);
    let g1 = wait_genesis_only(&net, logged + 1).await;
    assert!(
        g1.eq_ignore_ascii_case(&g0),
        "InitChain after a reset gives {g1}, the first run gave {g0}"
    );
    done(name, t);

    let name = "genesis step 4: SIGKILL node0's Stave before block 1; InitChain runs again with the same app hash";
    let t = step(name);
    let old = (net.pid(0, Proc::Stave), net.pid(0, Proc::Cometbft));
    net.kill(0, Proc::Stave);
    net.wait_pair_restarted(0, old, WAIT).await;
    let g2 = wait_genesis_only(&net, logged + 2).await;
    assert!(
        g2.eq_ignore_ascii_case(&g0),
        "InitChain after a Stave crash gives {g2}, before it gave {g0}"
    );
    done(name, t);

    let name = "genesis step 5: SIGKILL node0's CometBFT before block 1; InitChain runs again with the same app hash";
    let t = step(name);
    let old = (net.pid(0, Proc::Stave), net.pid(0, Proc::Cometbft));
    net.kill(0, Proc::Cometbft);
    net.wait_pair_restarted(0, old, WAIT).await;
    let g3 = wait_genesis_only(&net, logged + 3).await;
    assert!(
        g3.eq_ignore_ascii_case(&g0),
        "InitChain after a CometBFT crash gives {g3}, before it gave {g0}"
    );
    done(name, t);

    let name = "genesis step 6: node1 joins; blocks commit; block 1 carries the genesis app hash on both nodes";
    let t = step(name);
    net.restart(1);
    net.wait_all_comet_height(3, WAIT).await;
    for i in 0..net.nodes {
        match net.block_app_hash(i, 1).await {
            Ok(h) if h.eq_ignore_ascii_case(&g0) => {}
            other => net.fail(&format!(
                "node{i}: block 1 app hash {other:?}, want the genesis app hash {g0}"
            )),
        }
    }
    let h = net.assert_app_hashes_agree(WAIT).await;
    net.wait_status_ok(WAIT).await;
    eprintln!("both validators agree at height {h}");
    done(name, t);

    eprintln!(
        "init_chain_repeats_after_crash_before_block_1: all steps passed in {:.1}s",
        started.elapsed().as_secs_f64()
    );
}

/// Waits until node0's Stave has logged `want_logged` genesis commits and
/// reports height 0 with a genesis app hash over gRPC, while its CometBFT
/// has no block. Returns the app hash (hex).
async fn wait_genesis_only(net: &Localnet, want_logged: usize) -> String {
    let s = net
        .wait_for(
            &format!("node0 Stave to commit genesis (InitChain #{want_logged} in its log)"),
            WAIT,
            || async move {
                let logged = net.count_in_log(0, "stave", "genesis committed");
                if logged < want_logged {
                    return Err(format!("{logged} InitChain(s) logged"));
                }
                let s = net.stave_status(0).await?;
                if s.chain_id != net.chain_id || s.app_hash.len() != 64 {
                    return Err(format!("Status {s:?}"));
                }
                Ok(s)
            },
        )
        .await;
    let logged = net.count_in_log(0, "stave", "genesis committed");
    assert_eq!(
        logged, want_logged,
        "node0 ran InitChain {logged} times, want {want_logged}"
    );
    assert_eq!(
        s.height, 0,
        "node0 Stave committed a block without a quorum: {s:?}"
    );
    // CometBFT serves RPC only after its handshake (InitChain): wait for it.
    let h = net
        .wait_for("node0 CometBFT RPC", WAIT, || async move {
            net.comet_height(0).await
        })
        .await;
    assert_eq!(
        h, 0,
        "node0 CometBFT committed a block with half the voting power"
    );
    s.app_hash
}
