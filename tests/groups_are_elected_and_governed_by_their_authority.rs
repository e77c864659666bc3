//! Publisher groups: admitted by election of the ACTIVE validators (ACTIVE
//! with `admitted_at`), suspended, reinstated and removed by vote; only the
//! current takedown authorities rotate the authority set (a majority of them
//! voting for the same set) and manage members;
//! content joins a group only as a member's upload at upload time.

mod inproc;
use inproc::governance_content::*;
use inproc::rights::*;
use stave::keyspaces::groups::GroupsRead;
use stave::keyspaces::groups::{RotateTakedownAuthority, SetGroupMember};
use stave::proto::governance::ElectionKind;
use stave::tx::{Action, Code};

fn status(w: &World) -> Option<u32> {
    w.node
        .store
        .committed()
        .group(GROUP)
        .unwrap()
        .map(|g| g.status)
}

fn rotate(to: u8) -> Action {
    Action::RotateTakedownAuthority(RotateTakedownAuthority {
        group_id: GROUP.into(),
        takedown_authorities: vec![pk(to).to_vec()],
    })
}

fn member(who: u8, add: bool) -> Action {
    Action::SetGroupMember(SetGroupMember {
        group_id: GROUP.into(),
        member: pk(who).to_vec(),
        add,
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn admission_suspension_reinstatement_and_removal_follow_the_election_rules() {
    let mut w = World::new().await;
    w.send(STRANGER, vec![apply_group(GROUP, AUTHORITY, &[UPLOADER])])
        .await
        .ok();
    w.refused(
        STRANGER,
        vec![apply_group(GROUP, AUTHORITY, &[])],
        Code::Conflict,
    )
    .await;
    w.refused(
        STRANGER,
        vec![vote_group(GROUP, ElectionKind::Admit, true)],
        Code::NotValidator,
    )
    .await;
    for v in &VALIDATORS[..2] {
        w.send(*v, vec![vote_group(GROUP, ElectionKind::Admit, true)])
            .await
            .ok();
    }
    assert_eq!(status(&w), None, "20 of 40 does not admit");
    w.refused(
        VALIDATORS[0],
        vec![vote_group(GROUP, ElectionKind::Admit, false)],
        Code::DoubleVote,
    )
    .await;
    w.refused(
        VALIDATORS[0],
        vec![vote_group(GROUP, ElectionKind::Suspend, true)],
        Code::ElectionClosed,
    )
    .await;
    w.send(
        VALIDATORS[2],
        vec![vote_group(GROUP, ElectionKind::Admit, true)],
    )
    .await
    .ok();
    let g = w.node.store.committed().group(GROUP).unwrap().unwrap();
    assert_eq!((g.status, g.admitted_at), (1, w.height));
    w.refused(
        VALIDATORS[3],
        vec![vote_group(GROUP, ElectionKind::Admit, true)],
        Code::ElectionClosed,
    )
    .await;

    for v in &VALIDATORS[..3] {
        w.send(*v, vec![vote_group(GROUP, ElectionKind::Suspend, true)])
            .await
            .ok();
    }
    assert_eq!(status(&w), Some(2), "SUSPENDED");
    // A suspended group's authority has no powers.
    w.refused(
        AUTHORITY,
        vec![member(OWNER2, true)],
        Code::NotTakedownAuthority,
    )
    .await;
    for v in &VALIDATORS[1..4] {
        w.send(*v, vec![vote_group(GROUP, ElectionKind::Admit, true)])
            .await
            .ok();
    }
    assert_eq!(status(&w), Some(1), "reinstated");
    for v in &VALIDATORS[..3] {
        w.send(*v, vec![vote_group(GROUP, ElectionKind::Remove, true)])
            .await
            .ok();
    }
    assert_eq!(status(&w), Some(3), "REMOVED");
    w.refused(
        VALIDATORS[0],
        vec![vote_group(GROUP, ElectionKind::Admit, true)],
        Code::ElectionClosed,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn only_the_current_authority_rotates_and_manages_members() {
    let cid: &[u8] = b"bafy-group-1";
    let mut w = grouped(cid).await;
    w.refused(
        OTHER_AUTHORITY,
        vec![rotate(OTHER_AUTHORITY)],
        Code::NotTakedownAuthority,
    )
    .await;
    w.refused(
        OTHER_AUTHORITY,
        vec![member(OWNER2, true)],
        Code::NotTakedownAuthority,
    )
    .await;
    // A non-member cannot attach content to the group.
    let mut m = manifest(b"bafy-group-2");
    m.group_id = GROUP.into();
    w.refused(
        VALIDATORS[0],
        vec![upload_action(OWNER2, m.clone())],
        Code::NotGroupMember,
    )
    .await;
    w.send(AUTHORITY, vec![member(OWNER2, true)]).await.ok();
    w.send(VALIDATORS[0], vec![upload_action(OWNER2, m)])
        .await
        .ok();
    w.send(AUTHORITY, vec![member(OWNER2, false)]).await.ok();
    w.refused(AUTHORITY, vec![member(OWNER2, false)], Code::NotFound)
        .await;
    let mut m3 = manifest(b"bafy-group-3");
    m3.group_id = GROUP.into();
    w.refused(
        VALIDATORS[0],
        vec![upload_action(OWNER2, m3)],
        Code::NotGroupMember,
    )
    .await;
    // Rotation: the old authority loses its powers, the new one has them.
    w.send(AUTHORITY, vec![rotate(OTHER_AUTHORITY)]).await.ok();
    w.refused(AUTHORITY, vec![takedown(cid)], Code::NotTakedownAuthority)
        .await;
    w.send(OTHER_AUTHORITY, vec![takedown(cid)]).await.ok();
    // A group nobody applied for.
    let mut m4 = manifest(b"bafy-group-4");
    m4.group_id = "nobody".into();
    w.refused(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, m4)],
        Code::NotGroupMember,
    )
    .await;
}

fn rotate_to(keys: &[u8]) -> Action {
    Action::RotateTakedownAuthority(RotateTakedownAuthority {
        group_id: GROUP.into(),
        takedown_authorities: keys.iter().map(|k| pk(*k).to_vec()).collect(),
    })
}

fn authorities(w: &World) -> Vec<Vec<u8>> {
    w.node
        .store
        .committed()
        .group(GROUP)
        .unwrap()
        .unwrap()
        .takedown_authorities
}

/// Review m1: with several takedown authorities, a rotation takes a
/// majority of them voting for the same set; one alone can no longer
/// replace the others and take the group over.
#[tokio::test(flavor = "multi_thread")]
async fn a_rotation_needs_a_majority_of_the_current_authorities() {
    let mut w = grouped(b"bafy-group-m1").await;
    // A lone authority rotates at once: two authorities now.
    w.send(AUTHORITY, vec![rotate_to(&[AUTHORITY, OTHER_AUTHORITY])])
        .await
        .ok();
    let both = vec![pk(AUTHORITY).to_vec(), pk(OTHER_AUTHORITY).to_vec()];
    assert_eq!(authorities(&w), both);

    // One of two tries to drop the other: recorded, not applied.
    w.send(AUTHORITY, vec![rotate_to(&[AUTHORITY])]).await.ok();
    assert_eq!(authorities(&w), both, "one of two rotated alone");
    // A vote for another set does not count towards it.
    w.send(OTHER_AUTHORITY, vec![rotate_to(&[OTHER_AUTHORITY])])
        .await
        .ok();
    assert_eq!(authorities(&w), both, "two votes for two sets rotated");
    // A stranger's vote is refused and counts for nothing.
    w.refused(
        STRANGER,
        vec![rotate_to(&[AUTHORITY])],
        Code::NotTakedownAuthority,
    )
    .await;
    assert_eq!(authorities(&w), both);
    // The second authority changes its vote to the same set: 2 of 2.
    w.send(OTHER_AUTHORITY, vec![rotate_to(&[AUTHORITY])])
        .await
        .ok();
    assert_eq!(authorities(&w), vec![pk(AUTHORITY).to_vec()]);
    // The votes are spent: nothing is left under the group's rotation prefix.
    assert!(rotation_votes(&w).is_empty());
}

/// A pending rotation vote speaks for the group as it was: a suspension
/// clears it, so it cannot complete a rotation after a re-admission.
#[tokio::test(flavor = "multi_thread")]
async fn a_status_change_clears_pending_rotation_votes() {
    let mut w = grouped(b"bafy-group-m1-status").await;
    w.send(AUTHORITY, vec![rotate_to(&[AUTHORITY, OTHER_AUTHORITY])])
        .await
        .ok();
    w.send(AUTHORITY, vec![rotate_to(&[AUTHORITY])]).await.ok();
    assert_eq!(rotation_votes(&w).len(), 1, "one of two: pending");
    for v in &VALIDATORS[..3] {
        w.send(*v, vec![vote_group(GROUP, ElectionKind::Suspend, true)])
            .await
            .ok();
    }
    assert!(rotation_votes(&w).is_empty());
}

fn rotation_votes(w: &World) -> Vec<(Vec<u8>, Vec<u8>)> {
    let prefix = stave::keyspaces::groups::rotation_prefix(GROUP);
    w.node.store.prefix_list(&prefix, None, 10).unwrap()
}
