use super::*;
use proptest::prelude::*;

const ME: [u8; 32] = [9; 32];

fn consumer() -> SigningKey {
    SigningKey::from_bytes(&[3; 32])
}

fn x25519_public(seed: u8) -> Vec<u8> {
    let s = x25519_dalek::StaticSecret::from([seed; 32]);
    x25519_dalek::PublicKey::from(&s).to_bytes().to_vec()
}

fn request() -> pb::AccessRequest {
    pb::AccessRequest {
        use_type: 0,
        chain_id: "stave-test".into(),
        timestamp_ms: 1_000_000,
        nonce: vec![1; NONCE_LEN],
        cid: vec![0xAA; 36],
        consumer_pubkey: vec![],
        consumer_x25519: x25519_public(4),
        validator: ME.to_vec(),
        territory: "GB".into(),
        context: vec![Condition {
            key: "tier".into(),
            value: "premium".into(),
        }],
    }
}

fn at(rights: &RightsParams) -> Check<'_> {
    Check {
        chain_id: "stave-test",
        me: ME,
        now_ms: 1_000_500,
        window_ms: 60_000,
        rights,
        must_name_me: true,
    }
}

fn verify(s: &pb::SignedAccessRequest) -> Result<Request, AccessError> {
    Request::verify(s, &at(&RightsParams::default()))
}

#[test]
fn a_signed_request_verifies_and_names_its_hash() {
    let s = sign_request(&consumer(), request());
    let r = verify(&s).unwrap();
    assert_eq!(r.consumer, consumer().verifying_key().to_bytes());
    assert_eq!(r.validator, Some(ME));
    let want: [u8; 32] = Sha256::digest(sign_bytes(s.request.as_ref().unwrap())).into();
    assert_eq!(r.hash, want);
    assert_eq!(r.replay_key().len(), 32 + NONCE_LEN);
}

/// Each way a request goes wrong, and the code it gets.
#[test]
fn each_refusal_has_its_code() {
    use crate::tx::Code;
    let code = |f: &dyn Fn(&mut pb::AccessRequest)| {
        let mut r = request();
        f(&mut r);
        verify(&sign_request(&consumer(), r)).unwrap_err().code()
    };
    assert_eq!(
        code(&|r| r.chain_id = "other".into()),
        Code::AccessWrongTarget
    );
    assert_eq!(
        code(&|r| r.validator = vec![8; 32]),
        Code::AccessWrongTarget
    );
    assert_eq!(code(&|r| r.validator = vec![]), Code::AccessRequestInvalid);
    assert_eq!(code(&|r| r.timestamp_ms = 1), Code::AccessStale);
    assert_eq!(code(&|r| r.nonce = vec![1; 15]), Code::AccessRequestInvalid);
    assert_eq!(code(&|r| r.cid = vec![]), Code::AccessRequestInvalid);
    assert_eq!(
        code(&|r| r.territory = "gb".into()),
        Code::AccessRequestInvalid
    );
    assert_eq!(
        code(&|r| r.context.push(Condition {
            key: "a".into(),
            value: String::new()
        })),
        Code::AccessRequestInvalid
    );
    assert_eq!(
        code(&|r| r.consumer_x25519 = vec![4; 31]),
        Code::AccessRequestInvalid
    );
    // low-order points: the identity and a point of order 8
    assert_eq!(
        code(&|r| r.consumer_x25519 = vec![0; 32]),
        Code::BadX25519Key
    );
    let mut order8 = [0u8; 32];
    order8[0] = 1;
    assert_eq!(
        code(&|r| r.consumer_x25519 = order8.to_vec()),
        Code::BadX25519Key
    );
    // signed by another key than the one it names
    let mut s = sign_request(&consumer(), request());
    s.request.as_mut().unwrap().consumer_pubkey = SigningKey::from_bytes(&[5; 32])
        .verifying_key()
        .to_bytes()
        .to_vec();
    assert_eq!(verify(&s).unwrap_err().code(), Code::AccessSignature);
    // a small-order key, for which anyone can forge a ZIP-215 signature
    let mut s = sign_request(&consumer(), request());
    let mut weak = [0u8; 32];
    weak[0] = 1;
    s.request.as_mut().unwrap().consumer_pubkey = weak.to_vec();
    assert_eq!(verify(&s).unwrap_err().code(), Code::AccessRequestInvalid);
    let mut s = sign_request(&consumer(), request());
    s.signature.pop();
    assert_eq!(verify(&s).unwrap_err().code(), Code::AccessRequestInvalid);
    assert_eq!(
        verify(&pb::SignedAccessRequest::default())
            .unwrap_err()
            .code(),
        Code::AccessRequestInvalid
    );
}

#[test]
fn a_download_request_may_name_no_validator() {
    let mut r = request();
    r.validator = vec![];
    let s = sign_request(&consumer(), r);
    let rights = RightsParams::default();
    let check = Check {
        must_name_me: false,
        ..at(&rights)
    };
    assert_eq!(Request::verify(&s, &check).unwrap().validator, None);
}

proptest! {
    /// A change to any signed field after signing fails the signature, or
    /// is refused before it is checked: nothing unsigned is accepted.
    #[test]
    fn every_field_is_signed(field in 0usize..9, byte in any::<u8>()) {
        let mut s = sign_request(&consumer(), request());
        let r = s.request.as_mut().unwrap();
        let flip = |v: &mut Vec<u8>| { if let Some(b) = v.first_mut() { *b ^= byte | 1 } else { v.push(byte) } };
        match field {
            0 => r.chain_id.push('x'),
            1 => r.timestamp_ms ^= u64::from(byte | 1),
            2 => flip(&mut r.nonce),
            3 => flip(&mut r.cid),
            4 => flip(&mut r.consumer_pubkey),
            5 => r.consumer_x25519 = x25519_public(byte.wrapping_add(5) | 1),
            6 => flip(&mut r.validator),
            7 => r.territory = if r.territory == "GB" { "DE".into() } else { "GB".into() },
            _ => r.context[0].value.push('x'),
        }
        prop_assert!(verify(&s).is_err());
    }

    /// Arbitrary bytes as the request's fields never panic.
    #[test]
    fn any_fields_never_panic(nonce in proptest::collection::vec(any::<u8>(), 0..40),
        key in proptest::collection::vec(any::<u8>(), 0..40),
        x in proptest::collection::vec(any::<u8>(), 0..40),
        sig in proptest::collection::vec(any::<u8>(), 0..80),
        territory in ".{0,4}") {
        let s = pb::SignedAccessRequest {
            request: Some(pb::AccessRequest {
                nonce, consumer_pubkey: key, consumer_x25519: x, territory,
                ..request()
            }),
            signature: sig,
        };
        let _ = verify(&s);
    }
}
