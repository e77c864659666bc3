//! `SetPolicy { cid, type, casbin_model_id, script_cid }`: by an `OWNER` or
//! `ADMIN` of the cid. Takedown states are not settable; a cid under a
//! pending or confirmed takedown refuses it; a Casbin model must be the
//! setter's own.

use super::PoliciesWrite;
use crate::keyspaces::casbin;
use crate::keyspaces::entitlements::EntitlementsRead;
use crate::keyspaces::params::Params;
use crate::keyspaces::rights::{access, cap, check_cid, hx, RightsError};
use crate::keyspaces::uploads::UploadsRead;
use crate::keyspaces::{Event, TxContext};
use crate::proto::rights as pb;
use crate::proto::rights::PolicyType as T;
use crate::store::StateWrite;
use crate::tx::TxError;

/// Domain form of `stave.rights.v1.SetPolicy`: the type is a known, specified type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetPolicy {
    pub cid: Vec<u8>,
    pub policy_type: T,
    pub casbin_model_id: String,
    pub script_cid: Vec<u8>,
}

impl TryFrom<pb::SetPolicy> for SetPolicy {
    type Error = String;
    fn try_from(p: pb::SetPolicy) -> Result<Self, String> {
        let policy_type = match T::try_from(p.r#type) {
            Ok(T::Unspecified) | Err(_) => {
                return Err(format!("set_policy type {} is not a policy type", p.r#type))
            }
            Ok(t) => t,
        };
        Ok(SetPolicy {
            cid: p.cid,
            policy_type,
            casbin_model_id: p.casbin_model_id,
            script_cid: p.script_cid,
        })
    }
}

impl From<SetPolicy> for pb::SetPolicy {
    fn from(p: SetPolicy) -> Self {
        pb::SetPolicy {
            cid: p.cid,
            r#type: p.policy_type.into(),
            casbin_model_id: p.casbin_model_id,
            script_cid: p.script_cid,
        }
    }
}

impl SetPolicy {
    /// The fields each type needs, and nothing else.
    ///
    /// # Errors
    /// `PolicyTypeReserved` for a takedown state, `InvalidPolicy`, `RightsCapExceeded`.
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        let p = &params.rights;
        check_cid("cid", &self.cid, p)?;
        let name = self.policy_type.as_str_name();
        let bad = |m: &str| TxError::from(RightsError::InvalidPolicy(format!("{name}: {m}")));
        let model = !self.casbin_model_id.is_empty();
        let script = !self.script_cid.is_empty();
        match self.policy_type {
            T::TakedownPending | T::TakenDown => {
                return Err(RightsError::PolicyTypeReserved(name.into()).into())
            }
            T::Unspecified => return Err(bad("no type")),
            T::Public | T::DirectGrant if model || script => {
                return Err(bad("takes neither a casbin model nor a script"))
            }
            T::RoleBased | T::Conditional if !model || script => {
                return Err(bad("needs a casbin model and no script"))
            }
            T::Programmable if model || !script => {
                return Err(bad("needs a script cid and no casbin model"))
            }
            _ => {}
        }
        cap(
            "casbin_model_id length",
            self.casbin_model_id.len(),
            p.max_model_id_bytes,
        )?;
        if script {
            check_cid("script_cid", &self.script_cid, p)?;
        }
        Ok(())
    }

    /// # Errors
    /// `UnknownCid`, `RoleNotGrantable` (not an OWNER or ADMIN),
    /// `TakedownActive`, `ModelNotOwned`.
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let cid = hx(&self.cid);
        if state.upload(&self.cid)?.is_none() {
            return Err(RightsError::UnknownCid(cid).into());
        }
        let role = state.role_of(&self.cid, &ctx.signer)?;
        if !matches!(role, Some(pb::Role::Owner | pb::Role::Admin)) {
            return Err(RightsError::RoleNotGrantable {
                signer: format!(
                    "{} (holding {:?})",
                    hx(&ctx.signer),
                    role.map(|r| r.as_str_name())
                ),
                what: format!("set the policy of cid {cid} (OWNER or ADMIN only)"),
            }
            .into());
        }
        if let Some(reason) = access::takedown_state(state, &self.cid)? {
            return Err(RightsError::TakedownActive { cid, reason }.into());
        }
        if !self.casbin_model_id.is_empty()
            && casbin::model_owner(state, &self.casbin_model_id)? != Some(ctx.signer)
        {
            return Err(RightsError::ModelNotOwned {
                model_id: self.casbin_model_id.clone(),
                signer: hx(&ctx.signer),
            }
            .into());
        }
        state.put_policy(&pb::Policy {
            cid: self.cid.clone(),
            r#type: self.policy_type.into(),
            casbin_model_id: self.casbin_model_id.clone(),
            script_cid: self.script_cid.clone(),
            owner_pubkey: ctx.signer.to_vec(),
            updated_height: ctx.height,
        });
        ctx.emit(
            Event::new("rights.set_policy")
                .indexed("cid", cid)
                .plain("type", self.policy_type.as_str_name())
                .plain("setter", hx(&ctx.signer)),
        );
        Ok(())
    }
}
