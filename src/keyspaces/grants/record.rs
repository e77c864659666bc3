//! `RecordGrant { cid, consumer_pubkey, territory, context }`: a DEK holder
//! of the cid records that it released access to a consumer. The access
//! decision must allow the consumer's request (territory and context) at
//! this block's height and time.

use super::{GrantsRead, GrantsWrite};
use crate::keyspaces::entitlements::scope;
use crate::keyspaces::params::Params;
use crate::keyspaces::rights::{
    access, block_secs, check_cid, check_territory, hx, identity, RightsError,
};
use crate::keyspaces::uploads::UploadsRead;
use crate::keyspaces::validators::ValidatorsRead;
use crate::keyspaces::{Event, TxContext};
use crate::proto::rights as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// Domain form of `stave.rights.v1.RecordGrant`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordGrant {
    pub cid: Vec<u8>,
    pub consumer_pubkey: Vec<u8>,
    pub territory: String,
    /// The request's context, checked against the scope's conditions.
    pub context: Vec<pb::Condition>,
}

impl From<pb::RecordGrant> for RecordGrant {
    fn from(p: pb::RecordGrant) -> Self {
        RecordGrant {
            cid: p.cid,
            consumer_pubkey: p.consumer_pubkey,
            territory: p.territory,
            context: p.context,
        }
    }
}

impl From<RecordGrant> for pb::RecordGrant {
    fn from(r: RecordGrant) -> Self {
        pb::RecordGrant {
            cid: r.cid,
            consumer_pubkey: r.consumer_pubkey,
            territory: r.territory,
            context: r.context,
        }
    }
}

impl RecordGrant {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        check_cid("cid", &self.cid, &params.rights)?;
        identity("consumer_pubkey", &self.consumer_pubkey)?;
        check_territory(&self.territory)?;
        scope::check_conditions("request context", &self.context, &params.rights)?;
        Ok(())
    }

    /// # Errors
    /// `UnknownCid`, `NotDekHolder`, and every deny of the access decision
    /// (`ACCESS_DENIED`, `TAKEDOWN_ACTIVE`, `CASBIN_EVALUATION_FAILED`,
    /// `UNSUPPORTED_POLICY_TYPE`); `Conflict` when the grant of this cid to
    /// this consumer is already recorded in this block; `RightsCapExceeded`
    /// past `max_grants_per_validator_per_block`.
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let consumer = identity("consumer_pubkey", &self.consumer_pubkey)?;
        let upload = state
            .upload(&self.cid)?
            .ok_or_else(|| RightsError::UnknownCid(hx(&self.cid)))?;
        if !upload
            .dek_holder_set
            .iter()
            .any(|k| k.as_slice() == ctx.signer)
            || !state.is_active_validator(&ctx.signer)?
        {
            return Err(RightsError::NotDekHolder {
                cid: hx(&self.cid),
                signer: hx(&ctx.signer),
            }
            .into());
        }
        if let Some(g) = state.grant(&self.cid, &consumer, ctx.height)? {
            return Err(TxError::Conflict(format!(
                "the grant of {} to {} at height {} is recorded (by validator {})",
                hx(&self.cid),
                hx(&consumer),
                ctx.height,
                hx(&g.validator_pubkey)
            )));
        }
        let recorded = state.grants_recorded_at(&ctx.signer, ctx.height)?;
        let max = ctx.params.rights.max_grants_per_validator_per_block;
        if recorded >= u64::from(max) {
            return Err(RightsError::CapExceeded {
                what: format!(
                    "grants recorded by {} in block {}",
                    hx(&ctx.signer),
                    ctx.height
                ),
                got: usize::try_from(recorded + 1).unwrap_or(usize::MAX),
                max,
            }
            .into());
        }
        let now = block_secs(ctx.time_ns);
        let decision = access::decide(
            state,
            &self.cid,
            &consumer,
            &self.territory,
            now,
            &self.context,
        )?;
        let reason = decision.outcome?;
        state.put_grants_recorded_at(&ctx.signer, ctx.height, recorded + 1);
        let bytes = state.put_grant(
            &consumer,
            &pb::Grant {
                cid: self.cid.clone(),
                consumer_pubkey: consumer.to_vec(),
                block_height: ctx.height,
                validator_pubkey: ctx.signer.to_vec(),
                territory: self.territory.clone(),
                timestamp: now,
            },
        );
        let validator = ctx.signer;
        crate::keyspaces::accounts::storage::charge(state, ctx, &validator, bytes, 0)?;
        ctx.emit(
            Event::new("rights.record_grant")
                .indexed("cid", hx(&self.cid))
                .indexed("consumer", hx(&consumer))
                .plain("territory", self.territory.clone())
                .plain("reason", reason),
        );
        Ok(())
    }
}
