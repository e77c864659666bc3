//! `UploadComplete { manifest, uploader_signature }`: registers
//! `uploads/{flac_cid}` and the recovery `deks/{flac_cid}`.
//!
//! Sent by the processing validator the manifest names; the uploader's own
//! signature over the whole manifest means nobody can register content in
//! someone else's name or swap any part of it.

use std::collections::BTreeSet;

use super::facts::{check_facts, check_images, check_raw_cid, stored_bytes};
use super::{
    content_pool_key, manifest_sign_bytes, validator_usage_key, UploadsRead, UploadsWrite,
};
use crate::keyspaces::deks::DeksWrite;
use crate::keyspaces::params::Params;
use crate::keyspaces::rights::{block_secs, cap, hx, RightsError, RightsParams};
use crate::keyspaces::validators::ValidatorsRead;
use crate::keyspaces::{Event, TxContext};
use crate::proto::rights as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// Domain form of `stave.rights.v1.UploadComplete`: the manifest and its
/// recovery DEK are present and the signature is 64 bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadComplete {
    pub manifest: pb::UploadManifest,
    pub uploader_signature: [u8; 64],
}

impl TryFrom<pb::UploadComplete> for UploadComplete {
    type Error = String;
    fn try_from(p: pb::UploadComplete) -> Result<Self, String> {
        let manifest = p.manifest.ok_or("upload_complete has no manifest")?;
        if manifest.recovery_dek.is_none() {
            return Err("upload manifest has no recovery_dek".into());
        }
        let uploader_signature = p.uploader_signature.as_slice().try_into().map_err(|_| {
            format!(
                "uploader_signature is {} bytes, not 64",
                p.uploader_signature.len()
            )
        })?;
        Ok(UploadComplete {
            manifest,
            uploader_signature,
        })
    }
}

impl From<UploadComplete> for pb::UploadComplete {
    fn from(u: UploadComplete) -> Self {
        pb::UploadComplete {
            manifest: Some(u.manifest),
            uploader_signature: u.uploader_signature.to_vec(),
        }
    }
}

/// A set of distinct validator keys, 1..=`max_set_size` of them.
/// `InvalidManifest` unless every member is an ACTIVE validator.
pub(super) fn require_active<'a, S: StateWrite>(
    state: &S,
    members: impl Iterator<Item = &'a Vec<u8>>,
) -> Result<(), TxError> {
    for k in members {
        let key: [u8; 32] = k.as_slice().try_into().unwrap_or([0; 32]);
        if !state.is_active_validator(&key)? {
            return Err(RightsError::InvalidManifest(format!(
                "set member {} is not an active validator",
                hx(k)
            ))
            .into());
        }
    }
    Ok(())
}

pub(super) fn check_key_set(what: &str, set: &[Vec<u8>], p: &RightsParams) -> Result<(), TxError> {
    if set.is_empty() {
        return Err(RightsError::InvalidManifest(format!("{what} is empty")).into());
    }
    cap(what, set.len(), p.max_set_size)?;
    let mut seen = BTreeSet::new();
    for k in set {
        if k.len() != 32 || !seen.insert(k.as_slice()) {
            return Err(RightsError::InvalidManifest(format!(
                "{what} member {} is not a distinct 32-byte key",
                hx(k)
            ))
            .into());
        }
    }
    Ok(())
}

fn check_recovery_dek(m: &pb::UploadManifest, p: &RightsParams) -> Result<(), TxError> {
    let bad = |s: String| TxError::from(RightsError::InvalidManifest(s));
    let dek = m
        .recovery_dek
        .as_ref()
        .ok_or_else(|| bad("no recovery_dek".into()))?;
    if dek.cid != m.flac_cid || dek.uploader_pubkey != m.uploader_pubkey {
        return Err(bad(
            "recovery_dek must name the manifest's flac_cid and uploader".into(),
        ));
    }
    if dek.wrapped_dek.is_empty() {
        return Err(bad("recovery_dek.wrapped_dek is empty".into()));
    }
    cap(
        "recovery_dek.wrapped_dek length",
        dek.wrapped_dek.len(),
        p.max_wrapped_dek_bytes,
    )?;
    let eph: [u8; 32] = dek.ephemeral_pubkey.as_slice().try_into().map_err(|_| {
        bad(format!(
            "recovery_dek.ephemeral_pubkey is {} bytes, not 32",
            dek.ephemeral_pubkey.len()
        ))
    })?;
    if !crate::keyspaces::validators::x25519_contributory(&eph) {
        return Err(bad(format!(
            "recovery_dek.ephemeral_pubkey {} is a low-order point",
            hx(&eph)
        )));
    }
    Ok(())
}

