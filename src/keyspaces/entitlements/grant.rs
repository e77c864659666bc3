//! `GrantEntitlement { cid, pubkey, role, scope }`: creates or replaces the
//! one record of `(cid, pubkey)`, by the authorisation table in `table.rs`.

use super::table::{may_change, removes_last_owner, Change};
use super::{entitlement_bytes, payer_of, scope, EntitlementsRead, EntitlementsWrite};
use crate::keyspaces::accounts::storage::{charge, release};
use crate::keyspaces::params::Params;
use crate::keyspaces::rights::{block_secs, check_cid, hx, identity, RightsError};
use crate::keyspaces::uploads::UploadsRead;
use crate::keyspaces::{Event, TxContext};
use crate::proto::rights as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// Domain form of `stave.rights.v1.GrantEntitlement`: the role is a known,
/// specified role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantEntitlement {
    pub cid: Vec<u8>,
    pub pubkey: Vec<u8>,
    pub role: pb::Role,
    pub scope: Option<pb::Scope>,
}

impl TryFrom<pb::GrantEntitlement> for GrantEntitlement {
    type Error = String;
    fn try_from(p: pb::GrantEntitlement) -> Result<Self, String> {
        let role = match pb::Role::try_from(p.role) {
            Ok(pb::Role::Unspecified) | Err(_) => {
                return Err(format!("grant_entitlement role {} is not a role", p.role))
            }
            Ok(r) => r,
        };
        Ok(GrantEntitlement {
            cid: p.cid,
            pubkey: p.pubkey,
            role,
            scope: p.scope,
        })
    }
}

impl From<GrantEntitlement> for pb::GrantEntitlement {
    fn from(g: GrantEntitlement) -> Self {
        pb::GrantEntitlement {
            cid: g.cid,
            pubkey: g.pubkey,
            role: g.role.into(),
            scope: g.scope,
        }
    }
}

impl GrantEntitlement {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        check_cid("cid", &self.cid, &params.rights)?;
        identity("grantee pubkey", &self.pubkey)?;
        if let Some(s) = &self.scope {
            // authority is not scoped: an OWNER or ADMIN whose window had
            // passed would still hold its powers, or a cid could be left
            // with no owner able to act
            let authority = matches!(self.role, pb::Role::Owner | pb::Role::Admin);
            if authority && *s != pb::Scope::default() {
                return Err(RightsError::InvalidScope(format!(
                    "an {} entitlement carries no scope; scopes are for DISTRIBUTOR and CONSUMER",
                    self.role.as_str_name()
                ))
                .into());
            }
            scope::validate(s, &params.rights)?;
        }
        Ok(())
    }

    /// # Errors
    /// `UnknownCid`, `RoleNotGrantable`, `LastOwner`, `RightsCapExceeded`
    /// (a new record past `max_entitlements_per_cid`).
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let target = identity("grantee pubkey", &self.pubkey)?;
        let current = authorise(state, ctx, &self.cid, &target, Change::Grant(self.role))?;
        let max = ctx.params.rights.max_entitlements_per_cid;
        let count = state.entitlement_count(&self.cid)?;
        if current.is_none() && count >= u64::from(max) {
            return Err(RightsError::CapExceeded {
                what: format!("entitlements on cid {}", hx(&self.cid)),
                got: usize::try_from(count + 1).unwrap_or(usize::MAX),
                max,
            }
            .into());
        }
        let record = pb::Entitlement {
            cid: self.cid.clone(),
            pubkey: target.to_vec(),
            role: self.role.into(),
            grantor: ctx.signer.to_vec(),
            scope: self.scope.clone(),
            created_at: block_secs(ctx.time_ns),
            created_height: ctx.height,
        };
        if let Some(old) = state.entitlement(&self.cid, &target)? {
            if let Some(payer) = payer_of(&old) {
                release(state, &payer, entitlement_bytes(&target, &old))?;
            }
        }
        let signer = ctx.signer;
        charge(state, ctx, &signer, entitlement_bytes(&target, &record), 0)?;
        state.put_entitlement(&target, &record)?;
        ctx.emit(
            Event::new("rights.grant_entitlement")
                .indexed("cid", hx(&self.cid))
                .indexed("pubkey", hx(&target))
                .plain("role", self.role.as_str_name())
                .plain("grantor", hx(&ctx.signer)),
        );
        Ok(())
    }
}

/// The checks shared by grant and revoke: the cid exists, the table allows
/// the change, and the last owner stays.
pub(super) fn authorise<S: StateWrite>(
    state: &S,
    ctx: &TxContext,
    cid: &[u8],
    target: &[u8; 32],
    change: Change,
) -> Result<Option<pb::Role>, TxError> {
    if state.upload(cid)?.is_none() {
        return Err(RightsError::UnknownCid(hx(cid)).into());
    }
    let signer_role = state.role_of(cid, &ctx.signer)?;
    let current = state.role_of(cid, target)?;
    if !may_change(signer_role, current, change) {
        let what = match change {
            Change::Grant(r) => format!(
                "grant {} to {} (holding {:?}) on cid {}",
                r.as_str_name(),
                hx(target),
                current.map(|r| r.as_str_name()),
                hx(cid)
            ),
            Change::Revoke => format!(
                "revoke {:?} of {} on cid {}",
                current.map(|r| r.as_str_name()),
                hx(target),
                hx(cid)
            ),
        };
        return Err(RightsError::RoleNotGrantable {
            signer: format!(
                "{} (holding {:?})",
                hx(&ctx.signer),
                signer_role.map(|r| r.as_str_name())
            ),
            what,
        }
        .into());
    }
    if removes_last_owner(current, change, state.owner_count(cid)?) {
        return Err(RightsError::LastOwner {
            cid: hx(cid),
            pubkey: hx(target),
        }
        .into());
    }
    Ok(current)
}
