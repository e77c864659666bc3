//! Decoding and authenticating the envelope `Tx { body_bytes, signature }`.
//!
//! # Invariants
//! - One encoding per tx: a body that does not re-encode to its exact bytes is refused.
//! - The tx id is `sha256(body_bytes)`, so re-wrapping the outer bytes changes nothing.
//! - Signatures are checked with ZIP-215 (`ed25519-consensus`), the rule CometBFT uses.

use prost::Message;
use sha2::{Digest, Sha256};

use super::{Action, TxError};
use crate::keyspaces::params::Params;
use crate::proto::tx as pb;

/// The domain tag the signature covers before the body bytes.
pub const SIGN_DOMAIN: &[u8] = b"stave/tx/v1";

/// The bytes an ed25519 signature covers: `"stave/tx/v1" || body_bytes`.
pub fn sign_bytes(body_bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(SIGN_DOMAIN.len() + body_bytes.len());
    out.extend_from_slice(SIGN_DOMAIN);
    out.extend_from_slice(body_bytes);
    out
}

/// A tx that decoded and passed every stateless check except the signature.
#[derive(Debug, Clone)]
pub struct DecodedTx {
    /// `sha256(body_bytes)`.
    pub id: [u8; 32],
    pub chain_id: String,
    pub signer: [u8; 32],
    pub nonce: u64,
    pub actions: Vec<Action>,
    pub memo: String,
    pub body_bytes: Vec<u8>,
    pub signature: [u8; 64],
    pub verification_key: ed25519_consensus::VerificationKey,
}

impl DecodedTx {
    /// Decodes `raw` and runs the stateless checks: size, canonical body,
    /// signer key, action count and per-action limits.
    ///
    /// # Errors
    /// Each failed check has its own [`TxError`] variant and code.
    pub fn decode(raw: &[u8], params: &Params) -> Result<Self, TxError> {
        if raw.len() as u64 > params.max_tx_bytes {
            return Err(TxError::TxTooLarge {
                size: raw.len(),
                max: params.max_tx_bytes,
            });
        }
        let tx = pb::Tx::decode(raw).map_err(|e| TxError::Decode(format!("Tx: {e}")))?;
        let signature: [u8; 64] = tx.signature.as_slice().try_into().map_err(|_| {
            TxError::Decode(format!("signature is {} bytes, not 64", tx.signature.len()))
        })?;
        let body = pb::TxBody::decode(tx.body_bytes.as_slice())
            .map_err(|e| TxError::Decode(format!("TxBody: {e}")))?;
        let reencoded = body.encoded_len();
        if reencoded != tx.body_bytes.len() || body.encode_to_vec() != tx.body_bytes {
            return Err(TxError::NonCanonical {
                len: tx.body_bytes.len(),
                reencoded,
            });
        }
        let (signer, verification_key) = identity_key(&body.signer)?;
        if body.memo.len() > params.max_memo_bytes as usize {
            return Err(TxError::MemoTooLarge {
                size: body.memo.len(),
                max: params.max_memo_bytes,
            });
        }
        let count = body.actions.len();
        if count == 0 || count > params.max_actions_per_tx as usize {
            return Err(TxError::ActionCount {
                count,
                max: params.max_actions_per_tx,
            });
        }
        let mut actions = Vec::with_capacity(count);
        for (i, a) in body.actions.into_iter().enumerate() {
            let action =
                Action::try_from(a).map_err(|e| TxError::Decode(format!("action {i}: {e}")))?;
            action
                .check_stateless(params)
                .map_err(|e| prefix_action(i, e))?;
            action
                .verify_embedded(&body.chain_id)
                .map_err(|e| prefix_action(i, e))?;
            actions.push(action);
        }
        Ok(DecodedTx {
            id: Sha256::digest(&tx.body_bytes).into(),
            chain_id: body.chain_id,
            signer,
            nonce: body.nonce,
            actions,
            memo: body.memo,
            body_bytes: tx.body_bytes,
            signature,
            verification_key,
        })
    }

    /// Checks the signature alone (ZIP-215).
    pub fn verify_signature(&self) -> Result<(), TxError> {
        let sig = ed25519_consensus::Signature::from(self.signature);
        self.verification_key
            .verify(&sig, &sign_bytes(&self.body_bytes))
            .map_err(|_| TxError::Signature {
                signer: hex::encode(self.signer),
            })
    }

    /// Checks the chain id.
    pub fn check_chain(&self, chain_id: &str) -> Result<(), TxError> {
        if self.chain_id != chain_id {
            return Err(TxError::WrongChain {
                expected: chain_id.to_string(),
                got: self.chain_id.clone(),
            });
        }
        Ok(())
    }

    pub fn signer_hex(&self) -> String {
        hex::encode(self.signer)
    }
}

fn prefix_action(i: usize, e: TxError) -> TxError {
    match e {
        TxError::InvalidArgument(m) => TxError::InvalidArgument(format!("action {i}: {m}")),
        other => other,
    }
}

/// Accepts `bytes` as an identity key: a canonical, valid ed25519 point that is
/// not of small order. ZIP-215 accepts signatures by weak keys, and anyone can
/// produce those, so a weak key must never name an account.
pub fn identity_key(
    bytes: &[u8],
) -> Result<([u8; 32], ed25519_consensus::VerificationKey), TxError> {
    if let Ok(arr) = <[u8; 32]>::try_from(bytes) {
        if let Some(vk) = key_cache::get(&arr) {
            return Ok((arr, vk));
        }
    }
    let (arr, vk) = parse_identity_key(bytes)?;
    key_cache::put(arr, vk);
    Ok((arr, vk))
}

/// Keys that passed [`parse_identity_key`]. The check is a pure function of
/// the bytes, so a hit gives the same answer; it saves two point
/// decompressions per tx for accounts that send often.
mod key_cache {
    use std::collections::HashMap;
    use std::sync::OnceLock;

    use parking_lot::Mutex;

    const CAPACITY: usize = 100_000;

    fn cache() -> &'static Mutex<HashMap<[u8; 32], ed25519_consensus::VerificationKey>> {
        static C: OnceLock<Mutex<HashMap<[u8; 32], ed25519_consensus::VerificationKey>>> =
            OnceLock::new();
        C.get_or_init(|| Mutex::new(HashMap::new()))
    }

    pub fn get(k: &[u8; 32]) -> Option<ed25519_consensus::VerificationKey> {
        cache().lock().get(k).copied()
    }

    pub fn put(k: [u8; 32], vk: ed25519_consensus::VerificationKey) {
        let mut c = cache().lock();
        if c.len() >= CAPACITY {
            c.clear();
        }
        c.insert(k, vk);
    }
}

fn parse_identity_key(
    bytes: &[u8],
) -> Result<([u8; 32], ed25519_consensus::VerificationKey), TxError> {
    let invalid = |reason: &str| TxError::InvalidSigner {
        key: hex::encode(bytes),
        reason: reason.to_string(),
    };
    let arr: [u8; 32] = bytes.try_into().map_err(|_| invalid("not 32 bytes"))?;
    let dalek = ed25519_dalek::VerifyingKey::from_bytes(&arr)
        .map_err(|_| invalid("not a valid curve point"))?;
    if dalek.is_weak() {
        return Err(invalid("small-order (weak) key"));
    }
    if dalek.to_edwards().compress().to_bytes() != arr {
        return Err(invalid("non-canonical encoding"));
    }
    let vk = ed25519_consensus::VerificationKey::try_from(arr)
        .map_err(|_| invalid("rejected by ed25519-consensus"))?;
    Ok((arr, vk))
}