impl UploadComplete {
    /// Formats, caps and the uploader's signature (ZIP-215).
    ///
    /// # Errors
    /// `InvalidManifest`, `RightsCapExceeded`, `ManifestSignature`.
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        let m = &self.manifest;
        let p = &params.rights;
        check_raw_cid("flac_cid", &m.flac_cid)?;
        check_raw_cid("encrypted_cid", &m.encrypted_cid)?;
        if m.encrypted_cid == m.flac_cid {
            return Err(RightsError::InvalidManifest(
                "encrypted_cid equals flac_cid: each cid names one thing".into(),
            )
            .into());
        }
        check_images(m, p)?;
        check_facts(m.facts.as_ref())?;
        if m.encrypted_size == 0 || m.encrypted_size > p.max_encrypted_bytes {
            return Err(RightsError::InvalidManifest(format!(
                "encrypted_size {} is outside 1..={} (rights.max_encrypted_bytes)",
                m.encrypted_size, p.max_encrypted_bytes
            ))
            .into());
        }
        check_key_set("replication_set", &m.replication_set, p)?;
        check_key_set("dek_holder_set", &m.dek_holder_set, p)?;
        if m.processing_validator.len() != 32 {
            return Err(RightsError::InvalidManifest(format!(
                "processing_validator is {} bytes, not 32",
                m.processing_validator.len()
            ))
            .into());
        }
        cap("group_id length", m.group_id.len(), p.max_group_id_bytes)?;
        if m.dek_commitment.len() != 32 {
            return Err(RightsError::InvalidManifest(format!(
                "dek_commitment is {} bytes, not 32",
                m.dek_commitment.len()
            ))
            .into());
        }
        check_recovery_dek(m, p)?;
        let (_, vk) = crate::tx::identity_key(&m.uploader_pubkey)
            .map_err(|e| RightsError::InvalidManifest(format!("uploader_pubkey: {e}")))?;
        let sig = ed25519_consensus::Signature::from(self.uploader_signature);
        crate::gas::work::count(crate::gas::work::Kind::Signature);
        vk.verify(&sig, &manifest_sign_bytes(m))
            .map_err(|_| RightsError::ManifestSignature {
                uploader: hx(&m.uploader_pubkey),
            })?;
        Ok(())
    }

    /// # Errors
    /// `InvalidManifest` (another chain, an inactive set member),
    /// `NotProcessingValidator`, `UploadExists`, `Conflict` (a cid another
    /// upload already claims).
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let m = &self.manifest;
        if m.chain_id != ctx.chain_id {
            return Err(RightsError::InvalidManifest(format!(
                "manifest names chain {:?}, this is {:?}",
                m.chain_id, ctx.chain_id
            ))
            .into());
        }
        let not_processor = |reason: &str| RightsError::NotProcessingValidator {
            signer: hx(&ctx.signer),
            reason: reason.to_string(),
        };
        if m.processing_validator != ctx.signer {
            return Err(not_processor(&format!(
                "the manifest names {}",
                hx(&m.processing_validator)
            ))
            .into());
        }
        if !state.is_active_validator(&ctx.signer)? {
            return Err(not_processor("not an active validator").into());
        }
        require_active(state, m.replication_set.iter().chain(&m.dek_holder_set))?;
        if state.upload(&m.flac_cid)?.is_some() {
            return Err(RightsError::UploadExists(hx(&m.flac_cid)).into());
        }
        check_unclaimed(state, m)?;
        // Content joins a group only as a member's upload (governance).
        crate::keyspaces::groups::require_member(state, &m.group_id, &m.uploader_pubkey)?;
        charge_content(state, m, &ctx.params.rights)?;
        let record = self.record(ctx);
        let bytes = state.put_upload(&record)?;
        super::handover::assign_new(state, &record, ctx.height);
        let uploader: [u8; 32] =
            m.uploader_pubkey.as_slice().try_into().map_err(|_| {
                RightsError::InvalidManifest("uploader_pubkey is not 32 bytes".into())
            })?;
        crate::keyspaces::accounts::storage::charge(state, ctx, &uploader, bytes, 0)?;
        if let Some(dek) = &m.recovery_dek {
            state.put_recovery_dek(dek);
        }
        ctx.emit(
            Event::new("rights.upload_complete")
                .indexed("cid", hx(&m.flac_cid))
                .indexed("uploader", hx(&m.uploader_pubkey))
                .plain("validator", hx(&ctx.signer)),
        );
        Ok(())
    }

    fn record(&self, ctx: &TxContext) -> pb::Upload {
        let m = self.manifest.clone();
        pb::Upload {
            flac_cid: m.flac_cid,
            encrypted_cid: m.encrypted_cid,
            image_cids: m.image_cids,
            uploader_pubkey: m.uploader_pubkey,
            status: pb::UploadStatus::ProcessingComplete.into(),
            timestamp: block_secs(ctx.time_ns),
            replication_set: m.replication_set,
            dek_holder_set: m.dek_holder_set,
            encrypted_size: m.encrypted_size,
            processing_validator: m.processing_validator,
            group_id: m.group_id,
            created_height: ctx.height,
            uploader_signature: self.uploader_signature.to_vec(),
            dek_commitment: m.dek_commitment,
            facts: m.facts,
            image_sizes: m.image_sizes,
            handover: None,
        }
    }
}

