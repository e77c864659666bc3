//! End-to-end on a real 4-validator localnet (real `stave` and `cometbft`):
//!
//! 1. Node 0 (the "node 1" of issue 6) is stopped and given the content and
//!    its own wrapped DEK of three uploads, the way the upload pipeline
//!    places them; it restarts, and signs `UploadComplete` for each. Every
//!    upload's replication set names all four validators; uploads A and C
//!    name all four as DEK holders, upload B only nodes 0–2.
//! 2. Within a bounded time nodes 1–3 hold every blob (hash-verified) and
//!    their own wrapped DEKs (B not on node 3), which unwrap with their own
//!    X25519 keys and decrypt the blobs; `stave query local status` shows
//!    nothing PENDING or FAILED.
//! 3. Node 3, outside B's holder set, asking node 0 for B's DEK, is refused
//!    with code 405.
//! 4. Rebuild: node 2 is stopped, its `data/local` and `content/` deleted;
//!    restarted, it rebuilds everything from chain state and peers.
//! 5. Content inventory (issue 26 item 4): once node 3 sees nodes 0–2
//!    announce every blob, it is stopped, its blobs deleted, and
//!    restarted; every refetch goes to an announcing holder
//!    (`stave_content_fetch_source_total{source="announced"}`).

mod common;
#[path = "common/local.rs"]
mod local;

use std::path::Path;
use std::time::Duration;

use common::localnet::{binaries, Localnet, LocalnetConfig, Proc};
use ed25519_dalek::SigningKey;
use serde_json::Value;
use stave::crypto::{stream, wrap, Dek};
use stave::keyfile;
use stave::keyspaces::uploads::sign_manifest;
use stave::local::content::ContentStore;
use stave::local::deks::{wrapped_of, DeksExt};
use stave::local::peer_client::{fetch_dek, PeerTarget, Requester};
use stave::local::LocalStore;
use stave::proto::local::StoredDek;
use stave::proto::rights as pb;
use stave::tx::{build::sign_tx, Action};
use x25519_dalek::{PublicKey, StaticSecret};

const WAIT: Duration = Duration::from_secs(180);
const BASE_PORT: u16 = 16000;

struct Upload {
    plain: Vec<u8>,
    dek: Dek,
    blob: Vec<u8>,
    flac_cid: Vec<u8>,
    enc_cid: Vec<u8>,
    holders: Vec<usize>,
}

/// The common local-store test upload, with the nodes that hold its DEK.
fn upload(size: usize, seed: u8, holders: Vec<usize>) -> Upload {
    let u = local::upload(size, seed);
    Upload {
        flac_cid: u.dek_cid,
        enc_cid: u.content_cid,
        plain: u.plain,
        dek: u.dek,
        blob: u.blob,
        holders,
    }
}

fn keys(net: &Localnet, i: usize) -> (SigningKey, StaticSecret) {
    let config = net.stave_home(i).join("config");
    (
        keyfile::load_ed25519(&config.join("operator_key.json")).unwrap(),
        keyfile::load_x25519(&config.join("x25519_key.json")).unwrap(),
    )
}

fn op(net: &Localnet, i: usize) -> Vec<u8> {
    keys(net, i).0.verifying_key().to_bytes().to_vec()
}

/// Stops node `i`'s supervisor (which stops its Stave and CometBFT) and
/// waits until all three are gone.
async fn stop_node(net: &Localnet, i: usize) {
    let sup = std::fs::read_to_string(net.node_dir(i).join("supervisor.pid")).unwrap();
    let st = std::process::Command::new("kill")
        .args(["-TERM", sup.trim()])
        .status()
        .unwrap();
    assert!(st.success(), "kill -TERM supervisor of node{i}");
    let sup_file = net.node_dir(i).join("supervisor.pid");
    net.wait_for(&format!("node{i} to stop"), WAIT, || async {
        match (net.pid(i, Proc::Stave), net.pid(i, Proc::Cometbft)) {
            // The supervisor removes its pid file last, just before it exits.
            (None, None) if !sup_file.exists() => Ok(()),
            other => Err(format!(
                "still running: {other:?} (supervisor pid file present)"
            )),
        }
    })
    .await;
}

