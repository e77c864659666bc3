//! A takedown follows request → counter-notice → resolution by vote:
//! - only a takedown authority of the group that owns the cid may request
//!   (NOT_TAKEDOWN_AUTHORITY, 203); the record is PENDING with
//!   `requested_at` and the policy TAKEDOWN_PENDING, so access and SetPolicy
//!   are refused (TAKEDOWN_ACTIVE);
//! - only an OWNER may file a counter-notice (NOT_CONTENT_OWNER, 204);
//! - ACTIVE validators vote (NOT_VALIDATOR, 200, for others): over 2/3
//!   confirm → CONFIRMED, policy TAKEN_DOWN, `resolved_at`; 1/3 dismiss →
//!   DISMISSED and the policy in force before the request is back;
//! - a vote after the decision gets ELECTION_CLOSED (202).

mod inproc;
use inproc::governance_content::*;
use inproc::rights::*;
use stave::proto::rights::{PolicyType, Role};
use stave::tx::Code;

const CID: &[u8] = b"bafy-takedown-1";

#[tokio::test(flavor = "multi_thread")]
async fn confirmed_takedown_is_taken_down() {
    let mut w = grouped(CID).await;
    w.send(UPLOADER, vec![grant(CID, CONSUMER, Role::Consumer, None)])
        .await
        .ok();
    assert_eq!(access_code(&w, CID, CONSUMER, "DE"), None);
    // someone else's authority, and the uploader itself, may not request
    w.refused(
        OTHER_AUTHORITY,
        vec![takedown(CID)],
        Code::NotTakedownAuthority,
    )
    .await;
    w.refused(UPLOADER, vec![takedown(CID)], Code::NotTakedownAuthority)
        .await;
    w.send(AUTHORITY, vec![takedown(CID)]).await.ok();
    let requested = w.height;
    let t = takedown_record(&w, CID);
    assert_eq!(
        (t.status, t.requested_at, t.group_id.as_str()),
        (1, requested, GROUP)
    );
    assert_eq!(t.takedown_authority_pubkey, pk(AUTHORITY).to_vec());
    assert_eq!(policy_type(&w, CID), Some(PolicyType::TakedownPending));
    assert_eq!(
        access_code(&w, CID, CONSUMER, "DE"),
        Some(Code::TakedownActive)
    );
    w.refused(
        UPLOADER,
        vec![policy(CID, PolicyType::Public, "", b"")],
        Code::TakedownActive,
    )
    .await;
    // a second request while pending
    w.refused(AUTHORITY, vec![takedown(CID)], Code::InvalidTransition)
        .await;

    w.refused(CONSUMER, vec![counter(CID)], Code::NotContentOwner)
        .await;
    w.send(UPLOADER, vec![counter(CID)]).await.ok();
    let t = takedown_record(&w, CID);
    assert_eq!(t.counter_notice_by, pk(UPLOADER).to_vec());
    assert!(!t.counter_notice.is_empty());

    w.refused(STRANGER, vec![resolve(CID, true)], Code::NotValidator)
        .await;
    w.send(VALIDATORS[0], vec![resolve(CID, true)]).await.ok();
    w.refused(VALIDATORS[0], vec![resolve(CID, false)], Code::DoubleVote)
        .await;
    w.send(VALIDATORS[1], vec![resolve(CID, true)]).await.ok();
    assert_eq!(
        takedown_record(&w, CID).status,
        1,
        "20 of 40 is not over 2/3"
    );
    w.send(VALIDATORS[2], vec![resolve(CID, true)]).await.ok();
    let t = takedown_record(&w, CID);
    assert_eq!((t.status, t.resolved_at), (2, w.height));
    assert_eq!(policy_type(&w, CID), Some(PolicyType::TakenDown));
    assert_eq!(
        access_code(&w, CID, CONSUMER, "DE"),
        Some(Code::TakedownActive)
    );
    assert_eq!(
        access_code(&w, CID, UPLOADER, "DE"),
        Some(Code::TakedownActive)
    );
    w.refused(
        VALIDATORS[3],
        vec![resolve(CID, false)],
        Code::ElectionClosed,
    )
    .await;
    w.refused(AUTHORITY, vec![takedown(CID)], Code::InvalidTransition)
        .await;
    w.refused(
        UPLOADER,
        vec![policy(CID, PolicyType::Public, "", b"")],
        Code::TakedownActive,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn dismissed_takedown_restores_the_policy_kept_on_the_record() {
    let mut w = grouped(CID).await;
    w.send(UPLOADER, vec![policy(CID, PolicyType::Public, "", b"")])
        .await
        .ok();
    assert_eq!(access_code(&w, CID, STRANGER, "US"), None);
    w.send(AUTHORITY, vec![takedown(CID)]).await.ok();
    assert_eq!(
        access_code(&w, CID, STRANGER, "US"),
        Some(Code::TakedownActive)
    );
    w.send(VALIDATORS[0], vec![resolve(CID, false)]).await.ok();
    assert_eq!(takedown_record(&w, CID).status, 1);
    w.send(VALIDATORS[1], vec![resolve(CID, false)]).await.ok();
    let t = takedown_record(&w, CID);
    assert_eq!((t.status, t.resolved_at), (3, w.height));
    assert_eq!(policy_type(&w, CID), Some(PolicyType::Public));
    assert_eq!(access_code(&w, CID, STRANGER, "US"), None);
    w.refused(
        VALIDATORS[2],
        vec![resolve(CID, true)],
        Code::ElectionClosed,
    )
    .await;
    // a counter-notice needs a PENDING takedown
    w.refused(UPLOADER, vec![counter(CID)], Code::InvalidTransition)
        .await;
    // A dismissed takedown may be requested again.
    w.send(AUTHORITY, vec![takedown(CID)]).await.ok();
    assert_eq!(takedown_record(&w, CID).election.unwrap().round, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn dismissal_without_an_earlier_policy_leaves_none() {
    let mut w = grouped(CID).await;
    assert_eq!(policy_type(&w, CID), None);
    w.send(AUTHORITY, vec![takedown(CID)]).await.ok();
    for v in &VALIDATORS[..2] {
        w.send(*v, vec![resolve(CID, false)]).await.ok();
    }
    assert_eq!(policy_type(&w, CID), None);
}
