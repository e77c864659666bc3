//! A vote on a decided election, or on an election that does not exist
//! (ADMIT about an ACTIVE validator), gets ELECTION_CLOSED (202); a vote
//! about a rejected candidate, whose record is deleted, gets NOT_FOUND (10).
//! Either changes nothing but its nonce.

mod inproc;
use inproc::governance::*;
use inproc::*;
use stave::proto::governance::ElectionKind;
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn votes_after_the_decision_or_without_an_election_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    // No election: a genesis validator was never a candidate.
    assert_eq!(
        c.code(op_seed(0), admit(op_seed(1))).await,
        Code::ElectionClosed.value()
    );
    // Passed.
    c.code(110, apply(110)).await;
    for i in 0..3 {
        c.code(op_seed(i), admit(110)).await;
    }
    let before = state_dump_but_accounts(&c.node.store);
    assert_eq!(
        c.code(op_seed(3), admit(110)).await,
        Code::ElectionClosed.value()
    );
    assert_eq!(state_dump_but_accounts(&c.node.store), before);
    // Failed: with 5 x 10 active, 10 against is under 1/3, 20 is not.
    c.code(111, apply(111)).await;
    assert_eq!(
        c.code(op_seed(0), vote(111, ElectionKind::Admit, false))
            .await,
        0
    );
    assert_eq!(c.status(111), "CANDIDATE");
    assert_eq!(
        c.code(op_seed(1), vote(111, ElectionKind::Admit, false))
            .await,
        0
    );
    assert_eq!(c.status(111), "", "a rejected candidate is deleted");
    let before = state_dump_but_accounts(&c.node.store);
    assert_eq!(c.code(op_seed(3), admit(111)).await, Code::NotFound.value());
    assert_eq!(
        c.code(op_seed(3), vote(111, ElectionKind::Remove, true))
            .await,
        Code::NotFound.value()
    );
    assert_eq!(state_dump_but_accounts(&c.node.store), before);
}
