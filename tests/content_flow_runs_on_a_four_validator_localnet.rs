//! End-to-end on the real 4-validator localnet (real `stave` and `cometbft`
//! binaries, gRPC over 127.0.0.1): upload → publish → grant CONSUMER with a
//! territory scope → `CheckAccess` allows inside the territory and denies
//! outside it, on every node → `RecordGrant` by a DEK holder → the grant
//! appears through `GrantsByKey` on every node → all nodes end with
//! identical app hashes.
//!
//! Binaries and CI behaviour as in `e2e_localnet.rs`. Base port 13000.

mod common;

use common::localnet::{binaries, Localnet, LocalnetConfig};
use common::rights::{
    access_until, manifest, one_grant_by_key, operator, publish_single, set_key, submit, WAIT,
};
use ed25519_dalek::SigningKey;
use stave::keyspaces::entitlements::GrantEntitlement;
use stave::keyspaces::grants::RecordGrant;
use stave::keyspaces::uploads::sign_manifest;
use stave::proto::rights as pb;
use stave::tx::{Action, Code};

const CID: &[u8] = &stave::media::cid::fixture_cid(b"bafk-e2e-flac-cid");

/// Waits until `node` answers CheckAccess with `allowed`; a deny must be
/// ACCESS_DENIED.
async fn expect_access(
    net: &Localnet,
    node: usize,
    consumer: &[u8],
    territory: &str,
    allowed: bool,
) {
    let r = access_until(net, node, CID, consumer, territory, allowed).await;
    if !allowed {
        assert_eq!(r.code, Code::AccessDenied.value(), "node{node}: {r:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn content_flow_runs_on_a_four_validator_localnet() {
    let Some(bins) = binaries("content_flow_runs_on_a_four_validator_localnet") else {
        return;
    };
    let net = Localnet::new(&bins, LocalnetConfig::new(4, 13000));
    net.up();
    for i in 0..net.nodes {
        net.wait_stave_height(i, 1, WAIT).await;
    }
    let ops: Vec<SigningKey> = (0..net.nodes).map(|i| operator(&net, i)).collect();
    let uploader = SigningKey::generate(&mut rand::rngs::OsRng);
    let consumer = SigningKey::generate(&mut rand::rngs::OsRng);
    let consumer_pk = set_key(&consumer);

    let uc = sign_manifest(&uploader, manifest(&net, &ops, CID, ""));
    let upload = Action::UploadComplete(uc.try_into().expect("valid UploadComplete"));
    submit(
        &net,
        0,
        &ops[0],
        vec![upload],
        "UploadComplete by the processing validator",
    )
    .await;
    let publish = publish_single(CID);
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
        count: 0,
        use_type: 0,
    });
    submit(
        &net,
        3,
        &ops[1],
        vec![record],
        "RecordGrant by a DEK holder",
    )
    .await;
    for i in 0..net.nodes {
        let g = one_grant_by_key(&net, i, &consumer_pk).await;
        assert_eq!(g.cid, CID);
        assert_eq!(g.validator_pubkey, set_key(&ops[1]));
        assert_eq!(g.territory, "GB");
    }
    let h = net.assert_app_hashes_agree(WAIT).await;
    eprintln!("content flow: all nodes agree on the app hash at height {h}");
}
