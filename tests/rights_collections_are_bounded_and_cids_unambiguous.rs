//! What a rights tx can grow is bounded, and each cid names one thing:
//! - a grant to a new key past `max_entitlements_per_cid` gets
//!   RIGHTS_CAP_EXCEEDED (112); replacing a role, or granting again after a
//!   revoke, stays within it;
//! - OWNER and ADMIN grants carry no scope (INVALID_SCOPE, 121): authority
//!   that lapsed with a time window would leave a cid nobody can govern;
//! - an upload whose `encrypted_cid` is another upload's blob or flac cid,
//!   or whose `flac_cid` is another's blob, gets CONFLICT (11);
//! - RecordGrants of one cid to one consumer in one grant period share one
//!   record and add up its count, so the log grows with listeners, not
//!   plays; a `RecordGrants` batch is all or none;
//! - a validator records at most `max_grants_per_validator_per_block`
//!   grants per block (RIGHTS_CAP_EXCEEDED past it).

mod inproc;
use inproc::rights::*;
use stave::proto::rights::{PolicyType, Role};
use stave::tx::Code;

const CID: &[u8] = b"bafy-bounded-1";

#[tokio::test(flavor = "multi_thread")]
async fn entitlements_per_cid_are_capped() {
    let params = serde_json::json!({ "rights": { "max_entitlements_per_cid": 3 } });
    let mut w = World::with_params(params).await.publish(CID).await;
    // the publisher's OWNER record is the first of three
    for who in [CONSUMER, DISTRIBUTOR] {
        w.send(UPLOADER, vec![grant(CID, who, Role::Consumer, None)])
            .await
            .ok();
    }
    w.refused(
        UPLOADER,
        vec![grant(CID, STRANGER, Role::Consumer, None)],
        Code::RightsCapExceeded,
    )
    .await;
    // a replacement adds no record
    w.send(
        UPLOADER,
        vec![grant(CID, DISTRIBUTOR, Role::Distributor, None)],
    )
    .await
    .ok();
    // a revoke frees a place
    w.send(UPLOADER, vec![revoke(CID, CONSUMER)]).await.ok();
    w.send(UPLOADER, vec![grant(CID, STRANGER, Role::Consumer, None)])
        .await
        .ok();
    assert_eq!(w.role(CID, STRANGER), Some(Role::Consumer));
}

