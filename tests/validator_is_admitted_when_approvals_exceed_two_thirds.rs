//! A candidate becomes ACTIVE at the vote that takes approvals over 2/3 of
//! the active voting power (3 of 4 equal validators, not 2), with
//! `admitted_at` set, and that block's FinalizeBlock returns the update
//! that brings its consensus key into CometBFT's set, effective at H+2.

mod inproc;
use inproc::governance::*;
use inproc::*;
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn three_of_four_admit_and_the_update_is_returned_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    let applicant = 110;
    let r = c.send(applicant, vec![apply(applicant)]).await;
    assert_eq!(r.tx_results[0].code.value(), 0, "{}", r.tx_results[0].log);
    assert!(has_event(&r, "validator.applied"));
    assert_eq!(c.status(applicant), "CANDIDATE");

    for i in 0..2 {
        let r = c.send(op_seed(i), vec![admit(applicant)]).await;
        assert_eq!(r.tx_results[0].code.value(), 0, "{}", r.tx_results[0].log);
        assert!(updates(&r).is_empty(), "20 of 40 is not over 2/3");
        assert_eq!(c.status(applicant), "CANDIDATE");
    }
    let r = c.send(op_seed(2), vec![admit(applicant)]).await;
    assert_eq!(r.tx_results[0].code.value(), 0, "{}", r.tx_results[0].log);
    let h = c.height;
    assert_eq!(updates(&r), vec![(pubkey(cons_seed(applicant)), 10)]);
    assert!(has_event(&r, "validator.admitted"));
    assert!(has_event(&r, "validator.update"));
    let v = c.view(applicant).unwrap();
    assert_eq!(v.status, "ACTIVE");
    let rec = v.record.unwrap();
    assert_eq!(rec.admitted_height, h);
    assert_eq!(v.comet_power, 10);
    assert_eq!(v.comet_effective_height, h + 2);
    assert!(v.queued_powers.is_empty());

    // The new validator votes from now on; no update is ever repeated.
    for _ in 0..3 {
        assert!(updates(&c.empty().await).is_empty());
    }
    // The fourth genesis validator's late vote finds the election closed.
    assert_eq!(
        c.code(op_seed(3), admit(applicant)).await,
        Code::ElectionClosed.value()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_admitted_validator_counts_in_the_next_election() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    c.code(110, apply(110)).await;
    for i in 0..3 {
        assert_eq!(c.code(op_seed(i), admit(110)).await, 0);
    }
    // Now 5 x 10 = 50 active: 3 approvals (30) are not over 2/3 (33.3), 4 are.
    assert_eq!(c.code(111, apply(111)).await, 0);
    for i in 0..3 {
        assert_eq!(c.code(op_seed(i), admit(111)).await, 0);
    }
    assert_eq!(c.status(111), "CANDIDATE");
    let r = c.send(110, vec![admit(111)]).await;
    assert_eq!(r.tx_results[0].code.value(), 0, "{}", r.tx_results[0].log);
    assert_eq!(c.status(111), "ACTIVE");
    assert_eq!(updates(&r), vec![(pubkey(cons_seed(111)), 10)]);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_record_and_the_set_are_queryable_over_abci_with_proofs() {
    use prost::Message;
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    c.code(110, apply(110)).await;
    let h = c.height;
    let path = format!("/validators/{}", hex::encode(pubkey(110)));
    let r = c.node.query(&path, &[], h, true).await;
    assert_eq!(r.code.value(), 0, "{}", r.log);
    assert!(r.proof.is_some());
    let rec = stave::proto::genesis::ValidatorRecord::decode(r.value.as_ref()).unwrap();
    assert_eq!(rec.status, 2, "CANDIDATE");
    let r = c
        .node
        .query("/validator_meta/comet_set", &[], h, false)
        .await;
    let set = stave::proto::governance::CometSet::decode(r.value.as_ref()).unwrap();
    assert_eq!(set.members.len(), 4);
    let r = c.node.query("/validators/zz", &[], h, false).await;
    assert_eq!(r.code.value(), Code::InvalidArgument.value());
}
