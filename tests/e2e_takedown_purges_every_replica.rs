//! Issue 28, takedowns reach the disks, end to end on the real
//! 4-validator localnet with `takedown_retention_blocks = 20`
//! (`STAVE_TAKEDOWN_RETENTION`). A WAV is uploaded through node 0 with
//! every validator a replica and DEK holder, published, and a consumer
//! downloads it. Its group's takedown authority requests a takedown and 3
//! of 4 validators confirm it. Then:
//! - at once, every node refuses the consumer both the DEK and the blob
//!   (`TAKEDOWN_ACTIVE`);
//! - every node still holds the data until the retention ends, and
//!   `stave query local status` lists it as awaiting its purge;
//! - after it, on every node, the blob file and the wrapped DEK are gone,
//!   `local status` records the purge (height, file, DEK, bytes) and
//!   `stave_takedown_purges_total` counts it;
//! - a restarted node fetches nothing back; app hashes agree.
//!
//! Binaries and CI behaviour as in `e2e_localnet.rs`. Base port 31500.

mod common;

use std::time::Duration;

use common::localnet::{binaries, sample, Localnet, LocalnetConfig};
use common::rights::{operator, submit};
use common::upload::{admit_group, upload_published};
use ed25519_dalek::SigningKey;
use serde_json::Value;
use stave::client::content::{self as cc, Consumer, Peer};
use stave::config::Home;
use stave::keyspaces::takedowns::{TakedownRequest, TakedownResolve};
use stave::proto::content as cpb;
use stave::proto::rights as pb;
use stave::tx::{Action, Code};

const BASE_PORT: u16 = 31500;
const WAIT: Duration = Duration::from_secs(120);
const GROUP: &str = "e2e-purge";
const RETENTION: u64 = 20;

fn local_status(net: &Localnet, i: usize) -> Value {
    net.local_status(i)
}

/// Uploads a 2 s WAV through node 0 to all four validators, publishes it
/// and grants `fan` access in GB.
async fn upload(
    net: &Localnet,
    dir: &std::path::Path,
    uploader: &SigningKey,
    fan: &Consumer,
) -> pb::Upload {
    let cid = upload_published(net, (dir, uploader), &fan.pubkey(), (2, 4, GROUP)).await;
    cc::upload_of(&mut net.client(0).await, &cid)
        .await
        .unwrap_or_else(|e| net.fail(&format!("upload record: {e:#}")))
}

fn node_peer(net: &Localnet, i: usize) -> Peer {
    Peer::unrotated(operator(net, i).verifying_key().to_bytes(), net.grpc_url(i))
}

fn blob_path(net: &Localnet, i: usize, cid: &[u8]) -> std::path::PathBuf {
    Home::new(net.stave_home(i))
        .content_dir()
        .join(hex::encode(cid))
}

/// Node `i` holds the blob and its DEK, both settled.
fn holds(net: &Localnet, i: usize, u: &pb::Upload) -> Result<(), String> {
    let s = local_status(net, i);
    let (seeding, received) = (&s["content"]["SEEDING"], &s["deks"]["RECEIVED"]);
    let ok = seeding.as_u64() == Some(1) && received.as_u64() == Some(1);
    if ok && blob_path(net, i, &u.encrypted_cid).exists() {
        Ok(())
    } else {
        Err(format!("node{i}: {s}"))
    }
}

/// Node `i` hands `fan` the DEK, which opens the blob it serves.
async fn consumer_gets_it(net: &Localnet, i: usize, fan: &Consumer, u: &pb::Upload) {
    let holder = node_peer(net, i);
    let req = fan.request(&net.chain_id, &u.flac_cid, Some(holder.key), "GB", &[]);
    let key = cc::request_access(&holder, fan, req)
        .await
        .unwrap_or_else(|s| net.fail(&format!("node{i} access: {s}")));
    let out = net.scratch.join(format!("track-{i}.flac"));
    let signed = fan.request(&net.chain_id, &u.flac_cid, None, "GB", &[]);
    let n = cc::download(&[holder], Some(signed), u, &key.dek, &out, &mut |_, _| {})
        .await
        .unwrap_or_else(|e| net.fail(&format!("node{i} download: {e:#}")));
    assert!(n > 0, "node{i} delivered the track");
}

/// Node `i` refuses `fan` the DEK and the blob, with TAKEDOWN_ACTIVE.
async fn refused(net: &Localnet, i: usize, fan: &Consumer, u: &pb::Upload) {
    let holder = node_peer(net, i);
    let req = fan.request(&net.chain_id, &u.flac_cid, Some(holder.key), "GB", &[]);
    let s = cc::request_access(&holder, fan, req)
        .await
        .err()
        .unwrap_or_else(|| net.fail(&format!("node{i} delivered a DEK of taken-down content")));
    assert_eq!(
        stave::access::code_of(&s),
        Some(Code::TakedownActive),
        "node{i}: {s}"
    );
    let mut c = stave::client::StaveClient::connect(&holder.endpoint)
        .await
        .expect("connect");
    let s = c
        .content
        .download(cpb::DownloadRequest {
            access: Some(fan.request(&net.chain_id, &u.flac_cid, None, "GB", &[])),
            cid: u.encrypted_cid.clone(),
            offset: 0,
            length: 0,
        })
        .await
        .err()
        .unwrap_or_else(|| net.fail(&format!("node{i} served a taken-down blob")));
    assert_eq!(
        stave::access::code_of(&s),
        Some(Code::TakedownActive),
        "node{i}: {s}"
    );
}

