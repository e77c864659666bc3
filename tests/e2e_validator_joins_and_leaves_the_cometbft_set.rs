//! On a real 4-validator localnet, a 5th Stave+CometBFT pair added with
//! `testnet add-node` runs as a full node, applies with `stave tx validator
//! apply`, and is admitted by 3 of the 4 validators. CometBFT's own
//! `/validators` then lists 5, and the new validator's signature appears in
//! block commits. It leaves; after the unbonding period `/validators` lists
//! 4 again. Blocks keep coming throughout, and all 5 nodes agree on the app
//! hash at the end.

mod common;

use std::time::{Duration, Instant};

use common::localnet::*;
use serde_json::{json, Value};

const BASE_PORT: u16 = 14000;
const NEW: usize = 4;

/// Fails unless node 0's height moved within `stall`: the network never stalls.
async fn assert_progress(net: &Localnet, last: &mut (u64, Instant), stall: Duration) {
    let h = net.comet_height(0).await.unwrap_or(last.0);
    if h > last.0 {
        *last = (h, Instant::now());
    } else if last.1.elapsed() > stall {
        net.fail(&format!("the network stalled at height {h} for {stall:?}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifth_node_is_elected_signs_blocks_and_leaves() {
    let Some(bins) = binaries("fifth_node_is_elected_signs_blocks_and_leaves") else {
        return;
    };
    let net = Localnet::new(&bins, LocalnetConfig::new(4, BASE_PORT));
    net.up();
    let added: Value = serde_json::from_str(&net.script_ok(&["add-node"]))
        .unwrap_or_else(|e| net.fail(&format!("add-node output is not JSON: {e}")));
    let stave_home = added["stave_home"].as_str().unwrap().to_string();
    let comet_home = added["comet_home"].as_str().unwrap().to_string();
    let operator = added["operator_key"].as_str().unwrap().to_string();
    assert_eq!(stave_home, net.stave_home(NEW).display().to_string());
    let key_file: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{comet_home}/config/priv_validator_key.json")).unwrap(),
    )
    .unwrap();
    let address = key_file["address"].as_str().unwrap().to_string();
    assert_eq!(net.comet_validators(0).await.unwrap().len(), 4);
    assert!(!net.comet_validators(0).await.unwrap().contains(&address));
    let mut last = (net.comet_height(0).await.unwrap_or(0), Instant::now());
    let stall = Duration::from_secs(30);

    // The full node applies through its own Stave.
    let grpc_new = net.grpc_url(NEW);
    let r = net.stave_json(
        "validator apply",
        &[
            "tx",
            "validator",
            "apply",
            "--home",
            &stave_home,
            "--comet-home",
            &comet_home,
            "--address",
            &format!("127.0.0.1:{}", net.port(NEW)),
            "--jurisdiction",
            "DE",
            "--identity",
            "node4",
            "--node",
            &grpc_new,
        ],
    );
    assert_eq!(r["code"], json!(0), "{r}");
    // 3 of the 4 validators approve, each through its own node, once that
    // node has the previous vote: `stave tx` simulates on it, and the vote
    // that decides the election costs more than one that does not. The
    // first waits for the application's block: node 4 answered for it.
    let mut previous = r["height"].as_u64().unwrap_or(0);
    for i in 0..3 {
        net.wait_stave_height(i, previous, Duration::from_secs(60))
            .await;
        let home = net.stave_home(i).display().to_string();
        let r = net.stave_json(
            "validator vote",
            &[
                "tx",
                "validator",
                "vote",
                &operator,
                "--home",
                &home,
                "--node",
                &net.grpc_url(i),
            ],
        );
        assert_eq!(r["code"], json!(0), "{r}");
        previous = r["height"].as_u64().unwrap_or(0);
        assert_progress(&net, &mut last, stall).await;
    }
    // Node 0 answers once it has the deciding vote's block (it may lag).
    net.wait_stave_height(0, previous, Duration::from_secs(60))
        .await;
    let v = net.stave_json(
        "query validator",
        &["query", "validator", &operator, "--node", &net.grpc_url(0)],
    );
    assert_eq!(v["validator"]["status"], json!("ACTIVE"), "{v}");

    net.wait_for(
        "CometBFT to list 5 validators",
        Duration::from_secs(60),
        || async {
            let vals = net.comet_validators(0).await?;
            if vals.len() == 5 && vals.contains(&address) {
                Ok(())
            } else {
                Err(format!("{vals:?}"))
            }
        },
    )
    .await;
    let signed_at = net.wait_signed_by(&address, Duration::from_secs(60)).await;
    eprintln!("node{NEW} signed the commit of height {signed_at}");
    assert_progress(&net, &mut last, stall).await;

    // It leaves: UNBONDING for the unbonding period, then out of the set.
    let r = net.stave_json(
        "validator leave",
        &[
            "tx",
            "validator",
            "leave",
            "--home",
            &stave_home,
            "--node",
            &grpc_new,
        ],
    );
    assert_eq!(r["code"], json!(0), "{r}");
    net.wait_for(
        "CometBFT to list 4 validators again",
        Duration::from_secs(120),
        || async {
            let vals = net.comet_validators(0).await?;
            if vals.len() == 4 && !vals.contains(&address) {
                Ok(())
            } else {
                Err(format!("{vals:?}"))
            }
        },
    )
    .await;
    let v = net.stave_json(
        "query validator",
        &["query", "validator", &operator, "--node", &net.grpc_url(0)],
    );
    assert_eq!(v["validator"]["status"], json!("REMOVED"), "{v}");
    assert_eq!(v["validator"]["comet_power"], json!(0), "{v}");

    // Blocks keep coming with 4 validators, and every node (the 5th too) agrees.
    let h = net.comet_height(0).await.unwrap();
    net.wait_comet_height(0, h + 3, Duration::from_secs(30))
        .await;
    net.wait_comet_height(NEW, h + 3, Duration::from_secs(30))
        .await;
    let common = net.assert_app_hashes_agree(Duration::from_secs(30)).await;
    // the four of `net.nodes` agree on `common`; the 5th may be a block behind
    net.wait_comet_height(NEW, common, Duration::from_secs(30))
        .await;
    let a = net.block_app_hash(NEW, common).await.unwrap();
    let b = net.block_app_hash(0, common).await.unwrap();
    assert_eq!(a, b, "node{NEW} agrees at height {common}");
}
