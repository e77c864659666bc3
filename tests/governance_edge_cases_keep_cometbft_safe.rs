//! Governance edge cases at FinalizeBlock: a validator admitted and removed
//! in the same block is never named to CometBFT (no power 0 for a key
//! outside the set, no key twice); a removal vote about an UNBONDING
//! validator is refused; a voter that leaves mid-election stops counting,
//! and the election is decided against the ACTIVE power at the deciding
//! vote.

mod inproc;
use inproc::governance::*;
use inproc::*;
use stave::proto::governance::ElectionKind;
use stave::tx::Code;

const K: u8 = 50;

fn remove(subject: u8) -> stave::tx::Action {
    vote(subject, ElectionKind::Remove, true)
}

#[tokio::test(flavor = "multi_thread")]
async fn admitted_and_removed_in_one_block_never_reaches_cometbft() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    assert_eq!(c.code(K, apply(K)).await, 0);
    let (v0, v1, v2, v3) = (op_seed(0), op_seed(1), op_seed(2), op_seed(3));
    let txs = vec![
        signed(v0, 0, vec![admit(K)]),
        signed(v1, 0, vec![admit(K)]),
        // the third approval admits K (30 of 40); the same tx opens its removal
        signed(v2, 0, vec![admit(K), remove(K)]),
        signed(v0, 1, vec![remove(K)]),
        signed(v1, 1, vec![remove(K)]),
        // 40 of 50: removed
        signed(v3, 0, vec![remove(K)]),
    ];
    c.height += 1;
    let (_, r) = c.node.block(c.height, txs).await;
    for (i, t) in r.tx_results.iter().enumerate() {
        assert_eq!(t.code.value(), 0, "tx {i}: {}", t.log);
    }
    assert!(has_event(&r, "validator.admitted") && has_event(&r, "validator.removed"));
    assert!(updates(&r).is_empty(), "{:?}", updates(&r));
    assert_eq!(c.status(K), "REMOVED");
    let v = c.view(K).unwrap();
    assert_eq!((v.comet_power, v.queued_powers.len()), (0, 0));
    assert!(updates(&c.empty().await).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_removal_vote_about_an_unbonding_validator_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    assert_eq!(c.code(op_seed(3), leave()).await, 0);
    assert_eq!(c.status(op_seed(3)), "UNBONDING");
    assert_eq!(
        c.code(op_seed(0), remove(op_seed(3))).await,
        Code::ElectionClosed.value()
    );
    // and an UNBONDING validator no longer votes
    assert_eq!(c.code(K, apply(K)).await, 0);
    assert_eq!(
        c.code(op_seed(3), admit(K)).await,
        Code::NotValidator.value()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_voter_that_leaves_mid_election_stops_counting() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 5, serde_json::json!({})).await;
    assert_eq!(c.code(K, apply(K)).await, 0);
    for i in 0..3 {
        assert_eq!(c.code(op_seed(i), admit(K)).await, 0);
    }
    assert_eq!(c.status(K), "CANDIDATE", "30 of 50 is not over 2/3");
    // validator 2 leaves: its approval no longer counts, and the total is 40
    assert_eq!(c.code(op_seed(2), leave()).await, 0);
    assert_eq!(c.status(K), "CANDIDATE", "20 of 40");
    let r = c.send(op_seed(3), vec![admit(K)]).await;
    assert_eq!(r.tx_results[0].code.value(), 0, "{}", r.tx_results[0].log);
    let voted = r.tx_results[0]
        .events
        .iter()
        .find(|e| e.kind == "validator.voted")
        .unwrap();
    let attr = |k: &str| {
        voted
            .attributes
            .iter()
            .find(|a| a.key_str().ok() == Some(k))
            .and_then(|a| a.value_str().ok().map(str::to_string))
            .unwrap()
    };
    assert_eq!(
        (attr("approve_power"), attr("active_power")),
        ("30".into(), "40".into())
    );
    assert_eq!(c.status(K), "ACTIVE", "30 of 40 passes");
}
