//! `PublishRelease { message }`: a DDEX ERN 4.3 `NewReleaseMessage`.
//!
//! In order:
//! 1. the message is validated ([`crate::ddex::validate`]: identifiers,
//!    references, territories, use types, deals that must not overlap, the
//!    genesis caps), and the overlap check's work is charged as gas;
//! 2. the publisher signature by the signer over (chain id, recording
//!    cids, sha256 of the message) verifies ([`super::sign`];
//!    `RELEASE_SIGNATURE`);
//! 3. an id already on chain makes this an update ([`super::update`]: the
//!    signer, then the order);
//! 4. its `MessageCreatedDateTime` is at most
//!    `rights.max_message_clock_skew_secs` past the block time
//!    (`FUTURE_RELEASE`);
//! 5. for every track's cid the signer is its uploader or an `OWNER`
//!    (`UNKNOWN_CID`, `NOT_UPLOADER`), and the cid is in at most
//!    `rights.max_releases_per_cid` releases;
//! 6. the record (with the signature), one `releases_by_cid/` row per track and one
//!    `releases_by_party/` row per party are written and charged to the
//!    signer; each track's upload becomes `PUBLISHED`, and a signer holding
//!    no entitlement on a track is granted `OWNER` on it.

use prost::Message;

use super::update;
use super::{record_bytes, ReleasesRead, ReleasesWrite};
use crate::ddex::validate::{validate, Validated};
use crate::keyspaces::entitlements::{entitlement_bytes, EntitlementsRead, EntitlementsWrite};
use crate::keyspaces::rights::{block_secs, cap, hx, RightsError};
use crate::keyspaces::uploads::{status_of, UploadsRead, UploadsWrite};
use crate::keyspaces::{Event, TxContext};
use crate::proto::ddex as pb;
use crate::proto::rights as rpb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// Domain form of `stave.ddex.v1.PublishRelease`: the message is present
/// and the publisher signature is 64 bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishRelease {
    /// Boxed: a release is far larger than any other action.
    pub message: Box<pb::NewReleaseMessage>,
    /// The signer's signature over the release ([`super::sign`]).
    pub publisher_signature: [u8; 64],
}

impl PublishRelease {
    /// `message` with its publisher signature left for
    /// [`crate::tx::build::sign_tx_with_gas`] to make with the tx's key.
    pub fn unsigned(message: pb::NewReleaseMessage) -> Self {
        PublishRelease {
            message: Box::new(message),
            publisher_signature: [0; 64],
        }
    }

    /// `message` signed by `key` (the key that will sign the tx) for
    /// `chain_id`.
    pub fn signed(
        key: &ed25519_dalek::SigningKey,
        chain_id: &str,
        message: pb::NewReleaseMessage,
    ) -> Self {
        PublishRelease {
            publisher_signature: super::sign::sign(key, chain_id, &message),
            message: Box::new(message),
        }
    }
}

impl TryFrom<pb::PublishRelease> for PublishRelease {
    type Error = String;
    fn try_from(p: pb::PublishRelease) -> Result<Self, String> {
        let n = p.publisher_signature.len();
        Ok(PublishRelease {
            message: Box::new(p.message.ok_or("publish_release has no message")?),
            publisher_signature: p
                .publisher_signature
                .try_into()
                .map_err(|_| format!("publish_release publisher_signature is {n} bytes, not 64"))?,
        })
    }
}

impl From<PublishRelease> for pb::PublishRelease {
    fn from(p: PublishRelease) -> Self {
        pb::PublishRelease {
            message: Some(*p.message),
            publisher_signature: p.publisher_signature.to_vec(),
        }
    }
}

/// The main release's default title, for events and listings.
pub fn title_of(m: &pb::NewReleaseMessage) -> String {
    let r = m.release.as_ref();
    let texts = r.map(|r| r.display_title_text.as_slice()).unwrap_or(&[]);
    let pick = texts
        .iter()
        .find(|t| t.variant.as_ref().is_some_and(|v| v.is_default == 1))
        .or(texts.first());
    pick.map(|t| t.value.chars().take(128).collect())
        .unwrap_or_default()
}

impl PublishRelease {
    /// The encoded message's size against `rights.max_release_bytes`, then
    /// the whole of [`validate`]: a malformed release never enters a block.
    /// [`PublishRelease::execute`] validates again (the same pure
    /// function) and charges the overlap check's work as gas.
    pub fn check_stateless(
        &self,
        params: &crate::keyspaces::params::Params,
    ) -> Result<(), TxError> {
        self.check_size(params)?;
        validate(&self.message, &params.rights.release_caps()).map_err(RightsError::from)?;
        Ok(())
    }

    fn check_size(&self, params: &crate::keyspaces::params::Params) -> Result<(), TxError> {
        let max = params.rights.max_release_bytes;
        let got = self.message.encoded_len();
        if got as u64 > max {
            return Err(RightsError::CapExceeded {
                what: "encoded release message bytes".into(),
                got,
                max: u32::try_from(max).unwrap_or(u32::MAX),
            }
            .into());
        }
        Ok(())
    }

