//! The consumer's access request: signed over its canonical bytes and bound
//! to the chain id, a timestamp window, a nonce and (for `RequestAccess`)
//! the one DEK holder asked.
//!
//! Sign bytes: `"stave/access-request/v1"`, then every field in proto
//! order: byte strings and strings as a 4-byte big-endian length and their
//! bytes, the timestamp as 8 bytes big-endian, the context as a 4-byte
//! count and each condition's key and value (the encoding of the upload
//! intent's sign bytes).

use ed25519_dalek::{Signer, SigningKey};
use sha2::{Digest, Sha256};

use super::AccessError;
use crate::keyspaces::entitlements::scope;
use crate::keyspaces::rights::{check_territory, RightsParams};
use crate::keyspaces::uploads::put_bytes;
use crate::proto::content as pb;
use crate::proto::rights::Condition;

/// The domain tag the consumer's signature covers first.
pub const ACCESS_DOMAIN: &[u8] = b"stave/access-request/v1";

/// Bytes of a request nonce.
pub const NONCE_LEN: usize = 16;

/// The bytes the consumer signs.
pub fn sign_bytes(r: &pb::AccessRequest) -> Vec<u8> {
    let mut out = ACCESS_DOMAIN.to_vec();
    put_bytes(&mut out, r.chain_id.as_bytes());
    out.extend_from_slice(&r.timestamp_ms.to_be_bytes());
    put_bytes(&mut out, &r.nonce);
    put_bytes(&mut out, &r.cid);
    put_bytes(&mut out, &r.consumer_pubkey);
    put_bytes(&mut out, &r.consumer_x25519);
    put_bytes(&mut out, &r.validator);
    put_bytes(&mut out, r.territory.as_bytes());
    let n = u32::try_from(r.context.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&n.to_be_bytes());
    for c in &r.context {
        put_bytes(&mut out, c.key.as_bytes());
        put_bytes(&mut out, c.value.as_bytes());
    }
    out.extend_from_slice(&r.use_type.to_be_bytes());
    out
}

/// Signs `request` with `consumer`, setting its `consumer_pubkey` first.
pub fn sign_request(
    consumer: &SigningKey,
    mut request: pb::AccessRequest,
) -> pb::SignedAccessRequest {
    request.consumer_pubkey = consumer.verifying_key().to_bytes().to_vec();
    let signature = consumer.sign(&sign_bytes(&request)).to_bytes().to_vec();
    pb::SignedAccessRequest {
        request: Some(request),
        signature,
    }
}

/// A request whose form and signature were checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub chain_id: String,
    pub timestamp_ms: u64,
    pub nonce: [u8; NONCE_LEN],
    pub cid: Vec<u8>,
    pub consumer: [u8; 32],
    pub consumer_x25519: [u8; 32],
    /// The validator asked; `None` = any replica (Download only).
    pub validator: Option<[u8; 32]>,
    pub territory: String,
    pub context: Vec<Condition>,
    /// `stave.ddex.v1.UseType`, a known value.
    pub use_type: i32,
    /// SHA-256 of the sign bytes: what the receipt names.
    pub hash: [u8; 32],
}

/// Where a request is accepted: this chain, this validator, within
/// `window_ms` of `now_ms`, under the rights caps.
#[derive(Debug, Clone, Copy)]
pub struct Check<'a> {
    pub chain_id: &'a str,
    pub me: [u8; 32],
    pub now_ms: u64,
    pub window_ms: u64,
    pub rights: &'a RightsParams,
    /// Whether the request must name this validator (`RequestAccess`), or
    /// may also name none (`Download`).
    pub must_name_me: bool,
}

fn key32(what: &str, b: &[u8]) -> Result<[u8; 32], AccessError> {
    b.try_into()
        .map_err(|_| AccessError::Invalid(format!("{what} is {} bytes, not 32", b.len())))
}

