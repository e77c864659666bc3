//! `ApplyValidator` refuses, each with its own code and no state change
//! beyond the nonce: an unknown jurisdiction (205), an X25519 key of the
//! wrong length or of low order (206), a proof of possession that does not
//! verify for this chain and this operator (207), a consensus key another
//! record holds (208), and an application from a record that is not
//! REMOVED (209); an address that is not host:port gets INVALID_ARGUMENT
//! (12). Stateless refusals are already refused in CheckTx.

mod inproc;
use ed25519_dalek::{Signer, SigningKey};
use inproc::governance::*;
use inproc::*;
use stave::keyspaces::validators::pop_message;
use stave::tx::{Action, Code};

fn with(op: u8, f: impl FnOnce(&mut stave::keyspaces::validators::ApplyValidator)) -> Action {
    let mut a = application(op);
    f(&mut a);
    Action::ApplyValidator(a)
}

#[tokio::test(flavor = "multi_thread")]
async fn each_bad_application_gets_its_code_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    let cases: Vec<(&str, Action, Code, bool)> = vec![
        (
            "unknown jurisdiction",
            with(110, |a| a.jurisdictions = vec!["DE".into(), "XX".into()]),
            Code::UnknownJurisdiction,
            true,
        ),
        (
            "lower-case jurisdiction",
            with(110, |a| a.jurisdictions = vec!["de".into()]),
            Code::UnknownJurisdiction,
            true,
        ),
        (
            "address without a port",
            with(110, |a| a.address = "127.0.0.1".into()),
            Code::InvalidArgument,
            true,
        ),
        (
            "address with port 0",
            with(110, |a| a.address = "127.0.0.1:0".into()),
            Code::InvalidArgument,
            true,
        ),
        (
            "address with a space",
            with(110, |a| a.address = "my host:26000".into()),
            Code::InvalidArgument,
            true,
        ),
        (
            "x25519 of 31 bytes",
            with(110, |a| a.x25519_key.truncate(31)),
            Code::BadX25519Key,
            true,
        ),
        (
            "x25519 of 33 bytes",
            with(110, |a| a.x25519_key.push(0)),
            Code::BadX25519Key,
            true,
        ),
        (
            "low-order x25519",
            with(110, |a| a.x25519_key = vec![0; 32]),
            Code::BadX25519Key,
            true,
        ),
        (
            "pop for another chain",
            with(110, |a| {
                let k = SigningKey::from_bytes(&[cons_seed(110); 32]);
                a.consensus_key_signature =
                    k.sign(&pop_message("other-chain", &pubkey(110))).to_bytes();
            }),
            Code::BadProofOfPossession,
            false,
        ),
        (
            "pop for another operator",
            with(110, |a| {
                let k = SigningKey::from_bytes(&[cons_seed(110); 32]);
                a.consensus_key_signature = k.sign(&pop_message(CHAIN, &pubkey(111))).to_bytes();
            }),
            Code::BadProofOfPossession,
            false,
        ),
        (
            "sitting validator's key without its secret",
            with(110, |a| {
                a.consensus_key = pubkey(cons_seed(op_seed(0)));
            }),
            Code::BadProofOfPossession,
            false,
        ),
        (
            "sitting validator's key with its secret",
            with(110, |a| {
                let k = SigningKey::from_bytes(&[cons_seed(op_seed(0)); 32]);
                a.consensus_key = k.verifying_key().to_bytes();
                a.consensus_key_signature = k.sign(&pop_message(CHAIN, &pubkey(110))).to_bytes();
            }),
            Code::ConsensusKeyInUse,
            false,
        ),
        (
            "genesis validator applies",
            apply(op_seed(1)),
            Code::InvalidTransition,
            false,
        ),
    ];
    let mut nonce_of = std::collections::BTreeMap::new();
    for (name, action, code, stateless) in cases {
        let signer = match &action {
            Action::ApplyValidator(_) if name == "genesis validator applies" => op_seed(1),
            _ => 110,
        };
        let nonce = *nonce_of.get(&signer).unwrap_or(&0);
        let check = c
            .node
            .check_tx(signed(signer, nonce, vec![action.clone()]), false)
            .await;
        if stateless {
            assert_eq!(
                check.code.value(),
                code.value(),
                "{name} in CheckTx: {}",
                check.log
            );
            continue;
        }
        let before = state_dump_but_accounts(&c.node.store);
        let r = c.send(signer, vec![action]).await;
        nonce_of.insert(signer, nonce + 1);
        assert_eq!(
            r.tx_results[0].code.value(),
            code.value(),
            "{name}: {}",
            r.tx_results[0].log
        );
        assert_eq!(
            state_dump_but_accounts(&c.node.store),
            before,
            "{name} changed state"
        );
    }
    assert!(c.view(110).is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_candidate_cannot_apply_twice_and_a_second_applicant_cannot_take_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    assert_eq!(c.code(110, apply(110)).await, 0);
    assert_eq!(
        c.code(110, apply(110)).await,
        Code::InvalidTransition.value()
    );
    let stolen = with(111, |a| {
        let k = SigningKey::from_bytes(&[cons_seed(110); 32]);
        a.consensus_key = k.verifying_key().to_bytes();
        a.consensus_key_signature = k.sign(&pop_message(CHAIN, &pubkey(111))).to_bytes();
    });
    assert_eq!(c.code(111, stolen).await, Code::ConsensusKeyInUse.value());
}
