//! Elections expire `election_blocks` after they open: a candidate or a
//! group application is dropped, a removal lapses; a vote after expiry is
//! refused. Applications have caps of their own (`max_candidates`,
//! `max_group_applications`), and a failed, withdrawn or expired one leaves
//! no state behind: no record, no consensus-key index entry, no due entry.
//! A group with an open election of one kind refuses a vote that would open
//! another.

mod inproc;
use inproc::governance::*;
use inproc::governance_content::{apply_group, vote_group};
use inproc::*;
use stave::keyspaces::groups::GroupsRead;
use stave::keyspaces::validators::{expiry, ValidatorsRead};
use stave::proto::governance::ElectionKind;
use stave::store::{Space, StateRead};
use stave::tx::Code;

const EXPIRED: u32 = 4;

fn params() -> serde_json::Value {
    serde_json::json!({
        "election_blocks": 5,
        "max_validator_records": 8,
        "max_active_validators": 5,
        "max_candidates": 2,
        "max_groups": 3,
        "max_group_applications": 2,
    })
}

/// The due entries: one per open election.
fn due(c: &Chain) -> usize {
    let view = c.node.store.committed();
    view.prefix_raw(Space::State, &expiry::due_prefix(), None, 1000)
        .unwrap()
        .len()
}

/// Whether anything about candidate `op` is left in state.
fn forgotten(c: &Chain, op: u8) -> bool {
    let view = c.node.store.committed();
    view.validator(&pubkey(op)).unwrap().is_none()
        && view
            .validator_by_consensus(&pubkey(cons_seed(op)))
            .unwrap()
            .is_none()
}

#[tokio::test(flavor = "multi_thread")]
async fn candidates_expire_withdraw_or_fail_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, params()).await;
    assert_eq!(c.code(50, apply(50)).await, 0);
    assert_eq!(c.code(51, apply(51)).await, 0);
    assert_eq!(due(&c), 2);
    // two open applications: the cap of its own
    assert_eq!(c.code(52, apply(52)).await, Code::GovernanceCap.value());
    // a candidate that withdraws is deleted, with its index and due entries
    assert_eq!(c.code(50, leave()).await, 0);
    assert!(forgotten(&c, 50));
    assert_eq!(due(&c), 1);
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
        assert!(forgotten(&c, op), "candidate {op}");
    }
    assert_eq!(due(&c), 0);
    assert_eq!(
        c.node.store.committed().validator_totals().unwrap().records,
        4
    );
    // a vote about a dropped candidate finds nothing
    assert_eq!(c.code(op_seed(0), admit(52)).await, Code::NotFound.value());
    // a rejected candidate is deleted at the deciding vote, due entry too
    assert_eq!(c.code(53, apply(53)).await, 0);
    for v in 0..2 {
        let no = vote(53, ElectionKind::Admit, false);
        assert_eq!(c.code(op_seed(v), no).await, 0);
    }
    assert!(forgotten(&c, 53));
    assert_eq!(due(&c), 0);
    // an expired candidate may apply again: a fresh record, round 1
    assert_eq!(c.code(51, apply(51)).await, 0);
    assert_eq!(c.election(51).round, 1);
    assert_eq!(c.status(51), "CANDIDATE");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_removal_election_lapses_and_the_validator_stays_active() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, params()).await;
    let remove = vote(op_seed(3), ElectionKind::Remove, true);
    assert_eq!(c.code(op_seed(0), remove.clone()).await, 0);
    assert_eq!(due(&c), 1);
    for _ in 0..5 {
        c.empty().await;
    }
    assert_eq!(c.election(op_seed(3)).status, EXPIRED);
    assert_eq!(c.status(op_seed(3)), "ACTIVE");
    assert_eq!(due(&c), 0);
    // a new vote opens round 2, where validator 0 may vote again
    assert_eq!(c.code(op_seed(0), remove).await, 0);
    let e = c.election(op_seed(3));
    assert_eq!((e.round, e.status, e.votes.len()), (2, 1, 1));
    // a failed removal election deletes its due entry at once
    for v in 1..3 {
        let no = vote(op_seed(3), ElectionKind::Remove, false);
        assert_eq!(c.code(op_seed(v), no).await, 0);
    }
    assert_eq!(c.election(op_seed(3)).status, 3);
    assert_eq!(due(&c), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_election_whose_voters_left_is_decided_by_a_recount() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 5, serde_json::json!({})).await;
    assert_eq!(c.code(50, apply(50)).await, 0);
    for v in 0..3 {
        assert_eq!(c.code(op_seed(v), admit(50)).await, 0);
    }
    assert_eq!(c.status(50), "CANDIDATE", "30 of 50");
    // validator 4 (no vote) leaves: 30 of 40 would pass, but nobody is left to vote
    assert_eq!(c.code(op_seed(4), leave()).await, 0);
    assert_eq!(c.status(50), "CANDIDATE");
    // validator 0 sends its vote again: nothing added, the election recounted
    assert_eq!(c.code(op_seed(0), admit(50)).await, 0);
    assert_eq!(c.status(50), "ACTIVE");
    let e = c.election(50);
    assert_eq!((e.status, e.votes.len()), (2, 3));
}

