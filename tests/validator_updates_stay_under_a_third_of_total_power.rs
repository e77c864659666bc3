//! One block never changes 1/3 or more of the total voting power: an
//! elected power over that is reached in steps over several blocks, with
//! the rest queued (and shown as pending in the query).

mod inproc;
use inproc::governance::*;
use inproc::*;

#[tokio::test(flavor = "multi_thread")]
async fn a_heavy_validator_joins_in_steps() {
    let dir = tempfile::tempdir().unwrap();
    let gov = serde_json::json!({ "elected_validator_power": 30 });
    let mut c = Chain::start(Node::open(dir.path()), 4, gov).await;
    c.code(110, apply(110)).await;
    for i in 0..2 {
        c.code(op_seed(i), admit(110)).await;
    }
    let r = c.send(op_seed(2), vec![admit(110)]).await;
    let key = pubkey(cons_seed(110));
    // total 40: at most 13 per block
    assert_eq!(updates(&r), vec![(key, 13)]);
    let v = c.view(110).unwrap();
    assert_eq!((v.status.as_str(), v.comet_power), ("ACTIVE", 13));
    assert_eq!(v.queued_powers, vec![30], "the rest is pending");
    // total 53: at most 17, which reaches 30
    let r = c.empty().await;
    assert_eq!(updates(&r), vec![(key, 30)]);
    let v = c.view(110).unwrap();
    assert_eq!(v.comet_power, 30);
    assert!(v.queued_powers.is_empty());
    assert!(updates(&c.empty().await).is_empty());
}
