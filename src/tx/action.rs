//! The domain action type: one variant per action, converted from the wire
//! `Action` oneof. A missing oneof is an error, never a default.

use super::TxError;
use crate::keyspaces::casbin::{AddCasbinModel, AddCasbinRule, RemoveCasbinRule};
use crate::keyspaces::entitlements::{GrantEntitlement, RevokeEntitlement};
use crate::keyspaces::grants::{RecordGrant, RecordGrants};
use crate::keyspaces::kv::token::{token_sig, TokenSig};
use crate::keyspaces::kv::{
    KvDelete, KvSet, KvTokenCreate, KvTokenDelete, KvTokenUpdate, KvdbAction,
};
use crate::keyspaces::params::Params;
use crate::keyspaces::policies::SetPolicy;
use crate::keyspaces::releases::PublishRelease;
use crate::keyspaces::uploads::UploadComplete;
use crate::keyspaces::validators::{
    ApplyValidator, LeaveValidator, UpdateValidatorEndpoints, VoteValidator,
};
use crate::proto::tx as pb;

/// Every action a tx can carry. Dispatch over it is one exhaustive `match`
/// (`app::dispatch`), with no wildcard arm.
// UploadComplete (488 bytes) sets the size, as it did before releases were
// boxed; actions live only in one tx's Vec, so boxing it would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    KvSet(KvSet),
    KvDelete(KvDelete),
    ApplyValidator(ApplyValidator),
    VoteValidator(VoteValidator),
    LeaveValidator(LeaveValidator),
    UpdateValidatorEndpoints(UpdateValidatorEndpoints),
    ScheduleUpgrade(crate::keyspaces::upgrades::ScheduleUpgrade),
    RotateConsensusKey(crate::keyspaces::validators::RotateConsensusKey),
    RotateX25519Key(crate::keyspaces::validators::RotateX25519Key),
    RotateOperatorKey(crate::keyspaces::validators::RotateOperatorKey),
    ValidatorTakedownRequest(crate::keyspaces::takedowns::ValidatorTakedownRequest),
    ApplyGroup(crate::keyspaces::groups::ApplyGroup),
    VoteGroup(crate::keyspaces::groups::VoteGroup),
    RotateTakedownAuthority(crate::keyspaces::groups::RotateTakedownAuthority),
    SetGroupMember(crate::keyspaces::groups::SetGroupMember),
    TakedownRequest(crate::keyspaces::takedowns::TakedownRequest),
    CounterNotice(crate::keyspaces::takedowns::CounterNotice),
    TakedownResolve(crate::keyspaces::takedowns::TakedownResolve),
    SetFlag(crate::keyspaces::takedowns::SetFlag),
    ClearFlag(crate::keyspaces::takedowns::ClearFlag),
    AddCasbinModel(AddCasbinModel),
    AddCasbinRule(AddCasbinRule),
    RemoveCasbinRule(RemoveCasbinRule),
    UploadComplete(UploadComplete),
    PublishRelease(PublishRelease),
    GrantEntitlement(GrantEntitlement),
    RevokeEntitlement(RevokeEntitlement),
    SetPolicy(SetPolicy),
    RecordGrant(RecordGrant),
    RecordGrants(RecordGrants),
    AmendUploadSets(crate::keyspaces::uploads::AmendUploadSets),
    ConfirmHolding(crate::keyspaces::uploads::ConfirmHolding),
    KvTokenCreate(KvTokenCreate),
    KvTokenUpdate(KvTokenUpdate),
    KvTokenDelete(KvTokenDelete),
    /// Every kvdb operation (`stave.kv.v1.Kvdb*`).
    Kvdb(KvdbAction),
    SetAccountQuota(crate::keyspaces::accounts::SetAccountQuota),
}

impl Action {
    /// The key whose signature the action carries besides the tx's (a KV
    /// token's controller, an upload manifest's uploader), when it parses:
    /// a key a rotation retired signs nothing, so execution refuses it.
    pub fn embedded_signer(&self) -> Option<[u8; 32]> {
        use crate::keyspaces::kv::token::controller_key;
        match self {
            Action::KvTokenCreate(a) => controller_key(&a.token.controller).ok(),
            Action::KvTokenUpdate(a) => controller_key(&a.token.controller).ok(),
            Action::KvTokenDelete(a) => controller_key(&a.controller).ok(),
            Action::UploadComplete(a) => a.manifest.uploader_pubkey.as_slice().try_into().ok(),
            _ => None,
        }
    }

