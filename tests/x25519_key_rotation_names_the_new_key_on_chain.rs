//! Issue 28, X25519 rotation on chain: `RotateX25519Key` by the operator of
//! a record that is not REMOVED replaces the key the record names, which
//! peers wrap DEKs to from the next commit. A rotation by a key that is no
//! validator's operator, or to the key the record already names, is refused
//! with its code and changes nothing but the nonce; one to a low-order or
//! malformed key is refused by CheckTx before it can run. (The node's re-wrap of its DEKs: `local::keyring`; end to
//! end: `e2e_x25519_rotation_keeps_every_dek_open`.)

mod inproc;

use inproc::governance::*;
use inproc::*;
use stave::tx::{Action, Code};

fn x25519_of(c: &Chain, op: u8) -> Vec<u8> {
    c.view(op)
        .unwrap()
        .record
        .unwrap()
        .validator
        .unwrap()
        .x25519_key
}

#[tokio::test(flavor = "multi_thread")]
async fn the_operator_rotates_its_x25519_key_and_refusals_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    let op = op_seed(0);
    assert_eq!(x25519_of(&c, op), x25519(op).to_vec());
    let r = c.send(op, vec![x25519_rotation(60)]).await;
    assert_eq!(r.tx_results[0].code.value(), 0, "{}", r.tx_results[0].log);
    assert!(has_event(&r, "validator.x25519_key_rotated"));
    assert_eq!(x25519_of(&c, op), x25519(60).to_vec());
    assert!(updates(&r).is_empty(), "no CometBFT update");
    assert_eq!(c.status(op), "ACTIVE");

    // an UNBONDING validator still holds DEKs: it may rotate too
    let leaving = op_seed(3);
    assert_eq!(c.code(leaving, leave()).await, 0);
    assert_eq!(c.code(leaving, x25519_rotation(61)).await, 0);
    assert_eq!(x25519_of(&c, leaving), x25519(61).to_vec());

    // refused before execution: CheckTx says why, and the tx never runs
    let low_order = Action::RotateX25519Key(stave::keyspaces::validators::RotateX25519Key {
        x25519_key: vec![0; 32],
    });
    let short = Action::RotateX25519Key(stave::keyspaces::validators::RotateX25519Key {
        x25519_key: vec![9; 31],
    });
    for (what, action) in [("a low-order key", low_order), ("a key of 31 bytes", short)] {
        let tx = signed(op, c.next_nonce(op), vec![action]);
        let check = c.node.check_tx(tx, false).await;
        assert_eq!(
            check.code.value(),
            Code::BadX25519Key.value(),
            "{what}: {}",
            check.log
        );
    }

    let before = state_dump_but_accounts(&c.node.store);
    let cases: Vec<(&str, u8, Action, Code)> = vec![
        (
            "a key that is not a validator's operator",
            7,
            x25519_rotation(62),
            Code::NotValidatorOperator,
        ),
        (
            "the validator's consensus key",
            cons_seed(op),
            x25519_rotation(63),
            Code::NotValidatorOperator,
        ),
        (
            "the key the record names already",
            op,
            x25519_rotation(60),
            Code::Conflict,
        ),
    ];
    for (what, signer, action, want) in cases {
        let r = c.send(signer, vec![action]).await;
        let t = &r.tx_results[0];
        assert_eq!(t.code.value(), want.value(), "{what}: {}", t.log);
        assert_eq!(
            state_dump_but_accounts(&c.node.store),
            before,
            "{what} changed state"
        );
    }
    assert_eq!(x25519_of(&c, op), x25519(60).to_vec());
    // each refusal used its nonce: the operator's next tx, at the nonce
    // after them, is accepted
    assert_eq!(c.code(op, x25519_rotation(64)).await, 0);
    assert_eq!(x25519_of(&c, op), x25519(64).to_vec());
}
