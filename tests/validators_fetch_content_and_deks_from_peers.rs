//! Four in-process validators with real peer gRPC services: one upload
//! replicated on all four, DEK held by validators 0–2. Only validator 0
//! starts with the content and its wrapped DEK. The reconcilers of 1–3
//! fetch what chain state assigns them; validator 3 (outside the holder
//! set) gets the content but is refused the DEK; a non-validator is
//! refused everything; a validator whose local store and content are lost
//! rebuilds them.

#[path = "common/local.rs"]
mod local;

use std::time::Duration;

use local::*;
use stave::crypto::{stream, wrap};
use stave::local::deks::{wrapped_of, DeksExt};
use stave::local::peer_client::{fetch_content, fetch_dek, BlobRequest, PeerTarget, IDLE};
use stave::local::status::status;
use stave::local::sync::SyncExt;
use stave::proto::local::SyncStatus;

fn count(s: &stave::proto::local::LocalStatusResponse, kind: &str, st: &str) -> u64 {
    s.counts
        .iter()
        .find(|c| c.kind == kind && c.status == st)
        .map_or(0, |c| c.count)
}

fn holds_everything(node: &stave::local::node::LocalNode, u: &Upload, dek: bool) -> bool {
    let content = node.content.verify(&u.content_cid).unwrap_or(false)
        && node
            .local
            .content_sync(&u.content_cid)
            .unwrap()
            .is_some_and(|e| e.status() == SyncStatus::Seeding);
    let has_dek = node.local.dek(&u.dek_cid).unwrap().is_some();
    content && has_dek == dek
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validators_fetch_content_and_deks_from_peers() {
    let dir = tempfile::tempdir().unwrap();
    let u = upload(300_000, 7);
    let asg = vec![u.assignment(&[0, 1, 2, 3], &[0, 1, 2])];
    let nodes = cluster(dir.path(), 4, asg.clone()).await;
    seed(&nodes[0], 0, &u);

    for (i, node) in nodes.iter().enumerate().skip(1) {
        let w = worker(node.clone());
        let ok = reconcile_until(&w, Duration::from_secs(30), || {
            holds_everything(node, &u, i < 3)
        })
        .await;
        assert!(ok, "node {i} did not converge: {:?}", status(node).unwrap());
        let s = status(node).unwrap();
        assert_eq!(
            count(&s, "content", "PENDING") + count(&s, "content", "FAILED"),
            0
        );
        assert_eq!(count(&s, "content", "SEEDING"), 1);
        assert_eq!(count(&s, "deks", "RECEIVED"), u64::from(i < 3));
        assert!(s.reconciled && s.failures.is_empty(), "{s:?}");
    }
    // 1 and 2 unwrap their own DEK and decrypt the replicated content
    for (i, node) in nodes.iter().enumerate().take(3).skip(1) {
        let stored = node.local.dek(&u.dek_cid).unwrap().unwrap();
        let dek = wrap::unwrap_dek(&x25519(i), &wrapped_of(&stored).unwrap(), &u.dek_cid).unwrap();
        assert_eq!(*dek, *u.dek);
        let blob = std::fs::read(node.content.path_of(&u.content_cid)).unwrap();
        let mut plain = Vec::new();
        stream::decrypt(&dek, &blob[..], &mut plain).unwrap();
        assert_eq!(plain, u.plain, "node {i}");
        assert!(wrap::unwrap_dek(&x25519(3), &wrapped_of(&stored).unwrap(), &u.dek_cid).is_err());
    }
    // 3 is outside the holder set: it wants no DEK and is refused one
    assert!(nodes[3].local.dek_sync(&u.dek_cid).unwrap().is_none());
    let target0 = PeerTarget {
        operator: op_key(0),
        address: peer_addr(&nodes[0], 0),
    };
    let err = fetch_dek(nodes[3].requester(), CHAIN, &target0, &u.dek_cid)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("code 405 PEER_NOT_DEK_HOLDER"),
        "{err}"
    );
    assert_eq!(nodes[3].local.dek(&u.dek_cid).unwrap(), None);

    // a key that is no validator is refused the DEK and the content
    let d = dir.path().join("stranger");
    let stranger = local_node(
        &d,
        nodes[0].chain.clone(),
        1,
        ed25519_dalek::SigningKey::from_bytes(&[99; 32]),
        asg.clone(),
    );
    refused_as_no_validator(&stranger, &target0, &u).await;
    assert!(!stranger.content.path_of(&u.content_cid).exists());
    // a request for another chain is refused
    let err = fetch_dek(nodes[1].requester(), "other-chain", &target0, &u.dek_cid)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("code 404 PEER_WRONG_TARGET"),
        "{err}"
    );
}