#[tokio::test(flavor = "multi_thread")]
async fn owner_and_admin_grants_carry_no_scope() {
    let mut w = World::published(CID).await;
    for role in [Role::Owner, Role::Admin] {
        let r = w
            .send(
                UPLOADER,
                vec![grant(CID, ADMIN, role, territories(&["DE"]))],
            )
            .await;
        r.is(Code::InvalidScope);
        assert!(r.log.contains("carries no scope"), "{}", r.log);
    }
    w.send(UPLOADER, vec![grant(CID, ADMIN, Role::Admin, None)])
        .await
        .ok();
    w.send(
        ADMIN,
        vec![grant(CID, CONSUMER, Role::Consumer, territories(&["DE"]))],
    )
    .await
    .ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cid_names_one_upload() {
    let mut w = World::published(CID).await;
    let first = manifest(CID);
    // another upload reusing the first one's encrypted blob
    let mut m = manifest(b"bafy-bounded-2");
    m.encrypted_cid = first.encrypted_cid.clone();
    w.refused(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, m)],
        Code::Conflict,
    )
    .await;
    // an encrypted_cid equal to another upload's flac cid
    let mut m = manifest(b"bafy-bounded-3");
    m.encrypted_cid = label_cid(CID);
    w.refused(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, m)],
        Code::Conflict,
    )
    .await;
    // a flac_cid equal to another upload's encrypted blob
    let m = manifest(&first.encrypted_cid);
    w.refused(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, m)],
        Code::Conflict,
    )
    .await;
    // distinct cids are fine
    w.send(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, manifest(b"bafy-bounded-4"))],
    )
    .await
    .ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn deliveries_in_one_period_share_one_record_with_a_count() {
    use stave::keyspaces::grants::{RecordGrant, RecordGrants};
    use stave::tx::Action;
    let mut w = World::published(CID).await;
    w.send(UPLOADER, vec![policy(CID, PolicyType::Public, "", b"")])
        .await
        .ok();
    let codes = w
        .send_block(vec![
            (VALIDATORS[0], vec![record(CID, CONSUMER, "DE")]),
            (VALIDATORS[1], vec![record(CID, CONSUMER, "GB")]),
            (VALIDATORS[1], vec![record(CID, STRANGER, "GB")]),
        ])
        .await;
    assert_eq!(codes, vec![0, 0, 0]);
    let g = w.grant_at(CID, CONSUMER, w.height).unwrap();
    assert_eq!(
        (g.validator_pubkey, g.territory, g.count, g.block_height),
        (pk(VALIDATORS[0]).to_vec(), "GB".into(), 2, w.height),
        "the first recorder pays for the record; the latest territory shows"
    );
    let first = w.height;
    // a batch: both entries, counts added to the same period's record
    let entry = |who: u8, count: u32| RecordGrant {
        cid: label_cid(CID),
        consumer_pubkey: pk(who).to_vec(),
        territory: "GB".into(),
        context: Vec::new(),
        count,
        use_type: 0,
    };
    let batch = |grants| {
        Action::RecordGrants(RecordGrants {
            grants,
            from: 0,
            to: 0,
        })
    };
    let ranged = |grants, from, to| Action::RecordGrants(RecordGrants { grants, from, to });
    w.send(
        VALIDATORS[1],
        vec![batch(vec![entry(CONSUMER, 3), entry(STRANGER, 0)])],
    )
    .await
    .ok();
    let g = w.grant_at(CID, CONSUMER, w.height).unwrap();
    assert_eq!(
        (g.count, g.block_height, g.last_height),
        (5, first, w.height)
    );
    assert_eq!(w.grant_at(CID, STRANGER, w.height).unwrap().count, 2);
    // all or none: an entry for an unknown cid refuses the whole batch
    let mut bad = entry(CONSUMER, 1);
    bad.cid = label_cid(b"nope");
    w.refused(
        VALIDATORS[1],
        vec![batch(vec![entry(CONSUMER, 1), bad])],
        Code::UnknownCid,
    )
    .await;
    w.refused(VALIDATORS[1], vec![batch(vec![])], Code::InvalidArgument)
        .await;
    // a holder's ranges are recorded once: one starting below the last
    // recorded end is CONFLICT and changes nothing
    w.send(VALIDATORS[1], vec![ranged(vec![entry(CONSUMER, 1)], 0, 5)])
        .await
        .ok();
    let count = |w: &World| w.grant_at(CID, CONSUMER, w.height).map(|g| g.count);
    assert_eq!(count(&w), Some(6));
    w.refused(
        VALIDATORS[1],
        vec![ranged(vec![entry(CONSUMER, 1)], 3, 8)],
        Code::Conflict,
    )
    .await;
    w.refused(
        VALIDATORS[1],
        vec![ranged(vec![entry(CONSUMER, 1)], 5, 5)],
        Code::InvalidArgument,
    )
    .await;
    w.send(VALIDATORS[1], vec![ranged(vec![entry(CONSUMER, 1)], 5, 9)])
        .await
        .ok();
    assert_eq!(count(&w), Some(7));
    // another holder has its own ranges
    w.send(VALIDATORS[0], vec![ranged(vec![entry(CONSUMER, 1)], 0, 1)])
        .await
        .ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn grants_per_validator_and_block_are_capped() {
    let params = serde_json::json!({ "rights": { "max_grants_per_validator_per_block": 2 } });
    let mut w = World::with_params(params).await.publish(CID).await;
    w.send(UPLOADER, vec![policy(CID, PolicyType::Public, "", b"")])
        .await
        .ok();
    let three = |v: u8| {
        vec![
            (v, vec![record(CID, CONSUMER, "DE")]),
            (v, vec![record(CID, STRANGER, "DE")]),
            (v, vec![record(CID, OWNER2, "DE")]),
        ]
    };
    let codes = w.send_block(three(VALIDATORS[0])).await;
    assert_eq!(codes, vec![0, 0, Code::RightsCapExceeded.value()]);
    assert!(w.grant_at(CID, OWNER2, w.height).is_none());
    // another validator, and the next block, have their own allowance
    let codes = w.send_block(three(VALIDATORS[1])[..1].to_vec()).await;
    assert_eq!(codes, vec![0]);
    let codes = w.send_block(three(VALIDATORS[0])[..2].to_vec()).await;
    assert_eq!(codes, vec![0, 0]);
}
