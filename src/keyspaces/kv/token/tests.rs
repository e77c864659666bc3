use super::*;
use crate::keyspaces::kv::KvTokenParams;

fn vector_fields() -> SignFields<'static> {
    SignFields {
        chain_id: "stave-test",
        op: Op::Update,
        protocol_id: "[1,\"profile data\"]",
        key: "name",
        value: b"Ada",
        controller: "ea4a6c63e29c520abef5507b132ec5f9954776aebebe7b92421eea691446d22c",
        tags: "[\"music\",\"jazz\"]",
        generation: 2,
        replaces: &[0x11; 32],
    }
}

#[test]
fn sign_bytes_match_the_docs_test_vector() {
    let sk = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    assert_eq!(client::controller_hex(&sk), vector_fields().controller);
    let bytes = sign_bytes(&vector_fields());
    let sig = client::sign(&sk, &vector_fields());
    assert_eq!(hex::encode(&bytes), docs_hex("sign bytes"));
    assert_eq!(hex::encode(sig), docs_hex("signature"));
    assert!(verify(&vector_fields(), &sig).is_ok());
}

/// The hex lines under `label` in `docs/kv.md`'s sign-bytes vector block,
/// up to the next line that is not hex.
fn docs_hex(label: &str) -> String {
    let readme = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/kv.md"));
    let is_hex = |l: &&str| !l.is_empty() && l.bytes().all(|b| b.is_ascii_hexdigit());
    let start = readme
        .find("```\ncontroller ")
        .expect("docs/kv.md has the token sign-bytes vector");
    let mut lines = readme[start..].lines().skip_while(|l| *l != label).skip(1);
    let mut out = String::new();
    for l in lines.by_ref().take_while(|l| is_hex(l)) {
        out.push_str(l);
    }
    assert!(!out.is_empty(), "no hex under {label:?} in docs/kv.md");
    out
}

#[test]
fn length_prefixes_keep_shifted_fields_apart() {
    let a = SignFields {
        key: "ab",
        value: b"c",
        ..vector_fields()
    };
    let b = SignFields {
        key: "a",
        value: b"bc",
        ..vector_fields()
    };
    assert_ne!(sign_bytes(&a), sign_bytes(&b));
}

#[test]
fn a_signature_binds_chain_op_generation_and_replaced_id() {
    let sk = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    let sig = client::sign(&sk, &vector_fields());
    for f in [
        SignFields {
            chain_id: "other",
            ..vector_fields()
        },
        SignFields {
            op: Op::Create,
            ..vector_fields()
        },
        SignFields {
            generation: 3,
            ..vector_fields()
        },
        SignFields {
            replaces: &[0x12; 32],
            ..vector_fields()
        },
    ] {
        assert!(matches!(verify(&f, &sig), Err(KvError::TokenForged { .. })));
    }
}

#[test]
fn protocol_ids_must_be_canonical() {
    let p = KvTokenParams::default();
    assert!(check_protocol_id("[1,\"profile data\"]", &p).is_ok());
    for bad in [
        "[1, \"profile data\"]",
        " [1,\"profile data\"]",
        "[01,\"profile data\"]",
        "[3,\"profile data\"]",
        "[1,\"abc\"]",
        "[1,\"Profile\"]",
        "[1,\"two  spaces\"]",
        "[1,\"profile data\",2]",
        "{\"a\":1}",
        "[1,\"profil\\u0065 data\"]",
    ] {
        assert!(
            matches!(
                check_protocol_id(bad, &p),
                Err(KvError::BadProtocolId { .. })
            ),
            "{bad}"
        );
    }
}

#[test]
fn tags_must_be_canonical_distinct_and_bounded() {
    let p = KvTokenParams::default();
    assert_eq!(parse_tags("", &p).unwrap(), Vec::<String>::new());
    assert_eq!(parse_tags("[\"a\",\"b\"]", &p).unwrap(), vec!["a", "b"]);
    let many = serde_json::to_string(&(0..17).map(|i| i.to_string()).collect::<Vec<_>>()).unwrap();
    let long = format!("[\"{}\"]", "x".repeat(65));
    for bad in [
        "[]",
        "[\"a\", \"b\"]",
        "[\"a\",\"a\"]",
        "[\"\"]",
        "[1]",
        "\"a\"",
        many.as_str(),
        long.as_str(),
    ] {
        assert!(
            matches!(parse_tags(bad, &p), Err(KvError::BadTags { .. })),
            "{bad}"
        );
    }
}

#[test]
fn controllers_must_be_lowercase_hex_of_a_strong_key() {
    let good = vector_fields().controller;
    assert!(controller_key(good).is_ok());
    assert!(controller_key(&good.to_uppercase()).is_err());
    assert!(controller_key(&"00".repeat(32)).is_err());
    assert!(controller_key("abcd").is_err());
}

#[test]
fn token_ids_differ_by_tx_and_action_index() {
    let t = [1; 32];
    assert_ne!(token_id(&t, 0), token_id(&t, 1));
    assert_ne!(token_id(&t, 0), token_id(&[2; 32], 0));
}
