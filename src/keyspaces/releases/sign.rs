//! The publisher signature a release carries and keeps: the signer's
//! ed25519 signature (ZIP-215, the one signature rule) over
//! `lp("stave/release/v1") ‖ lp(chain_id) ‖ n:u32be ‖ lp(cid)×n ‖
//! sha256(message)`, where the cids are the sound recordings' `cid`s in
//! message order, `message` is the `NewReleaseMessage`'s protobuf encoding
//! and `lp(x)` is `len(x):u32be ‖ x`. The node refuses a non-canonical tx
//! body, so that encoding is exactly the bytes of `PublishRelease.message`
//! inside the signed body (a client on an older schema that drops a new
//! field would hash other bytes: client and node versions must match). The
//! tx body is not kept; the record keeps the message, the signer and this
//! signature, so anyone can check what the publisher vouched for.
//!
//! Checked in CheckTx (the mempool refuses a bad one) and at execution
//! (`RELEASE_SIGNATURE`), which covers a proposer that includes one.

use prost::Message;
use sha2::{Digest, Sha256};

use crate::keyspaces::rights::{hx, RightsError};
use crate::proto::ddex as pb;

/// The domain separator of release sign bytes.
pub const RELEASE_SIGN_DOMAIN: &[u8] = b"stave/release/v1";

fn put_lp(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&u32::try_from(bytes.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// sha256 of the message's protobuf encoding.
pub fn ern_hash(m: &pb::NewReleaseMessage) -> [u8; 32] {
    Sha256::digest(m.encode_to_vec()).into()
}

/// The bytes the publisher signs.
pub fn sign_bytes(chain_id: &str, m: &pb::NewReleaseMessage) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + m.sound_recording.len() * 40 + 32);
    put_lp(&mut out, RELEASE_SIGN_DOMAIN);
    put_lp(&mut out, chain_id.as_bytes());
    let n = u32::try_from(m.sound_recording.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&n.to_be_bytes());
    for r in &m.sound_recording {
        put_lp(&mut out, &r.cid);
    }
    out.extend_from_slice(&ern_hash(m));
    out
}

/// The publisher signature of `m` by `key` on `chain_id`.
pub fn sign(
    key: &ed25519_dalek::SigningKey,
    chain_id: &str,
    m: &pb::NewReleaseMessage,
) -> [u8; 64] {
    use ed25519_dalek::Signer;
    key.sign(&sign_bytes(chain_id, m)).to_bytes()
}

/// Checks `signature` over `m` on `chain_id` under `signer` (counted as
/// one signature and one key of gas work).
///
/// # Errors
/// [`RightsError::ReleaseSignature`] when the key is unusable or the
/// signature does not verify.
pub fn verify(
    chain_id: &str,
    release_id: &str,
    m: &pb::NewReleaseMessage,
    signer: &[u8],
    signature: &[u8; 64],
) -> Result<(), RightsError> {
    let forged = || RightsError::ReleaseSignature {
        release_id: release_id.to_string(),
        signer: hx(signer),
        chain_id: chain_id.to_string(),
    };
    let (_, vk) = crate::tx::identity_key(signer).map_err(|_| forged())?;
    crate::gas::work::count(crate::gas::work::Kind::Signature);
    let sig = ed25519_consensus::Signature::from(*signature);
    vk.verify(&sig, &sign_bytes(chain_id, m))
        .map_err(|_| forged())
}

/// Checks a stored release record on its own: its publisher signature by
/// its `signer` (or its `signing_key`, when a rotated operator key signed:
/// that the key signed for `signer` rests on the record being proven, as
/// consensus checked it when it stored the record) over its message, on `chain_id`; and that its `release_id`
/// and every track's cid are the message's. The client's check; the node
/// is not trusted for any of it.
///
/// # Errors
/// [`RightsError::ReleaseSignature`] when the record has no message, no
/// 64-byte signature, or the signature does not verify;
/// [`RightsError::InvalidErn`] when its id or a track's cid is not the
/// message's.
pub fn verify_record(chain_id: &str, rec: &pb::ReleaseRecord) -> Result<(), RightsError> {
    let forged = || RightsError::ReleaseSignature {
        release_id: rec.release_id.clone(),
        signer: hx(&rec.signer),
        chain_id: chain_id.to_string(),
    };
    let m = rec.message.as_ref().ok_or_else(forged)?;
    let sig = <[u8; 64]>::try_from(rec.publisher_signature.as_slice()).map_err(|_| forged())?;
    let key = if rec.signing_key.is_empty() {
        &rec.signer
    } else {
        &rec.signing_key
    };
    verify(chain_id, &rec.release_id, m, key, &sig)?;
    let named = crate::ddex::validate::release_id_of(m)
        .map_err(|e| RightsError::InvalidErn(e.to_string()))?;
    if named != rec.release_id {
        return Err(RightsError::InvalidErn(format!(
            "the record's id {} is not the message's {named}",
            rec.release_id
        )));
    }
    let cids: Vec<&[u8]> = m.sound_recording.iter().map(|r| r.cid.as_slice()).collect();
    match rec
        .tracks
        .iter()
        .find(|t| !cids.contains(&t.cid.as_slice()))
    {
        Some(t) => Err(RightsError::InvalidErn(format!(
            "track cid {} is not one of the message's recordings",
            hx(&t.cid)
        ))),
        None => Ok(()),
    }
}