    /// # Errors
    /// See the module documentation.
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        self.check_size(&ctx.params)?;
        let v = validate(&self.message, &ctx.params.rights.release_caps())
            .map_err(RightsError::from)?;
        state.charge_gas(crate::gas::Work::EvalOps(v.work))?;
        super::sign::verify(
            &ctx.chain_id,
            &v.release_id,
            &self.message,
            &ctx.signing_key,
            &self.publisher_signature,
        )?;
        let old = state.release(&v.release_id)?;
        if let Some(old) = &old {
            update::check(state, ctx, old, &v, &self.message)?;
        }
        update::check_clock(&v.release_id, &self.message, ctx)?;
        for t in &v.tracks {
            may_publish(state, ctx, &t.cid)?;
        }
        let mut dropped = Vec::new();
        let (version, publisher) = match old {
            Some(old) => {
                update::retire(state, ctx, &old)?;
                dropped = old
                    .tracks
                    .iter()
                    .filter(|t| !v.tracks.iter().any(|n| n.cid == t.cid))
                    .map(|t| hx(&t.cid))
                    .collect();
                (old.version.saturating_add(1), old.publisher)
            }
            None => (0, ctx.signer.to_vec()),
        };
        let record = pb::ReleaseRecord {
            release_id: v.release_id.clone(),
            message: Some((*self.message).clone()),
            tracks: v.tracks.clone(),
            publisher,
            signer: ctx.signer.to_vec(),
            version,
            timestamp: block_secs(ctx.time_ns),
            height: ctx.height,
            parties: v.parties.clone(),
            publisher_signature: self.publisher_signature.to_vec(),
            signing_key: if ctx.signing_key == ctx.signer {
                Vec::new()
            } else {
                ctx.signing_key.to_vec()
            },
        };
        let mut bytes = record_bytes(&record);
        state.put_release(&record);
        bytes = bytes.saturating_add(write_rows(state, ctx, &v)?);
        for t in &v.tracks {
            bytes = bytes.saturating_add(mark_published(state, ctx, &t.cid)?);
        }
        let signer = ctx.signer;
        crate::keyspaces::accounts::storage::charge(state, ctx, &signer, bytes, 0)?;
        let mut event = Event::new("rights.publish_release")
            .indexed("release_id", v.release_id.clone())
            .indexed("publisher", hx(&record.publisher))
            .plain("version", version.to_string())
            .plain("tracks", v.tracks.len().to_string())
            .plain("title", title_of(&self.message));
        for t in &v.tracks {
            event = event.indexed("cid", hx(&t.cid));
        }
        for cid in dropped {
            event = event.indexed("dropped_cid", cid);
        }
        ctx.emit(event);
        Ok(())
    }
}

/// The signer is the cid's uploader or holds `OWNER` on it.
fn may_publish<S: StateWrite>(state: &S, ctx: &TxContext, cid: &[u8]) -> Result<(), TxError> {
    let upload = state
        .upload(cid)?
        .ok_or_else(|| RightsError::UnknownCid(hx(cid)))?;
    if upload.uploader_pubkey == ctx.signer
        || state.role_of(cid, &ctx.signer)? == Some(rpb::Role::Owner)
    {
        return Ok(());
    }
    Err(RightsError::NotUploader {
        cid: hx(cid),
        signer: hx(&ctx.signer),
        uploader: format!(
            "{} (and the signer holds no OWNER)",
            hx(&upload.uploader_pubkey)
        ),
    }
    .into())
}

/// The per-cid deal rows (each cid in at most `max_releases_per_cid`
/// releases) and the party rows; returns their bytes.
fn write_rows<S: StateWrite>(
    state: &mut S,
    ctx: &TxContext,
    v: &Validated,
) -> Result<u64, TxError> {
    let max = ctx.params.rights.max_releases_per_cid;
    let mut bytes = 0u64;
    for (cid, deals) in &v.covering {
        let held = state.cid_releases(cid, None, max as usize + 1)?;
        let others = held.iter().filter(|(id, _)| *id != v.release_id).count();
        cap(&format!("releases of cid {}", hx(cid)), others + 1, max)?;
        bytes = bytes.saturating_add(state.put_cid_deals(cid, &v.release_id, deals));
    }
    for party in &v.parties {
        bytes = bytes.saturating_add(state.put_party_row(party, &v.release_id));
    }
    Ok(bytes)
}

/// Moves the upload to `PUBLISHED` and grants a signer with no entitlement
/// `OWNER`; returns the bytes of a new entitlement.
fn mark_published<S: StateWrite>(
    state: &mut S,
    ctx: &TxContext,
    cid: &[u8],
) -> Result<u64, TxError> {
    let Some(mut upload) = state.upload(cid)? else {
        return Err(RightsError::UnknownCid(hx(cid)).into());
    };
    if status_of(&upload) != rpb::UploadStatus::Published {
        upload.status = rpb::UploadStatus::Published.into();
        state.put_upload(&upload)?;
    }
    if state.entitlement(cid, &ctx.signer)?.is_some() {
        return Ok(0);
    }
    let owner = rpb::Entitlement {
        cid: cid.to_vec(),
        pubkey: ctx.signer.to_vec(),
        role: rpb::Role::Owner.into(),
        grantor: ctx.signer.to_vec(),
        scope: None,
        created_at: block_secs(ctx.time_ns),
        created_height: ctx.height,
    };
    state.put_entitlement(&ctx.signer, &owner)?;
    Ok(entitlement_bytes(&ctx.signer, &owner))
}
