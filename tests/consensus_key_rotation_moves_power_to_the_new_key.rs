//! Issue 28, consensus-key rotation in process: `RotateConsensusKey` by the
//! operator of an ACTIVE validator, with a proof of possession by the new
//! key, queues the new key to the record's power and the old key to 0. The
//! updates FinalizeBlock returns move the power within the power-change
//! rule (under 1/3 of the total per block), and end with the new key at the
//! record's power and the old key out of the set. The old key stays
//! reserved to the operator until its next rotation. A validator with a
//! third of the power or more cannot rotate, counting leaving or rotating
//! validators at 0. Each refusal gets its code and
//! changes nothing but the nonce.

mod inproc;

use std::collections::BTreeMap;

use inproc::governance::*;
use inproc::*;
use stave::tx::{Action, Code};

/// The record's (consensus key, retiring consensus key).
fn keys(c: &Chain, op: u8) -> ([u8; 32], Vec<u8>) {
    let r = c.view(op).unwrap().record.unwrap();
    let k = r.validator.unwrap().consensus_key.try_into().unwrap();
    (k, r.governance.unwrap().retiring_consensus_key)
}

/// Runs 20 empty blocks (the planner waits for earlier updates to take
/// effect), applying each block's updates to `set` and checking the
/// power-change rule.
async fn drain(c: &mut Chain, set: &mut BTreeMap<[u8; 32], u64>) {
    for _ in 0..20 {
        let r = c.empty().await;
        apply_updates(set, &updates(&r));
    }
}

fn apply_updates(set: &mut BTreeMap<[u8; 32], u64>, ups: &[([u8; 32], u64)]) {
    let total: u64 = set.values().sum();
    let changed: u64 = ups
        .iter()
        .map(|(k, p)| set.get(k).copied().unwrap_or(0).abs_diff(*p))
        .sum();
    assert!(
        3 * changed < total,
        "one block changed {changed} of {total}: {ups:?}"
    );
    for (k, p) in ups {
        if *p == 0 {
            set.remove(k);
        } else {
            set.insert(*k, *p);
        }
    }
}

fn genesis_set() -> BTreeMap<[u8; 32], u64> {
    (0..4)
        .map(|i| (pubkey(cons_seed(op_seed(i))), 10))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn rotation_moves_the_power_within_the_rule_and_reserves_the_old_key() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    let op = op_seed(0);
    let old = pubkey(cons_seed(op));
    let new = pubkey(50);
    let mut set = genesis_set();

    let r = c.send(op, vec![rotation(op, 50)]).await;
    assert_eq!(r.tx_results[0].code.value(), 0, "{}", r.tx_results[0].log);
    assert!(has_event(&r, "validator.consensus_key_rotated"));
    apply_updates(&mut set, &updates(&r));
    assert_eq!(keys(&c, op), (new, old.to_vec()));
    assert_eq!(c.status(op), "ACTIVE");

    // a second rotation waits until the old key has left CometBFT's set
    let r = c.send(op, vec![rotation(op, 51)]).await;
    assert_eq!(r.tx_results[0].code.value(), Code::Conflict as u32);
    assert!(
        r.tx_results[0].log.contains("previous rotation"),
        "{}",
        r.tx_results[0].log
    );
    apply_updates(&mut set, &updates(&r));
    drain(&mut c, &mut set).await;
    let mut want = genesis_set();
    want.remove(&old);
    want.insert(new, 10);
    assert_eq!(set, want, "the new key holds the power, the old one none");
    let view = c.view(op).unwrap();
    assert_eq!(view.comet_power, 10);
    assert!(view.queued_powers.is_empty(), "{:?}", view.queued_powers);

    // the old key stays reserved: not for this operator, not for another
    assert_eq!(
        c.code(op, rotation(op, cons_seed(op))).await,
        Code::ConsensusKeyInUse as u32
    );
    let other = op_seed(1);
    assert_eq!(
        c.code(other, rotation(other, cons_seed(op))).await,
        Code::ConsensusKeyInUse as u32
    );

    // once it left, the operator rotates again, which frees the first key:
    // an operator holds at most two
    let r = c.send(op, vec![rotation(op, 51)]).await;
    assert_eq!(r.tx_results[0].code.value(), 0, "{}", r.tx_results[0].log);
    apply_updates(&mut set, &updates(&r));
    assert_eq!(keys(&c, op), (pubkey(51), new.to_vec()));
    drain(&mut c, &mut set).await;
    assert_eq!(set.get(&pubkey(51)), Some(&10));
    assert!(!set.contains_key(&new));
    let r = c.send(other, vec![rotation(other, cons_seed(op))]).await;
    assert_eq!(r.tx_results[0].code.value(), 0, "{}", r.tx_results[0].log);
}

