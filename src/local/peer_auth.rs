//! Signing and checking peer requests.
//!
//! A request is a `PeerRequest` (chain id, requester, responder, timestamp,
//! body) signed by the requester's operator key over
//! `"stave/peer/v1" ‖ request bytes`, verified with ZIP-215. The receiver
//! checks the chain id, that it is the responder, the timestamp window,
//! the signature, and that the requester is an ACTIVE validator at the
//! latest committed height.

use prost::Message;
use thiserror::Error;

use crate::proto::peer::{PeerRequest, SignedPeerRequest};
use crate::tx::Code;

/// The signature domain of peer requests.
pub const PEER_DOMAIN: &[u8] = b"stave/peer/v1";
/// Requests older or newer than this (milliseconds) are refused.
pub const MAX_SKEW_MS: u64 = 30_000;

/// Why a peer request or a peer's answer was refused. Each maps to one
/// [`Code`] in the 400–499 range.
#[derive(Debug, Error)]
pub enum PeerError {
    #[error("peer request does not decode: {0}")]
    Decode(String),
    #[error("peer request signature does not verify for requester {requester}")]
    Signature { requester: String },
    #[error("requester {requester} is not an active validator")]
    NotValidator { requester: String },
    #[error("request timestamp {timestamp_ms} is more than {MAX_SKEW_MS} ms from now ({now_ms})")]
    Stale { timestamp_ms: u64, now_ms: u64 },
    #[error("request is for chain {chain_id:?} and responder {responder}, this is {expected_chain:?} / {me}")]
    WrongTarget {
        chain_id: String,
        responder: String,
        expected_chain: String,
        me: String,
    },
    #[error("requester {requester} is not in the DEK holder set of cid {cid}")]
    NotDekHolder { requester: String, cid: String },
    #[error("cid {cid}: {reason}")]
    NotHeld { cid: String, reason: String },
    #[error("content {cid} from the peer is refused: {reason}")]
    ContentMismatch { cid: String, reason: String },
    #[error("wrapped DEK for cid {cid} does not unwrap: {reason}")]
    DekUnwrap { cid: String, reason: String },
    #[error("DEK for cid {cid} unwraps but does not open content {content}: {reason}")]
    DekMismatch {
        cid: String,
        content: String,
        reason: String,
    },
    #[error("upload {cid} was taken down at height {height}; its data is not served")]
    TakenDown { cid: String, height: u64 },
    #[error("too many content streams open ({open}); retry later")]
    Busy { open: usize },
    #[error("local failure: {0}")]
    Local(String),
    #[error("peer {peer}: {reason}")]
    Remote { peer: String, reason: String },
}

impl PeerError {
    pub fn code(&self) -> Code {
        match self {
            PeerError::Decode(_) => Code::PeerDecode,
            PeerError::Signature { .. } => Code::PeerSignature,
            PeerError::NotValidator { .. } => Code::PeerNotValidator,
            PeerError::Stale { .. } => Code::PeerStale,
            PeerError::WrongTarget { .. } => Code::PeerWrongTarget,
            PeerError::NotDekHolder { .. } => Code::PeerNotDekHolder,
            PeerError::NotHeld { .. } => Code::NotHeld,
            PeerError::ContentMismatch { .. } => Code::ContentMismatch,
            PeerError::DekUnwrap { .. } => Code::DekUnwrap,
            PeerError::DekMismatch { .. } => Code::DekMismatch,
            PeerError::Busy { .. } => Code::PeerBusy,
            PeerError::TakenDown { .. } => Code::TakedownActive,
            PeerError::Local(_) => Code::LocalIo,
            PeerError::Remote { .. } => Code::PeerUnavailable,
        }
    }

    /// The gRPC status a server returns for this error: the message starts
    /// with the stable code and its name.
    pub fn to_status(&self) -> tonic::Status {
        let msg = format!(
            "code {} {}: {self}",
            self.code().value(),
            self.code().name()
        );
        match self {
            PeerError::Decode(_) => tonic::Status::invalid_argument(msg),
            PeerError::Signature { .. } => tonic::Status::unauthenticated(msg),
            PeerError::NotValidator { .. }
            | PeerError::Stale { .. }
            | PeerError::WrongTarget { .. }
            | PeerError::NotDekHolder { .. } => tonic::Status::permission_denied(msg),
            PeerError::NotHeld { .. } => tonic::Status::not_found(msg),
            PeerError::Busy { .. } => tonic::Status::resource_exhausted(msg),
            PeerError::TakenDown { .. } => tonic::Status::failed_precondition(msg),
            _ => tonic::Status::internal(msg),
        }
    }
}

