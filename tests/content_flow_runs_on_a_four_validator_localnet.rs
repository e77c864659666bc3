//! End-to-end on the real 4-validator localnet (real `stave` and `cometbft`
//! binaries, gRPC over 127.0.0.1): upload → publish → grant CONSUMER with a
//! territory scope → `CheckAccess` allows inside the territory and denies
//! outside it, on every node → `RecordGrant` by a DEK holder → the grant
//! appears through `GrantsByKey` on every node → all nodes end with
//! identical app hashes.
//!
//! Binaries and CI behaviour as in `e2e_localnet.rs`. Base port 33000.

mod common;

use std::time::Duration;

use common::localnet::{binaries, Localnet, LocalnetConfig};
use ed25519_dalek::SigningKey;
use stave::config::Home;
use stave::keyspaces::entitlements::GrantEntitlement;
use stave::keyspaces::grants::RecordGrant;
use stave::keyspaces::releases::PublishRelease;
use stave::keyspaces::uploads::sign_manifest;
use stave::proto::query::AccountRequest;
use stave::proto::rights as pb;
use stave::proto::tx::BroadcastAndWaitRequest;
use stave::tx::{build::sign_tx, Action, Code};

const WAIT: Duration = Duration::from_secs(120);
const CID: &[u8] = b"bafk-e2e-flac-cid";

fn operator(net: &Localnet, node: usize) -> SigningKey {
    stave::keyfile::load_ed25519(&Home::new(net.stave_home(node)).operator_key())
        .expect("node operator key")
}

/// Signs `actions` with the signer's committed nonce on `node`, submits
/// with BroadcastAndWait and requires code 0.
async fn submit(net: &Localnet, node: usize, key: &SigningKey, actions: Vec<Action>, what: &str) {
    let mut c = net.client(node).await;
    let nonce = c
        .query
        .account(AccountRequest {
            pubkey: key.verifying_key().to_bytes().to_vec(),
        })
        .await
        .map(|r| r.into_inner().nonce)
        .unwrap_or_else(|e| net.fail(&format!("{what}: Account: {e}")));
    let tx = sign_tx(key, &net.chain_id, nonce, actions, "");
    let r =
        c.tx.broadcast_and_wait(BroadcastAndWaitRequest {
            tx,
            timeout_ms: 60_000,
        })
        .await
        .unwrap_or_else(|e| net.fail(&format!("{what}: BroadcastAndWait: {e}")))
        .into_inner();
    if !r.committed || r.code != 0 {
        net.fail(&format!("{what}: not committed with code 0: {r:?}"));
    }
    eprintln!("{what}: committed at height {} on node{node}", r.height);
    // The next step may submit through another node: it must have committed
    // this height too, or its Account query would still show the old nonce.
    for i in 0..net.nodes {
        net.wait_stave_height(i, r.height, Duration::from_secs(60))
            .await;
    }
}

fn manifest(net: &Localnet, ops: &[SigningKey]) -> pb::UploadManifest {
    let set: Vec<Vec<u8>> = ops
        .iter()
        .map(|k| k.verifying_key().to_bytes().to_vec())
        .collect();
    let eph = x25519_dalek::PublicKey::from(&x25519_dalek::StaticSecret::random_from_rng(
        rand::rngs::OsRng,
    ));
    pb::UploadManifest {
        chain_id: net.chain_id.clone(),
        flac_cid: CID.to_vec(),
        encrypted_cid: b"bafk-e2e-encrypted".to_vec(),
        image_cids: vec![b"bafk-e2e-cover".to_vec()],
        encrypted_size: 1 << 20,
        replication_set: set.clone(),
        dek_holder_set: set,
        processing_validator: set_key(&ops[0]),
        group_id: String::new(),
        recovery_dek: Some(pb::WrappedDek {
            wrapped_dek: vec![0xab; 60],
            ephemeral_pubkey: eph.as_bytes().to_vec(),
            ..Default::default()
        }),
        uploader_pubkey: vec![],
    }
}

fn set_key(k: &SigningKey) -> Vec<u8> {
    k.verifying_key().to_bytes().to_vec()
}

fn ern() -> pb::ErnRelease {
    pb::ErnRelease {
        icpn: "4006381333931".into(),
        title: "Localnet Sessions".into(),
        display_artist: "Four Validators".into(),
        label: "Stave Records".into(),
        release_date: "2026-11-22".into(),
        tracks: vec![pb::ErnTrack {
            isrc: "GBAYE0000351".into(),
            title: "Quorum".into(),
            display_artist: "Four Validators".into(),
            duration_secs: 240,
        }],
        ..Default::default()
    }
}