/// A DEK holder that does not replicate the content checks the DEK against
/// the manifest's `dek_commitment` and downloads no blob (review M7: it used
/// to fetch the whole blob into scratch). Here no replica even holds the
/// content, and the holder still gets and keeps its DEK.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dek_holder_that_is_no_replica_checks_its_dek_and_keeps_no_blob() {
    let dir = tempfile::tempdir().unwrap();
    let u = upload(200_000, 8);
    let asg = vec![u.assignment(&[0], &[0, 1])];
    let nodes = cluster(dir.path(), 2, asg).await;
    seed_dek(&nodes[0], 0, &u);
    let node = &nodes[1];
    let w = worker(node.clone());
    let ok = reconcile_until(&w, Duration::from_secs(30), || {
        node.local.dek(&u.dek_cid).unwrap().is_some()
    })
    .await;
    assert!(ok, "{:?}", status(node).unwrap());
    let k = node.local.dek_sync(&u.dek_cid).unwrap().unwrap();
    assert_eq!(k.status(), SyncStatus::Received);
    let stored = node.local.dek(&u.dek_cid).unwrap().unwrap();
    let dek = wrap::unwrap_dek(&x25519(1), &wrapped_of(&stored).unwrap(), &u.dek_cid).unwrap();
    assert_eq!(*dek, *u.dek);
    // no blob, visible or scratch, is left behind
    assert!(node.content.list().unwrap().is_empty());
    let tmp = dir.path().join("node1/content/.tmp");
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    assert!(status(node).unwrap().unassigned_content.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_validator_that_lost_its_local_store_rebuilds_it_from_peers() {
    let dir = tempfile::tempdir().unwrap();
    let ups: Vec<Upload> = (0..5)
        .map(|i| upload(70_000 * (i + 1), i as u8 + 1))
        .collect();
    let asg: Vec<_> = ups
        .iter()
        .map(|u| u.assignment(&[0, 1, 2], &[0, 1, 2]))
        .collect();
    let nodes = cluster(dir.path(), 3, asg.clone()).await;
    for u in &ups {
        seed(&nodes[0], 0, u);
        seed(&nodes[1], 1, u);
    }
    // node 2 "restarts" on an empty data/local and content/: same keys, same chain
    let fresh_dir = dir.path().join("node2-fresh");
    let fresh = local_node(&fresh_dir, nodes[2].chain.clone(), 2, operator(2), asg);
    let w = worker(fresh.clone());
    let ok = reconcile_until(&w, Duration::from_secs(60), || {
        ups.iter().all(|u| holds_everything(&fresh, u, true))
    })
    .await;
    let s = status(&fresh).unwrap();
    assert!(ok, "rebuild did not converge: {s:?}");
    for st in ["PENDING", "FAILED", "DOWNLOADING"] {
        assert_eq!(count(&s, "content", st), 0, "{st}");
        assert_eq!(count(&s, "deks", st), 0, "{st}");
    }
    assert_eq!(count(&s, "content", "SEEDING"), 5);
    assert_eq!(count(&s, "deks", "RECEIVED"), 5);
    for u in &ups {
        let stored = fresh.local.dek(&u.dek_cid).unwrap().unwrap();
        let dek = wrap::unwrap_dek(&x25519(2), &wrapped_of(&stored).unwrap(), &u.dek_cid).unwrap();
        assert_eq!(*dek, *u.dek);
    }
}

/// The address genesis gave validator `i` (from its chain record).
/// `who` is refused both the DEK and the content by `t` with 402.
async fn refused_as_no_validator(who: &stave::local::node::LocalNode, t: &PeerTarget, u: &Upload) {
    let err = fetch_dek(who.requester(), CHAIN, t, &u.dek_cid)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("code 402 PEER_NOT_VALIDATOR"),
        "{err}"
    );
    let req = BlobRequest {
        chain_id: CHAIN,
        target: t,
        cid: &u.content_cid,
        size: u.blob.len() as u64,
        idle: IDLE,
    };
    let err = fetch_content(who, &req).await.unwrap_err();
    assert!(err.to_string().contains("code 402"), "{err}");
}

fn peer_addr(node: &stave::local::node::LocalNode, i: usize) -> String {
    let view = node.chain.view();
    stave::local::node::active_validator(&view, &op_key(i))
        .unwrap()
        .unwrap()
        .address
}

/// Commits one block of `txs` on `chain` (in process, no CometBFT).
fn commit_block(chain: &stave::store::ChainStore, txs: Vec<Vec<u8>>) {
    let mut app = stave::app::App::load(chain.clone(), Default::default()).unwrap();
    let h = chain.commit_info().unwrap().height.unwrap_or(0) + 1;
    let out = app
        .finalize_block(
            h,
            1_700_000_000_000_000_000 + h as i64 * 1_000_000_000,
            &txs,
        )
        .unwrap();
    assert!(
        out.txs.iter().all(|r| r.code == stave::tx::Code::Ok),
        "{:?}",
        out.txs.iter().map(|r| &r.log).collect::<Vec<_>>()
    );
    app.commit().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_validator_that_left_is_refused_by_its_peers() {
    use stave::keyspaces::validators::LeaveValidator;
    use stave::tx::{build::sign_tx, Action};
    let dir = tempfile::tempdir().unwrap();
    let u = upload(50_000, 4);
    let asg = vec![u.assignment(&[0, 1, 2], &[0, 1, 2])];
    let nodes = cluster(dir.path(), 3, asg).await;
    seed(&nodes[0], 0, &u);
    let target0 = PeerTarget {
        operator: op_key(0),
        address: peer_addr(&nodes[0], 0),
    };
    // ACTIVE: served
    let (stored, _) = fetch_dek(nodes[2].requester(), CHAIN, &target0, &u.dek_cid)
        .await
        .unwrap();
    assert_eq!(stored.cid, u.dek_cid);
    // validator 2 leaves (UNBONDING) in the chain state node 0 reads
    let tx = sign_tx(
        &operator(2),
        CHAIN,
        0,
        vec![Action::LeaveValidator(LeaveValidator)],
        "",
    );
    commit_block(&nodes[0].chain, vec![tx]);
    refused_as_no_validator(&nodes[2], &target0, &u).await;
    // after the unbonding period (10 blocks by default) it is REMOVED: still refused
    for _ in 0..11 {
        commit_block(&nodes[0].chain, vec![]);
    }
    let view = nodes[0].chain.view();
    let status = stave::keyspaces::validators::query::get(&view, &op_key(2))
        .unwrap()
        .unwrap()
        .status;
    drop(view);
    assert_eq!(status, "REMOVED");
    refused_as_no_validator(&nodes[2], &target0, &u).await;
    // validator 1 is still served
    assert!(fetch_dek(nodes[1].requester(), CHAIN, &target0, &u.dek_cid)
        .await
        .is_ok());
}
