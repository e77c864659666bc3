//! The one exhaustive dispatch over action kinds. No wildcard arm: a new
//! action does not compile until it is dispatched here.

use crate::keyspaces::TxContext;
use crate::store::StateWrite;
use crate::tx::{Action, TxError};

/// Runs one action inside the tx overlay.
pub fn dispatch<S: StateWrite>(
    action: &Action,
    state: &mut S,
    ctx: &mut TxContext,
) -> Result<(), TxError> {
    match action {
        Action::KvSet(a) => a.execute(state, ctx),
        Action::KvDelete(a) => a.execute(state, ctx),
        Action::ApplyValidator(a) => a.execute(state, ctx),
        Action::VoteValidator(a) => a.execute(state, ctx),
        Action::LeaveValidator(a) => a.execute(state, ctx),
        Action::UpdateValidatorEndpoints(a) => a.execute(state, ctx),
        Action::ScheduleUpgrade(a) => a.execute(state, ctx),
        Action::RotateConsensusKey(a) => a.execute(state, ctx),
        Action::RotateX25519Key(a) => a.execute(state, ctx),
        Action::RotateOperatorKey(a) => a.execute(state, ctx),
        Action::ValidatorTakedownRequest(a) => a.execute(state, ctx),
        Action::ApplyGroup(a) => a.execute(state, ctx),
        Action::VoteGroup(a) => a.execute(state, ctx),
        Action::RotateTakedownAuthority(a) => a.execute(state, ctx),
        Action::SetGroupMember(a) => a.execute(state, ctx),
        Action::TakedownRequest(a) => a.execute(state, ctx),
        Action::CounterNotice(a) => a.execute(state, ctx),
        Action::TakedownResolve(a) => a.execute(state, ctx),
        Action::SetFlag(a) => a.execute(state, ctx),
        Action::ClearFlag(a) => a.execute(state, ctx),
        Action::AddCasbinModel(a) => a.execute(state, ctx),
        Action::AddCasbinRule(a) => a.execute(state, ctx),
        Action::RemoveCasbinRule(a) => a.execute(state, ctx),
        Action::UploadComplete(a) => a.execute(state, ctx),
        Action::PublishRelease(a) => a.execute(state, ctx),
        Action::GrantEntitlement(a) => a.execute(state, ctx),
        Action::RevokeEntitlement(a) => a.execute(state, ctx),
        Action::SetPolicy(a) => a.execute(state, ctx),
        Action::RecordGrant(a) => a.execute(state, ctx),
        Action::RecordGrants(a) => a.execute(state, ctx),
        Action::AmendUploadSets(a) => a.execute(state, ctx),
        Action::ConfirmHolding(a) => a.execute(state, ctx),
        Action::KvTokenCreate(a) => a.execute(state, ctx),
        Action::KvTokenUpdate(a) => a.execute(state, ctx),
        Action::KvTokenDelete(a) => a.execute(state, ctx),
        Action::Kvdb(a) => a.execute(state, ctx),
        Action::SetAccountQuota(a) => a.execute(state, ctx),
    }
}
