//! A validator's replica records merge while it is ACTIVE and while it
//! unbonds; once the chain moves it to REMOVED they merge nothing, and the
//! sweep of a node that is itself a current validator purges them. The
//! chain is the real app, in process, driven block by block.

mod inproc;
#[path = "common/replica.rs"]
mod replica;

use inproc::governance::{leave, op_seed, Chain};
use inproc::{key, Node};
use stave::local::peer_auth::now_ms;
use stave::local::LocalStore;
use stave::replica::md::Metadata;
use stave::replica::store::{Held, Put};
use stave::replica::Replica;

#[tokio::test(flavor = "multi_thread")]
async fn a_removed_validators_records_stop_merging_and_are_purged() {
    let dir = tempfile::tempdir().unwrap();
    let gov = serde_json::json!({ "unbonding_blocks": 1 });
    let mut c = Chain::start(Node::open(&dir.path().join("chain")), 4, gov).await;
    c.empty().await;
    let local = LocalStore::open(&dir.path().join("local")).unwrap();
    let r = Replica::open(
        local,
        c.node.store.clone(),
        key(op_seed(0)),
        replica::config(),
    )
    .unwrap();
    let leaver = key(op_seed(3));
    let (meta, value, dk) = replica::signed_record(
        &leaver,
        &r.chain_id().unwrap(),
        ("ops", b"notice"),
        now_ms(),
        1,
        true,
    );
    r.records
        .put(vec![Put {
            datakey: dk,
            held: Held {
                owner: leaver.verifying_key().to_bytes(),
                md: Metadata::from_bytes(&meta.metadata).unwrap(),
                db: "ops".into(),
                key: b"notice".to_vec(),
            },
            value,
        }])
        .unwrap();
    let shows = |r: &Replica| r.read("ops", b"notice", now_ms()).unwrap().0.is_some();
    assert!(shows(&r), "an ACTIVE validator's record merges");

    let res = c.send(op_seed(3), vec![leave()]).await;
    assert_eq!(
        res.tx_results[0].code.value(),
        0,
        "{}",
        res.tx_results[0].log
    );
    assert_eq!(c.status(op_seed(3)), "UNBONDING");
    assert!(shows(&r), "an UNBONDING validator's record still merges");
    assert_eq!(r.sweep().unwrap().purged, 0);

    c.empty().await;
    assert_eq!(c.status(op_seed(3)), "REMOVED");
    let (view, owners) = r.read("ops", b"notice", now_ms()).unwrap();
    assert!(
        view.is_none() && owners.is_empty(),
        "a REMOVED validator's record merges nothing"
    );
    assert!(
        r.records.get(&dk).unwrap().is_some(),
        "held until the sweep"
    );
    assert_eq!(r.sweep().unwrap().purged, 1);
    assert!(r.records.get(&dk).unwrap().is_none(), "purged");
}
