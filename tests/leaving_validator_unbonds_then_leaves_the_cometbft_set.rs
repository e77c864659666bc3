//! `LeaveValidator` moves an ACTIVE validator to UNBONDING: it stays in
//! CometBFT's set and stops voting. After `unbonding_blocks` it is REMOVED
//! and that block returns its power-0 update, once. A CANDIDATE that leaves
//! is dropped at once (no record is kept) and no update ever names its key.

mod inproc;
use inproc::governance::*;
use inproc::*;
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn active_validator_unbonds_for_the_period_then_gets_power_zero() {
    let dir = tempfile::tempdir().unwrap();
    let gov = serde_json::json!({ "unbonding_blocks": 6 });
    let mut c = Chain::start(Node::open(dir.path()), 4, gov).await;
    let leaver = op_seed(3);
    let r = c.send(leaver, vec![leave()]).await;
    assert_eq!(r.tx_results[0].code.value(), 0, "{}", r.tx_results[0].log);
    assert!(has_event(&r, "validator.unbonding"));
    let left_at = c.height;
    let v = c.view(leaver).unwrap();
    assert_eq!(v.status, "UNBONDING");
    assert_eq!(
        v.record.unwrap().governance.unwrap().unbonding_until,
        left_at + 6
    );
    assert_eq!(v.comet_power, 10, "still in CometBFT's set while unbonding");
    assert!(updates(&r).is_empty());
    // An UNBONDING validator no longer votes, and cannot leave again.
    c.code(110, apply(110)).await;
    assert_eq!(c.code(leaver, admit(110)).await, Code::NotValidator.value());
    assert_eq!(
        c.code(leaver, leave()).await,
        Code::InvalidTransition.value()
    );
    while c.height < left_at + 5 {
        assert!(updates(&c.empty().await).is_empty());
    }
    assert_eq!(c.status(leaver), "UNBONDING");
    let r = c.empty().await;
    assert_eq!(c.height, left_at + 6);
    assert_eq!(updates(&r), vec![(pubkey(cons_seed(leaver)), 0)]);
    assert!(has_event(&r, "validator.removed"));
    let v = c.view(leaver).unwrap();
    assert_eq!(v.status, "REMOVED");
    // CometBFT still runs with it until H+2: the query shows when it leaves
    let removed_at = c.height;
    assert_eq!(
        (v.comet_power, v.comet_effective_height),
        (0, removed_at + 2)
    );
    assert!(
        updates(&c.empty().await).is_empty(),
        "the removal is returned once"
    );
    let v = c.view(leaver).unwrap();
    assert_eq!(
        (v.comet_power, v.comet_effective_height),
        (0, removed_at + 2)
    );
    c.empty().await;
    let v = c.view(leaver).unwrap();
    assert_eq!(
        (v.comet_power, v.comet_effective_height),
        (0, 0),
        "gone from the set once CometBFT dropped it"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn candidate_that_leaves_is_removed_without_any_update() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(
        Node::open(dir.path()),
        4,
        serde_json::json!({ "unbonding_blocks": 1 }),
    )
    .await;
    c.code(110, apply(110)).await;
    c.code(op_seed(0), admit(110)).await;
    let r = c.send(110, vec![leave()]).await;
    assert_eq!(r.tx_results[0].code.value(), 0);
    assert_eq!(c.status(110), "", "a withdrawn candidate leaves no record");
    assert!(updates(&r).is_empty());
    for _ in 0..3 {
        assert!(
            updates(&c.empty().await).is_empty(),
            "never power 0 for a key outside the set"
        );
    }
    // Its election went with it.
    assert_eq!(c.code(op_seed(1), admit(110)).await, Code::NotFound.value());
    // It may apply again: a fresh record, round 1.
    assert_eq!(c.code(110, apply(110)).await, 0);
    let e = c.election(110);
    assert_eq!((e.round, e.votes.len()), (1, 0));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stranger_cannot_leave() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    assert_eq!(c.code(9, leave()).await, Code::InvalidTransition.value());
}
