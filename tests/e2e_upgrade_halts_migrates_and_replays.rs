//! Issue 28, coordinated upgrades, on a 4-validator localnet:
//! 1. three of four validators vote `ScheduleUpgrade` (`stave tx validator
//!    upgrade`), which schedules it; refusals get code 213 or 200;
//! 2. the chain stops at the height: each node that gets the block exits 3
//!    ("UPGRADE NEEDED"), since the release binary knows no migration; one
//!    that had not received the decision when those stopped stays below;
//! 3. they restart on a binary built with `--features upgrade-test`, whose
//!    migration `stave-test-v2` adds a field to every kvdb entry and whose
//!    version-2 rules write it on new entries;
//! 4. they continue with equal app hashes, report app version 2 in Info and
//!    in block headers, and refuse the same upgrade again.
//!
//! A 5th node then joins with the new binary and syncs from genesis across
//! the upgrade: it replays the old blocks under version 1's rules (an entry
//! read at a height before the upgrade has no field) and reaches the same app
//! hashes.
//!
//! The upgrade binary comes from `STAVE_UPGRADE_BIN` (`scripts/test` builds
//! it); under `CI=true` a missing one fails the test.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use base64::Engine;
use common::localnet::{binaries, in_ci, Localnet, LocalnetConfig};
use serde_json::{json, Value};

const BASE_PORT: u16 = 31000;
const NAME: &str = "stave-test-v2";
const KV_SEED: u8 = 61;
const WAIT: Duration = Duration::from_secs(120);

fn upgrade_bin() -> Option<PathBuf> {
    let p = std::env::var("STAVE_UPGRADE_BIN")
        .ok()
        .filter(|v| !v.is_empty());
    match p.map(PathBuf::from).filter(|p| p.is_file()) {
        Some(p) => Some(p),
        None if in_ci() => panic!(
            "STAVE_UPGRADE_BIN is not an executable built with --features upgrade-test \
             (scripts/test builds it). CI=true: this test must run"
        ),
        None => {
            eprintln!("NOTICE: skipping: set STAVE_UPGRADE_BIN (scripts/test builds it)");
            None
        }
    }
}

