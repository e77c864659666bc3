//! `RecordGrant { cid, consumer_pubkey, territory, context, count }`: a
//! DEK holder of the cid records that it released access to a consumer,
//! `count` times. The access decision must allow the consumer's request
//! (territory and context) at this block's height and time. The grant log
//! keeps one record per (cid, consumer, grant period) and adds the count to
//! it. `RecordGrants` is many of them in one action, all or none: the
//! holder's batch of deliveries since its last.

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

/// The first second of the grant period that block time `now` (unix
/// seconds) falls in, for periods of `period_secs`.
pub fn period_start(now: u64, period_secs: u64) -> u64 {
    now - now % period_secs.max(1)
}

/// Domain form of `stave.rights.v1.RecordGrant`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordGrant {
    pub cid: Vec<u8>,
    pub consumer_pubkey: Vec<u8>,
    pub territory: String,
    /// The request's context, checked against the scope's conditions.
    pub context: Vec<pb::Condition>,
    /// Deliveries recorded (0 is taken as 1).
    pub count: u32,
    /// `stave.ddex.v1.UseType` delivered (0 = on-demand stream).
    pub use_type: i32,
}

impl From<pb::RecordGrant> for RecordGrant {
    fn from(p: pb::RecordGrant) -> Self {
        RecordGrant {
            cid: p.cid,
            consumer_pubkey: p.consumer_pubkey,
            territory: p.territory,
            context: p.context,
            count: p.count,
            use_type: p.use_type,
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
            count: r.count,
            use_type: r.use_type,
        }
    }
}

impl RecordGrant {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        check_cid("cid", &self.cid, &params.rights)?;
        identity("consumer_pubkey", &self.consumer_pubkey)?;
        check_territory(&self.territory)?;
        scope::check_conditions("request context", &self.context, &params.rights)?;
        if crate::ddex::use_type::request_bit(self.use_type).is_none() {
            return Err(TxError::InvalidArgument(format!(
                "use_type {} is not a known use",
                self.use_type
            )));
        }
        Ok(())
    }

    /// # Errors
    /// `UnknownCid`, `NotDekHolder`, and every deny of the access decision
    /// (`ACCESS_DENIED`, `TAKEDOWN_ACTIVE`, `CASBIN_EVALUATION_FAILED`,
    /// `UNSUPPORTED_POLICY_TYPE`); `RightsCapExceeded` past
    /// `max_grants_per_validator_per_block` actions or entries.
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
            &access::AccessRequest {
                cid: &self.cid,
                consumer: &consumer,
                territory: &self.territory,
                use_type: self.use_type,
                now,
                context: &self.context,
            },
        )?;
        let reason = decision.outcome?;
        state.put_grants_recorded_at(&ctx.signer, ctx.height, recorded + 1);
        let count = self.add_to_log(state, ctx, &consumer, now)?;
        ctx.emit(
            Event::new("rights.record_grant")
                .indexed("cid", hx(&self.cid))
                .indexed("consumer", hx(&consumer))
                .plain("territory", self.territory.clone())
                .plain("use_type", use_name(self.use_type))
                .plain("count", count.to_string())
                .plain("reason", reason),
        );
        Ok(())
    }

    /// Adds the deliveries to this period's record (a new record when it is
    /// the period's first). A new record is charged to the validator that
    /// records it, at the size the record can grow to
    /// ([`GRANT_GROWTH`] bytes more), so later recordings by any holder
    /// charge nothing. Returns the period's count.
    fn add_to_log<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
        consumer: &[u8; 32],
        now: u64,
    ) -> Result<u64, TxError> {
        let period = period_start(now, ctx.params.rights.grant_period_secs);
        let old = state.grant(&self.cid, consumer, period)?;
        let new = old.is_none();
        let mut g = old.unwrap_or_else(|| pb::Grant {
            cid: self.cid.clone(),
            consumer_pubkey: consumer.to_vec(),
            block_height: ctx.height,
            validator_pubkey: ctx.signer.to_vec(),
            period_start: period,
            ..pb::Grant::default()
        });
        g.count = g.count.saturating_add(u64::from(self.count.max(1)));
        g.territory = self.territory.clone();
        g.timestamp = now;
        g.last_height = ctx.height;
        let bytes = state.put_grant(consumer, &g);
        if new {
            let signer = ctx.signer;
            let charged = bytes.saturating_add(2 * GRANT_GROWTH);
            crate::keyspaces::accounts::storage::charge(state, ctx, &signer, charged, 0)?;
        }
        Ok(g.count)
    }
}

/// The bytes a grant record's value can grow by after its first write:
/// `count`, `last_height` and `timestamp` are varints that lengthen (at
/// most 9 bytes each from 1); the territory and keys keep their size.
pub const GRANT_GROWTH: u64 = 27;

/// Domain form of `stave.rights.v1.RecordGrants`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordGrants {
    pub grants: Vec<RecordGrant>,
    /// The holder's delivery range `[from, to)`; `(0, 0)`: none.
    pub from: u64,
    pub to: u64,
}

impl From<pb::RecordGrants> for RecordGrants {
    fn from(p: pb::RecordGrants) -> Self {
        RecordGrants {
            grants: p.grants.into_iter().map(RecordGrant::from).collect(),
            from: p.from,
            to: p.to,
        }
    }
}

impl From<RecordGrants> for pb::RecordGrants {
    fn from(r: RecordGrants) -> Self {
        pb::RecordGrants {
            grants: r.grants.into_iter().map(pb::RecordGrant::from).collect(),
            from: r.from,
            to: r.to,
        }
    }
}

impl RecordGrants {
    /// At least one entry, at most `max_grants_per_validator_per_block`,
    /// each well formed; a range that is empty or none.
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        let max = params.rights.max_grants_per_validator_per_block;
        if self.grants.is_empty() {
            return Err(TxError::InvalidArgument(
                "RecordGrants carries no grant".into(),
            ));
        }
        if self.to <= self.from && (self.from, self.to) != (0, 0) {
            return Err(TxError::InvalidArgument(format!(
                "delivery range [{}, {}) is empty",
                self.from, self.to
            )));
        }
        crate::keyspaces::rights::cap("RecordGrants entries", self.grants.len(), max)?;
        self.grants
            .iter()
            .try_for_each(|g| g.check_stateless(params))
    }

    /// Every entry's [`RecordGrant::execute`], in order; the first refusal
    /// refuses the whole action (the tx's overlay is dropped).
    ///
    /// # Errors
    /// `Conflict` when the range starts below the end of the signer's
    /// last recorded range (it was recorded already); every entry's.
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        if self.to != 0 {
            let recorded = state.grant_seq(&ctx.signer)?;
            if self.from < recorded {
                return Err(TxError::Conflict(format!(
                    "deliveries [{}, {}) of {}: those below {recorded} are recorded already",
                    self.from,
                    self.to,
                    hx(&ctx.signer)
                )));
            }
            state.put_grant_seq(&ctx.signer, self.to);
        }
        self.grants.iter().try_for_each(|g| g.execute(state, ctx))
    }
}

/// The use type's proto name, for the event.
fn use_name(use_type: i32) -> String {
    crate::proto::ddex::UseType::try_from(use_type)
        .map(|u| u.as_str_name().to_string())
        .unwrap_or_else(|_| use_type.to_string())
}
