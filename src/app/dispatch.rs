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
        Action::UploadComplete(a) => a.execute(state, ctx),
        Action::PublishRelease(a) => a.execute(state, ctx),
        Action::GrantEntitlement(a) => a.execute(state, ctx),
        Action::RevokeEntitlement(a) => a.execute(state, ctx),
        Action::SetPolicy(a) => a.execute(state, ctx),
        Action::RecordGrant(a) => a.execute(state, ctx),
    }
}