fn vote_args(net: &Localnet, node: usize, height: u64) -> Vec<String> {
    let home = net.stave_home(node).display().to_string();
    [
        "--output",
        "json",
        "tx",
        "validator",
        "upgrade",
        NAME,
        "--height",
        &height.to_string(),
        "--app-version",
        "2",
        "--home",
        &home,
        "--node",
        &net.grpc_url(node),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn vote(net: &Localnet, node: usize, height: u64) -> Value {
    let args = vote_args(net, node, height);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    net.stave_json("validator upgrade", &args)
}

/// A vote the node refuses (the CLI's simulation fails): its stderr.
fn vote_refused(net: &Localnet, node: usize, height: u64) -> String {
    let args = vote_args(net, node, height);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = net.stave_cmd(&args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success(),
        "vote at {height} was accepted: {err}"
    );
    assert!(err.contains("code 213 (UPGRADE_REFUSED)"), "{err}");
    err
}

/// Commits kv.Set `key` by the test signer at `nonce` through `node`.
async fn kv_set(net: &Localnet, node: usize, nonce: u64, key: &str) -> u64 {
    let signer = ed25519_dalek::SigningKey::from_bytes(&[KV_SEED; 32]);
    let set = stave::tx::Action::KvSet(stave::keyspaces::kv::KvSet {
        key: key.as_bytes().to_vec(),
        value: b"v".to_vec(),
    });
    let tx = stave::tx::build::sign_tx(&signer, &net.chain_id, nonce, vec![set], "");
    net.commit_tx(node, tx, key).await
}

/// The test signer's next nonce on node 0 (as far as node 0 has committed).
async fn next_nonce(net: &Localnet) -> u64 {
    let signer = ed25519_dalek::SigningKey::from_bytes(&[KV_SEED; 32]);
    match net.account(0, &signer.verifying_key().to_bytes()).await {
        Ok((_, n)) => n,
        Err(e) => net.fail(&e),
    }
}

/// The raw stored bytes of the kvdb entry `key` of the test signer, read
/// through node `node`'s CometBFT at `height` (0: latest).
async fn stored_entry(net: &Localnet, node: usize, key: &str, height: u64) -> Vec<u8> {
    let owner = ed25519_dalek::SigningKey::from_bytes(&[KV_SEED; 32])
        .verifying_key()
        .to_bytes();
    let raw_key = stave::keyspaces::kv::keys::kvdb_key(&owner, "default", key.as_bytes());
    let r = net
        .comet(node)
        .raw(
            "abci_query",
            json!({"path": "/store", "data": hex::encode(raw_key), "height": height.to_string(), "prove": false}),
        )
        .await
        .unwrap_or_else(|e| net.fail(&format!("abci_query {key} on node{node}: {e:#}")));
    let resp = &r["response"];
    if resp["code"] != json!(0) {
        net.fail(&format!(
            "abci_query {key} at {height} on node{node}: {resp}"
        ));
    }
    base64::engine::general_purpose::STANDARD
        .decode(resp["value"].as_str().unwrap_or_default())
        .unwrap_or_else(|e| net.fail(&format!("value of {key} is not base64: {e}")))
}

/// Field 100 of an encoded entry: the test migration's field.
fn added_field(mut raw: &[u8]) -> Option<u64> {
    use prost::encoding::{decode_key, decode_varint, skip_field, DecodeContext, WireType};
    let mut found = None;
    while !raw.is_empty() {
        let (tag, wire) = decode_key(&mut raw).expect("a protobuf field key");
        if tag == 100 && wire == WireType::Varint {
            found = Some(decode_varint(&mut raw).expect("a varint"));
        } else {
            skip_field(wire, tag, &mut raw, DecodeContext::default()).expect("a field");
        }
    }
    found
}

async fn comet_json(net: &Localnet, node: usize, method: &str, params: Value) -> Value {
    net.comet(node)
        .raw(method, params)
        .await
        .unwrap_or_else(|e| net.fail(&format!("{method} on node{node}: {e:#}")))
}

/// The app version in block `height`'s header on `node`.
async fn header_app_version(net: &Localnet, node: usize, height: u64) -> String {
    let b = comet_json(net, node, "block", json!({"height": height.to_string()})).await;
    b["block"]["header"]["version"]["app"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Whether node `i`'s supervisor and Stave logged the upgrade stop.
fn halted(net: &Localnet, i: usize) -> bool {
    net.count_in_log(i, "supervisor", "stopped at an upgrade") > 0
        && net.count_in_log(i, "stave", "UPGRADE NEEDED") > 0
}

/// Waits until the chain stopped at the upgrade. A validator that runs block
/// `height` logs the stop and exits 5 s later (so that its votes get out);
/// one that was behind and had not received the decision by then can no
/// longer get it, as on a live network: it stays below the height until its
/// peers come back. Such a node is stopped here once its
/// height holds still, so that every node restarts on the new binary.
async fn wait_halted(net: &Localnet, height: u64) {
    net.wait_for("a validator to stop for the upgrade", WAIT, || async move {
        (0..net.nodes)
            .any(|i| halted(net, i))
            .then_some(())
            .ok_or_else(|| "none stopped".to_string())
    })
    .await;
    for i in 0..net.nodes {
        if halted(net, i) || stalled_below(net, i, height).await {
            let log = net.log_tail(i, "stave", 40);
            let needle = format!("scheduled for height {height}");
            assert!(log.contains(&needle), "node{i}: no {needle:?} in\n{log}");
        } else {
            eprintln!("node{i} stalled below {height}: stopping it");
            net.stop(i);
        }
    }
}

/// Waits until node `i` either logs the upgrade stop (true) or holds still
/// at a height below `height` for 8 s (false: longer than the 5 s a
/// stopping node stays up, so a straggler that can still get the block
/// does).
async fn stalled_below(net: &Localnet, i: usize, height: u64) -> bool {
    let seen = std::cell::Cell::new(None::<(u64, std::time::Instant)>);
    let seen = &seen;
    net.wait_for(
        &format!("node{i} to stop for the upgrade or stall below {height}"),
        WAIT,
        || async move {
            if halted(net, i) {
                return Ok(true);
            }
            let h = net.comet_height(i).await?;
            if h >= height {
                // CometBFT stores the block before Stave runs it: about to stop
                return Err(format!("at {h}, Stave not yet stopped"));
            }
            match seen.get() {
                Some((last, since)) if last == h && since.elapsed() >= Duration::from_secs(8) => {
                    Ok(false)
                }
                Some((last, _)) if last == h => Err(format!("at {h}")),
                _ => {
                    seen.set(Some((h, std::time::Instant::now())));
                    Err(format!("at {h}"))
                }
            }
        },
    )
    .await
}

/// Puts the upgrade binary where every node's supervisor starts stave
/// from (a rename: the old file may still be mapped).
fn install(net: &Localnet, bin: &PathBuf) {
    let tmp = net.stave_bin.with_extension("new");
    std::fs::copy(bin, &tmp).unwrap_or_else(|e| net.fail(&format!("copying {bin:?}: {e}")));
    std::fs::rename(&tmp, &net.stave_bin).unwrap_or_else(|e| net.fail(&format!("installing: {e}")));
}

async fn refused(net: &Localnet, nonce: u64, height: u64, want: u32) -> String {
    let key = ed25519_dalek::SigningKey::from_bytes(&[KV_SEED; 32]);
    let action = stave::tx::Action::ScheduleUpgrade(stave::keyspaces::upgrades::ScheduleUpgrade {
        name: NAME.into(),
        height,
        app_version: 2,
    });
    let tx = stave::tx::build::sign_tx(&key, &net.chain_id, nonce, vec![action], "");
    let r = net
        .client(0)
        .await
        .tx
        .broadcast_and_wait(stave::proto::tx::BroadcastAndWaitRequest {
            tx,
            timeout_ms: 60_000,
        })
        .await
        .unwrap_or_else(|e| net.fail(&format!("BroadcastAndWait: {e}")))
        .into_inner();
    assert_eq!(r.code, want, "{r:?}");
    r.log
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_halts_every_node_migrates_and_a_new_node_replays_across_it() {
    let Some(bins) = binaries("upgrade_halts_every_node_migrates_and_a_new_node_replays_across_it")
    else {
        return;
    };
    let Some(new_bin) = upgrade_bin() else {
        return;
    };
    common::localnet::assert_below_ephemeral(BASE_PORT, BASE_PORT as u32 + 50);
    let net = Localnet::new(&bins, LocalnetConfig::new(4, BASE_PORT));
    net.up();
    net.commit_kv_txs(0, KV_SEED, "pre", 2).await;

    // 1. The vote. A validator's first vote proposes; refusals first.
    let now = net.max_comet_height().await;
    let log = refused(&net, next_nonce(&net).await, now + 30, 200).await;
    assert!(log.contains("not an ACTIVE validator"), "{log}");
    // node 0 answered the refused tx after its commit (or its CheckTx)
    let mut nonce = next_nonce(&net).await;
    // room for one refused tx, three CLI votes and a kv tx on 2 busy cores
    let at = now + 40;
    let err = vote_refused(&net, 0, 1);
    assert!(err.contains("is not above the current height"), "{err}");
    let mut last = 0;
    for i in 0..3 {
        net.wait_stave_height(i, last, WAIT).await;
        let r = vote(&net, i, at);
        assert_eq!(r["code"], json!(0), "vote {i}: {r}");
        last = r["height"]
            .as_u64()
            .unwrap_or_else(|| net.fail(&format!("vote {i}: no height in {r}")));
    }
    net.wait_stave_height(0, last, WAIT).await;
    let u = net.stave_json(
        "query upgrades",
        &["query", "upgrades", "--node", &net.grpc_url(0)],
    );
    assert_eq!(u["scheduled"]["name"], json!(NAME), "{u}");
    assert_eq!(u["scheduled"]["height"], json!(at), "{u}");
    assert_eq!(u["app_version"], json!(1), "{u}");
    assert!(
        last < at,
        "the vote passed at {last}, after the upgrade height {at}"
    );
    // written under version 1's rules, after the vote
    let mid = kv_set(&net, 1, nonce, "mid/0").await;
    nonce += 1;
    assert!(
        mid < at,
        "mid/0 committed at {mid}, not before the upgrade at {at}"
    );

    // 2. The chain stops at the height: every node that got block `at`
    //    stopped on its own, a straggler stays below it.
    wait_halted(&net, at).await;

    // 3. The binary with the migration.
    install(&net, &new_bin);
    for i in 0..net.nodes {
        net.restart(i);
    }
    net.wait_all_comet_height(at + 2, WAIT).await;
    let post = kv_set(&net, 2, nonce, "post/0").await;

    // 4. Equal app hashes, version 2 everywhere, the field where it belongs.
    let common = net.assert_app_hashes_agree(WAIT).await;
    assert!(
        common > post,
        "common height {common} not past the post tx at {post}"
    );
    for i in 0..net.nodes {
        assert_eq!(
            net.count_in_log(i, "stave", "upgrade applied"),
            1,
            "node{i} ran the migration once"
        );
        let info = comet_json(&net, i, "abci_info", json!({})).await;
        assert_eq!(
            info["response"]["app_version"],
            json!("2"),
            "node{i}: {info}"
        );
    }
    assert_eq!(header_app_version(&net, 0, at).await, "1");
    assert_eq!(header_app_version(&net, 0, at + 1).await, "2");
    let results = comet_json(&net, 0, "block_results", json!({"height": at.to_string()})).await;
    assert!(
        results.to_string().contains("upgrade.applied"),
        "no upgrade.applied event at {at}: {results}"
    );
    let before = stored_entry(&net, 0, "pre/0", at - 1).await;
    assert_eq!(
        added_field(&before),
        None,
        "pre/0 had no field before the upgrade"
    );
    assert_eq!(
        added_field(&stored_entry(&net, 0, "pre/0", 0).await),
        Some(1)
    );
    assert_eq!(
        added_field(&stored_entry(&net, 0, "mid/0", 0).await),
        Some(1)
    );
    assert_eq!(
        added_field(&stored_entry(&net, 0, "post/0", 0).await),
        Some(2)
    );
    let u = net.stave_json(
        "query upgrades",
        &["query", "upgrades", "--node", &net.grpc_url(1)],
    );
    assert_eq!(u["app_version"], json!(2), "{u}");
    assert_eq!(u["scheduled"], json!(null), "{u}");
    assert_eq!(u["applied"][0]["name"], json!(NAME), "{u}");
    assert_eq!(u["applied"][0]["height"], json!(at), "{u}");
    assert_eq!(
        u["proposals"],
        json!([]),
        "an applied upgrade drops every proposal: {u}"
    );
    let top = net.max_comet_height().await;
    let err = vote_refused(&net, 3, top + 20);
    assert!(err.contains("already ran"), "the migration ran: {err}");

    // 5. A new node syncs from genesis on the new binary, across the upgrade.
    let added: Value = serde_json::from_str(&net.script_ok(&["add-node"]))
        .unwrap_or_else(|e| net.fail(&format!("add-node output is not JSON: {e}")));
    assert!(added["stave_home"].is_string(), "{added}");
    let new = net.nodes;
    let top = net.comet_height(0).await.unwrap_or(0);
    net.wait_comet_height(new, top, WAIT).await;
    // what node 4's own Stave computed, against the chain's headers
    // (CometBFT stores a block before its app has it)
    net.wait_stave_height(new, top, WAIT).await;
    let info = comet_json(&net, new, "abci_info", json!({})).await;
    let mine = info["response"]["last_block_app_hash"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let h: u64 = info["response"]["last_block_height"]
        .as_str()
        .and_then(|h| h.parse().ok())
        .unwrap_or_else(|| net.fail(&format!("abci_info of node{new}: {info}")));
    assert!(h >= top, "node{new}'s Stave at {h}, below {top}");
    net.wait_comet_height(0, h + 1, WAIT).await;
    let header = net
        .block_app_hash(0, h + 1)
        .await
        .unwrap_or_else(|e| net.fail(&e));
    let mine = hex::encode_upper(
        base64::engine::general_purpose::STANDARD
            .decode(&mine)
            .unwrap_or_else(|e| net.fail(&format!("app hash {mine:?}: {e}"))),
    );
    assert!(
        header.eq_ignore_ascii_case(&mine),
        "node{new}'s Stave app hash at {h} is {mine}; node0's header {} says {header}",
        h + 1
    );
    assert_eq!(info["response"]["app_version"], json!("2"), "{info}");
    let before = stored_entry(&net, new, "pre/0", at - 1).await;
    assert_eq!(
        added_field(&before),
        None,
        "node{new} replayed old blocks under new rules"
    );
    assert_eq!(
        added_field(&stored_entry(&net, new, "post/0", 0).await),
        Some(2)
    );
    assert_eq!(net.count_in_log(new, "stave", "UPGRADE NEEDED"), 0);
    assert_eq!(net.count_in_log(new, "stave", "upgrade applied"), 1);
}
