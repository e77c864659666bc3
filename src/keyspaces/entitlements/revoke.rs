//! `RevokeEntitlement { cid, pubkey }`: removes the record of
//! `(cid, pubkey)`, by the authorisation table in `table.rs`.

use super::grant::authorise;
use super::table::Change;
use super::{entitlement_bytes, payer_of, EntitlementsRead, EntitlementsWrite};
use crate::keyspaces::accounts::storage::release;
use crate::keyspaces::params::Params;
use crate::keyspaces::rights::{check_cid, hx, identity};
use crate::keyspaces::{Event, TxContext};
use crate::proto::rights as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// Domain form of `stave.rights.v1.RevokeEntitlement`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevokeEntitlement {
    pub cid: Vec<u8>,
    pub pubkey: Vec<u8>,
}

impl From<pb::RevokeEntitlement> for RevokeEntitlement {
    fn from(p: pb::RevokeEntitlement) -> Self {
        RevokeEntitlement {
            cid: p.cid,
            pubkey: p.pubkey,
        }
    }
}

impl From<RevokeEntitlement> for pb::RevokeEntitlement {
    fn from(r: RevokeEntitlement) -> Self {
        pb::RevokeEntitlement {
            cid: r.cid,
            pubkey: r.pubkey,
        }
    }
}

impl RevokeEntitlement {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        check_cid("cid", &self.cid, &params.rights)?;
        identity("revoked pubkey", &self.pubkey)?;
        Ok(())
    }

    /// # Errors
    /// `UnknownCid`, `NotFound` (no such record), `RoleNotGrantable`, `LastOwner`.
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let target = identity("revoked pubkey", &self.pubkey)?;
        let current = authorise(state, ctx, &self.cid, &target, Change::Revoke)?;
        if current.is_none() {
            return Err(TxError::NotFound(format!(
                "entitlement of {} on cid {}",
                hx(&target),
                hx(&self.cid)
            )));
        }
        if let Some(old) = state.entitlement(&self.cid, &target)? {
            if let Some(payer) = payer_of(&old) {
                release(state, &payer, entitlement_bytes(&target, &old))?;
            }
        }
        state.delete_entitlement(&self.cid, &target)?;
        ctx.emit(
            Event::new("rights.revoke_entitlement")
                .indexed("cid", hx(&self.cid))
                .indexed("pubkey", hx(&target))
                .plain("revoker", hx(&ctx.signer)),
        );
        Ok(())
    }
}
