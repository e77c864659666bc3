//! The domain action type: one variant per action, converted from the wire
//! `Action` oneof. A missing oneof is an error, never a default.

use super::TxError;
use crate::keyspaces::entitlements::{GrantEntitlement, RevokeEntitlement};
use crate::keyspaces::grants::RecordGrant;
use crate::keyspaces::kv::{KvDelete, KvSet};
use crate::keyspaces::params::Params;
use crate::keyspaces::policies::SetPolicy;
use crate::keyspaces::releases::PublishRelease;
use crate::keyspaces::uploads::UploadComplete;
use crate::keyspaces::validators::{ApplyValidator, LeaveValidator, VoteValidator};
use crate::proto::tx as pb;

/// Every action a tx can carry. Dispatch over it is one exhaustive `match`
/// (`app::dispatch`), with no wildcard arm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    KvSet(KvSet),
    KvDelete(KvDelete),
    ApplyValidator(ApplyValidator),
    VoteValidator(VoteValidator),
    LeaveValidator(LeaveValidator),
    ApplyGroup(crate::keyspaces::groups::ApplyGroup),
    VoteGroup(crate::keyspaces::groups::VoteGroup),
    RotateTakedownAuthority(crate::keyspaces::groups::RotateTakedownAuthority),
    SetGroupMember(crate::keyspaces::groups::SetGroupMember),
    TakedownRequest(crate::keyspaces::takedowns::TakedownRequest),
    CounterNotice(crate::keyspaces::takedowns::CounterNotice),
    TakedownResolve(crate::keyspaces::takedowns::TakedownResolve),
    SetFlag(crate::keyspaces::takedowns::SetFlag),
    ClearFlag(crate::keyspaces::takedowns::ClearFlag),
    UploadComplete(UploadComplete),
    PublishRelease(PublishRelease),
    GrantEntitlement(GrantEntitlement),
    RevokeEntitlement(RevokeEntitlement),
    SetPolicy(SetPolicy),
    RecordGrant(RecordGrant),
}

impl Action {
    /// Checks that need no state: sizes and formats against the params.
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        match self {
            Action::KvSet(a) => a.check_stateless(params),
            Action::KvDelete(a) => a.check_stateless(params),
            Action::ApplyValidator(a) => a.check_stateless(params),
            Action::VoteValidator(a) => a.check_stateless(params),
            Action::LeaveValidator(a) => a.check_stateless(params),
            Action::ApplyGroup(a) => a.check_stateless(params),
            Action::VoteGroup(a) => a.check_stateless(params),
            Action::RotateTakedownAuthority(a) => a.check_stateless(params),
            Action::SetGroupMember(a) => a.check_stateless(params),
            Action::TakedownRequest(a) => a.check_stateless(params),
            Action::CounterNotice(a) => a.check_stateless(params),
            Action::TakedownResolve(a) => a.check_stateless(params),
            Action::SetFlag(a) => a.check_stateless(params),
            Action::ClearFlag(a) => a.check_stateless(params),
            Action::UploadComplete(a) => a.check_stateless(params),
            Action::PublishRelease(a) => a.check_stateless(params),
            Action::GrantEntitlement(a) => a.check_stateless(params),
            Action::RevokeEntitlement(a) => a.check_stateless(params),
            Action::SetPolicy(a) => a.check_stateless(params),
            Action::RecordGrant(a) => a.check_stateless(params),
        }
    }

    /// The action's name in events and logs.
    pub fn name(&self) -> &'static str {
        match self {
            Action::KvSet(_) => "kv.set",
            Action::KvDelete(_) => "kv.delete",
            Action::ApplyValidator(_) => "validator.apply",
            Action::VoteValidator(_) => "validator.vote",
            Action::LeaveValidator(_) => "validator.leave",
            Action::ApplyGroup(_) => "group.apply",
            Action::VoteGroup(_) => "group.vote",
            Action::RotateTakedownAuthority(_) => "group.rotate_authority",
            Action::SetGroupMember(_) => "group.set_member",
            Action::TakedownRequest(_) => "takedown.request",
            Action::CounterNotice(_) => "takedown.counter_notice",
            Action::TakedownResolve(_) => "takedown.resolve",
            Action::SetFlag(_) => "flag.set",
            Action::ClearFlag(_) => "flag.clear",
            Action::UploadComplete(_) => "rights.upload_complete",
            Action::PublishRelease(_) => "rights.publish_release",
            Action::GrantEntitlement(_) => "rights.grant_entitlement",
            Action::RevokeEntitlement(_) => "rights.revoke_entitlement",
            Action::SetPolicy(_) => "rights.set_policy",
            Action::RecordGrant(_) => "rights.record_grant",
        }
    }
}

