//! Content survives validator churn, in consensus:
//! - only the uploader (or an OWNER or ADMIN) amends an upload's sets
//!   (UNAUTHORIZED 9), to ACTIVE validators only (INVALID_MANIFEST 120);
//! - a joining member serves beside the leaving one until it confirms
//!   (`ConfirmHolding`); a confirmation nobody awaits is CONFLICT 11; the
//!   last one hands the sets over and empties `under_replicated/`;
//! - a set member that leaves the validator set is replaced in EndBlock by
//!   the only ACTIVE validator outside the sets, which confirms in turn.

mod inproc;
use inproc::rights::*;
use stave::keyspaces::uploads::{AmendUploadSets, ConfirmHolding, UploadsRead};
use stave::keyspaces::validators::LeaveValidator;
use stave::proto::rights as pb;
use stave::tx::{Action, Code};

const CID: &[u8] = b"bafy-churn-1";

fn keys(seeds: &[u8]) -> Vec<Vec<u8>> {
    seeds.iter().map(|s| pk(*s).to_vec()).collect()
}

fn amend(reps: &[u8], holds: &[u8]) -> Action {
    Action::AmendUploadSets(AmendUploadSets {
        cid: label_cid(CID),
        replication_set: keys(reps),
        dek_holder_set: keys(holds),
    })
}

fn confirm() -> Action {
    Action::ConfirmHolding(ConfirmHolding {
        cid: label_cid(CID),
    })
}

fn joining(u: &pb::Upload) -> Vec<Vec<u8>> {
    u.handover
        .iter()
        .flat_map(|h| h.unconfirmed.iter().map(|j| j.validator.clone()))
        .collect()
}

fn upload(w: &World) -> pb::Upload {
    w.node
        .store
        .view()
        .upload(&label_cid(CID))
        .unwrap()
        .unwrap()
}

fn under_replicated(w: &World) -> Vec<pb::UnderReplicated> {
    let view = w.node.store.view();
    stave::keyspaces::uploads::query::under_replicated(&view, b"", 0)
        .unwrap()
        .0
}

#[tokio::test(flavor = "multi_thread")]
async fn upload_sets_change_hands_only_after_joining_members_confirm() {
    let [v0, v1, v2, v3] = VALIDATORS;
    let mut w = World::published(CID).await;
    assert_eq!(upload(&w).replication_set, keys(&[v0, v1, v2]));

    w.refused(
        STRANGER,
        vec![amend(&[v0, v1, v3], &[v0])],
        Code::Unauthorized,
    )
    .await;
    w.refused(
        UPLOADER,
        vec![amend(&[v0, STRANGER], &[v0])],
        Code::InvalidManifest,
    )
    .await;

    // v2 leaves, v3 joins: both serve until v3 confirms
    w.send(UPLOADER, vec![amend(&[v0, v1, v3], &[v0, v1, v3])])
        .await
        .ok();
    let u = upload(&w);
    assert_eq!(u.replication_set, keys(&[v0, v1, v2, v3]));
    assert_eq!(joining(&u), keys(&[v3]));
    assert_eq!(under_replicated(&w).len(), 1);
    w.refused(v1, vec![confirm()], Code::Conflict).await;
    w.send(v3, vec![confirm()]).await.ok();
    let u = upload(&w);
    assert_eq!(
        (u.replication_set, u.dek_holder_set, u.handover),
        (keys(&[v0, v1, v3]), keys(&[v0, v1, v3]), None)
    );
    assert!(under_replicated(&w).is_empty());

    // v1 leaves the validator set: EndBlock puts v2, the only ACTIVE
    // validator outside the sets, in its place
    w.send(v1, vec![Action::LeaveValidator(LeaveValidator)])
        .await
        .ok();
    let h = upload(&w).handover.expect("a handover");
    assert_eq!(h.replication_set, keys(&[v0, v2, v3]));
    assert_eq!(joining(&upload(&w)), keys(&[v2]));
    assert!(
        upload(&w).replication_set.contains(&pk(v1).to_vec()),
        "v1 serves on"
    );
    w.send(v2, vec![confirm()]).await.ok();
    let u = upload(&w);
    assert_eq!((u.replication_set, u.handover), (keys(&[v0, v2, v3]), None));
    assert!(under_replicated(&w).is_empty());
    // v1 (UNBONDING) no longer serves the upload: no assignment, no quota
    let view = w.node.store.view();
    let mine = stave::keyspaces::uploads::query::assigned_to(&view, &pk(v1)).unwrap();
    assert!(mine.is_empty(), "{mine:?}");
    assert_eq!(view.validator_replicated(&pk(v1)).unwrap(), 0);
    assert!(view.validator_replicated(&pk(v2)).unwrap() > 0);
    drop(view);
    // and a member that left cannot confirm anything any more
    w.refused(v1, vec![confirm()], Code::Unauthorized).await;
}
