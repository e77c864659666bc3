//! Only ACTIVE validators vote: a vote by an account with no record, or by
//! a CANDIDATE, gets NOT_VALIDATOR (200) and changes nothing but its nonce.

mod inproc;
use inproc::governance::*;
use inproc::*;
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn strangers_and_candidates_cannot_vote() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    assert_eq!(c.code(110, apply(110)).await, 0);
    assert_eq!(c.code(111, apply(111)).await, 0);
    let before = state_dump_but_accounts(&c.node.store);
    for voter in [7u8, 111, 110] {
        let r = c.send(voter, vec![admit(110)]).await;
        assert_eq!(
            r.tx_results[0].code.value(),
            Code::NotValidator.value(),
            "voter {voter}"
        );
        assert!(r.tx_results[0].log.contains(&hex::encode(pubkey(voter))));
        assert!(r.tx_results[0].events.is_empty());
    }
    assert_eq!(state_dump_but_accounts(&c.node.store), before);
    assert_eq!(c.status(110), "CANDIDATE");
}