    /// Checks that need no state: sizes and formats against the params.
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        match self {
            Action::KvSet(a) => a.check_stateless(params),
            Action::KvDelete(a) => a.check_stateless(params),
            Action::ApplyValidator(a) => a.check_stateless(params),
            Action::VoteValidator(a) => a.check_stateless(params),
            Action::LeaveValidator(a) => a.check_stateless(params),
            Action::UpdateValidatorEndpoints(a) => a.check_stateless(params),
            Action::ScheduleUpgrade(a) => a.check_stateless(params),
            Action::RotateConsensusKey(a) => a.check_stateless(params),
            Action::RotateX25519Key(a) => a.check_stateless(params),
            Action::RotateOperatorKey(a) => a.check_stateless(params),
            Action::ValidatorTakedownRequest(a) => a.check_stateless(params),
            Action::ApplyGroup(a) => a.check_stateless(params),
            Action::VoteGroup(a) => a.check_stateless(params),
            Action::RotateTakedownAuthority(a) => a.check_stateless(params),
            Action::SetGroupMember(a) => a.check_stateless(params),
            Action::TakedownRequest(a) => a.check_stateless(params),
            Action::CounterNotice(a) => a.check_stateless(params),
            Action::TakedownResolve(a) => a.check_stateless(params),
            Action::SetFlag(a) => a.check_stateless(params),
            Action::ClearFlag(a) => a.check_stateless(params),
            Action::AddCasbinModel(a) => a.check_stateless(params),
            Action::AddCasbinRule(a) => a.check_stateless(params),
            Action::RemoveCasbinRule(a) => a.check_stateless(params),
            Action::UploadComplete(a) => a.check_stateless(params),
            Action::PublishRelease(a) => a.check_stateless(params),
            Action::GrantEntitlement(a) => a.check_stateless(params),
            Action::RevokeEntitlement(a) => a.check_stateless(params),
            Action::SetPolicy(a) => a.check_stateless(params),
            Action::RecordGrant(a) => a.check_stateless(params),
            Action::RecordGrants(a) => a.check_stateless(params),
            Action::AmendUploadSets(a) => a.check_stateless(params),
            Action::ConfirmHolding(a) => a.check_stateless(params),
            Action::KvTokenCreate(a) => a.check_stateless(params),
            Action::KvTokenUpdate(a) => a.check_stateless(params),
            Action::KvTokenDelete(a) => a.check_stateless(params),
            Action::Kvdb(a) => a.check_stateless(params),
            Action::SetAccountQuota(a) => a.check_stateless(params),
        }
    }

    /// The signature carried inside an action (a KV token's controller
    /// signature), over the tx's chain id, prepared but not verified: the
    /// block verifies it in one batch with the tx signatures. `Err` when its
    /// key is unusable (checked at this point of decoding, as before).
    pub fn embedded_sig(&self, chain_id: &str) -> Result<Option<TokenSig>, TxError> {
        match self {
            Action::KvTokenCreate(a) => Ok(Some(token_sig(
                &a.sign_fields(chain_id),
                &a.token.signature,
            )?)),
            Action::KvTokenUpdate(a) => Ok(Some(token_sig(
                &a.sign_fields(chain_id),
                &a.token.signature,
            )?)),
            Action::KvTokenDelete(a) => {
                Ok(Some(token_sig(&a.sign_fields(chain_id), &a.signature)?))
            }
            Action::KvSet(_)
            | Action::KvDelete(_)
            | Action::Kvdb(_)
            | Action::ApplyValidator(_)
            | Action::VoteValidator(_)
            | Action::LeaveValidator(_)
            | Action::UpdateValidatorEndpoints(_)
            | Action::ScheduleUpgrade(_)
            | Action::RotateConsensusKey(_)
            | Action::RotateX25519Key(_)
            | Action::RotateOperatorKey(_)
            | Action::ValidatorTakedownRequest(_)
            | Action::ApplyGroup(_)
            | Action::VoteGroup(_)
            | Action::RotateTakedownAuthority(_)
            | Action::SetGroupMember(_)
            | Action::TakedownRequest(_)
            | Action::CounterNotice(_)
            | Action::TakedownResolve(_)
            | Action::SetFlag(_)
            | Action::ClearFlag(_)
            | Action::AddCasbinModel(_)
            | Action::AddCasbinRule(_)
            | Action::RemoveCasbinRule(_)
            | Action::UploadComplete(_)
            | Action::PublishRelease(_)
            | Action::GrantEntitlement(_)
            | Action::RevokeEntitlement(_)
            | Action::SetPolicy(_)
            | Action::RecordGrant(_)
            | Action::RecordGrants(_)
            | Action::AmendUploadSets(_)
            | Action::ConfirmHolding(_)
            | Action::SetAccountQuota(_) => Ok(None),
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
            Action::UpdateValidatorEndpoints(_) => "validator.update_endpoints",
            Action::ScheduleUpgrade(_) => "upgrade.schedule",
            Action::RotateConsensusKey(_) => "validator.rotate_consensus_key",
            Action::RotateX25519Key(_) => "validator.rotate_x25519_key",
            Action::RotateOperatorKey(_) => "validator.rotate_operator_key",
            Action::ValidatorTakedownRequest(_) => "takedown.request_by_validator",
            Action::ApplyGroup(_) => "group.apply",
            Action::VoteGroup(_) => "group.vote",
            Action::RotateTakedownAuthority(_) => "group.rotate_authority",
            Action::SetGroupMember(_) => "group.set_member",
            Action::TakedownRequest(_) => "takedown.request",
            Action::CounterNotice(_) => "takedown.counter_notice",
            Action::TakedownResolve(_) => "takedown.resolve",
            Action::SetFlag(_) => "flag.set",
            Action::ClearFlag(_) => "flag.clear",
            Action::AddCasbinModel(_) => "casbin.add_model",
            Action::AddCasbinRule(_) => "casbin.add_rule",
            Action::RemoveCasbinRule(_) => "casbin.remove_rule",
            Action::UploadComplete(_) => "rights.upload_complete",
            Action::PublishRelease(_) => "rights.publish_release",
            Action::GrantEntitlement(_) => "rights.grant_entitlement",
            Action::RevokeEntitlement(_) => "rights.revoke_entitlement",
            Action::SetPolicy(_) => "rights.set_policy",
            Action::RecordGrant(_) => "rights.record_grant",
            Action::RecordGrants(_) => "rights.record_grants",
            Action::AmendUploadSets(_) => "rights.amend_upload_sets",
            Action::ConfirmHolding(_) => "rights.confirm_holding",
            Action::KvTokenCreate(_) => "kv.token.create",
            Action::KvTokenUpdate(_) => "kv.token.update",
            Action::KvTokenDelete(_) => "kv.token.delete",
            Action::Kvdb(_) => "kvdb",
            Action::SetAccountQuota(_) => "account.set_quota",
        }
    }
}

