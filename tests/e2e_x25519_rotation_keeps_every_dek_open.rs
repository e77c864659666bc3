//! Issue 28, X25519 rotation end to end on the real 4-validator localnet.
//! Two WAVs are uploaded through node 0 with every validator a DEK holder;
//! node 2 holds both DEKs, fetched from its peers. Its operator runs
//! `stave tx validator rotate-x25519-key`; then:
//! - the chain names the new key, and node 2 logs the rotation once, with
//!   both DEKs re-wrapped; the next key file became `x25519_key.json`, so
//!   the old secret is gone from disk;
//! - a consumer gets each DEK from node 2, and each opens its content (it
//!   matches the `dek_commitment` on chain over the encrypted cid);
//! - a third WAV, uploaded after the rotation, reaches node 2 wrapped by a
//!   peer to the key the chain names, and opens too;
//! - after a restart, node 2 still opens all three.
//!
//! Binaries and CI behaviour as in `e2e_localnet.rs`. Base port 30500.

mod common;

use std::time::Duration;

use common::localnet::{assert_below_ephemeral, binaries, strip_ansi, Localnet, LocalnetConfig};
use common::rights::{operator, set_key};
use common::upload::{admit_group, upload_published};
use ed25519_dalek::SigningKey;
use serde_json::{json, Value};
use stave::client::content::{self as cc, Consumer, Peer};
use stave::config::Home;
use stave::proto::rights as pb;

const BASE_PORT: u16 = 30500;
const WAIT: Duration = Duration::from_secs(120);
const GROUP: &str = "e2e-x25519";
/// The validator that rotates.
const NODE: usize = 2;

/// Uploads a WAV of `secs` through node 0 with all four validators as
/// replicas and DEK holders; publishes it and grants `fan` access in GB.
async fn upload(
    net: &Localnet,
    dir: &std::path::Path,
    uploader: &SigningKey,
    fan: &Consumer,
    secs: u64,
) -> pb::Upload {
    let cid = upload_published(net, (dir, uploader), &fan.pubkey(), (secs, 4, GROUP)).await;
    let u = net
        .wait_for("node2 to have the upload", WAIT, || async {
            cc::upload_of(&mut net.client(NODE).await, &cid)
                .await
                .map_err(|e| e.to_string())
        })
        .await;
    assert_eq!(u.dek_holder_set.len(), 4, "every validator holds the DEK");
    u
}

/// Node 2 hands the consumer the DEK of `u`, and it opens the content:
/// its commitment over the encrypted cid is the one on chain. Waits while
/// node 2 is still fetching the DEK from its peers.
async fn opens_at_node2(net: &Localnet, fan: &Consumer, u: &pb::Upload) {
    let holder = Peer::unrotated(
        operator(net, NODE).verifying_key().to_bytes(),
        net.grpc_url(NODE),
    );
    let what = format!("node2 to deliver the DEK of {}", hex::encode(&u.flac_cid));
    let key = net
        .wait_for(&what, WAIT, || async {
            let req = fan.request(&net.chain_id, &u.flac_cid, Some(holder.key), "GB", &[]);
            cc::request_access(&holder, fan, req)
                .await
                .map_err(|s| s.message().to_string())
        })
        .await;
    assert_eq!(
        stave::crypto::dek_commitment(&key.dek, &u.encrypted_cid).as_slice(),
        u.dek_commitment.as_slice(),
        "the DEK node 2 holds opens {}",
        hex::encode(&u.flac_cid)
    );
}

/// The X25519 key the chain names for node 2, as node 2 reports it.
fn chain_x25519(net: &Localnet) -> String {
    let op = hex::encode(set_key(&operator(net, NODE)));
    let v: Value = net.stave_json(
        "stave query validator",
        &["query", "validator", &op, "--node", &net.grpc_url(NODE)],
    );
    v["validator"]["x25519_key"]
        .as_str()
        .unwrap_or_else(|| net.fail(&format!("no x25519_key in {v}")))
        .to_string()
}

fn public_of(net: &Localnet, path: &std::path::Path) -> String {
    let s = stave::keyfile::load_x25519(path)
        .unwrap_or_else(|e| net.fail(&format!("{}: {e:#}", path.display())));
    hex::encode(x25519_dalek::PublicKey::from(&s).as_bytes())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x25519_rotation_rewraps_every_held_dek() {
    let Some(bins) = binaries("x25519_rotation_rewraps_every_held_dek") else {
        return;
    };
    assert_below_ephemeral(BASE_PORT, BASE_PORT as u32 + 50);
    let net = Localnet::new(&bins, LocalnetConfig::new(4, BASE_PORT));
    net.up();
    for i in 0..net.nodes {
        net.wait_stave_height(i, 1, WAIT).await;
    }
    let dir = tempfile::tempdir().expect("keyring dir");
    let uploader =
        stave::keyfile::create_ed25519(&dir.path().join("label.json")).expect("uploader key");
    admit_group(&net, GROUP, &uploader).await;
    let fan = Consumer::generate();
    let mut uploads = Vec::new();
    for secs in [2, 3] {
        uploads.push(upload(&net, dir.path(), &uploader, &fan, secs).await);
    }
    for u in &uploads {
        opens_at_node2(&net, &fan, u).await;
    }

    let home = Home::new(net.stave_home(NODE));
    let old = public_of(&net, &home.x25519_key());
    assert_eq!(chain_x25519(&net), old);
    let r = net.stave_json(
        "validator rotate-x25519-key",
        &[
            "tx",
            "validator",
            "rotate-x25519-key",
            "--home",
            home.root.to_str().expect("utf-8"),
            "--node",
            &net.grpc_url(NODE),
        ],
    );
    assert_eq!(r["code"], json!(0), "{r}");
    // the node may finish the rotation before this reads the next key
    // file: the chain says which key it is
    let new = chain_x25519(&net);
    assert_ne!(new, old, "the chain names a new key");
    net.wait_for("node2 to finish the rotation", WAIT, || async {
        match net.count_in_log(NODE, "stave", "x25519 key rotated") {
            0 => Err("not yet".to_string()),
            n => Ok(n),
        }
    })
    .await;
    let log = strip_ansi(&std::fs::read_to_string(net.log_path(NODE, "stave")).unwrap_or_default());
    let line = log
        .lines()
        .find(|l| l.contains("x25519 key rotated"))
        .unwrap_or_default();
    assert!(
        line.contains("rewrapped=2") && line.contains("unopened=0"),
        "both DEKs re-wrapped: {line}"
    );
    assert!(!home.x25519_next_key().exists(), "the next key was renamed");
    assert_eq!(
        public_of(&net, &home.x25519_key()),
        new,
        "the new key is the current key file"
    );

    for u in &uploads {
        opens_at_node2(&net, &fan, u).await;
    }
    // a peer wraps the next upload's DEK to the key the chain names
    uploads.push(upload(&net, dir.path(), &uploader, &fan, 4).await);
    opens_at_node2(&net, &fan, &uploads[2]).await;

    net.stop(NODE);
    net.restart(NODE);
    for u in &uploads {
        opens_at_node2(&net, &fan, u).await;
    }
    assert_eq!(
        net.count_in_log(NODE, "stave", "x25519 key rotated"),
        1,
        "the rotation ran once"
    );
    net.assert_app_hashes_agree(WAIT).await;
}
