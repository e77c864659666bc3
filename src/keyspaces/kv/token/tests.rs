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
fn sign_bytes_match_the_readme_test_vector() {
    let sk = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    assert_eq!(client::controller_hex(&sk), vector_fields().controller);
    let bytes = sign_bytes(&vector_fields());
    let sig = client::sign(&sk, &vector_fields());
    assert_eq!(hex::encode(&bytes), README_SIGN_BYTES);
    assert_eq!(hex::encode(sig), README_SIGNATURE);
    assert!(verify(&vector_fields(), &sig).is_ok());
}

const README_SIGN_BYTES: &str = concat!(
    "0000001173746176652f6b762d746f6b656e2f76310000000a73746176652d74",
    "65737402000000125b312c2270726f66696c652064617461225d000000046e61",
    "6d65000000034164610000004065613461366336336532396335323061626566",
    "3535303762313332656335663939353437373661656265626537623932343231",
    "65656136393134343664323263000000105b226d75736963222c226a617a7a22",
    "5d00000000000000020000002011111111111111111111111111111111111111",
    "11111111111111111111111111",
);
const README_SIGNATURE: &str = concat!(
    "d95d96ff65ff4cf8ad8d24acec44c40c7e2725c7fd114d78904a02b23587566a",
    "7ae6441573f355a25f610fd90c102e2013ebcbc2448afd41597ba24002dc6208"
);

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
