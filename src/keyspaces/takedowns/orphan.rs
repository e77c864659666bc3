//! The takedown path for content no authority answers for: an upload with
//! no group, or whose group is SUSPENDED, REMOVED or gone. Any ACTIVE
//! validator may open the takedown; it then runs as any other
//! (`CounterNotice`, `TakedownResolve` votes, expiry), except that while
//! it is PENDING the policy in force stays and access is not denied: one
//! validator's request cannot take content offline, only the vote can.

use super::actions::{check_request, open_takedown, Request};
use crate::keyspaces::groups::{GroupStatus, GroupsRead};
use crate::keyspaces::params::Params;
use crate::keyspaces::uploads::UploadsRead;
use crate::keyspaces::validators::election::require_active;
use crate::keyspaces::TxContext;
use crate::proto::governance as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

domain_action!(
    /// Requests a takedown as an ACTIVE validator, of content whose group
    /// has no authority to act (none, SUSPENDED, REMOVED).
    ValidatorTakedownRequest => pb::ValidatorTakedownRequest { cid: Vec<u8>, reason: String, evidence_hash: Vec<u8> }
);

/// Whether no authority answers for content of `group_id`: no group, or a
/// group that is not ACTIVE (SUSPENDED, REMOVED, or no record).
fn orphaned<S: StateWrite>(state: &S, group_id: &str) -> Result<bool, TxError> {
    if group_id.is_empty() {
        return Ok(true);
    }
    Ok(state
        .group(group_id)?
        .is_none_or(|g| g.status != GroupStatus::Active as u32))
}

impl ValidatorTakedownRequest {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        check_request(&self.cid, &self.reason, &self.evidence_hash, params)
    }

    /// # Errors
    /// `NotValidator` (signer not ACTIVE), `NotFound` (no upload),
    /// `Unauthorized` (an ACTIVE group's authorities answer for it),
    /// `InvalidTransition` (a takedown PENDING or CONFIRMED).
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        require_active(state, &ctx.signer)?;
        let upload = state
            .upload(&self.cid)?
            .ok_or_else(|| TxError::NotFound(format!("upload {}", hex::encode(&self.cid))))?;
        if !orphaned(state, &upload.group_id)? {
            return Err(TxError::Unauthorized(format!(
                "upload {} belongs to ACTIVE group {:?}: its takedown authorities request takedowns",
                hex::encode(&self.cid),
                upload.group_id
            )));
        }
        open_takedown(
            state,
            ctx,
            Request {
                cid: &self.cid,
                group_id: upload.group_id,
                reason: &self.reason,
                evidence_hash: &self.evidence_hash,
                by_validators: true,
            },
        )
    }
}
