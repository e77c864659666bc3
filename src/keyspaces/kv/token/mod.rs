//! KV tokens: the BRC-35 global profile on chain. A token binds
//! `(protocol_id, key, controller)` to a value and tags, signed by the
//! controller over hardened sign bytes ([`sign_bytes`]).
//!
//! # Invariants
//! - At most one live token per tuple, always.
//! - A tuple's generation only grows (across delete and re-create); every
//!   signed operation names the next one, so an old signature never replays.
//! - Only the controller's token signature authorises; the tx signer may be a relayer.

mod actions;
pub mod client;
mod format;
pub mod query;
mod rebuild;
mod state;

pub use actions::{KvTokenCreate, KvTokenDelete, KvTokenUpdate};
pub use format::{check_key, check_protocol_id, check_tags, parse_tags};
pub use rebuild::rebuild_index;
pub use state::{postings, StoredToken, TokenRead, TokenWrite, Tuple, POSTING_BYTES};

use sha2::{Digest, Sha256};

use super::KvError;
use crate::proto::kv as pb;

/// The domain tag that starts every token sign-bytes string.
pub const TOKEN_SIGN_DOMAIN: &[u8] = b"stave/kv-token/v1";
/// The domain tag of token ids.
pub const TOKEN_ID_DOMAIN: &[u8] = b"stave/kv-token-id/v1";

/// A signed operation on a tuple.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Op {
    Create = 1,
    Update = 2,
    Delete = 3,
}

/// A KV token (domain type of `stave.kv.v1.KvToken`), fields checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvToken {
    pub protocol_id: String,
    pub key: String,
    pub value: Vec<u8>,
    /// Lowercase hex of the controller's ed25519 key.
    pub controller: String,
    /// Canonical JSON array of strings, or empty for no tags.
    pub tags: String,
    pub signature: [u8; 64],
}

impl TryFrom<pb::KvToken> for KvToken {
    type Error = KvError;
    fn try_from(t: pb::KvToken) -> Result<Self, KvError> {
        let signature = t.signature.as_slice().try_into().map_err(|_| {
            KvError::BadField(format!("signature is {} bytes, not 64", t.signature.len()))
        })?;
        Ok(KvToken {
            protocol_id: t.protocol_id,
            key: t.key,
            value: t.value,
            controller: t.controller,
            tags: t.tags,
            signature,
        })
    }
}

impl From<KvToken> for pb::KvToken {
    fn from(t: KvToken) -> Self {
        pb::KvToken {
            protocol_id: t.protocol_id,
            key: t.key,
            value: t.value,
            controller: t.controller,
            tags: t.tags,
            signature: t.signature.to_vec(),
        }
    }
}

/// What a controller signs, field by field.
#[derive(Debug, Clone, Copy)]
pub struct SignFields<'a> {
    pub chain_id: &'a str,
    pub op: Op,
    pub protocol_id: &'a str,
    pub key: &'a str,
    pub value: &'a [u8],
    pub controller: &'a str,
    pub tags: &'a str,
    pub generation: u64,
    /// The token being replaced or spent; empty on create.
    pub replaces: &'a [u8],
}

fn put_lp(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// The token sign bytes:
/// `lp("stave/kv-token/v1") ‖ lp(chain_id) ‖ op:u8 ‖ lp(protocol_id) ‖ lp(key)
/// ‖ lp(value) ‖ lp(controller) ‖ lp(tags) ‖ generation:u64be ‖ lp(replaces)`,
/// where `lp(x)` is `len(x):u32be ‖ x`. Length prefixes make the encoding
/// injective: `("ab","c")` and `("a","bc")` sign different bytes.
pub fn sign_bytes(f: &SignFields<'_>) -> Vec<u8> {
    let mut out = Vec::with_capacity(
        64 + f.protocol_id.len() + f.key.len() + f.value.len() + f.tags.len() + 64,
    );
    put_lp(&mut out, TOKEN_SIGN_DOMAIN);
    put_lp(&mut out, f.chain_id.as_bytes());
    out.push(f.op as u8);
    put_lp(&mut out, f.protocol_id.as_bytes());
    put_lp(&mut out, f.key.as_bytes());
    put_lp(&mut out, f.value);
    put_lp(&mut out, f.controller.as_bytes());
    put_lp(&mut out, f.tags.as_bytes());
    out.extend_from_slice(&f.generation.to_be_bytes());
    put_lp(&mut out, f.replaces);
    out
}

/// The id of the token created by action `index` of tx `tx_id`:
/// `sha256("stave/kv-token-id/v1" ‖ tx_id ‖ index:u32be)`.
pub fn token_id(tx_id: &[u8; 32], index: u32) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(TOKEN_ID_DOMAIN);
    h.update(tx_id);
    h.update(index.to_be_bytes());
    h.finalize().into()
}

/// The 32-byte name of a tuple:
/// `sha256(lp(protocol_id) ‖ lp(key) ‖ lp(controller))`.
pub fn tuple_hash(protocol_id: &str, key: &str, controller: &str) -> [u8; 32] {
    let mut buf = Vec::new();
    put_lp(&mut buf, protocol_id.as_bytes());
    put_lp(&mut buf, key.as_bytes());
    put_lp(&mut buf, controller.as_bytes());
    Sha256::digest(&buf).into()
}

/// Parses a controller: exactly 64 lowercase hex digits of a valid, non-weak key.
pub fn controller_key(controller: &str) -> Result<[u8; 32], KvError> {
    let bad = |reason: &str| KvError::BadController {
        controller: controller.to_string(),
        reason: reason.to_string(),
    };
    if controller.len() != 64 || controller.bytes().any(|b| b.is_ascii_uppercase()) {
        return Err(bad("not 64 lowercase hex digits"));
    }
    let bytes = hex::decode(controller).map_err(|_| bad("not hex"))?;
    let (arr, _) = crate::tx::identity_key(&bytes).map_err(|e| bad(&e.to_string()))?;
    Ok(arr)
}

/// A controller's signature with its key and message, ready to verify on
/// its own or in a batch with the block's other signatures.
#[derive(Debug, Clone)]
pub struct TokenSig {
    /// Key, signature and the hash of the sign bytes.
    pub item: ed25519_consensus::batch::Item,
    /// The error a failed verification gives.
    pub forged: KvError,
}

impl TokenSig {
    /// Verifies the signature alone (ZIP-215).
    pub fn verify(&self) -> Result<(), KvError> {
        self.item
            .clone()
            .verify_single()
            .map_err(|_| self.forged.clone())
    }
}

/// Parses the controller key and builds the sign bytes of `fields`,
/// without verifying `signature`.
///
/// # Errors
/// `BadController` when the controller is not a valid, non-weak key.
pub fn token_sig(fields: &SignFields<'_>, signature: &[u8; 64]) -> Result<TokenSig, KvError> {
    let ctl = controller_key(fields.controller)?;
    let (_, key) = crate::tx::identity_key(&ctl).map_err(|e| KvError::BadController {
        controller: fields.controller.to_string(),
        reason: e.to_string(),
    })?;
    let signature = ed25519_consensus::Signature::from(*signature);
    Ok(TokenSig {
        item: crate::tx::verify::item(&key, &signature, &sign_bytes(fields)),
        forged: KvError::TokenForged {
            controller: fields.controller.to_string(),
        },
    })
}

/// Verifies `signature` over `fields` with ZIP-215 under the controller key.
pub fn verify(fields: &SignFields<'_>, signature: &[u8; 64]) -> Result<(), KvError> {
    token_sig(fields, signature)?.verify()
}

#[cfg(test)]
mod tests;