/// With three validators of equal power, each holds 1/3: split between two
/// keys, the other two would not hold over 2/3. Refused, nothing changes.
#[tokio::test(flavor = "multi_thread")]
async fn a_validator_with_a_third_of_the_power_cannot_rotate() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 3, serde_json::json!({})).await;
    c.empty().await;
    let before = state_dump_but_accounts(&c.node.store);
    let op = op_seed(0);
    let r = c.send(op, vec![rotation(op, 50)]).await;
    let t = &r.tx_results[0];
    assert_eq!(t.code.value(), Code::Conflict as u32, "{}", t.log);
    assert!(t.log.contains("holds 10 of 30 power"), "{}", t.log);
    assert!(updates(&r).is_empty());
    assert_eq!(state_dump_but_accounts(&c.node.store), before);
}

#[tokio::test(flavor = "multi_thread")]
async fn refused_rotations_change_nothing_but_the_nonce() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    let op = op_seed(0);
    // a candidate and an unbonding validator, to be refused below
    assert_eq!(c.code(110, apply(110)).await, 0);
    assert_eq!(c.code(op_seed(3), leave()).await, 0);
    let other_chain = {
        let sig = ed25519_dalek::Signer::sign(
            &ed25519_dalek::SigningKey::from_bytes(&[50; 32]),
            &stave::keyspaces::validators::pop_message("another-chain", &pubkey(op)),
        );
        Action::RotateConsensusKey(stave::keyspaces::validators::RotateConsensusKey {
            consensus_key: pubkey(50),
            consensus_key_signature: sig.to_bytes(),
        })
    };
    let before = state_dump_but_accounts(&c.node.store);

    let cases: Vec<(&str, u8, Action, Code)> = vec![
        (
            "a key that is not a validator's operator",
            7,
            rotation(7, 50),
            Code::NotValidatorOperator,
        ),
        (
            "a CANDIDATE",
            110,
            rotation(110, 50),
            Code::InvalidTransition,
        ),
        (
            "an UNBONDING validator",
            op_seed(3),
            rotation(op_seed(3), 50),
            Code::InvalidTransition,
        ),
        (
            "a proof for another chain",
            op,
            other_chain,
            Code::BadProofOfPossession,
        ),
        (
            "a proof signed by another key",
            op,
            rotation_by(op, 50, 51),
            Code::BadProofOfPossession,
        ),
        (
            "a proof for another operator",
            op,
            rotation_by(op_seed(1), 50, 50),
            Code::BadProofOfPossession,
        ),
        (
            "another validator's key",
            op,
            rotation(op, cons_seed(op_seed(1))),
            Code::ConsensusKeyInUse,
        ),
        (
            "its own current key",
            op,
            rotation(op, cons_seed(op)),
            Code::ConsensusKeyInUse,
        ),
        (
            "a candidate's key",
            op,
            rotation(op, cons_seed(110)),
            Code::ConsensusKeyInUse,
        ),
    ];
    for (what, signer, action, want) in cases {
        let r = c.send(signer, vec![action]).await;
        let t = &r.tx_results[0];
        assert_eq!(t.code.value(), want as u32, "{what}: {}", t.log);
        assert!(updates(&r).is_empty(), "{what}: {:?}", updates(&r));
        assert_eq!(
            state_dump_but_accounts(&c.node.store),
            before,
            "{what} changed state"
        );
    }
}

/// Power that may go away before the rotating node signs with its new key
/// counts for nothing: a leaving (UNBONDING) validator's, and that of a
/// validator that is itself rotating.
#[tokio::test(flavor = "multi_thread")]
async fn leaving_or_rotating_validators_do_not_count_for_a_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    let (a, b) = (op_seed(0), op_seed(1));
    assert_eq!(c.code(a, rotation(a, 50)).await, 0);
    let r = c.send(b, vec![rotation(b, 51)]).await;
    let t = &r.tx_results[0];
    assert_eq!(t.code.value(), Code::Conflict as u32, "{}", t.log);
    assert!(t.log.contains("holds 10 of 30 power"), "{}", t.log);

    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    assert_eq!(c.code(op_seed(3), leave()).await, 0);
    let r = c.send(a, vec![rotation(a, 50)]).await;
    let t = &r.tx_results[0];
    assert_eq!(t.code.value(), Code::Conflict as u32, "{}", t.log);
    assert!(t.log.contains("holds 10 of 30 power"), "{}", t.log);
}
