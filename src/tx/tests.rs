//! Codec, signature and canonical-encoding rules.

use super::build::sign_tx;
use super::*;
use crate::keyspaces::kv::KvSet;
use crate::keyspaces::params::Params;
use crate::proto::tx as pb;
use ed25519_dalek::SigningKey;
use proptest::prelude::*;
use prost::Message;

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

fn set(k: &[u8], v: &[u8]) -> Action {
    Action::KvSet(KvSet {
        key: k.to_vec(),
        value: v.to_vec(),
    })
}

proptest! {
    #[test]
    fn signed_txs_round_trip(seed in 1u8..=255, nonce in any::<u64>(),
        k in proptest::collection::vec(any::<u8>(), 1..64),
        v in proptest::collection::vec(any::<u8>(), 0..256),
        memo in "[a-z ]{0,40}") {
        let sk = key(seed);
        let raw = sign_tx(&sk, "chain-x", nonce, vec![set(&k, &v)], &memo);
        let tx = DecodedTx::decode(&raw, &Params::default()).unwrap();
        prop_assert!(tx.verify_signature().is_ok());
        prop_assert_eq!(tx.nonce, nonce);
        prop_assert_eq!(tx.signer, sk.verifying_key().to_bytes());
        prop_assert_eq!(&tx.memo, &memo);
        prop_assert_eq!(tx.actions.clone(), vec![set(&k, &v)]);
        prop_assert!(tx.check_chain("chain-x").is_ok());
        prop_assert!(tx.check_chain("chain-y").is_err());
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_decoder(raw in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = DecodedTx::decode(&raw, &Params::default());
    }
}

#[test]
fn any_flipped_body_bit_breaks_the_signature_or_the_decode() {
    let raw = sign_tx(&key(3), "c", 7, vec![set(b"k", b"v")], "");
    let tx = pb::Tx::decode(raw.as_slice()).unwrap();
    for i in 0..tx.body_bytes.len() * 8 {
        let mut t = tx.clone();
        t.body_bytes[i / 8] ^= 1 << (i % 8);
        let bytes = t.encode_to_vec();
        if let Ok(d) = DecodedTx::decode(&bytes, &Params::default()) {
            assert!(
                d.verify_signature().is_err(),
                "bit {i} flipped yet verified"
            );
        }
    }
}

#[test]
fn signature_covers_the_domain_tag() {
    use ed25519_dalek::Signer;
    let sk = key(4);
    let body = pb::TxBody {
        chain_id: "c".into(),
        signer: sk.verifying_key().to_bytes().to_vec(),
        nonce: 0,
        actions: vec![set(b"k", b"v").into()],
        memo: String::new(),
        gas_limit: crate::tx::build::DEFAULT_GAS_LIMIT,
    };
    let body_bytes = body.encode_to_vec();
    // Signed without the domain tag: must not verify.
    let sig = sk.sign(&body_bytes).to_bytes().to_vec();
    let raw = pb::Tx {
        body_bytes,
        signature: sig,
        pow_nonce: 0,
    }
    .encode_to_vec();
    let tx = DecodedTx::decode(&raw, &Params::default()).unwrap();
    assert_eq!(tx.verify_signature().unwrap_err().code(), Code::Signature);
}

#[test]
fn non_canonical_body_is_refused() {
    let sk = key(5);
    let raw = sign_tx(&sk, "c", 0, vec![set(b"k", b"v")], "");
    let mut tx = pb::Tx::decode(raw.as_slice()).unwrap();
    // An unknown field appended: prost skips it, so re-encoding differs.
    tx.body_bytes.extend_from_slice(&[0x78, 0x01]); // field 15, varint 1
    let e = DecodedTx::decode(&tx.encode_to_vec(), &Params::default()).unwrap_err();
    assert_eq!(e.code(), Code::NonCanonical);
}

#[test]
fn oversized_tx_and_action_counts_are_refused() {
    let sk = key(6);
    let params = Params {
        max_tx_bytes: 200,
        max_actions_per_tx: 2,
        ..Params::default()
    };
    let big = sign_tx(&sk, "c", 0, vec![set(b"k", &[0u8; 300])], "");
    assert_eq!(
        DecodedTx::decode(&big, &params).unwrap_err().code(),
        Code::TxTooLarge
    );
    let many = sign_tx(
        &sk,
        "c",
        0,
        vec![set(b"a", b""), set(b"b", b""), set(b"c", b"")],
        "",
    );
    assert_eq!(
        DecodedTx::decode(&many, &params).unwrap_err().code(),
        Code::ActionCount
    );
    let none = sign_tx(&sk, "c", 0, vec![], "");
    assert_eq!(
        DecodedTx::decode(&none, &params).unwrap_err().code(),
        Code::ActionCount
    );
}

#[test]
fn weak_and_malformed_signer_keys_are_refused() {
    // The identity point (small order) and a 31-byte key.
    let mut identity = [0u8; 32];
    identity[0] = 1;
    assert_eq!(
        identity_key(&identity).unwrap_err().code(),
        Code::InvalidSigner
    );
    assert_eq!(
        identity_key(&[1u8; 31]).unwrap_err().code(),
        Code::InvalidSigner
    );
    assert!(identity_key(&key(9).verifying_key().to_bytes()).is_ok());
    // A non-canonical encoding of a valid point: for y < 19, y + p still fits
    // in 255 bits and decodes to the same point as y.
    let mut found = false;
    for y in 0u8..19 {
        // y + p = y + 2^255 - 19, little-endian: (y - 19) mod 256 then 0xff.. then 0x7f
        let mut enc = [0xffu8; 32];
        enc[0] = y.wrapping_sub(19);
        enc[31] = 0x7f;
        let canonical = {
            let mut c = [0u8; 32];
            c[0] = y;
            c
        };
        if ed25519_dalek::VerifyingKey::from_bytes(&canonical).is_ok_and(|k| !k.is_weak()) {
            let e = identity_key(&enc).unwrap_err();
            assert_eq!(e.code(), Code::InvalidSigner);
            assert!(e.to_string().contains("non-canonical"), "y={y}: {e}");
            found = true;
        }
    }
    assert!(found, "some small y is a valid non-weak point");
}

#[test]
fn batch_and_single_verification_agree() {
    let params = Params::default();
    let mut txs: Vec<DecodedTx> = (0..100u64)
        .map(|i| {
            DecodedTx::decode(
                &sign_tx(&key((i % 250 + 1) as u8), "c", i, vec![set(b"k", b"v")], ""),
                &params,
            )
            .unwrap()
        })
        .collect();
    txs[17].signature[5] ^= 1;
    txs[63].signature[40] ^= 1;
    let refs: Vec<&DecodedTx> = txs.iter().collect();
    let batch = verify::verify_all(&refs);
    let single: Vec<bool> = txs.iter().map(|t| t.verify_signature().is_ok()).collect();
    assert_eq!(batch, single);
    assert!(!batch[17] && !batch[63] && batch[0]);
}

#[test]
fn large_batches_bisect_to_the_bad_signatures() {
    let params = Params::default();
    let mut txs: Vec<DecodedTx> = (0..1300u64)
        .map(|i| {
            let raw = sign_tx(&key((i % 250 + 1) as u8), "c", i, vec![set(b"k", b"v")], "");
            DecodedTx::decode(&raw, &params).unwrap()
        })
        .collect();
    for bad in [0usize, 511, 512, 700, 701, 1299] {
        txs[bad].signature[9] ^= 1;
    }
    let refs: Vec<&DecodedTx> = txs.iter().collect();
    let batch = verify::verify_all(&refs);
    let single: Vec<bool> = txs.iter().map(|t| t.verify_signature().is_ok()).collect();
    assert_eq!(batch, single);
    assert_eq!(batch.iter().filter(|ok| !**ok).count(), 6);
}

#[test]
fn every_batch_size_path_agrees_with_single_verification() {
    let params = Params::default();
    // Below 4 (single), one inline chunk (≤ 64), and several chunks.
    for n in [1usize, 2, 3, 4, 9, 64, 65, 200] {
        let mut txs: Vec<DecodedTx> = (0..n as u64)
            .map(|i| {
                let raw = sign_tx(&key((i % 250 + 1) as u8), "c", i, vec![set(b"k", b"v")], "");
                DecodedTx::decode(&raw, &params).unwrap()
            })
            .collect();
        txs[n / 2].signature[3] ^= 1;
        let refs: Vec<&DecodedTx> = txs.iter().collect();
        let batch = verify::verify_all(&refs);
        let single: Vec<bool> = txs.iter().map(|t| t.verify_signature().is_ok()).collect();
        assert_eq!(batch, single, "{n} txs");
        assert_eq!(batch.iter().filter(|ok| !**ok).count(), 1, "{n} txs");
    }
}

/// The README's tx test vector: key seed `[7; 32]`, chain `stave-test`,
/// nonce 3, one `kv.Set { key "greeting", value "hello" }`, no memo,
/// `gas_limit` 200,000.
fn vector_tx() -> Vec<u8> {
    let actions = vec![set(b"greeting", b"hello")];
    super::build::sign_tx_with_gas(&key(7), "stave-test", 3, actions, "", 200_000)
}

/// The hex lines under `label` in the README's tx vector block.
fn readme_tx_hex(label: &str) -> String {
    let readme = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"));
    let is_hex = |l: &&str| !l.is_empty() && l.bytes().all(|b| b.is_ascii_hexdigit());
    let start = readme
        .find("```\ntx vector")
        .expect("README has the tx vector");
    let mut lines = readme[start..].lines().skip_while(|l| *l != label).skip(1);
    let out: String = lines.by_ref().take_while(|l| is_hex(l)).collect();
    assert!(!out.is_empty(), "no hex under {label:?} in the README");
    out
}

#[test]
fn tx_vector_matches_the_readme() {
    let raw = vector_tx();
    let tx = pb::Tx::decode(raw.as_slice()).expect("tx decodes");
    if std::env::var_os("STAVE_PRINT_VECTOR").is_some() {
        let lines = |b: &[u8]| -> String {
            hex::encode(b)
                .as_bytes()
                .chunks(64)
                .map(|c| String::from_utf8_lossy(c) + "\n")
                .collect()
        };
        let id = super::build::tx_id_of(&raw).expect("id");
        eprintln!(
            "body_bytes\n{}signature\n{}tx id\n{}",
            lines(&tx.body_bytes),
            lines(&tx.signature),
            lines(&id)
        );
    }
    assert_eq!(hex::encode(&tx.body_bytes), readme_tx_hex("body_bytes"));
    assert_eq!(hex::encode(&tx.signature), readme_tx_hex("signature"));
    let id = super::build::tx_id_of(&raw).expect("id");
    assert_eq!(hex::encode(id), readme_tx_hex("tx id"));
    let decoded = DecodedTx::decode(&raw, &Params::default()).expect("valid");
    assert!(decoded.verify_signature().is_ok());
    assert_eq!(decoded.gas_limit, 200_000);
}