impl TryFrom<pb::Action> for Action {
    type Error = String;
    fn try_from(a: pb::Action) -> Result<Self, String> {
        use pb::action::Kind;
        let e = |e: crate::keyspaces::kv::KvError| e.to_string();
        Ok(match a.kind.ok_or("action has no kind")? {
            Kind::KvSet(s) => Action::KvSet(s.into()),
            Kind::KvDelete(d) => Action::KvDelete(d.into()),
            Kind::AddCasbinModel(a) => Action::AddCasbinModel(a.into()),
            Kind::AddCasbinRule(a) => Action::AddCasbinRule(a.into()),
            Kind::RemoveCasbinRule(a) => Action::RemoveCasbinRule(a.into()),
            Kind::ApplyValidator(a) => Action::ApplyValidator(a.try_into()?),
            Kind::VoteValidator(v) => Action::VoteValidator(v.try_into()?),
            Kind::LeaveValidator(l) => Action::LeaveValidator(l.into()),
            Kind::UpdateValidatorEndpoints(u) => Action::UpdateValidatorEndpoints(u.into()),
            Kind::ScheduleUpgrade(u) => Action::ScheduleUpgrade(u.into()),
            Kind::RotateConsensusKey(r) => Action::RotateConsensusKey(r.try_into()?),
            Kind::RotateX25519Key(r) => Action::RotateX25519Key(r.into()),
            Kind::RotateOperatorKey(r) => Action::RotateOperatorKey(r.try_into()?),
            Kind::ValidatorTakedownRequest(r) => Action::ValidatorTakedownRequest(r.into()),
            Kind::ApplyGroup(a) => Action::ApplyGroup(a.into()),
            Kind::VoteGroup(a) => Action::VoteGroup(a.into()),
            Kind::RotateTakedownAuthority(a) => Action::RotateTakedownAuthority(a.into()),
            Kind::SetGroupMember(a) => Action::SetGroupMember(a.into()),
            Kind::TakedownRequest(a) => Action::TakedownRequest(a.into()),
            Kind::CounterNotice(a) => Action::CounterNotice(a.into()),
            Kind::TakedownResolve(a) => Action::TakedownResolve(a.into()),
            Kind::SetFlag(a) => Action::SetFlag(a.into()),
            Kind::ClearFlag(a) => Action::ClearFlag(a.into()),
            Kind::UploadComplete(a) => Action::UploadComplete(a.try_into()?),
            Kind::PublishRelease(a) => Action::PublishRelease(a.try_into()?),
            Kind::GrantEntitlement(a) => Action::GrantEntitlement(a.try_into()?),
            Kind::RevokeEntitlement(a) => Action::RevokeEntitlement(a.into()),
            Kind::SetPolicy(a) => Action::SetPolicy(a.try_into()?),
            Kind::RecordGrant(a) => Action::RecordGrant(a.into()),
            Kind::RecordGrants(a) => Action::RecordGrants(a.into()),
            Kind::AmendUploadSets(a) => Action::AmendUploadSets(a.into()),
            Kind::ConfirmHolding(a) => Action::ConfirmHolding(a.into()),
            Kind::SetAccountQuota(a) => Action::SetAccountQuota(a.into()),
            Kind::KvTokenCreate(c) => Action::KvTokenCreate(c.try_into().map_err(e)?),
            Kind::KvTokenUpdate(u) => Action::KvTokenUpdate(u.try_into().map_err(e)?),
            Kind::KvTokenDelete(d) => Action::KvTokenDelete(d.try_into().map_err(e)?),
            k @ (Kind::KvdbSet(_)
            | Kind::KvdbDel(_)
            | Kind::KvdbExpire(_)
            | Kind::KvdbHset(_)
            | Kind::KvdbHdel(_)
            | Kind::KvdbSadd(_)
            | Kind::KvdbSrem(_)
            | Kind::KvdbZadd(_)
            | Kind::KvdbZrem(_)
            | Kind::KvdbPush(_)
            | Kind::KvdbPop(_)
            | Kind::KvdbIncrBy(_)) => Action::Kvdb(KvdbAction::from_kind(k)?),
        })
    }
}

