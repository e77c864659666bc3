//! The delivery receipt: what a DEK holder signs when it releases a key,
//! so a consumer can show which validator delivered what, under which
//! request and which committed state.
//!
//! Sign bytes: `"stave/access-receipt/v1"`, then every field in proto
//! order (strings and byte strings length-prefixed, numbers 8 bytes
//! big-endian), signed by the key that signs for the validator (its
//! operator key unless rotated; ZIP-215 to verify).

use ed25519_dalek::{Signer, SigningKey};
use sha2::{Digest, Sha256};

use crate::keyspaces::uploads::put_bytes;
use crate::proto::content as pb;

/// The domain tag the validator's signature covers first.
pub const RECEIPT_DOMAIN: &[u8] = b"stave/access-receipt/v1";

/// The bytes the validator signs.
pub fn sign_bytes(r: &pb::AccessReceipt) -> Vec<u8> {
    let mut out = RECEIPT_DOMAIN.to_vec();
    put_bytes(&mut out, r.chain_id.as_bytes());
    put_bytes(&mut out, &r.validator);
    put_bytes(&mut out, &r.request_hash);
    put_bytes(&mut out, &r.cid);
    put_bytes(&mut out, &r.consumer_pubkey);
    put_bytes(&mut out, &r.consumer_x25519);
    put_bytes(&mut out, r.territory.as_bytes());
    out.extend_from_slice(&r.height.to_be_bytes());
    out.extend_from_slice(&r.block_time.to_be_bytes());
    put_bytes(&mut out, r.policy_type.as_bytes());
    put_bytes(&mut out, r.reason.as_bytes());
    put_bytes(&mut out, &r.wrapped_dek_hash);
    out.extend_from_slice(&r.use_type.to_be_bytes());
    out
}

/// SHA-256 of `ephemeral_pubkey ‖ wrapped_dek`: what the receipt binds.
pub fn wrapped_hash(ephemeral: &[u8], wrapped: &[u8]) -> Vec<u8> {
    let mut h = Sha256::new();
    h.update(ephemeral);
    h.update(wrapped);
    h.finalize().to_vec()
}

/// The validator's signature over the receipt.
pub fn sign(operator: &SigningKey, r: &pb::AccessReceipt) -> Vec<u8> {
    operator.sign(&sign_bytes(r)).to_bytes().to_vec()
}

/// Whether `signature` is `signer`'s over the receipt, and the receipt
/// binds the wrapped key `(ephemeral, wrapped)`. `signer` is the key that
/// signs for the receipt's validator, from chain state: its operator key
/// unless a `RotateOperatorKey` handed signing to another.
pub fn verify(
    signer: &[u8; 32],
    r: &pb::AccessReceipt,
    signature: &[u8],
    ephemeral: &[u8],
    wrapped: &[u8],
) -> bool {
    let Ok(sig) = <[u8; 64]>::try_from(signature) else {
        return false;
    };
    let Ok((_, vk)) = crate::tx::parse_identity_key(signer) else {
        return false;
    };
    vk.verify(&ed25519_consensus::Signature::from(sig), &sign_bytes(r))
        .is_ok()
        && r.wrapped_dek_hash == wrapped_hash(ephemeral, wrapped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receipt_verifies_only_unchanged_and_for_its_wrapped_key() {
        let op = SigningKey::from_bytes(&[7; 32]);
        let r = pb::AccessReceipt {
            chain_id: "c".into(),
            validator: op.verifying_key().to_bytes().to_vec(),
            request_hash: vec![1; 32],
            cid: vec![2; 36],
            consumer_pubkey: vec![3; 32],
            consumer_x25519: vec![4; 32],
            territory: "GB".into(),
            height: 5,
            block_time: 6,
            policy_type: "DIRECT_GRANT".into(),
            reason: "holds CONSUMER within its scope".into(),
            wrapped_dek_hash: wrapped_hash(&[5; 32], &[6; 48]),
            use_type: 4,
        };
        let sig = sign(&op, &r);
        let k = op.verifying_key().to_bytes();
        assert!(verify(&k, &r, &sig, &[5; 32], &[6; 48]));
        assert!(
            !verify(&k, &r, &sig, &[5; 32], &[7; 48]),
            "another wrapped key"
        );
        let mut other = r.clone();
        other.height += 1;
        assert!(
            !verify(&k, &other, &sig, &[5; 32], &[6; 48]),
            "a changed field"
        );
        let mut other = r.clone();
        other.use_type = 1;
        assert!(!verify(&k, &other, &sig, &[5; 32], &[6; 48]), "another use");
        let mut other = r.clone();
        other.validator = vec![8; 32];
        assert!(
            !verify(&k, &other, &sig, &[5; 32], &[6; 48]),
            "another validator"
        );
        assert!(
            !verify(&[8; 32], &r, &sig, &[5; 32], &[6; 48]),
            "another signer"
        );
        assert!(!verify(&k, &r, &sig[..63], &[5; 32], &[6; 48]));
    }

    /// The identity point as the validator with (R = identity, s = 0)
    /// verifies under a lax key parse; the receipt check refuses it.
    #[test]
    fn a_small_order_validator_key_cannot_forge_a_receipt() {
        let mut identity = [0u8; 32];
        identity[0] = 1;
        let mut forged = [0u8; 64];
        forged[0] = 1;
        let r = pb::AccessReceipt {
            validator: identity.to_vec(),
            wrapped_dek_hash: wrapped_hash(&[5; 32], &[6; 48]),
            ..Default::default()
        };
        let lax = ed25519_consensus::VerificationKey::try_from(identity).expect("decodes");
        assert!(lax
            .verify(&ed25519_consensus::Signature::from(forged), &sign_bytes(&r))
            .is_ok());
        assert!(!verify(&identity, &r, &forged, &[5; 32], &[6; 48]));
    }
}
