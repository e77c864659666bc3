//! `AmendUploadSets { cid, replication_set, dek_holder_set }`: the
//! uploader, or an OWNER or ADMIN of the cid, sets new target sets (every
//! member an ACTIVE validator); `ConfirmHolding { cid }`: a joining member
//! confirms it holds what it joined for. Both run [`super::handover`].

use super::complete::{check_key_set, require_active};
use super::handover;
use super::UploadsRead;
use crate::keyspaces::entitlements::EntitlementsRead;
use crate::keyspaces::params::Params;
use crate::keyspaces::rights::{check_cid, hx, RightsError};
use crate::keyspaces::validators::ValidatorsRead;
use crate::keyspaces::{Event, TxContext};
use crate::proto::rights as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// Domain form of `stave.rights.v1.AmendUploadSets`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmendUploadSets {
    pub cid: Vec<u8>,
    pub replication_set: Vec<Vec<u8>>,
    pub dek_holder_set: Vec<Vec<u8>>,
}

impl From<pb::AmendUploadSets> for AmendUploadSets {
    fn from(p: pb::AmendUploadSets) -> Self {
        AmendUploadSets {
            cid: p.cid,
            replication_set: p.replication_set,
            dek_holder_set: p.dek_holder_set,
        }
    }
}

impl From<AmendUploadSets> for pb::AmendUploadSets {
    fn from(a: AmendUploadSets) -> Self {
        pb::AmendUploadSets {
            cid: a.cid,
            replication_set: a.replication_set,
            dek_holder_set: a.dek_holder_set,
        }
    }
}

fn upload_of<S: StateWrite>(state: &S, cid: &[u8]) -> Result<pb::Upload, TxError> {
    Ok(state
        .upload(cid)?
        .ok_or_else(|| RightsError::UnknownCid(hx(cid)))?)
}

impl AmendUploadSets {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        check_cid("cid", &self.cid, &params.rights)?;
        check_key_set("replication_set", &self.replication_set, &params.rights)?;
        check_key_set("dek_holder_set", &self.dek_holder_set, &params.rights)?;
        Ok(())
    }

    /// # Errors
    /// `UnknownCid`; `Unauthorized` unless the signer is the uploader or
    /// an OWNER or ADMIN of the cid; `InvalidManifest` when a member is
    /// not ACTIVE; `ContentBudget` when a joining replica's quota is full.
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let mut u = upload_of(state, &self.cid)?;
        let role = state.role_of(&self.cid, &ctx.signer)?;
        let owner = matches!(role, Some(pb::Role::Owner | pb::Role::Admin));
        if u.uploader_pubkey != ctx.signer && !owner {
            return Err(TxError::Unauthorized(format!(
                "{} is neither the uploader nor an OWNER or ADMIN of {}",
                hx(&ctx.signer),
                hx(&self.cid)
            )));
        }
        require_active(
            state,
            self.replication_set.iter().chain(&self.dek_holder_set),
        )?;
        let target = (self.replication_set.clone(), self.dek_holder_set.clone());
        handover::start(state, &mut u, target, ctx.height, &ctx.params.rights)?;
        let joining = u.handover.as_ref().map_or(0, |h| h.unconfirmed.len());
        ctx.emit(
            Event::new("rights.amend_upload_sets")
                .indexed("cid", hx(&self.cid))
                .plain("joining", joining.to_string()),
        );
        Ok(())
    }
}

/// Domain form of `stave.rights.v1.ConfirmHolding`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmHolding {
    pub cid: Vec<u8>,
}

impl From<pb::ConfirmHolding> for ConfirmHolding {
    fn from(p: pb::ConfirmHolding) -> Self {
        ConfirmHolding { cid: p.cid }
    }
}

impl From<ConfirmHolding> for pb::ConfirmHolding {
    fn from(c: ConfirmHolding) -> Self {
        pb::ConfirmHolding { cid: c.cid }
    }
}

impl ConfirmHolding {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        check_cid("cid", &self.cid, &params.rights)?;
        Ok(())
    }

    /// # Errors
    /// `UnknownCid`; `Unauthorized` when the signer is not ACTIVE;
    /// `Conflict` when no handover awaits the signer.
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let mut u = upload_of(state, &self.cid)?;
        if !state.is_active_validator(&ctx.signer)? {
            return Err(TxError::Unauthorized(format!(
                "{} is not an ACTIVE validator: it can no longer join {}",
                hx(&ctx.signer),
                hx(&self.cid)
            )));
        }
        let left = handover::confirm(state, &mut u, &ctx.signer, ctx.height)?;
        ctx.emit(
            Event::new("rights.confirm_holding")
                .indexed("cid", hx(&self.cid))
                .indexed("validator", hx(&ctx.signer))
                .plain("unconfirmed", left.to_string()),
        );
        Ok(())
    }
}
