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
use crate::proto::tx as pb;

/// Every action a tx can carry. Dispatch over it is one exhaustive `match`
/// (`app::dispatch`), with no wildcard arm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    KvSet(KvSet),
    KvDelete(KvDelete),
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
