//! Part of the `peer` target (see the module doc).

use super::*;

pub(super) fn build_access(u: &mut Unstructured) -> AResult<(cpb::SignedAccessRequest, bool)> {
    let must_name_me = u.arbitrary()?;
    let mut context = Vec::new();
    for i in 0..u.int_in_range(0..=3u8)? {
        let (k, v) = (take(u, 3)?, take(u, 4)?);
        context.push(Condition {
            key: format!("{i}{}", hex::encode(k)),
            value: hex::encode(v),
        });
    }
    let req = cpb::AccessRequest {
        chain_id: CHAIN.into(),
        timestamp_ms: skew(u, WINDOW)?,
        nonce: u.bytes(16).map_or_else(|_| vec![0; 16], <[u8]>::to_vec),
        cid: [vec![1], take(u, 40)?].concat(),
        consumer_pubkey: Vec::new(),
        consumer_x25519: x25519(u)?,
        validator: if must_name_me || u.arbitrary()? {
            ME.to_vec()
        } else {
            Vec::new()
        },
        territory: u.choose(&TERRITORIES)?.to_string(),
        context,
        use_type: u.int_in_range(0..=6)?,
    };
    Ok((sign_request(&key(0x41), req), must_name_me))
}

pub(super) fn access(u: &mut Unstructured) -> AResult<&'static str> {
    let (signed, must_name_me) = build_access(u)?;
    let rights = RightsParams::default();
    let at = access_at(&rights, must_name_me);
    let want = Request::verify(&signed, &at)
        .unwrap_or_else(|e| panic!("a signed access request is refused: {e}"));
    let bytes = signed.request.as_ref().map(sign_bytes).unwrap_or_default();
    let hash: [u8; 32] = Sha256::digest(bytes).into();
    assert!(
        want.consumer == public(&key(0x41)) && want.hash == hash,
        "an access request's signer or hash"
    );
    let (changed, got) = edited(u, &signed)?;
    if let Some(r) = got.map(|s| Request::verify(&s, &at)) {
        assert!(
            r.ok().is_none_or(|r| r == want),
            "a changed access request is accepted as another"
        );
    }
    Ok(["access_intact", "access_changed"][usize::from(changed)])
}

/// 1–3 distinct validator keys.
pub(super) fn key_set(u: &mut Unstructured) -> AResult<Vec<Vec<u8>>> {
    Ok((1..=u.int_in_range(1..=3u8)?)
        .map(|i| vec![i; 32])
        .collect())
}

pub(super) fn build_intent(u: &mut Unstructured) -> AResult<cpb::SignedIntent> {
    let i = cpb::UploadIntent {
        chain_id: CHAIN.into(),
        timestamp_ms: skew(u, WINDOW)?,
        nonce: u.bytes(16).map_or_else(|_| vec![0; 16], <[u8]>::to_vec),
        uploader_pubkey: Vec::new(),
        processing_validator: ME.to_vec(),
        replication_set: key_set(u)?,
        dek_holder_set: key_set(u)?,
        group_id: hex::encode(take(u, 4)?),
        recovery_x25519: x25519(u)?,
        audio_bytes: u.int_in_range(1..=u64::MAX)?,
        art_bytes: (0..u.int_in_range(0..=2u8)?)
            .map(|n| u64::from(n) + 1)
            .collect(),
    };
    Ok(sign_intent(&key(0x51), i))
}

pub(super) fn intent(u: &mut Unstructured) -> AResult<&'static str> {
    let signed = build_intent(u)?;
    let want = Intent::verify(&signed, &intent_at())
        .unwrap_or_else(|e| panic!("a signed intent is refused: {e}"));
    let (changed, got) = edited(u, &signed)?;
    if let Some(r) = got.map(|s| Intent::verify(&s, &intent_at())) {
        assert!(
            r.ok().is_none_or(|r| r == want),
            "a changed intent is accepted as another"
        );
    }
    forged_intent(u, signed)?;
    Ok(["intent_intact", "intent_changed"][usize::from(changed)])
}

/// Encodings of small-order points (libsodium's blocklist: orders 1, 2, 4
/// and 8, and the non-canonical y = p - 1, p, p + 1), picked with or
/// without the sign bit: under ZIP-215 each verifies the signature
/// (R = identity, s = 0) over any message.
pub(super) fn small_order(pick: u8) -> [u8; 32] {
    const ORDER_8: [[u8; 32]; 2] = [
        [
            0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4, 0x89, 0xf2, 0xef,
            0x98, 0xf0, 0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6, 0x33, 0x39, 0xb1, 0x38, 0x02, 0x88,
            0x6d, 0x53, 0xfc, 0x05,
        ],
        [
            0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b, 0x76, 0x0d, 0x10,
            0x67, 0x0f, 0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39, 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77,
            0x92, 0xac, 0x03, 0x7a,
        ],
    ];
    let mut p = [0u8; 32];
    match pick % 7 {
        0 => p[0] = 1,
        1 => {}
        2 | 3 => p = ORDER_8[usize::from(pick % 7 - 2)],
        k => {
            // y = p - 1, p, p + 1: 0xec, 0xed, 0xee then 30 bytes of 0xff
            p = [0xff; 32];
            p[0] = 0xe8 + k;
            p[31] = 0x7f;
        }
    }
    if pick & 0x80 != 0 {
        p[31] |= 0x80;
    }
    p
}

/// The intent re-keyed to a small-order uploader with the universal
/// signature is refused, although a lax parse of the key would accept it.
pub(super) fn forged_intent(u: &mut Unstructured, mut signed: cpb::SignedIntent) -> AResult<()> {
    let key = small_order(u.arbitrary()?);
    let mut sig = [0u8; 64];
    sig[0] = 1; // R = the identity, s = 0
    let Some(i) = signed.intent.as_mut() else {
        return Ok(());
    };
    i.uploader_pubkey = key.to_vec();
    let lax = ed25519_consensus::VerificationKey::try_from(key).map(|vk| {
        vk.verify(
            &ed25519_consensus::Signature::from(sig),
            &crate::content::intent_sign_bytes(i),
        )
    });
    assert!(matches!(lax, Ok(Ok(()))), "the forgery must hold laxly");
    signed.signature = sig.to_vec();
    let err =
        Intent::verify(&signed, &intent_at()).expect_err("a small-order uploader forged an intent");
    assert_eq!(err.code(), "BAD_INTENT", "{err}");
    Ok(())
}

/// A HasContent answer by key 5, the request it answers, its cid and size.
pub(super) fn build_answer(
    u: &mut Unstructured,
) -> AResult<(
    ppb::HasContentResponse,
    ppb::SignedPeerRequest,
    Vec<u8>,
    Option<u64>,
)> {
    let cid = take(u, 40)?;
    let req = ppb::SignedPeerRequest {
        request: take(u, 40)?,
        signature: Vec::new(),
    };
    let size = if u.arbitrary()? {
        Some(u.arbitrary()?)
    } else {
        None
    };
    Ok((
        has_content::answer(&key(5), &req, &cid, size),
        req,
        cid,
        size,
    ))
}

pub(super) fn answer(u: &mut Unstructured) -> AResult<&'static str> {
    let (a, req, cid, size) = build_answer(u)?;
    let (changed, got) = edited(u, &a)?;
    if let Some(r) = got.map(|a| has_content::verify(&public(&key(5)), &req, &cid, &a)) {
        assert!(
            r.as_ref().map_or(changed, |r| *r == size),
            "a HasContent answer: {r:?}"
        );
    }
    Ok(["answer_intact", "answer_changed"][usize::from(changed)])
}
