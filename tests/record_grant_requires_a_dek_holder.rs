//! Rule 7: the signer of `RecordGrant` must be a validator in the cid's
//! dek_holder_set, and the access decision must allow the consumer at that
//! height. The grant is stored under grants/ and grants_by_key/.

mod inproc;
use inproc::rights::*;
use stave::proto::rights::Role;
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn record_grant_requires_a_dek_holder() {
    let c = b"cid-1";
    let mut w = World::published(c).await;
    w.send(UPLOADER, vec![grant(c, CONSUMER, Role::Consumer, None)])
        .await
        .ok();
    // VALIDATORS[3] is a validator but not a DEK holder of this cid
    w.refused(
        VALIDATORS[3],
        vec![record(c, CONSUMER, "GB")],
        Code::NotDekHolder,
    )
    .await;
    w.refused(
        STRANGER,
        vec![record(c, CONSUMER, "GB")],
        Code::NotDekHolder,
    )
    .await;
    w.refused(
        UPLOADER,
        vec![record(c, CONSUMER, "GB")],
        Code::NotDekHolder,
    )
    .await;
    w.refused(
        VALIDATORS[1],
        vec![record(b"nope", CONSUMER, "GB")],
        Code::UnknownCid,
    )
    .await;

    w.send(VALIDATORS[1], vec![record(c, CONSUMER, "GB")])
        .await
        .ok();
    let h = w.height;
    let g = w.grant_at(c, CONSUMER, h).expect("grant");
    assert_eq!((g.count, g.block_height), (1, h));
    assert_eq!(g.validator_pubkey, pk(VALIDATORS[1]).to_vec());
    assert_eq!(g.territory, "GB");
    let view = w.node.store.view();
    let (by_key, next) = stave::keyspaces::grants::by_key(&view, &pk(CONSUMER), b"", 0).unwrap();
    assert_eq!(by_key, vec![g]);
    assert!(next.is_none());
}