impl From<Action> for pb::Action {
    fn from(a: Action) -> Self {
        use pb::action::Kind;
        let kind = match a {
            Action::ApplyValidator(a) => Kind::ApplyValidator(a.into()),
            Action::VoteValidator(v) => Kind::VoteValidator(v.into()),
            Action::LeaveValidator(l) => Kind::LeaveValidator(l.into()),
            Action::UpdateValidatorEndpoints(u) => Kind::UpdateValidatorEndpoints(u.into()),
            Action::ScheduleUpgrade(u) => Kind::ScheduleUpgrade(u.into()),
            Action::RotateConsensusKey(r) => Kind::RotateConsensusKey(r.into()),
            Action::RotateX25519Key(r) => Kind::RotateX25519Key(r.into()),
            Action::RotateOperatorKey(r) => Kind::RotateOperatorKey(r.into()),
            Action::ValidatorTakedownRequest(r) => Kind::ValidatorTakedownRequest(r.into()),
            Action::ApplyGroup(a) => Kind::ApplyGroup(a.into()),
            Action::VoteGroup(a) => Kind::VoteGroup(a.into()),
            Action::RotateTakedownAuthority(a) => Kind::RotateTakedownAuthority(a.into()),
            Action::SetGroupMember(a) => Kind::SetGroupMember(a.into()),
            Action::TakedownRequest(a) => Kind::TakedownRequest(a.into()),
            Action::CounterNotice(a) => Kind::CounterNotice(a.into()),
            Action::TakedownResolve(a) => Kind::TakedownResolve(a.into()),
            Action::SetFlag(a) => Kind::SetFlag(a.into()),
            Action::ClearFlag(a) => Kind::ClearFlag(a.into()),
            Action::UploadComplete(a) => Kind::UploadComplete(a.into()),
            Action::PublishRelease(a) => Kind::PublishRelease(a.into()),
            Action::GrantEntitlement(a) => Kind::GrantEntitlement(a.into()),
            Action::RevokeEntitlement(a) => Kind::RevokeEntitlement(a.into()),
            Action::SetPolicy(a) => Kind::SetPolicy(a.into()),
            Action::RecordGrant(a) => Kind::RecordGrant(a.into()),
            Action::RecordGrants(a) => Kind::RecordGrants(a.into()),
            Action::AmendUploadSets(a) => Kind::AmendUploadSets(a.into()),
            Action::ConfirmHolding(a) => Kind::ConfirmHolding(a.into()),
            Action::KvSet(s) => Kind::KvSet(s.into()),
            Action::KvDelete(d) => Kind::KvDelete(d.into()),
            Action::KvTokenCreate(c) => Kind::KvTokenCreate(c.into()),
            Action::KvTokenUpdate(u) => Kind::KvTokenUpdate(u.into()),
            Action::KvTokenDelete(d) => Kind::KvTokenDelete(d.into()),
            Action::Kvdb(k) => k.into_kind(),
            Action::AddCasbinModel(a) => Kind::AddCasbinModel(a.into()),
            Action::AddCasbinRule(a) => Kind::AddCasbinRule(a.into()),
            Action::RemoveCasbinRule(a) => Kind::RemoveCasbinRule(a.into()),
            Action::SetAccountQuota(a) => Kind::SetAccountQuota(a.into()),
        };
        pb::Action { kind: Some(kind) }
    }
}
