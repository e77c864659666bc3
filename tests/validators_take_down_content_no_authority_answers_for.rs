//! Issue 28, a takedown path for content no takedown authority answers for
//! (`ValidatorTakedownRequest`, kind 214):
//! - content with no group: any ACTIVE validator may open the takedown
//!   (others get NOT_VALIDATOR, 200); it is PENDING with the validator as
//!   requester, but one validator alone takes nothing offline: the policy
//!   stays and access is still allowed; votes confirm it as any takedown,
//!   and only then is access refused (TAKEDOWN_ACTIVE);
//! - content of an ACTIVE group: refused (UNAUTHORIZED, 9): its
//!   authorities act, and still can;
//! - content of a SUSPENDED group (whose authority has no powers) and of a
//!   REMOVED group: a validator may open it;
//! - no upload: NOT_FOUND; a bad evidence hash: INVALID_ARGUMENT; a second
//!   request while PENDING: INVALID_TRANSITION.

mod inproc;
use inproc::governance_content::*;
use inproc::rights::*;
use stave::proto::governance::ElectionKind;
use stave::proto::rights::{PolicyType, Role};
use stave::tx::Code;

const LOOSE: &[u8] = b"bafy-ungrouped-1";
const OWNED: &[u8] = b"bafy-grouped-1";

/// Moves `GROUP` to SUSPENDED or REMOVED by 3 of 4 votes.
async fn group_vote(w: &mut World, kind: ElectionKind) {
    for v in &VALIDATORS[..3] {
        w.send(*v, vec![vote_group(GROUP, kind, true)]).await.ok();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn validators_take_down_ungrouped_content_by_request_and_vote() {
    let mut w = World::new().await;
    w.send(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, manifest(LOOSE))],
    )
    .await
    .ok();
    w.send(UPLOADER, vec![publish(LOOSE)]).await.ok();
    w.send(UPLOADER, vec![grant(LOOSE, CONSUMER, Role::Consumer, None)])
        .await
        .ok();
    assert_eq!(access_code(&w, LOOSE, CONSUMER, "DE"), None);

    w.refused(
        STRANGER,
        vec![validator_takedown(LOOSE)],
        Code::NotValidator,
    )
    .await;
    // no group, so no authority: the authority path refuses everyone
    w.refused(UPLOADER, vec![takedown(LOOSE)], Code::NotTakedownAuthority)
        .await;
    w.refused(
        VALIDATORS[1],
        vec![validator_takedown(b"bafy-no-such-upload")],
        Code::NotFound,
    )
    .await;
    let mut bad = validator_takedown(LOOSE);
    if let stave::tx::Action::ValidatorTakedownRequest(r) = &mut bad {
        r.evidence_hash.pop();
    }
    w.refused(VALIDATORS[1], vec![bad], Code::InvalidArgument)
        .await;

    w.send(VALIDATORS[1], vec![validator_takedown(LOOSE)])
        .await
        .ok();
    let t = takedown_record(&w, LOOSE);
    assert_eq!(
        (t.status, t.requested_at, t.group_id.as_str()),
        (1, w.height, "")
    );
    assert_eq!(t.takedown_authority_pubkey, pk(VALIDATORS[1]).to_vec());
    assert!(t.by_validators);
    assert_eq!(policy_type(&w, LOOSE), None, "the policy in force stays");
    assert_eq!(
        access_code(&w, LOOSE, CONSUMER, "DE"),
        None,
        "one validator's request denies nothing"
    );
    w.refused(
        VALIDATORS[2],
        vec![validator_takedown(LOOSE)],
        Code::InvalidTransition,
    )
    .await;
    for v in &VALIDATORS[..3] {
        w.send(*v, vec![resolve(LOOSE, true)]).await.ok();
    }
    let t = takedown_record(&w, LOOSE);
    assert_eq!((t.status, t.resolved_at), (2, w.height));
    assert_eq!(policy_type(&w, LOOSE), Some(PolicyType::TakenDown));
    assert_eq!(
        access_code(&w, LOOSE, CONSUMER, "DE"),
        Some(Code::TakedownActive)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn validators_act_only_where_the_group_cannot() {
    let mut w = grouped(OWNED).await;
    // ACTIVE group: its authority answers for the content
    w.refused(
        VALIDATORS[0],
        vec![validator_takedown(OWNED)],
        Code::Unauthorized,
    )
    .await;
    assert_eq!(policy_type(&w, OWNED), None);

    // SUSPENDED: the authority has no powers, validators do
    group_vote(&mut w, ElectionKind::Suspend).await;
    w.refused(AUTHORITY, vec![takedown(OWNED)], Code::NotTakedownAuthority)
        .await;
    w.send(VALIDATORS[0], vec![validator_takedown(OWNED)])
        .await
        .ok();
    let t = takedown_record(&w, OWNED);
    assert_eq!((t.status, t.group_id.as_str()), (1, GROUP));
    // dismissed by 2 of 4, it can be requested again once REMOVED
    // while a validator's takedown is PENDING the owner still governs the
    // policy, and a dismissal restores nothing over it
    w.send(UPLOADER, vec![policy(OWNED, PolicyType::Public, "", b"")])
        .await
        .ok();
    let before = policy_type(&w, OWNED);
    assert_eq!(before, Some(PolicyType::Public));
    for v in &VALIDATORS[..2] {
        w.send(*v, vec![resolve(OWNED, false)]).await.ok();
    }
    assert_eq!(takedown_record(&w, OWNED).status, 3, "DISMISSED");
    assert_eq!(policy_type(&w, OWNED), before, "nothing to restore");
    for v in &VALIDATORS[1..4] {
        w.send(*v, vec![vote_group(GROUP, ElectionKind::Admit, true)])
            .await
            .ok();
    }
    w.refused(
        VALIDATORS[0],
        vec![validator_takedown(OWNED)],
        Code::Unauthorized,
    )
    .await;
    group_vote(&mut w, ElectionKind::Remove).await;
    w.send(VALIDATORS[3], vec![validator_takedown(OWNED)])
        .await
        .ok();
    let t = takedown_record(&w, OWNED);
    assert_eq!((t.status, t.requested_at), (1, w.height));
    assert_eq!(t.takedown_authority_pubkey, pk(VALIDATORS[3]).to_vec());
}
