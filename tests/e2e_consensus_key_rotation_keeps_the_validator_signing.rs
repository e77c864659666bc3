//! Issue 28, consensus-key rotation on a 4-validator localnet. Node 3's
//! operator makes a new key with `cometbft init` and sends
//! `stave tx validator rotate-consensus-key --new-comet-home`. CometBFT's own
//! `/validators` then drops the old address and lists the new one, moved
//! within the power-change rule. Once the record shows the new key at its
//! power, the operator stops the node, keeps the old key file, installs the
//! new `priv_validator_key.json` and starts it: the validator signs commits
//! under its new address, blocks keep coming, and every node agrees on the
//! app hash. The record shows the new key and the retired one.

mod common;

use std::path::Path;
use std::time::Duration;

use common::localnet::*;
use serde_json::{json, Value};

const BASE_PORT: u16 = 32000;
const NODE: usize = 3;
const WAIT: Duration = Duration::from_secs(90);

/// (address, base64 public key) of a `priv_validator_key.json`.
fn key_of(net: &Localnet, file: &Path) -> (String, String) {
    let text = std::fs::read_to_string(file)
        .unwrap_or_else(|e| net.fail(&format!("reading {file:?}: {e}")));
    let v: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| net.fail(&format!("{file:?} is not JSON: {e}")));
    let field = |f: &Value| f.as_str().map(str::to_string);
    match (field(&v["address"]), field(&v["pub_key"]["value"])) {
        (Some(a), Some(k)) => (a, k),
        _ => net.fail(&format!("{file:?} has no address or pub_key: {v}")),
    }
}

/// Waits until CometBFT's set (as node 0 sees it) lists `present` and not
/// `absent`, with 4 members.
async fn wait_set(net: &Localnet, present: &str, absent: &str) {
    net.wait_for(
        &format!("CometBFT's set to list {present} and not {absent}"),
        WAIT,
        || async {
            let vals = net.comet_validators(0).await?;
            let has = |a: &str| vals.iter().any(|v| v == a);
            (vals.len() == 4 && has(present) && !has(absent))
                .then_some(())
                .ok_or_else(|| format!("{vals:?}"))
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_validator_rotates_its_consensus_key_and_keeps_signing() {
    let Some(bins) = binaries("a_validator_rotates_its_consensus_key_and_keeps_signing") else {
        return;
    };
    assert_below_ephemeral(BASE_PORT, BASE_PORT as u32 + 50);
    let net = Localnet::new(&bins, LocalnetConfig::new(4, BASE_PORT));
    net.up();
    let key_file = net.comet_home(NODE).join("config/priv_validator_key.json");
    let (old, old_pub) = key_of(&net, &key_file);
    let new_home = net.node_dir(NODE).join("new-comet");
    let home = new_home.display().to_string();
    let out = net.cometbft_cmd(&["init", "--home", &home]);
    net.expect_success("cometbft init", &out);
    let new_file = new_home.join("config/priv_validator_key.json");
    let (new, new_pub) = key_of(&net, &new_file);
    let signed = net.wait_signed_by(&old, WAIT).await;
    eprintln!("node{NODE} signed height {signed} under {old}");

    // The rotation, sent by node 3's operator through its own Stave.
    let stave_home = net.stave_home(NODE).display().to_string();
    let r = net.stave_json(
        "validator rotate-consensus-key",
        &[
            "tx",
            "validator",
            "rotate-consensus-key",
            "--new-comet-home",
            &home,
            "--home",
            &stave_home,
            "--node",
            &net.grpc_url(NODE),
        ],
    );
    assert_eq!(r["code"], json!(0), "{r}");
    let at = r["height"]
        .as_u64()
        .unwrap_or_else(|| net.fail(&format!("no height in {r}")));

    // CometBFT moves the power: the old address leaves, the new one joins
    // and reaches the record's power, which the operator waits for.
    wait_set(&net, &new, &old).await;
    let new_hex = hex_of(&net, &new_pub);
    net.wait_for("the new key to hold the record's power", WAIT, || async {
        let row = record_of(&net, &new_hex)?;
        (row["comet_power"] == row["power"])
            .then_some(row.clone())
            .ok_or_else(|| row.to_string())
    })
    .await;

    // The operator installs the new key; the node signs under it.
    let stopped_at = net.comet_height(0).await.unwrap_or_else(|e| net.fail(&e));
    net.stop(NODE);
    std::fs::copy(&key_file, key_file.with_extension("json.old"))
        .unwrap_or_else(|e| net.fail(&format!("keeping the old key: {e}")));
    std::fs::copy(&new_file, &key_file)
        .unwrap_or_else(|e| net.fail(&format!("installing the new key: {e}")));
    net.restart(NODE);
    let signed = net.wait_signed_by(&new, WAIT).await;
    assert!(
        signed > stopped_at && stopped_at > at,
        "signed {signed}, stopped at {stopped_at}, rotated at {at}"
    );
    eprintln!("node{NODE} signed height {signed} under {new}");
    let h = net.comet_height(0).await.unwrap_or(0);
    net.wait_all_comet_height(h + 3, WAIT).await;
    net.assert_app_hashes_agree(WAIT).await;
    assert!(
        !net.comet_validators(NODE)
            .await
            .unwrap_or_else(|e| net.fail(&e))
            .contains(&old),
        "node{NODE} still lists its old key"
    );

    // The record names the new key and keeps the old one reserved.
    let row = record_of(&net, &new_hex).unwrap_or_else(|e| net.fail(&e));
    assert_eq!(
        row["retiring_consensus_key"],
        json!(hex_of(&net, &old_pub)),
        "{row}"
    );
    assert_eq!(row["status"], json!("ACTIVE"), "{row}");
    assert_eq!(row["comet_power"], row["power"], "{row}");
}

fn hex_of(net: &Localnet, b64: &str) -> String {
    hex::encode(
        base64::Engine::decode(&base64::engine::general_purpose::STANDARD, b64)
            .unwrap_or_else(|e| net.fail(&format!("pub key {b64}: {e}"))),
    )
}

/// The `stave query validators` row whose consensus key is `key` (hex).
fn record_of(net: &Localnet, key: &str) -> Result<Value, String> {
    let out = net.stave_cmd(&[
        "--output",
        "json",
        "query",
        "validators",
        "--node",
        &net.grpc_url(0),
    ]);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let list: Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
    list["validators"]
        .as_array()
        .and_then(|rows| rows.iter().find(|v| v["consensus_key"] == json!(key)))
        .cloned()
        .ok_or_else(|| format!("no record holds {key}: {list}"))
}