fn group_status(c: &Chain, id: &str) -> Option<u32> {
    c.node
        .store
        .committed()
        .group(id)
        .unwrap()
        .map(|g| g.status)
}

fn application_exists(c: &Chain, id: &str) -> bool {
    c.node
        .store
        .committed()
        .group_application(id)
        .unwrap()
        .is_some()
}

#[tokio::test(flavor = "multi_thread")]
async fn group_applications_are_capped_and_dropped_when_they_fail() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, params()).await;
    assert_eq!(c.code(60, apply_group("a", 70, &[])).await, 0);
    for v in 0..3 {
        let yes = vote_group("a", ElectionKind::Admit, true);
        assert_eq!(c.code(op_seed(v), yes).await, 0);
    }
    assert_eq!(group_status(&c, "a"), Some(1));
    assert!(!application_exists(&c, "a"), "the group record replaces it");
    assert_eq!(due(&c), 0);
    assert_eq!(c.code(60, apply_group("b", 70, &[])).await, 0);
    assert_eq!(c.code(60, apply_group("c", 70, &[])).await, 0);
    // two open applications: their own cap, before max_groups (3)
    let capped = c.code(60, apply_group("d", 70, &[])).await;
    assert_eq!(capped, Code::GovernanceCap.value());
    // "b" is rejected (20 of 40 against): deleted, its places free
    for v in 0..2 {
        let no = vote_group("b", ElectionKind::Admit, false);
        assert_eq!(c.code(op_seed(v), no).await, 0);
    }
    assert!(!application_exists(&c, "b"));
    assert_eq!(due(&c), 1);
    assert_eq!(c.code(60, apply_group("d", 70, &[])).await, 0);
    // a (1 group) + c + d (2 applications) = 3 = max_groups
    assert_eq!(
        c.code(61, apply_group("e", 70, &[])).await,
        Code::GovernanceCap.value()
    );
    // "c" and "d" expire undecided and are deleted
    for _ in 0..5 {
        c.empty().await;
    }
    assert!(!application_exists(&c, "c") && !application_exists(&c, "d"));
    assert_eq!(due(&c), 0);
    let late = vote_group("c", ElectionKind::Admit, true);
    assert_eq!(c.code(op_seed(0), late).await, Code::NotFound.value());
    // an id may apply again after its application was dropped
    assert_eq!(c.code(60, apply_group("c", 70, &[])).await, 0);
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
    // "c" expired meanwhile: all three places are free
    assert!(!application_exists(&c, "c"));
    assert_eq!(c.code(60, apply_group("e", 70, &[])).await, 0);
    assert_eq!(c.code(60, apply_group("f", 70, &[])).await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn group_ids_are_plain_ascii() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, params()).await;
    // a stateless refusal consumes no nonce: one fresh signer per attempt
    for (seed, bad) in (61..).zip(["a/b", "tab\there", "é", "a b"]) {
        let r = c.send(seed, vec![apply_group(bad, 70, &[])]).await;
        assert_eq!(
            r.tx_results[0].code.value(),
            Code::InvalidArgument.value(),
            "{bad:?}: {}",
            r.tx_results[0].log
        );
    }
    assert_eq!(c.code(60, apply_group("Label_1.x-y", 70, &[])).await, 0);
}