impl TryFrom<pb::Action> for Action {
    type Error = String;
    fn try_from(a: pb::Action) -> Result<Self, String> {
        match a.kind.ok_or("action has no kind")? {
            pb::action::Kind::KvSet(s) => Ok(Action::KvSet(s.into())),
            pb::action::Kind::KvDelete(d) => Ok(Action::KvDelete(d.into())),
            pb::action::Kind::ApplyValidator(a) => Ok(Action::ApplyValidator(a.try_into()?)),
            pb::action::Kind::VoteValidator(v) => Ok(Action::VoteValidator(v.try_into()?)),
            pb::action::Kind::LeaveValidator(l) => Ok(Action::LeaveValidator(l.into())),
            pb::action::Kind::ApplyGroup(a) => Ok(Action::ApplyGroup(a)),
            pb::action::Kind::VoteGroup(a) => Ok(Action::VoteGroup(a)),
            pb::action::Kind::RotateTakedownAuthority(a) => Ok(Action::RotateTakedownAuthority(a)),
            pb::action::Kind::SetGroupMember(a) => Ok(Action::SetGroupMember(a)),
            pb::action::Kind::TakedownRequest(a) => Ok(Action::TakedownRequest(a)),
            pb::action::Kind::CounterNotice(a) => Ok(Action::CounterNotice(a)),
            pb::action::Kind::TakedownResolve(a) => Ok(Action::TakedownResolve(a)),
            pb::action::Kind::SetFlag(a) => Ok(Action::SetFlag(a)),
            pb::action::Kind::ClearFlag(a) => Ok(Action::ClearFlag(a)),
            pb::action::Kind::UploadComplete(a) => Ok(Action::UploadComplete(a.try_into()?)),
            pb::action::Kind::PublishRelease(a) => Ok(Action::PublishRelease(a.try_into()?)),
            pb::action::Kind::GrantEntitlement(a) => Ok(Action::GrantEntitlement(a.try_into()?)),
            pb::action::Kind::RevokeEntitlement(a) => Ok(Action::RevokeEntitlement(a.into())),
            pb::action::Kind::SetPolicy(a) => Ok(Action::SetPolicy(a.try_into()?)),
            pb::action::Kind::RecordGrant(a) => Ok(Action::RecordGrant(a.into())),
        }
    }
}

impl From<Action> for pb::Action {
    fn from(a: Action) -> Self {
        let kind = match a {
            Action::KvSet(s) => pb::action::Kind::KvSet(s.into()),
            Action::KvDelete(d) => pb::action::Kind::KvDelete(d.into()),
            Action::ApplyValidator(a) => pb::action::Kind::ApplyValidator(a.into()),
            Action::VoteValidator(v) => pb::action::Kind::VoteValidator(v.into()),
            Action::LeaveValidator(l) => pb::action::Kind::LeaveValidator(l.into()),
            Action::ApplyGroup(a) => pb::action::Kind::ApplyGroup(a),
            Action::VoteGroup(a) => pb::action::Kind::VoteGroup(a),
            Action::RotateTakedownAuthority(a) => pb::action::Kind::RotateTakedownAuthority(a),
            Action::SetGroupMember(a) => pb::action::Kind::SetGroupMember(a),
            Action::TakedownRequest(a) => pb::action::Kind::TakedownRequest(a),
            Action::CounterNotice(a) => pb::action::Kind::CounterNotice(a),
            Action::TakedownResolve(a) => pb::action::Kind::TakedownResolve(a),
            Action::SetFlag(a) => pb::action::Kind::SetFlag(a),
            Action::ClearFlag(a) => pb::action::Kind::ClearFlag(a),
            Action::UploadComplete(a) => pb::action::Kind::UploadComplete(a.into()),
            Action::PublishRelease(a) => pb::action::Kind::PublishRelease(a.into()),
            Action::GrantEntitlement(a) => pb::action::Kind::GrantEntitlement(a.into()),
            Action::RevokeEntitlement(a) => pb::action::Kind::RevokeEntitlement(a.into()),
            Action::SetPolicy(a) => pb::action::Kind::SetPolicy(a.into()),
            Action::RecordGrant(a) => pb::action::Kind::RecordGrant(a.into()),
        };
        pb::Action { kind: Some(kind) }
    }
}