/// The node's clock in Unix milliseconds (node-local; never in consensus).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn signed_message(request: &[u8]) -> Vec<u8> {
    [PEER_DOMAIN, request].concat()
}

/// Signs `req` with the requester's operator key.
pub fn sign(key: &ed25519_dalek::SigningKey, req: &PeerRequest) -> SignedPeerRequest {
    use ed25519_dalek::Signer;
    let request = req.encode_to_vec();
    let signature = key.sign(&signed_message(&request)).to_bytes().to_vec();
    SignedPeerRequest { request, signature }
}

/// The stateless checks: decoding, target, timestamp window, signature.
/// Returns the request and the requester's key; the caller then checks
/// the requester against chain state.
pub fn check(
    signed: &SignedPeerRequest,
    chain_id: &str,
    me: &[u8; 32],
    now_ms: u64,
) -> Result<(PeerRequest, [u8; 32]), PeerError> {
    let req = PeerRequest::decode(signed.request.as_slice())
        .map_err(|e| PeerError::Decode(e.to_string()))?;
    if req.chain_id != chain_id || req.responder.as_slice() != me {
        return Err(PeerError::WrongTarget {
            chain_id: req.chain_id,
            responder: hex::encode(&req.responder),
            expected_chain: chain_id.to_string(),
            me: hex::encode(me),
        });
    }
    if req.timestamp_ms.abs_diff(now_ms) > MAX_SKEW_MS {
        return Err(PeerError::Stale {
            timestamp_ms: req.timestamp_ms,
            now_ms,
        });
    }
    let requester_hex = hex::encode(&req.requester);
    let (requester, vk) =
        crate::tx::parse_identity_key(&req.requester).map_err(|_| PeerError::NotValidator {
            requester: requester_hex.clone(),
        })?;
    let sig = <[u8; 64]>::try_from(signed.signature.as_slice())
        .map(ed25519_consensus::Signature::from)
        .map_err(|_| PeerError::Signature {
            requester: requester_hex.clone(),
        })?;
    vk.verify(&sig, &signed_message(&signed.request))
        .map_err(|_| PeerError::Signature {
            requester: requester_hex,
        })?;
    Ok((req, requester))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::peer::{peer_request::Body, FetchWrappedDek};

    fn req(key: &ed25519_dalek::SigningKey, responder: [u8; 32], ts: u64) -> PeerRequest {
        PeerRequest {
            chain_id: "c".into(),
            requester: key.verifying_key().to_bytes().to_vec(),
            responder: responder.to_vec(),
            timestamp_ms: ts,
            body: Some(Body::FetchWrappedDek(FetchWrappedDek { cid: vec![1; 32] })),
        }
    }

    #[test]
    fn signed_requests_verify_and_every_field_is_bound() {
        let k = ed25519_dalek::SigningKey::from_bytes(&[3; 32]);
        let me = [9u8; 32];
        let s = sign(&k, &req(&k, me, 1_000_000));
        let (r, who) = check(&s, "c", &me, 1_000_000).unwrap();
        assert_eq!(who, k.verifying_key().to_bytes());
        assert!(r.body.is_some());
        assert!(matches!(
            check(&s, "d", &me, 1_000_000),
            Err(PeerError::WrongTarget { .. })
        ));
        assert!(matches!(
            check(&s, "c", &[8; 32], 1_000_000),
            Err(PeerError::WrongTarget { .. })
        ));
        assert!(matches!(
            check(&s, "c", &me, 1_000_000 + MAX_SKEW_MS + 1),
            Err(PeerError::Stale { .. })
        ));
        assert!(check(&s, "c", &me, 1_000_000 - MAX_SKEW_MS).is_ok());
        for i in 0..s.request.len() {
            let mut t = s.clone();
            t.request[i] ^= 1;
            assert!(check(&t, "c", &me, 1_000_000).is_err(), "request byte {i}");
        }
        let mut t = s.clone();
        t.signature[0] ^= 1;
        assert!(matches!(
            check(&t, "c", &me, 1_000_000),
            Err(PeerError::Signature { .. })
        ));
        // signed by another key than the requester it names
        let other = ed25519_dalek::SigningKey::from_bytes(&[4; 32]);
        let forged = sign(&other, &req(&k, me, 1_000_000));
        assert!(matches!(
            check(&forged, "c", &me, 1_000_000),
            Err(PeerError::Signature { .. })
        ));
        let garbage = SignedPeerRequest {
            request: vec![0xff; 5],
            signature: vec![],
        };
        assert!(matches!(
            check(&garbage, "c", &me, 0),
            Err(PeerError::Decode(_))
        ));
        assert_eq!(PeerError::Decode(String::new()).code().value(), 400);
    }
}
