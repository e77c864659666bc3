//! Elections expire `election_blocks` after they open: a candidate becomes
//! REMOVED, a group application is dropped, a removal lapses; a vote after
//! expiry is refused. The caps count live records only: REMOVED validators
//! and failed, expired or removed groups free their place. A group with an
//! open election of one kind refuses a vote that would open another.

mod inproc;
use inproc::governance::*;
use inproc::governance_content::{apply_group, vote_group};
use inproc::*;
use stave::keyspaces::groups::GroupsRead;
use stave::proto::governance::ElectionKind;
use stave::tx::Code;

const EXPIRED: u32 = 4;

fn params() -> serde_json::Value {
    serde_json::json!({
        "election_blocks": 5,
        "max_validator_records": 6,
        "max_active_validators": 5,
        "max_groups": 2,
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn candidates_expire_and_free_their_record() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, params()).await;
    assert_eq!(c.code(50, apply(50)).await, 0);
    assert_eq!(c.code(51, apply(51)).await, 0);
    // 4 genesis + 2 candidates = 6 live records: the cap
    assert_eq!(c.code(52, apply(52)).await, Code::GovernanceCap.value());
    // a candidate that leaves is REMOVED and frees its record
    assert_eq!(c.code(50, leave()).await, 0);
    assert_eq!(c.status(50), "REMOVED");
    let opened = c.height + 1;
    assert_eq!(c.code(52, apply(52)).await, 0);
    // 51's election (opened at height 2) expires at 2 + 5 = 7
    let mut expired_at = None;
    while c.height < opened + 5 {
        let r = c.empty().await;
        if has_event(&r, "validator.election_closed") && expired_at.is_none() {
            expired_at = Some(c.height);
        }
    }
    assert_eq!(expired_at, Some(7));
    for op in [51, 52] {
        assert_eq!(c.status(op), "REMOVED", "candidate {op}");
        let e = c.election(op);
        assert_eq!(e.status, EXPIRED, "candidate {op}");
    }
    assert_eq!(c.election(51).closed_at, 7);
    // a vote on the expired election is refused
    assert_eq!(
        c.code(op_seed(0), admit(52)).await,
        Code::ElectionClosed.value()
    );
    // two records are free again; an expired candidate may apply again
    assert_eq!(c.code(53, apply(53)).await, 0);
    assert_eq!(c.code(51, apply(51)).await, 0);
    assert_eq!(c.election(51).round, 2);
    assert_eq!(c.code(54, apply(54)).await, Code::GovernanceCap.value());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_removal_election_lapses_and_the_validator_stays_active() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, params()).await;
    let remove = vote(op_seed(3), ElectionKind::Remove, true);
    assert_eq!(c.code(op_seed(0), remove.clone()).await, 0);
    for _ in 0..5 {
        c.empty().await;
    }
    assert_eq!(c.election(op_seed(3)).status, EXPIRED);
    assert_eq!(c.status(op_seed(3)), "ACTIVE");
    // a new vote opens round 2, where validator 0 may vote again
    assert_eq!(c.code(op_seed(0), remove).await, 0);
    let e = c.election(op_seed(3));
    assert_eq!((e.round, e.status, e.votes.len()), (2, 1, 1));
}

fn group_status(c: &Chain, id: &str) -> Option<u32> {
    c.node
        .store
        .committed()
        .group(id)
        .unwrap()
        .map(|g| g.status)
}

#[tokio::test(flavor = "multi_thread")]
async fn group_places_are_freed_by_rejection_expiry_and_removal() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, params()).await;
    assert_eq!(c.code(60, apply_group("a", 70, &[])).await, 0);
    for v in 0..3 {
        let yes = vote_group("a", ElectionKind::Admit, true);
        assert_eq!(c.code(op_seed(v), yes).await, 0);
    }
    assert_eq!(group_status(&c, "a"), Some(1));
    assert_eq!(c.code(60, apply_group("b", 70, &[])).await, 0);
    let capped = c.code(60, apply_group("c", 70, &[])).await;
    assert_eq!(capped, Code::GovernanceCap.value());
    // "b" is rejected (20 of 40 against): its place is free
    for v in 0..2 {
        let no = vote_group("b", ElectionKind::Admit, false);
        assert_eq!(c.code(op_seed(v), no).await, 0);
    }
    assert_eq!(c.code(60, apply_group("c", 70, &[])).await, 0);
    // "c" expires undecided and frees its place
    for _ in 0..5 {
        c.empty().await;
    }
    let app = c
        .node
        .store
        .committed()
        .group_application("c")
        .unwrap()
        .unwrap();
    assert_eq!(app.election.unwrap().status, EXPIRED);
    let late = vote_group("c", ElectionKind::Admit, true);
    assert_eq!(c.code(op_seed(0), late).await, Code::ElectionClosed.value());
    assert_eq!(c.code(60, apply_group("d", 70, &[])).await, 0);
    // an open SUSPEND election on "a" refuses a REMOVE vote until it closes
    let suspend = vote_group("a", ElectionKind::Suspend, true);
    assert_eq!(c.code(op_seed(0), suspend).await, 0);
    let remove = || vote_group("a", ElectionKind::Remove, true);
    assert_eq!(c.code(op_seed(1), remove()).await, Code::Conflict.value());
    let g = c.node.store.committed().group("a").unwrap().unwrap();
    assert_eq!(
        g.election.unwrap().votes.len(),
        1,
        "the SUSPEND votes stand"
    );
    for _ in 0..5 {
        c.empty().await;
    }
    // the suspension lapsed; "a" is removed by vote and frees its place
    assert_eq!(group_status(&c, "a"), Some(1));
    for v in 0..3 {
        assert_eq!(c.code(op_seed(v), remove()).await, 0);
    }
    assert_eq!(group_status(&c, "a"), Some(3));
    // "d" expired meanwhile: two places are free, not three
    let d = c
        .node
        .store
        .committed()
        .group_application("d")
        .unwrap()
        .unwrap();
    assert_eq!(d.election.unwrap().status, EXPIRED);
    assert_eq!(c.code(60, apply_group("e", 70, &[])).await, 0);
    assert_eq!(c.code(60, apply_group("f", 70, &[])).await, 0);
    assert_eq!(
        c.code(60, apply_group("g", 70, &[])).await,
        Code::GovernanceCap.value()
    );
}
