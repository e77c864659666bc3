//! The casbin-rs adapter over the chain keyspaces.

use casbin::{Adapter, CoreApi, DefaultModel, Filter, Model};
use futures::executor::block_on;

use super::*;

fn fixture() -> (MemState, ModelId) {
    let mut s = genesis();
    let m = id(6, "adapter");
    run(&mut s, owner(6), add_model(&m, RBAC)).unwrap();
    run(
        &mut s,
        owner(6),
        add_rule(&m, 3, "p", &["admin", "song", "access"]),
    )
    .unwrap();
    run(
        &mut s,
        owner(6),
        add_rule(&m, 1, "p", &["alice", "demo", "access"]),
    )
    .unwrap();
    run(&mut s, owner(6), add_rule(&m, 2, "g", &["alice", "admin"])).unwrap();
    run(&mut s, owner(6), add_rule(&m, 0, "g", &["bob", "staff"])).unwrap();
    (s, ModelId::parse(&m).unwrap())
}

fn policies(m: &DefaultModel, sec: &str) -> Vec<Vec<String>> {
    m.get_model()
        .get(sec)
        .and_then(|a| a.get(sec))
        .map(|a| a.get_policy().iter().cloned().collect())
        .unwrap_or_default()
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn load_policy_reads_every_rule_in_slot_order() {
    let (s, m) = fixture();
    let mut model = block_on(DefaultModel::from_str(RBAC)).unwrap();
    let mut a = adapter::ChainAdapter::new(&s, m);
    block_on(a.load_policy(&mut model)).unwrap();
    assert!(!a.is_filtered());
    assert_eq!(
        policies(&model, "p"),
        vec![
            strs(&["alice", "demo", "access"]),
            strs(&["admin", "song", "access"])
        ]
    );
    assert_eq!(
        policies(&model, "g"),
        vec![strs(&["bob", "staff"]), strs(&["alice", "admin"])]
    );
}

#[test]
fn filtered_load_reads_one_subject_through_the_index() {
    let (s, m) = fixture();
    let mut model = block_on(DefaultModel::from_str(RBAC)).unwrap();
    let mut a = adapter::ChainAdapter::new(&s, m);
    let f = Filter {
        p: vec!["alice"],
        g: vec!["alice"],
    };
    block_on(a.load_filtered_policy(&mut model, f)).unwrap();
    assert!(a.is_filtered());
    assert_eq!(
        policies(&model, "p"),
        vec![strs(&["alice", "demo", "access"])]
    );
    assert_eq!(policies(&model, "g"), vec![strs(&["alice", "admin"])]);
    // a filter on a later field, with no subject, falls back to a full read
    let mut model = block_on(DefaultModel::from_str(RBAC)).unwrap();
    let f = Filter {
        p: vec!["", "song"],
        g: vec![],
    };
    block_on(a.load_filtered_policy(&mut model, f)).unwrap();
    assert_eq!(
        policies(&model, "p"),
        vec![strs(&["admin", "song", "access"])]
    );
    assert_eq!(policies(&model, "g").len(), 2);
}

#[test]
fn the_adapter_never_writes() {
    let (s, m) = fixture();
    let before = s.state.clone();
    let mut a = adapter::ChainAdapter::new(&s, m);
    let mut model = block_on(DefaultModel::from_str(RBAC)).unwrap();
    assert!(block_on(a.add_policy("p", "p", strs(&["x", "y", "z"]))).is_err());
    assert!(block_on(a.remove_policy("p", "p", strs(&["admin", "song", "access"]))).is_err());
    assert!(block_on(a.add_policies("p", "p", vec![])).is_err());
    assert!(block_on(a.remove_policies("p", "p", vec![])).is_err());
    assert!(block_on(a.remove_filtered_policy("p", "p", 0, vec![])).is_err());
    assert!(block_on(a.save_policy(&mut model)).is_err());
    assert!(block_on(a.clear_policy()).is_err());
    assert_eq!(s.state, before);
    let mut missing = adapter::ChainAdapter::new(&s, ModelId::parse(&id(9, "none")).unwrap());
    assert!(block_on(missing.load_policy(&mut model)).is_err());
}

#[test]
fn casbin_rs_over_the_adapter_decides_like_the_chain_evaluator() {
    let (s, m) = fixture();
    let e = adapter::enforcer(s.clone(), &m).unwrap();
    for (sub, obj) in [
        ("alice", "song"),
        ("alice", "demo"),
        ("bob", "song"),
        ("admin", "song"),
    ] {
        let ours =
            enforce(&s, m.as_str(), &req(sub, obj, "access")).unwrap() == CasbinDecision::Allow;
        let theirs = e.enforce(vec![sub, obj, "access"]).unwrap();
        assert_eq!(ours, theirs, "{sub} {obj}");
    }
}
