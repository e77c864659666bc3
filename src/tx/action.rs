//! The domain action type: one variant per action, converted from the wire
//! `Action` oneof. A missing oneof is an error, never a default.

use super::TxError;
use crate::keyspaces::kv::{KvDelete, KvSet};
use crate::keyspaces::params::Params;
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
        };
        pb::Action { kind: Some(kind) }
    }
}
