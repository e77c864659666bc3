//! Issue 28, operator-key rotation at the peer service: four in-process
//! validators with real peer gRPC services; validator 0 holds an upload's
//! content and its DEK, held by 0–2. Once the chain says validator 2's
//! operator key was rotated to a new key:
//! - validator 2's node still running on the retired key is refused the
//!   DEK and the content (PEER_NOT_VALIDATOR), as a stranger would be;
//! - a node signing with the new key is validator 2: it gets the DEK,
//!   wrapped to validator 2's X25519 key, and it opens;
//! - `HasContent` answers from validator 0 check under its key, and an
//!   answer checked under another key is refused.

#[path = "common/local.rs"]
mod local;

use local::*;
use stave::crypto::wrap;
use stave::keyspaces::validators::{ValidatorSigningWrite, ValidatorsRead, ValidatorsWrite};
use stave::local::deks::wrapped_of;
use stave::local::peer_client::{fetch_dek, has_content, PeerTarget};
use stave::proto::governance::OperatorKey;
use stave::store::{ChainStore, PruneConfig};

/// Commits the rotation of `name`'s operator key to `new` on `store`.
fn rotate(store: &ChainStore, name: [u8; 32], new: [u8; 32]) {
    let mut o = stave::store::Overlay::new(store.committed());
    let mut record = o.validator(&name).unwrap().expect("a validator");
    record.operator_signing_key = new.to_vec();
    o.put_validator(&name, &record);
    let row = |retired| OperatorKey {
        operator: name.to_vec(),
        retired,
    };
    o.put_operator_key(&new, &row(false));
    o.put_operator_key(&name, &row(true));
    let next = store.commit_info().unwrap().height.map_or(1, |h| h + 1);
    let t = 1_700_000_000_000_000_000i64 + next as i64 * 1_000_000_000;
    let pending = store.prepare(next, t, o.into_changes()).unwrap();
    store.commit(pending, PruneConfig::default()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_retired_key_is_refused_and_the_new_one_is_the_validator() {
    let dir = tempfile::tempdir().unwrap();
    let u = upload(64 * 1024, 7);
    let asg = vec![u.assignment(&[0, 1, 2], &[0, 1, 2])];
    let nodes = cluster(dir.path(), 4, asg.clone()).await;
    seed(&nodes[0], 0, &u);
    let new_key = ed25519_dalek::SigningKey::from_bytes(&[55; 32]);
    let new = new_key.verifying_key().to_bytes();
    for n in &nodes {
        rotate(&n.chain, op_key(2), new);
    }
    let view = nodes[0].chain.view();
    let address = stave::local::node::active_validator(&view, &op_key(0))
        .unwrap()
        .unwrap()
        .address;
    let target0 = PeerTarget {
        operator: op_key(0),
        address,
    };

    // the node still on the retired key
    let err = fetch_dek(nodes[2].requester(), CHAIN, &target0, &u.dek_cid)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("code 402 PEER_NOT_VALIDATOR"),
        "{err}"
    );

    // a node signing with the new key is validator 2
    let d = dir.path().join("rotated");
    let rotated = local_node(&d, nodes[2].chain.clone(), 2, new_key, asg);
    assert_eq!(rotated.me(), op_key(2), "named as before");
    let (stored, _) = fetch_dek(rotated.requester(), CHAIN, &target0, &u.dek_cid)
        .await
        .expect("the new key gets the DEK");
    let dek = wrap::unwrap_dek(&x25519(2), &wrapped_of(&stored).unwrap(), &u.dek_cid).unwrap();
    assert_eq!(*dek, *u.dek);

    // HasContent answers are signed by the responder's signing key
    let held = has_content(
        &rotated.operator,
        CHAIN,
        (&target0, &op_key(0)),
        &u.content_cid,
    )
    .await
    .expect("answer");
    assert_eq!(held, Some(u.blob.len() as u64));
    let err = has_content(&rotated.operator, CHAIN, (&target0, &new), &u.content_cid)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("from another key"), "{err}");
}