/// Review M7: off-chain bytes are budgeted. The upload's pool pays
/// `stored × replicas`, where `stored` is the encrypted blob and every
/// image: its group's budget, or the one budget all ungrouped uploads
/// share (so no validator's quota can be filled by ungrouped uploads
/// alone). Each replica's quota pays `stored`. Uploads are never deleted,
/// so nothing is released.
fn charge_content<S: StateWrite>(
    state: &mut S,
    m: &pb::UploadManifest,
    p: &RightsParams,
) -> Result<(), TxError> {
    let size = stored_bytes(m);
    let (who, budget, max) = if m.group_id.is_empty() {
        let b = "rights.ungrouped_content_budget";
        (
            "ungrouped uploads".to_string(),
            b,
            p.ungrouped_content_budget,
        )
    } else {
        let b = "rights.group_content_budget";
        (format!("group {:?}", m.group_id), b, p.group_content_budget)
    };
    let adding = size.saturating_mul(m.replication_set.len() as u64);
    charge(
        state,
        (who, budget, max),
        &content_pool_key(&m.group_id),
        adding,
    )?;
    for k in &m.replication_set {
        let budget = "rights.validator_replication_quota";
        let pool = (
            format!("validator {}", hx(k)),
            budget,
            p.validator_replication_quota,
        );
        charge(state, pool, &validator_usage_key(k), size)?;
    }
    Ok(())
}

/// Adds `adding` to the counter at `key`, refused past `max`. `pool`
/// names the payer, its param and `max` for the message.
fn charge<S: StateWrite>(
    state: &mut S,
    pool: (String, &'static str, u64),
    key: &[u8],
    adding: u64,
) -> Result<(), TxError> {
    let (who, budget, max) = pool;
    let used = state.usage(key)?;
    let total = used.saturating_add(adding);
    if total > max {
        return Err(RightsError::ContentBudget {
            who,
            budget,
            used,
            adding,
            max,
        }
        .into());
    }
    state.put_usage(key, total);
    Ok(())
}

/// Each cid names one thing: the `encrypted_cid` is no other upload's blob
/// or flac cid, and the `flac_cid` is no other upload's blob. Otherwise a
/// peer asking for a blob could be answered under another upload's sets.
fn check_unclaimed<S: StateWrite>(state: &S, m: &pb::UploadManifest) -> Result<(), TxError> {
    let taken = |what: &str, cid: &[u8], by: &[u8]| {
        TxError::Conflict(format!(
            "{what} {} is the encrypted blob or flac cid of upload {}",
            hx(cid),
            hx(by)
        ))
    };
    if let Some(u) = state.upload_by_content(&m.encrypted_cid)? {
        return Err(taken("encrypted_cid", &m.encrypted_cid, &u.flac_cid));
    }
    if state.upload(&m.encrypted_cid)?.is_some() {
        return Err(taken("encrypted_cid", &m.encrypted_cid, &m.encrypted_cid));
    }
    if let Some(u) = state.upload_by_content(&m.flac_cid)? {
        return Err(taken("flac_cid", &m.flac_cid, &u.flac_cid));
    }
    for (what, cid) in [
        ("flac_cid", &m.flac_cid),
        ("encrypted_cid", &m.encrypted_cid),
    ] {
        if let Some(u) = state.upload_by_image(cid)? {
            return Err(TxError::Conflict(format!(
                "{what} {} is an image of upload {}",
                hx(cid),
                hx(&u.flac_cid)
            )));
        }
    }
    // An image may be shared (one cover for an album's tracks), at the
    // size it was first registered with, but never be another upload's
    // audio or encrypted blob.
    for (c, size) in m.image_cids.iter().zip(&m.image_sizes) {
        if let Some(u) = state.upload_by_content(c)? {
            return Err(taken("image cid", c, &u.flac_cid));
        }
        if state.upload(c)?.is_some() {
            return Err(taken("image cid", c, c));
        }
        if let Some(u) = state.upload_by_image(c)? {
            let first = u
                .image_cids
                .iter()
                .position(|x| x == c)
                .and_then(|i| u.image_sizes.get(i));
            if first != Some(size) {
                return Err(TxError::Conflict(format!(
                    "image {} is {size} bytes here, {first:?} in upload {}",
                    hx(c),
                    hx(&u.flac_cid)
                )));
            }
        }
    }
    Ok(())
}
