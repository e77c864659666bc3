//! Issue 28, operator-key rotation: `RotateOperatorKey` by the operator of
//! a record that is not REMOVED hands signing to a new key that proves
//! possession over the chain id and the validator's name. From the next
//! block the new key acts as the validator (its record, account and nonce
//! keep their name) and the key that signed before is refused with
//! `OPERATOR_KEY_RETIRED` in CheckTx, in a block and in simulation,
//! consuming nothing. A second rotation retires the first new key. Bad
//! proofs, keys the chain knows and non-operators are refused with their
//! codes and change nothing but the nonce. A retired key's tx makes
//! PrepareProposal drop it and ProcessProposal reject the block; a second
//! rotation in the block of the first is refused; a retired key can
//! not control a KV token; a CANDIDATE is refused until admitted.

mod inproc;

use inproc::governance::*;
use inproc::*;
use stave::keyspaces::accounts::AccountsRead;
use stave::keyspaces::validators::{Acting, ValidatorSigningRead};
use stave::tx::{Action, Code};

fn rotation_to(new: u8, prover: u8, name: [u8; 32]) -> Action {
    operator_rotation(name, new, prover)
}

fn nonce_of(c: &Chain, name: [u8; 32]) -> u64 {
    c.node
        .store
        .view()
        .account(&name)
        .unwrap()
        .map_or(0, |a| a.nonce)
}

fn signing_key_of(c: &Chain, op: u8) -> Vec<u8> {
    c.view(op).unwrap().record.unwrap().operator_signing_key
}

