//! Removal follows the election rules: a REMOVE vote about an ACTIVE
//! validator opens a removal election; approvals over 2/3 of the active
//! power make it REMOVED and return its power-0 update; 1/3 against fails
//! the election and it stays ACTIVE (a later vote opens a new round).

mod inproc;
use inproc::governance::*;
use inproc::*;
use stave::proto::governance::ElectionKind;

#[tokio::test(flavor = "multi_thread")]
async fn three_of_four_remove_a_validator() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    let subject = op_seed(3);
    for i in 0..2 {
        let r = c
            .send(op_seed(i), vec![vote(subject, ElectionKind::Remove, true)])
            .await;
        assert_eq!(r.tx_results[0].code.value(), 0, "{}", r.tx_results[0].log);
        assert!(updates(&r).is_empty());
    }
    assert_eq!(c.status(subject), "ACTIVE");
    let r = c
        .send(op_seed(2), vec![vote(subject, ElectionKind::Remove, true)])
        .await;
    assert_eq!(updates(&r), vec![(pubkey(cons_seed(subject)), 0)]);
    assert!(has_event(&r, "validator.removed"));
    assert_eq!(c.status(subject), "REMOVED");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_third_against_keeps_the_validator_and_a_new_round_can_open() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    let subject = op_seed(3);
    assert_eq!(
        c.code(op_seed(0), vote(subject, ElectionKind::Remove, true))
            .await,
        0
    );
    assert_eq!(
        c.code(op_seed(1), vote(subject, ElectionKind::Remove, false))
            .await,
        0
    );
    assert_eq!(
        c.code(op_seed(3), vote(subject, ElectionKind::Remove, false))
            .await,
        0
    );
    let e = c.election(subject);
    assert_eq!((e.round, e.status), (1, 3), "round 1 FAILED");
    assert_eq!(c.status(subject), "ACTIVE");
    // The next REMOVE vote opens round 2, where op 0 may vote again.
    assert_eq!(
        c.code(op_seed(0), vote(subject, ElectionKind::Remove, true))
            .await,
        0
    );
    let e = c.election(subject);
    assert_eq!((e.round, e.status, e.votes.len()), (2, 1, 1));
}
