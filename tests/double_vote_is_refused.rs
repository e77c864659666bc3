//! A validator votes once per election: a vote on the other side gets
//! DOUBLE_VOTE (201) and changes nothing but its nonce; the same vote again
//! adds no vote, it only counts the election again.

mod inproc;
use inproc::governance::*;
use inproc::*;
use stave::proto::governance::ElectionKind;
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn a_second_vote_in_the_same_election_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    c.code(110, apply(110)).await;
    assert_eq!(c.code(op_seed(0), admit(110)).await, 0);
    let before = state_dump_but_accounts(&c.node.store);
    assert_eq!(
        c.code(op_seed(0), vote(110, ElectionKind::Admit, false))
            .await,
        Code::DoubleVote.value()
    );
    assert_eq!(state_dump_but_accounts(&c.node.store), before);
    // the same vote again: accepted, still one vote, still open
    assert_eq!(c.code(op_seed(0), admit(110)).await, 0);
    assert_eq!(state_dump_but_accounts(&c.node.store), before);
    let e = c.election(110);
    assert_eq!((e.votes.len(), e.status), (1, 1));
}

#[tokio::test(flavor = "multi_thread")]
async fn two_votes_by_one_validator_in_one_tx_are_all_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    c.code(110, apply(110)).await;
    let before = state_dump_but_accounts(&c.node.store);
    let reject = vote(110, ElectionKind::Admit, false);
    let r = c.send(op_seed(0), vec![admit(110), reject]).await;
    assert_eq!(r.tx_results[0].code.value(), Code::DoubleVote.value());
    assert_eq!(
        state_dump_but_accounts(&c.node.store),
        before,
        "the first vote is dropped too"
    );
}
