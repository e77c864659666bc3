//! `PeerService.HasContent`: a validator's signed answer to "do you hold
//! this blob?", bound to the request it answers. The processing validator
//! of an upload asks its replication set to learn when `SEEDING` is done.

use ed25519_dalek::{Signer, SigningKey};
use sha2::{Digest, Sha256};

use super::peer_auth::PeerError;
use crate::proto::peer::{HasContentResponse, SignedPeerRequest};

/// The domain tag the answer's signature covers first.
pub const HAS_CONTENT_DOMAIN: &[u8] = b"stave/has-content/v1";

/// The bytes the responder signs for `request`.
pub fn sign_bytes(request: &SignedPeerRequest, cid: &[u8], held: bool, size: u64) -> Vec<u8> {
    let mut out = HAS_CONTENT_DOMAIN.to_vec();
    out.extend_from_slice(&Sha256::digest(&request.request));
    crate::keyspaces::uploads::put_bytes(&mut out, cid);
    out.push(u8::from(held));
    out.extend_from_slice(&size.to_be_bytes());
    out
}

/// The responder's answer.
pub fn answer(
    key: &SigningKey,
    request: &SignedPeerRequest,
    cid: &[u8],
    size: Option<u64>,
) -> HasContentResponse {
    let (held, size) = (size.is_some(), size.unwrap_or(0));
    let signature = key.sign(&sign_bytes(request, cid, held, size));
    HasContentResponse {
        cid: cid.to_vec(),
        held,
        size,
        responder: key.verifying_key().to_bytes().to_vec(),
        signature: signature.to_bytes().to_vec(),
    }
}

/// Checks that `responder` signed `r` for `request` and `cid`; returns
/// the size held, or `None` when it does not hold the blob.
///
/// # Errors
/// `Remote` for an answer about another cid or by another key, or a bad
/// signature.
pub fn verify(
    responder: &[u8; 32],
    request: &SignedPeerRequest,
    cid: &[u8],
    r: &HasContentResponse,
) -> Result<Option<u64>, PeerError> {
    let bad = |why: &str| PeerError::Remote {
        peer: hex::encode(responder),
        reason: format!("HasContent answer: {why}"),
    };
    if r.cid != cid || r.responder != responder {
        return Err(bad("about another cid or from another key"));
    }
    let sig: [u8; 64] = r
        .signature
        .as_slice()
        .try_into()
        .map_err(|_| bad("signature is not 64 bytes"))?;
    let (_, vk) = crate::tx::parse_identity_key(responder)
        .map_err(|_| bad("responder key is not a strict identity key"))?;
    vk.verify(
        &ed25519_consensus::Signature::from(sig),
        &sign_bytes(request, cid, r.held, r.size),
    )
    .map_err(|_| bad("signature does not verify"))?;
    Ok(r.held.then_some(r.size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_verify_only_for_their_request_cid_and_key() {
        let key = SigningKey::from_bytes(&[5; 32]);
        let me = key.verifying_key().to_bytes();
        let req = SignedPeerRequest {
            request: b"req".to_vec(),
            signature: vec![],
        };
        let a = answer(&key, &req, b"cid", Some(9));
        assert_eq!(verify(&me, &req, b"cid", &a).unwrap(), Some(9));
        let no = answer(&key, &req, b"cid", None);
        assert_eq!(verify(&me, &req, b"cid", &no).unwrap(), None);
        let other_req = SignedPeerRequest {
            request: b"req2".to_vec(),
            signature: vec![],
        };
        assert!(
            verify(&me, &other_req, b"cid", &a).is_err(),
            "replayed answer"
        );
        assert!(verify(&me, &req, b"cie", &a).is_err());
        assert!(verify(&[6; 32], &req, b"cid", &a).is_err());
        let mut lie = a.clone();
        lie.held = false;
        assert!(verify(&me, &req, b"cid", &lie).is_err(), "flipped answer");
    }

    /// A responder named by a small-order key cannot answer with the
    /// signature (R = identity, s = 0), which a lax parse would accept.
    #[test]
    fn a_small_order_responder_cannot_forge_an_answer() {
        let mut identity = [0u8; 32];
        identity[0] = 1;
        let req = SignedPeerRequest {
            request: b"req".to_vec(),
            signature: vec![],
        };
        let mut forged = HasContentResponse {
            cid: b"cid".to_vec(),
            responder: identity.to_vec(),
            held: true,
            size: 9,
            signature: vec![0; 64],
        };
        forged.signature[0] = 1;
        let err = verify(&identity, &req, b"cid", &forged).expect_err("refused");
        assert!(err.to_string().contains("strict identity key"), "{err}");
    }
}