/// One block with `seed`'s tx at `nonce`; its code and log.
async fn send_at(c: &mut Chain, seed: u8, nonce: u64, action: Action) -> (u32, String) {
    let r = c.raw(vec![signed_large(seed, nonce, vec![action])]).await;
    (r.tx_results[0].code.value(), r.tx_results[0].log.clone())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_validator_hands_signing_to_a_new_key_and_the_old_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    let op = op_seed(0);
    let name = pubkey(op);

    // a CANDIDATE rotates once admitted (its record goes if it is not)
    const APPLICANT: u8 = 30;
    assert_eq!(c.code(APPLICANT, apply(APPLICANT)).await, 0);
    assert_eq!(c.status(APPLICANT), "CANDIDATE");

    // refusals first: each changes nothing but its signer's nonce
    let before = state_dump_but_accounts(&c.node.store);
    let cases: Vec<(&str, u8, Action, Code)> = vec![
        (
            "a proof signed by another key",
            op,
            rotation_to(70, 71, name),
            Code::BadProofOfPossession,
        ),
        (
            "a proof for another validator",
            op,
            rotation_to(70, 70, pubkey(op_seed(1))),
            Code::BadProofOfPossession,
        ),
        (
            "a key that has an account and a record",
            op,
            rotation_to(op_seed(1), op_seed(1), name),
            Code::Conflict,
        ),
        (
            "a proof over another chain id",
            op,
            {
                let m = stave::keyspaces::validators::signing::operator_key_pop_message(
                    "other-chain",
                    &name,
                    &pubkey(70),
                );
                Action::RotateOperatorKey(stave::keyspaces::validators::RotateOperatorKey {
                    operator_key: pubkey(70),
                    operator_key_signature: ed25519_dalek::Signer::sign(&key(70), &m).to_bytes(),
                })
            },
            Code::BadProofOfPossession,
        ),
        (
            "a CANDIDATE",
            APPLICANT,
            rotation_to(74, 74, pubkey(APPLICANT)),
            Code::InvalidTransition,
        ),
        (
            "a signer that is no validator's operator",
            7,
            rotation_to(70, 70, pubkey(7)),
            Code::NotValidatorOperator,
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

    // the rotation; a second one in the same block is refused
    let nonce = nonce_of(&c, name);
    let r = c
        .raw(vec![
            signed_large(op, nonce, vec![rotation_to(70, 70, name)]),
            signed_large(op, nonce + 1, vec![rotation_to(73, 73, name)]),
        ])
        .await;
    assert_eq!(r.tx_results[0].code.value(), 0, "{}", r.tx_results[0].log);
    assert_eq!(
        r.tx_results[1].code.value(),
        Code::Conflict.value(),
        "{}",
        r.tx_results[1].log
    );
    assert!(has_event(&r, "validator.operator_key_rotated"));
    assert_eq!(
        c.node.store.view().acting(&pubkey(73)).unwrap(),
        Acting::Own,
        "the refused rotation wrote nothing"
    );
    assert_eq!(signing_key_of(&c, op), pubkey(70).to_vec());
    let view = c.node.store.view();
    assert_eq!(view.acting(&pubkey(70)).unwrap(), Acting::For(name));
    assert_eq!(view.acting(&name).unwrap(), Acting::Retired(name));
    drop(view);

    // the old key is refused everywhere, consuming nothing
    let nonce = nonce_of(&c, name);
    let old_tx = signed_large(op, nonce, vec![x25519_rotation(61)]);
    let check = c.node.check_tx(old_tx.clone(), false).await;
    assert_eq!(
        check.code.value(),
        Code::OperatorKeyRetired.value(),
        "{}",
        check.log
    );
    let sim = stave::app::simulate(&c.node.store, &old_tx).unwrap();
    assert_eq!(sim.outcome.code, Code::OperatorKeyRetired);
    let next = c.height + 1;
    let kept = c
        .node
        .prepare_proposal(next, vec![old_tx.clone()], 1 << 20)
        .await;
    assert!(kept.is_empty(), "PrepareProposal drops a retired key's tx");
    assert_eq!(
        c.node.process_proposal(next, vec![old_tx.clone()]).await,
        tendermint::abci::response::ProcessProposal::Reject
    );
    let before = state_dump(&c.node.store);
    let r = c.raw(vec![old_tx]).await;
    assert_eq!(
        r.tx_results[0].code.value(),
        Code::OperatorKeyRetired.value()
    );
    assert!(r.tx_results[0].log.contains(&hex::encode(name)));
    assert_eq!(
        state_dump(&c.node.store),
        before,
        "a retired key's tx changed state"
    );

    // a retired key controls no KV token: a token it signed is refused,
    // whoever sends it (here the new key, acting as the validator)
    let token = inproc::kv::create(op, "k", "v", &[], 1);
    let n = nonce_of(&c, name);
    let (code, log) = send_at(&mut c, 70, n, token).await;
    assert_eq!(code, Code::OperatorKeyRetired.value(), "{log}");
    assert!(inproc::kv::live(&c.node, op, "k").is_none());
    let nonce = nonce_of(&c, name);

    // the new key acts as the validator, at its nonce; it has no account
    let (code, log) = send_at(&mut c, 70, 0, x25519_rotation(62)).await;
    assert_eq!(code, Code::Nonce.value(), "{log}");
    let sim_tx = signed_large(70, nonce, vec![x25519_rotation(62)]);
    let sim = stave::app::simulate(&c.node.store, &sim_tx).unwrap();
    assert!(sim.outcome.is_ok(), "{}", sim.outcome.log);
    let (code, log) = send_at(&mut c, 70, nonce, x25519_rotation(62)).await;
    assert_eq!(code, 0, "{log}");
    let keys = c.view(op).unwrap().record.unwrap().validator.unwrap();
    assert_eq!(keys.x25519_key, x25519(62).to_vec());
    assert_eq!(nonce_of(&c, name), nonce + 1);
    assert!(c.node.store.view().account(&pubkey(70)).unwrap().is_none());
    let q = stave::proto::query::AccountRequest {
        pubkey: pubkey(70).to_vec(),
        ..Default::default()
    };
    let a = stave::grpc::answers::account(&c.node.store.view(), &q, c.height).unwrap();
    assert_eq!(a.acts_as, name.to_vec());
    assert!(!a.retired);
    assert_eq!(a.nonce, nonce + 1);

    // a retired key cannot be rotated to again, and the new key rotates on
    let (code, log) = send_at(&mut c, 70, nonce + 1, rotation_to(op, op, name)).await;
    assert_eq!(code, Code::Conflict.value(), "{log}");
    let (code, log) = send_at(&mut c, 70, nonce + 2, rotation_to(72, 72, name)).await;
    assert_eq!(code, 0, "{log}");
    assert_eq!(signing_key_of(&c, op), pubkey(72).to_vec());
    let (code, _) = send_at(&mut c, 70, nonce + 3, x25519_rotation(63)).await;
    assert_eq!(code, Code::OperatorKeyRetired.value());
    let q = stave::proto::query::AccountRequest {
        pubkey: pubkey(70).to_vec(),
        ..Default::default()
    };
    let a = stave::grpc::answers::account(&c.node.store.view(), &q, c.height).unwrap();
    assert!(a.retired, "the first new key now reads as retired");

    // validator-gated actions follow the name: the newest key leaves
    let (code, log) = send_at(&mut c, 72, nonce + 3, leave()).await;
    assert_eq!(code, 0, "{log}");
    assert_eq!(c.status(op), "UNBONDING");
}
