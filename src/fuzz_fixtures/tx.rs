//! The tx envelope: `Tx` and `TxBody` decoding, every action's
//! conversion from the wire and `check_stateless`, embedded token
//! signatures, and the tx signature.
//!
//! The first byte picks the mode:
//! - **raw** (even): the rest is the `Tx` bytes a client or peer sends;
//! - **signed** (odd): the rest is a `TxBody`. If it decodes, its signer
//!   is set to a fixed key and it is signed, so decoding gets past the
//!   signature to every stateless check of every action.
//!
//! # The oracle
//! - Decoding twice gives the same result, and the single and the batch
//!   signature paths agree (BRIEF §4: one signature rule).
//! - A decoded tx: its id is `sha256(body_bytes)`, its body re-encodes to
//!   the same bytes, each action passes `check_stateless` and converts
//!   back to exactly the wire action it came from (nothing signed is
//!   dropped), and the declared gas covers the intrinsic gas.
//! - An error's code is a stable code (`Code::from_value` knows it).
//! - In the signed mode, a tx that decodes verifies.

use ed25519_dalek::{Signer, SigningKey};
use prost::Message;
use sha2::{Digest, Sha256};

use crate::keyspaces::params::Params;
use crate::proto::tx as pb;
use crate::tx::sign_bytes;
use crate::tx::{verify, Code, DecodedTx, TxError, UnverifiedTx};

/// The key the signed mode signs with.
fn signer() -> SigningKey {
    SigningKey::from_bytes(&[0x42; 32])
}

/// Runs the oracle on `data` (mode byte, then the bytes).
pub fn envelope_case(data: &[u8]) {
    let Some((mode, rest)) = data.split_first() else {
        return;
    };
    let params = Params::default();
    if mode % 2 == 0 {
        check(rest, &params, false);
    } else {
        check(&resign(rest), &params, true);
    }
}

/// `body` signed by [`signer`] as its signer, if it decodes as a `TxBody`;
/// otherwise `body` inside an envelope with a zero signature.
pub fn resign(body: &[u8]) -> Vec<u8> {
    let key = signer();
    let body_bytes = match pb::TxBody::decode(body) {
        Ok(mut b) => {
            b.signer = key.verifying_key().to_bytes().to_vec();
            b.encode_to_vec()
        }
        Err(_) => body.to_vec(),
    };
    let signature = key.sign(&sign_bytes(&body_bytes)).to_bytes().to_vec();
    pb::Tx {
        body_bytes,
        signature,
        pow_nonce: 0,
    }
    .encode_to_vec()
}

/// The oracle on `raw`; whether it decoded.
fn check(raw: &[u8], params: &Params, signed: bool) -> bool {
    let single = DecodedTx::decode(raw, params);
    let again = UnverifiedTx::decode(raw, params).verify_singly();
    assert_eq!(summary(&single), summary(&again), "decoding twice");
    let unverified = UnverifiedTx::decode(raw, params);
    let items: Vec<_> = unverified.embedded().cloned().collect();
    let batch = unverified.resolve(&verify::verify_items(&items));
    assert_eq!(
        summary(&single),
        summary(&batch),
        "single vs batch signatures"
    );
    match &single {
        Ok(tx) => decoded(raw, tx, params, signed),
        Err(e) => {
            let code = e.code();
            assert_eq!(Code::from_value(code.value()), Some(code), "{e}");
            assert_ne!(code, Code::Ok, "an error with code OK: {e}");
        }
    }
    single.is_ok()
}

fn decoded(raw: &[u8], tx: &DecodedTx, params: &Params, signed: bool) {
    let id: [u8; 32] = Sha256::digest(&tx.body_bytes).into();
    assert_eq!(tx.id, id, "the tx id is sha256(body_bytes)");
    let body = pb::TxBody::decode(tx.body_bytes.as_slice()).expect("a decoded tx's body decodes");
    assert_eq!(body.encode_to_vec(), tx.body_bytes, "one encoding per tx");
    assert!(
        tx.gas_limit >= tx.intrinsic_gas,
        "the limit covers intrinsic gas"
    );
    assert!(
        tx.gas_limit <= params.gas.max_block_gas,
        "the limit fits a block"
    );
    assert_eq!(body.actions.len(), tx.actions.len());
    for (wire, action) in body.actions.iter().zip(&tx.actions) {
        assert!(action.check_stateless(params).is_ok(), "{}", action.name());
        let back = pb::Action::from(action.clone());
        assert_eq!(&back, wire, "{}: wire -> domain -> wire", action.name());
    }
    if signed {
        assert!(tx.verify_signature().is_ok(), "a re-signed tx verifies");
    }
    let unlimited = UnverifiedTx::decode_unlimited(raw, params);
    let u = unlimited
        .decoded()
        .expect("decodes without the gas check too");
    assert_eq!(
        u.intrinsic_gas, tx.intrinsic_gas,
        "intrinsic gas is a function of the bytes"
    );
}

fn summary(r: &Result<DecodedTx, TxError>) -> String {
    match r {
        Ok(tx) => format!(
            "ok {} {} {} {:?} {}",
            hex::encode(tx.id),
            tx.nonce,
            tx.intrinsic_gas,
            tx.actions,
            tx.memo
        ),
        Err(e) => format!("err {} {e}", e.code().value()),
    }
}

/// Seeds: each mode of a tx of a few kinds of action. More seeds (one
/// tx of every action kind) are written by
/// `tests/docs_gas_per_action_matches_the_node.rs` with
/// `STAVE_FUZZ_SEEDS=fuzz/corpus/tx_envelope`.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    use crate::keyspaces::kv::{KvDelete, KvSet, KvdbAction, KvdbOp};
    use crate::tx::Action;
    let key = signer();
    let kinds: Vec<(&str, Action)> = vec![
        (
            "kv-set",
            Action::KvSet(KvSet {
                key: b"k".to_vec(),
                value: b"v".to_vec(),
            }),
        ),
        (
            "kv-delete",
            Action::KvDelete(KvDelete { key: b"k".to_vec() }),
        ),
        (
            "kvdb-zadd",
            Action::Kvdb(KvdbAction {
                db: "db".into(),
                key: b"z".to_vec(),
                op: KvdbOp::ZAdd {
                    member: b"m".to_vec(),
                    score: "1.5".into(),
                },
            }),
        ),
    ];
    let mut out = Vec::new();
    for (name, action) in kinds {
        let raw = crate::tx::build::sign_tx(&key, "stave-fuzz", 0, vec![action], "");
        let tx = pb::Tx::decode(raw.as_slice()).expect("a built tx decodes");
        out.push((format!("raw-{name}"), [&[0u8][..], &raw].concat()));
        out.push((
            format!("body-{name}"),
            [&[1u8][..], &tx.body_bytes].concat(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every seed decodes, in both modes (the signed mode re-signs).
    #[test]
    fn every_seed_decodes() {
        let params = Params::default();
        for (name, data) in seeds() {
            let (mode, rest) = data.split_first().unwrap();
            let ok = match mode % 2 {
                0 => check(rest, &params, false),
                _ => check(&resign(rest), &params, true),
            };
            assert!(ok, "seed {name} does not decode");
        }
    }
}
