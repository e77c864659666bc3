//! `ScheduleUpgrade { name, height, app_version }`: an ACTIVE validator's
//! vote for an upgrade plan. The first vote opens the proposal's election;
//! the vote that takes approvals over 2/3 of the ACTIVE power schedules the
//! plan. An open proposal older than `election_blocks` has expired: the next
//! vote opens a new round, which may name a new height and version.

use super::{UpgradesRead, UpgradesWrite};
use crate::keyspaces::params::Params;
use crate::keyspaces::validators::{election, GovError};
use crate::keyspaces::{Event, TxContext};
use crate::proto::governance as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// Longest migration name.
pub const MAX_NAME_BYTES: usize = 64;

domain_action! {
    /// A vote for the plan `{name, height, app_version}`.
    ScheduleUpgrade => pb::ScheduleUpgrade { name: String, height: u64, app_version: u64 }
}

impl ScheduleUpgrade {
    pub fn check_stateless(&self, _: &Params) -> Result<(), TxError> {
        let ok_char = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit() || b"._-".contains(&c);
        if self.name.is_empty()
            || self.name.len() > MAX_NAME_BYTES
            || !self.name.bytes().all(ok_char)
        {
            return Err(TxError::InvalidArgument(format!(
                "upgrade name {:?}: 1 to {MAX_NAME_BYTES} bytes of [a-z0-9._-]",
                self.name
            )));
        }
        if self.app_version < 2 {
            return Err(TxError::InvalidArgument(format!(
                "upgrade app_version {}: versions start at 1, so an upgrade names 2 or more",
                self.app_version
            )));
        }
        Ok(())
    }

    fn refuse(&self, reason: String) -> TxError {
        GovError::UpgradeRefused {
            name: self.name.clone(),
            reason,
        }
        .into()
    }

    /// The refusals that hold whoever votes: height, version, a migration
    /// that ran, another scheduled plan.
    fn check_plan<S: UpgradesRead>(&self, state: &S, height: u64) -> Result<(), TxError> {
        if self.height <= height {
            return Err(self.refuse(format!(
                "height {} is not above the current height {height}",
                self.height
            )));
        }
        if let Some(a) = state.upgrade_applied(&self.name)? {
            return Err(self.refuse(format!(
                "its migration already ran at height {} (app_version {})",
                a.height, a.app_version
            )));
        }
        let current = state.app_version()?;
        if self.app_version <= current {
            return Err(self.refuse(format!(
                "app_version {} is not above the chain's app_version {current}",
                self.app_version
            )));
        }
        if let Some(s) = state.scheduled_upgrade()? {
            return Err(self.refuse(format!(
                "upgrade {:?} is already scheduled for height {}",
                s.name, s.height
            )));
        }
        Ok(())
    }

    /// The proposal this vote goes into: the open one of this name (which
    /// must name the same plan), or a new round.
    fn proposal_for<S: UpgradesRead>(
        &self,
        state: &S,
        ctx: &TxContext,
    ) -> Result<pb::UpgradeProposal, TxError> {
        let old = state.upgrade_proposal(&self.name)?;
        let open = old.as_ref().filter(|p| {
            p.election.as_ref().is_some_and(|e| {
                e.status == election::OPEN
                    && ctx.height
                        < e.opened_at
                            .saturating_add(ctx.params.governance.election_blocks)
            })
        });
        if let Some(p) = open {
            if (p.height, p.app_version) != (self.height, self.app_version) {
                return Err(self.refuse(format!(
                    "the open proposal names height {} and app_version {}, this vote height {} and app_version {}",
                    p.height, p.app_version, self.height, self.app_version
                )));
            }
            return Ok(p.clone());
        }
        let previous = old.as_ref().and_then(|p| p.election.as_ref());
        Ok(pb::UpgradeProposal {
            name: self.name.clone(),
            height: self.height,
            app_version: self.app_version,
            election: Some(election::open(
                pb::ElectionKind::Upgrade,
                previous,
                ctx.height,
            )),
        })
    }

    /// # Errors
    /// `NotValidator` (signer not ACTIVE), `UpgradeRefused`, `DoubleVote`
    /// cannot happen (every vote approves; a repeat only recounts).
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        election::require_active(state, &ctx.signer)?;
        self.check_plan(state, ctx.height)?;
        let mut p = self.proposal_for(state, ctx)?;
        let mut e = p.election.take().unwrap_or_default();
        let t = election::cast(state, &mut e, &ctx.signer, true, ctx.height, &self.name)?;
        ctx.emit(
            Event::new("upgrade.voted")
                .indexed("name", self.name.clone())
                .indexed("voter", hex::encode(ctx.signer))
                .plain("height", self.height.to_string())
                .plain("app_version", self.app_version.to_string())
                .plain("round", e.round.to_string())
                .plain("approve_power", t.approve.to_string())
                .plain("active_power", t.active.to_string()),
        );
        p.election = Some(e);
        if t.decision == election::Decision::Passed {
            state.put_scheduled_upgrade(&p);
            ctx.emit(
                Event::new("upgrade.scheduled")
                    .indexed("name", self.name.clone())
                    .plain("height", self.height.to_string())
                    .plain("app_version", self.app_version.to_string()),
            );
        }
        state.put_upgrade_proposal(&p);
        Ok(())
    }
}