impl Request {
    /// Checks the chain and validator named, the window, the form, and the
    /// signature (ZIP-215).
    ///
    /// # Errors
    /// `Invalid`, `WrongTarget`, `Stale`, `Signature`, `BadX25519`.
    pub fn verify(
        signed: &pb::SignedAccessRequest,
        at: &Check<'_>,
    ) -> Result<Request, AccessError> {
        let r = signed
            .request
            .as_ref()
            .ok_or_else(|| AccessError::Invalid("the signed request has no request".into()))?;
        let validator = match r.validator.as_slice() {
            [] if !at.must_name_me => None,
            v => Some(key32("validator", v)?),
        };
        if r.chain_id != at.chain_id || validator.is_some_and(|v| v != at.me) {
            return Err(AccessError::WrongTarget {
                chain_id: r.chain_id.clone(),
                validator: hex::encode(&r.validator),
                expected_chain: at.chain_id.to_string(),
                me: hex::encode(at.me),
            });
        }
        if r.timestamp_ms.abs_diff(at.now_ms) > at.window_ms {
            return Err(AccessError::Stale {
                timestamp_ms: r.timestamp_ms,
                now_ms: at.now_ms,
                window_ms: at.window_ms,
            });
        }
        // the form first: the signature is checked over bounded fields only
        let form = Self::checked(r, validator, at.rights)?;
        let (consumer, vk) = crate::tx::parse_identity_key(&r.consumer_pubkey)
            .map_err(|e| AccessError::Invalid(format!("consumer_pubkey: {e}")))?;
        let sig: [u8; 64] = signed.signature.as_slice().try_into().map_err(|_| {
            AccessError::Invalid(format!(
                "signature is {} bytes, not 64",
                signed.signature.len()
            ))
        })?;
        let bytes = sign_bytes(r);
        vk.verify(&ed25519_consensus::Signature::from(sig), &bytes)
            .map_err(|_| AccessError::Signature {
                consumer: hex::encode(consumer),
            })?;
        Ok(Request {
            consumer,
            hash: Sha256::digest(&bytes).into(),
            ..form
        })
    }

    /// The form of every field but the consumer key and the signature
    /// (filled in by [`Request::verify`]).
    fn checked(
        r: &pb::AccessRequest,
        validator: Option<[u8; 32]>,
        rights: &RightsParams,
    ) -> Result<Request, AccessError> {
        let invalid = |e: String| AccessError::Invalid(e);
        let nonce =
            r.nonce.as_slice().try_into().map_err(|_| {
                invalid(format!("nonce is {} bytes, not {NONCE_LEN}", r.nonce.len()))
            })?;
        if r.cid.is_empty() || r.cid.len() > rights.max_cid_bytes as usize {
            return Err(invalid(format!(
                "cid is {} bytes, outside 1..={}",
                r.cid.len(),
                rights.max_cid_bytes
            )));
        }
        let consumer_x25519 = key32("consumer_x25519", &r.consumer_x25519)?;
        crate::crypto::check_x25519_public(&consumer_x25519)
            .map_err(|e| AccessError::BadX25519(e.to_string()))?;
        check_territory(&r.territory).map_err(|e| invalid(e.to_string()))?;
        scope::check_conditions("request context", &r.context, rights)
            .map_err(|e| invalid(e.to_string()))?;
        if crate::ddex::use_type::request_bit(r.use_type).is_none() {
            return Err(invalid(format!(
                "use_type {} is not a known use",
                r.use_type
            )));
        }
        Ok(Request {
            chain_id: r.chain_id.clone(),
            timestamp_ms: r.timestamp_ms,
            nonce,
            cid: r.cid.clone(),
            consumer: [0; 32],
            consumer_x25519,
            validator,
            territory: r.territory.clone(),
            context: r.context.clone(),
            use_type: r.use_type,
            hash: [0; 32],
        })
    }

    /// The key its nonce is remembered under: the consumer and the nonce.
    pub fn replay_key(&self) -> Vec<u8> {
        [&self.consumer[..], &self.nonce[..]].concat()
    }
}

#[cfg(test)]
mod tests;