/// Whether node `i`'s local store has a row under `local/deks/{flac_cid}`
/// (read beside the running node).
fn holds_dek(net: &Localnet, i: usize, u: &pb::Upload) -> bool {
    use stave::local::deks::DeksExt;
    let dir = Home::new(net.stave_home(i)).local_dir();
    let store = stave::local::LocalStore::open_read_only(&dir)
        .unwrap_or_else(|e| net.fail(&format!("node{i} local store: {e}")));
    store
        .holds_dek_row(&u.flac_cid)
        .unwrap_or_else(|e| net.fail(&format!("node{i} local store: {e}")))
}

/// The purge record of `u` on node `i`, once there is one.
fn purged(net: &Localnet, i: usize, u: &pb::Upload) -> Result<Value, String> {
    let s = local_status(net, i);
    let cid = hex::encode(&u.flac_cid);
    s["purged"]
        .as_array()
        .and_then(|a| a.iter().find(|p| p["cid"] == cid.as_str()).cloned())
        .ok_or_else(|| format!("node{i}: {s}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirmed_takedown_is_refused_at_once_and_purged_from_every_replica() {
    let Some(bins) =
        binaries("a_confirmed_takedown_is_refused_at_once_and_purged_from_every_replica")
    else {
        return;
    };
    let mut cfg = LocalnetConfig::new(4, BASE_PORT);
    cfg.env = vec![("STAVE_TAKEDOWN_RETENTION".into(), RETENTION.to_string())];
    let net = Localnet::new(&bins, cfg);
    net.up();
    for i in 0..net.nodes {
        net.wait_stave_height(i, 1, WAIT).await;
    }
    let dir = tempfile::tempdir().expect("keyring dir");
    let uploader =
        stave::keyfile::create_ed25519(&dir.path().join("label.json")).expect("uploader key");
    let authority = admit_group(&net, GROUP, &uploader).await;
    let fan = Consumer::generate();
    let u = upload(&net, dir.path(), &uploader, &fan).await;
    for i in 0..net.nodes {
        net.wait_for(&format!("node{i} to hold the upload"), WAIT, || async {
            holds(&net, i, &u)
        })
        .await;
        assert!(holds_dek(&net, i, &u), "node{i} holds the wrapped DEK");
    }
    consumer_gets_it(&net, 1, &fan, &u).await;

    let request = Action::TakedownRequest(TakedownRequest {
        cid: u.flac_cid.clone(),
        reason: "infringes catalogue #7".into(),
        evidence_hash: vec![0xcd; 32],
    });
    submit(&net, 2, &authority, vec![request], "TakedownRequest").await;
    let mut confirmed = 0;
    for i in 0..3 {
        let vote = Action::TakedownResolve(TakedownResolve {
            cid: u.flac_cid.clone(),
            confirm: true,
        });
        let what = format!("TakedownResolve confirm by validator {i}");
        confirmed = submit(&net, i, &operator(&net, i), vec![vote], &what).await;
    }
    for i in 0..net.nodes {
        refused(&net, i, &fan, &u).await;
    }
    // refused at once, deleted only after the retention (checked while the
    // retention runs: each read comes before the height that bounds it)
    let s = local_status(&net, 3);
    let held = blob_path(&net, 3, &u.encrypted_cid).exists();
    let height = net.max_comet_height().await;
    if height + 1 < confirmed + RETENTION {
        assert!(held, "kept during the retention");
        let awaiting = &s["awaiting_purge"][0];
        assert_eq!(awaiting["cid"], hex::encode(&u.flac_cid).as_str(), "{s}");
        assert_eq!(
            awaiting["purge_height"].as_u64(),
            Some(confirmed + RETENTION),
            "{s}"
        );
    } else {
        eprintln!("the retention ended before the check (height {height}); skipped it");
    }

    for i in 0..net.nodes {
        let rec = net
            .wait_for(&format!("node{i} to purge"), WAIT, || async {
                purged(&net, i, &u)
            })
            .await;
        let at = rec["purged_height"].as_u64().unwrap_or(0);
        assert!(at >= confirmed + RETENTION, "node{i} purged at {at}: {rec}");
        assert_eq!(rec["takedown_height"].as_u64(), Some(confirmed), "{rec}");
        assert_eq!(
            rec["files"][0],
            hex::encode(&u.encrypted_cid).as_str(),
            "{rec}"
        );
        assert_eq!(rec["dek_removed"], Value::Bool(true), "{rec}");
        assert_eq!(rec["bytes_freed"].as_u64(), Some(u.encrypted_size), "{rec}");
        assert!(
            !blob_path(&net, i, &u.encrypted_cid).exists(),
            "node{i} blob"
        );
        assert!(
            !holds_dek(&net, i, &u),
            "node{i} still holds the wrapped DEK"
        );
        let s = local_status(&net, i);
        assert!(
            s["awaiting_purge"].as_array().is_some_and(|a| a.is_empty()),
            "{s}"
        );
        let m = net.metrics(i).await.unwrap_or_else(|e| net.fail(&e));
        let n = sample(&m, "stave_takedown_purges_total").unwrap_or(0.0);
        assert!(n >= 1.0, "node{i} counts its purge: {n}");
        refused(&net, i, &fan, &u).await;
    }

    // a restarted node fetches nothing back
    net.stop(2);
    net.restart(2);
    let h = net.max_comet_height().await;
    net.wait_stave_height(2, h + 5, WAIT).await;
    assert!(
        !blob_path(&net, 2, &u.encrypted_cid).exists(),
        "nothing refetched"
    );
    assert!(!holds_dek(&net, 2, &u), "no DEK refetched");
    let s = local_status(&net, 2);
    assert_eq!(s["content"]["PENDING"].as_u64(), Some(0), "{s}");
    assert_eq!(s["deks"]["PENDING"].as_u64(), Some(0), "{s}");
    purged(&net, 2, &u).unwrap_or_else(|e| net.fail(&e));
    net.assert_app_hashes_agree(WAIT).await;
}