/// Waits until `node` answers CheckAccess with `allowed`.
async fn expect_access(
    net: &Localnet,
    node: usize,
    consumer: &[u8],
    territory: &str,
    allowed: bool,
) {
    let req = pb::CheckAccessRequest {
        cid: CID.to_vec(),
        consumer_pubkey: consumer.to_vec(),
        territory: territory.into(),
        context: Vec::new(),
    };
    let r = net
        .wait_for(
            &format!("node{node} CheckAccess {territory} = {allowed}"),
            WAIT,
            || {
                let req = req.clone();
                async move {
                    let mut c = net.client(node).await;
                    let r = c
                        .rights
                        .check_access(req)
                        .await
                        .map_err(|e| e.to_string())?
                        .into_inner();
                    if r.allowed == allowed {
                        Ok(r)
                    } else {
                        Err(format!("{r:?}"))
                    }
                }
            },
        )
        .await;
    if !allowed {
        assert_eq!(r.code, Code::AccessDenied.value(), "node{node}: {r:?}");
    }
    eprintln!(
        "node{node}: CheckAccess {territory}: allowed={} ({})",
        r.allowed, r.reason
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn content_flow_runs_on_a_four_validator_localnet() {
    let Some(bins) = binaries("content_flow_runs_on_a_four_validator_localnet") else {
        return;
    };
    let net = Localnet::new(&bins, LocalnetConfig::new(4, 33000));
    net.up();
    for i in 0..net.nodes {
        net.wait_stave_height(i, 1, WAIT).await;
    }
    let ops: Vec<SigningKey> = (0..net.nodes).map(|i| operator(&net, i)).collect();
    let uploader = SigningKey::generate(&mut rand::rngs::OsRng);
    let consumer = SigningKey::generate(&mut rand::rngs::OsRng);
    let consumer_pk = set_key(&consumer);

    let uc = sign_manifest(&uploader, manifest(&net, &ops));
    let upload = Action::UploadComplete(uc.try_into().expect("valid UploadComplete"));
    submit(
        &net,
        0,
        &ops[0],
        vec![upload],
        "UploadComplete by the processing validator",
    )
    .await;
    let publish = Action::PublishRelease(PublishRelease {
        flac_cid: CID.to_vec(),
        ern: ern(),
    });
    submit(
        &net,
        1,
        &uploader,
        vec![publish],
        "PublishRelease by the uploader",
    )
    .await;
    let grant = Action::GrantEntitlement(GrantEntitlement {
        cid: CID.to_vec(),
        pubkey: consumer_pk.clone(),
        role: pb::Role::Consumer,
        scope: Some(pb::Scope {
            territories: vec!["GB".into(), "IE".into()],
            ..Default::default()
        }),
    });
    submit(
        &net,
        2,
        &uploader,
        vec![grant],
        "GrantEntitlement CONSUMER in GB, IE",
    )
    .await;

    for i in 0..net.nodes {
        expect_access(&net, i, &consumer_pk, "GB", true).await;
        expect_access(&net, i, &consumer_pk, "US", false).await;
    }

    let record = Action::RecordGrant(RecordGrant {
        cid: CID.to_vec(),
        consumer_pubkey: consumer_pk.clone(),
        territory: "GB".into(),
        context: Vec::new(),
    });
    submit(
        &net,
        3,
        &ops[1],
        vec![record],
        "RecordGrant by a DEK holder",
    )
    .await;
    let netr = &net;
    for i in 0..net.nodes {
        let g = net
            .wait_for(&format!("node{i} GrantsByKey"), WAIT, || {
                let pk = consumer_pk.clone();
                async move {
                    let mut c = netr.client(i).await;
                    let r = c
                        .rights
                        .grants_by_key(pb::ListByKeyRequest {
                            pubkey: pk,
                            cursor: vec![],
                            limit: 0,
                        })
                        .await
                        .map_err(|e| e.to_string())?
                        .into_inner();
                    match r.grants.as_slice() {
                        [g] => Ok(g.clone()),
                        other => Err(format!("{} grants", other.len())),
                    }
                }
            })
            .await;
        assert_eq!(g.cid, CID);
        assert_eq!(g.validator_pubkey, set_key(&ops[1]));
        assert_eq!(g.territory, "GB");
    }
    let h = net.assert_app_hashes_agree(WAIT).await;
    eprintln!("content flow: all nodes agree on the app hash at height {h}");
}
