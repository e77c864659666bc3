//! `PublishRelease { flac_cid, ern }`: only the uploader of the upload may
//! publish it, once. Writes `releases/{flac_cid}`, moves the upload from
//! `PROCESSING_COMPLETE` to `PUBLISHED`, and grants the publisher `OWNER`.

use prost::Message;

use super::{ReleasesRead, ReleasesWrite};
use crate::keyspaces::entitlements::EntitlementsWrite;
use crate::keyspaces::params::Params;
use crate::keyspaces::rights::{block_secs, check_cid, ern, hx, RightsError};
use crate::keyspaces::uploads::{status_of, UploadsRead, UploadsWrite};
use crate::keyspaces::{Event, TxContext};
use crate::proto::rights as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// Domain form of `stave.rights.v1.PublishRelease`: the ERN is present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishRelease {
    pub flac_cid: Vec<u8>,
    pub ern: pb::ErnRelease,
}

impl TryFrom<pb::PublishRelease> for PublishRelease {
    type Error = String;
    fn try_from(p: pb::PublishRelease) -> Result<Self, String> {
        Ok(PublishRelease {
            flac_cid: p.flac_cid,
            ern: p.ern.ok_or("publish_release has no ern")?,
        })
    }
}

impl From<PublishRelease> for pb::PublishRelease {
    fn from(p: PublishRelease) -> Self {
        pb::PublishRelease {
            flac_cid: p.flac_cid,
            ern: Some(p.ern),
        }
    }
}

impl PublishRelease {
    /// The ERN formats (ICPN/GRid, ISRC, territories, date) and caps.
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        check_cid("flac_cid", &self.flac_cid, &params.rights)?;
        ern::validate_release(&self.ern, &params.rights)?;
        Ok(())
    }

    /// # Errors
    /// `UnknownCid`, `NotUploader`, `AlreadyPublished`.
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let cid = hx(&self.flac_cid);
        let mut upload = state
            .upload(&self.flac_cid)?
            .ok_or_else(|| RightsError::UnknownCid(cid.clone()))?;
        if upload.uploader_pubkey != ctx.signer {
            return Err(RightsError::NotUploader {
                cid,
                signer: hx(&ctx.signer),
                uploader: hx(&upload.uploader_pubkey),
            }
            .into());
        }
        if status_of(&upload) != pb::UploadStatus::ProcessingComplete
            || state.release(&self.flac_cid)?.is_some()
        {
            return Err(RightsError::AlreadyPublished(cid).into());
        }
        let now = block_secs(ctx.time_ns);
        upload.status = pb::UploadStatus::Published.into();
        state.put_upload(&upload)?;
        let release_bytes = state.put_release(&pb::Release {
            flac_cid: self.flac_cid.clone(),
            ddex_ern: self.ern.encode_to_vec(),
            signer_pubkey: ctx.signer.to_vec(),
            signature: ctx.signature.to_vec(),
            timestamp: now,
            height: ctx.height,
        });
        let owner = pb::Entitlement {
            cid: self.flac_cid.clone(),
            pubkey: ctx.signer.to_vec(),
            role: pb::Role::Owner.into(),
            grantor: ctx.signer.to_vec(),
            scope: None,
            created_at: now,
            created_height: ctx.height,
        };
        let owner_bytes = crate::keyspaces::entitlements::entitlement_bytes(&ctx.signer, &owner);
        state.put_entitlement(&ctx.signer, &owner)?;
        let signer = ctx.signer;
        crate::keyspaces::accounts::storage::charge(
            state,
            ctx,
            &signer,
            release_bytes.saturating_add(owner_bytes),
            0,
        )?;
        ctx.emit(
            Event::new("rights.publish_release")
                .indexed("cid", cid)
                .indexed("publisher", hx(&ctx.signer))
                .plain(
                    "title",
                    self.ern.title.chars().take(128).collect::<String>(),
                ),
        );
        Ok(())
    }
}