/// What the upload pipeline leaves on the processing validator: the blob
/// in its content store and its own wrapped DEK in its local store.
fn place_as_pipeline(home: &Path, x: &StaticSecret, ups: &[Upload]) {
    let content = ContentStore::open(&home.join("content")).unwrap();
    let local = LocalStore::open(&home.join("data/local")).unwrap();
    for u in ups {
        content
            .put_reader(&u.enc_cid, u.blob.len() as u64, &u.blob[..])
            .unwrap();
        let w = wrap::wrap_dek(&u.dek, &PublicKey::from(x).to_bytes(), &u.flac_cid).unwrap();
        local
            .put_dek(&StoredDek {
                cid: u.flac_cid.clone(),
                wrapped_dek: w.ciphertext,
                ephemeral_pubkey: w.ephemeral_pubkey.to_vec(),
                source_validator: vec![],
                job_id: vec![],
            })
            .unwrap();
    }
}

async fn submit_uploads(net: &Localnet, ups: &[Upload]) {
    let (op0, _) = keys(net, 0);
    let all: Vec<Vec<u8>> = (0..4).map(|i| op(net, i)).collect();
    let (_, mut nonce) = net.account(0, &all[0]).await.unwrap();
    for u in ups {
        let uploader = SigningKey::generate(&mut rand::rngs::OsRng);
        let recovery = StaticSecret::random_from_rng(rand::rngs::OsRng);
        let rw =
            wrap::wrap_dek(&u.dek, &PublicKey::from(&recovery).to_bytes(), &u.flac_cid).unwrap();
        let m = pb::UploadManifest {
            chain_id: net.chain_id.clone(),
            flac_cid: u.flac_cid.clone(),
            encrypted_cid: u.enc_cid.clone(),
            encrypted_size: u.blob.len() as u64,
            replication_set: all.clone(),
            dek_holder_set: u.holders.iter().map(|i| all[*i].clone()).collect(),
            processing_validator: all[0].clone(),
            dek_commitment: stave::crypto::dek_commitment(&u.dek, &u.enc_cid).to_vec(),
            facts: Some(pb::AudioFacts {
                sample_rate: 48_000,
                channels: 1,
                bits_per_sample: 24,
                frames: 48_000,
                duration_ms: 1000,
                source_codec: "flac".into(),
                lossless_source: true,
            }),
            recovery_dek: Some(pb::WrappedDek {
                wrapped_dek: rw.ciphertext,
                ephemeral_pubkey: rw.ephemeral_pubkey.to_vec(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let action = Action::UploadComplete(sign_manifest(&uploader, m).try_into().unwrap());
        let tx = sign_tx(&op0, &net.chain_id, nonce, vec![action], "");
        nonce += 1;
        net.commit_tx(1, tx, "UploadComplete").await;
    }
}

fn local_status(net: &Localnet, i: usize) -> Value {
    net.local_status(i)
}

/// Waits until node `i` reports `seeding` blobs and `received` DEKs with
/// nothing pending, downloading or failed.
async fn wait_synced(net: &Localnet, i: usize, seeding: u64, received: u64) -> Value {
    net.wait_for(&format!("node{i} to sync"), WAIT, || async {
        let s = local_status(net, i);
        let n = |k: &str, st: &str| s[k][st].as_u64().unwrap_or(u64::MAX);
        let idle = ["PENDING", "DOWNLOADING", "FAILED"]
            .iter()
            .all(|st| n("content", st) == 0 && n("deks", st) == 0);
        if idle && n("content", "SEEDING") == seeding && n("deks", "RECEIVED") == received {
            Ok(s)
        } else {
            Err(format!("{s}"))
        }
    })
    .await
}

/// Node `i` holds every blob (hash-verified) and the DEKs it should, each
/// unwrapping with its own key and decrypting its blob.
fn assert_holds(net: &Localnet, i: usize, ups: &[Upload]) {
    let home = net.stave_home(i);
    let (_, x) = keys(net, i);
    let local = LocalStore::open_read_only(&home.join("data/local")).unwrap();
    for u in ups {
        let blob = std::fs::read(home.join("content").join(hex::encode(&u.enc_cid))).unwrap();
        assert_eq!(
            stave::media::cid::raw_cid(&blob).to_vec(),
            u.enc_cid,
            "node{i} blob hash"
        );
        let stored = local.dek(&u.flac_cid).unwrap();
        if !u.holders.contains(&i) {
            assert!(
                stored.is_none(),
                "node{i} holds a DEK outside its holder set"
            );
            continue;
        }
        let stored = stored.unwrap_or_else(|| panic!("node{i} lacks its wrapped DEK"));
        let dek = wrap::unwrap_dek(&x, &wrapped_of(&stored).unwrap(), &u.flac_cid).unwrap();
        let mut plain = Vec::new();
        stream::decrypt(&dek, &blob[..], &mut plain).unwrap();
        assert_eq!(plain, u.plain, "node{i} decrypts");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_stores_sync_from_peers_and_rebuild() {
    let Some(bins) = binaries("local_stores_sync_from_peers_and_rebuild") else {
        return;
    };
    let net = Localnet::new(&bins, LocalnetConfig::new(4, BASE_PORT));
    net.up();
    let ups = vec![
        upload(400_000, 3, vec![0, 1, 2, 3]),
        upload(150_000, 5, vec![0, 1, 2]),
        upload(70_001, 7, vec![0, 1, 2, 3]),
    ];

    // 1. node 0 gets what the pipeline leaves, then signs UploadComplete
    stop_node(&net, 0).await;
    place_as_pipeline(&net.stave_home(0), &keys(&net, 0).1, &ups);
    net.restart(0);
    let h = net.max_comet_height().await;
    net.wait_comet_height(0, h + 1, WAIT).await;
    submit_uploads(&net, &ups).await;

    // 2. everyone converges
    let started = std::time::Instant::now();
    wait_synced(&net, 0, 3, 3).await;
    for i in 1..4 {
        wait_synced(&net, i, 3, if i == 3 { 2 } else { 3 }).await;
        assert_holds(&net, i, &ups);
    }
    eprintln!(
        "nodes 1-3 synced in {:.1}s",
        started.elapsed().as_secs_f64()
    );

    // 3. node 3 is outside B's holder set (asked from node 3's own IP,
    // which node 0's peer allow-list admits)
    let (op3, x3) = keys(&net, 3);
    stave::local::peer_client::bind_source(net.peer_ip(3));
    let target = PeerTarget {
        operator: op(&net, 0).try_into().unwrap(),
        address: net.peer_addr(0),
    };
    let x3 = stave::local::keyring::X25519Keyring::from(x3);
    let me = Requester {
        operator: &op3,
        x25519: &x3,
    };
    let err = fetch_dek(me, &net.chain_id, &target, &ups[1].flac_cid)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("code 405"), "{err}");

    // 4. rebuild node 2 from nothing
    stop_node(&net, 2).await;
    let home2 = net.stave_home(2);
    std::fs::remove_dir_all(home2.join("data/local")).unwrap();
    std::fs::remove_dir_all(home2.join("content")).unwrap();
    net.restart(2);
    let h = net.max_comet_height().await;
    net.wait_comet_height(2, h + 1, WAIT).await;
    let started = std::time::Instant::now();
    let s = wait_synced(&net, 2, 3, 3).await;
    assert!(
        s["failures"].as_array().is_some_and(|f| f.is_empty()),
        "{s}"
    );
    assert_holds(&net, 2, &ups);
    eprintln!("node2 rebuilt in {:.1}s", started.elapsed().as_secs_f64());

    // 5. content fetches ask announcing holders first
    announced_holders_are_asked_first(&net, &ups).await;
    net.wait_status_ok(WAIT).await;
}

/// Node 3 learns (by anti-entropy) that nodes 0–2 announce every blob;
/// stopped, its blobs deleted and restarted, it refetches each from a
/// validator that announces it, as its metric shows.
async fn announced_holders_are_asked_first(net: &Localnet, ups: &[Upload]) {
    for u in ups {
        let cid = u.enc_cid.clone();
        net.wait_for("node3 to see nodes 0-2 announce the blob", WAIT, || {
            let cid = cid.clone();
            async move {
                let mut c = net.client(3).await;
                let req = stave::proto::replica::HoldersRequest { cid };
                let hs = c
                    .replica
                    .holders(req)
                    .await
                    .map_err(|e| e.to_string())?
                    .into_inner()
                    .holders;
                let who: std::collections::BTreeSet<Vec<u8>> =
                    hs.iter().map(|h| h.operator_key.clone()).collect();
                let want: std::collections::BTreeSet<Vec<u8>> =
                    (0..3).map(|i| op(net, i)).collect();
                if want.is_subset(&who) {
                    Ok(())
                } else {
                    Err(format!("{} holders announced", hs.len()))
                }
            }
        })
        .await;
    }
    stop_node(net, 3).await;
    std::fs::remove_dir_all(net.stave_home(3).join("content")).unwrap();
    net.restart(3);
    wait_synced(net, 3, 3, 2).await;
    assert_holds(net, 3, ups);
    let m = net.metrics(3).await.unwrap();
    let n = |label: &str| {
        common::localnet::sample(
            &m,
            &format!("stave_content_fetch_source_total{{source=\"{label}\"}}"),
        )
    };
    assert_eq!(n("announced"), Some(3.0), "{m}");
    assert_eq!(
        n("unannounced"),
        None,
        "no fetch went to a peer that did not announce"
    );
}
