//! `ScheduleUpgrade { name, height, app_version }`: an ACTIVE validator's
//! vote for an upgrade plan. Each plan (all three fields) has its own
//! proposal and election, so no voter can hold a name with a plan others do
//! not want; the first vote opens it, and the vote that takes approvals over
//! 2/3 of the ACTIVE power schedules the plan. A proposal older than
//! `election_blocks`, or whose height has come, can no longer pass: it is
//! dropped when a new one needs room (at most [`MAX_PROPOSALS`]), and an
//! applied upgrade drops them all.

use super::{UpgradesRead, UpgradesWrite, MAX_PROPOSALS};
use crate::keyspaces::chain::ChainRead;
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
        if state.consensus_params()?.is_none() {
            return Err(self.refuse(
                "this chain's genesis recorded no CometBFT consensus params, so the new \
                 version could not reach the block headers"
                    .into(),
            ));
        }
        if let Some(s) = state.scheduled_upgrade()? {
            return Err(self.refuse(format!(
                "upgrade {:?} is already scheduled for height {}",
                s.name, s.height
            )));
        }
        Ok(())
    }

    /// The proposal this vote goes into: the open one of this exact plan,
    /// or a new round of it (room made by [`prune`]).
    fn proposal_for<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &TxContext,
    ) -> Result<pb::UpgradeProposal, TxError> {
        let blocks = ctx.params.governance.election_blocks;
        let old = state.upgrade_proposal(&self.name, self.height, self.app_version)?;
        if let Some(p) = old.as_ref().filter(|p| is_open(p, ctx.height, blocks)) {
            return Ok(p.clone());
        }
        let (live, mine) = prune(state, ctx.height, blocks, &ctx.signer)?;
        GovError::room("upgrade proposals", live, MAX_PROPOSALS as u64)?;
        GovError::room(
            "upgrade proposals opened by one validator",
            mine,
            MAX_PROPOSALS_PER_OPENER,
        )?;
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
        let mut p = self.proposal_for(state, &*ctx)?;
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

/// Whether `p`'s election is open at `height`: not decided, younger than
/// `election_blocks`, and its plan's height still ahead.
fn is_open(p: &pb::UpgradeProposal, height: u64, election_blocks: u64) -> bool {
    p.height > height
        && p.election.as_ref().is_some_and(|e| {
            e.status == election::OPEN && height < e.opened_at.saturating_add(election_blocks)
        })
}

/// Live proposals one validator may have opened: no one validator can fill
/// the [`MAX_PROPOSALS`] slots and keep honest plans out.
pub const MAX_PROPOSALS_PER_OPENER: u64 = 2;

/// Deletes the proposals that can no longer pass; returns how many remain
/// and how many of those `opener` opened (cast their first vote).
/// Bounded: at most [`MAX_PROPOSALS`] rows are ever stored.
fn prune<S: StateWrite>(
    state: &mut S,
    height: u64,
    election_blocks: u64,
    opener: &[u8; 32],
) -> Result<(u64, u64), TxError> {
    let (mut live, mut mine) = (0u64, 0u64);
    for p in state.upgrade_proposals()? {
        if is_open(&p, height, election_blocks) {
            live += 1;
            let first = p.election.as_ref().and_then(|e| e.votes.first());
            if first.is_some_and(|v| v.voter.as_slice() == opener) {
                mine += 1;
            }
        } else {
            state.delete_upgrade_proposal(&p);
        }
    }
    Ok((live, mine))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{MemState, Overlay};

    fn proposal(name: &str, height: u64, opened_at: u64, opener: u8) -> pb::UpgradeProposal {
        let mut e = election::open(pb::ElectionKind::Upgrade, None, opened_at);
        e.votes.push(pb::Vote {
            voter: vec![opener; 32],
            approve: true,
            height: opened_at,
        });
        pb::UpgradeProposal {
            name: name.into(),
            height,
            app_version: 2,
            election: Some(e),
        }
    }

    #[test]
    fn prune_drops_what_can_no_longer_pass_and_counts_each_openers_live_proposals() {
        let base = MemState::default();
        let mut s = Overlay::new(&base);
        s.put_upgrade_proposal(&proposal("live", 500, 90, 1));
        s.put_upgrade_proposal(&proposal("mine", 500, 95, 2));
        s.put_upgrade_proposal(&proposal("expired", 500, 10, 1));
        s.put_upgrade_proposal(&proposal("due", 100, 95, 1));
        let mut decided = proposal("decided", 500, 95, 1);
        if let Some(e) = decided.election.as_mut() {
            e.status = election::PASSED;
        }
        s.put_upgrade_proposal(&decided);
        // at height 100 with elections of 50 blocks
        assert_eq!(prune(&mut s, 100, 50, &[2; 32]).unwrap(), (2, 1));
        let left: Vec<String> = s
            .upgrade_proposals()
            .unwrap()
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(left, ["live", "mine"]);
        assert_eq!(prune(&mut s, 100, 50, &[1; 32]).unwrap(), (2, 1));
        assert_eq!(
            prune(&mut s, 140, 50, &[1; 32]).unwrap(),
            (1, 0),
            "live expired at 140"
        );
    }
}
