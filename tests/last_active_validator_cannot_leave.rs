//! The set is never emptied: the only ACTIVE validator cannot leave or be
//! voted out (INVALID_TRANSITION, 209), and nothing changes.

mod inproc;
use inproc::governance::*;
use inproc::*;
use stave::proto::governance::ElectionKind;
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn the_only_validator_stays() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 1, serde_json::json!({})).await;
    let only = op_seed(0);
    let before = state_dump_but_accounts(&c.node.store);
    let r = c.send(only, vec![leave()]).await;
    assert_eq!(
        r.tx_results[0].code.value(),
        Code::InvalidTransition.value()
    );
    assert!(
        r.tx_results[0].log.contains("last ACTIVE"),
        "{}",
        r.tx_results[0].log
    );
    let r = c
        .send(only, vec![vote(only, ElectionKind::Remove, true)])
        .await;
    assert_eq!(
        r.tx_results[0].code.value(),
        Code::InvalidTransition.value()
    );
    assert_eq!(state_dump_but_accounts(&c.node.store), before);
    assert_eq!(c.status(only), "ACTIVE");
}
