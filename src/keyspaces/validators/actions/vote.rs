//! `VoteValidator { subject, kind, approve }`: an ACTIVE validator's vote in
//! the admission (ADMIT) or removal (REMOVE) election about `subject`. A
//! REMOVE vote about an ACTIVE validator with no open removal election
//! opens one.

use crate::keyspaces::params::Params;
use crate::keyspaces::validators::{
    election, expiry, transition, GovError, ValidatorEvent, ValidatorStatus, ValidatorsRead,
    ValidatorsWrite,
};
use crate::keyspaces::{Event, TxContext};
use crate::proto::genesis as gen;
use crate::proto::governance as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// A vote in a validator election.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoteValidator {
    pub subject: [u8; 32],
    pub kind: pb::ElectionKind,
    pub approve: bool,
}

impl TryFrom<pb::VoteValidator> for VoteValidator {
    type Error = String;
    fn try_from(p: pb::VoteValidator) -> Result<Self, String> {
        let subject = <[u8; 32]>::try_from(p.subject.as_slice())
            .map_err(|_| format!("subject is {} bytes, expected 32", p.subject.len()))?;
        let kind =
            pb::ElectionKind::try_from(p.kind).map_err(|_| format!("election kind {}", p.kind))?;
        Ok(VoteValidator {
            subject,
            kind,
            approve: p.approve,
        })
    }
}

impl From<VoteValidator> for pb::VoteValidator {
    fn from(v: VoteValidator) -> Self {
        pb::VoteValidator {
            subject: v.subject.to_vec(),
            kind: v.kind as i32,
            approve: v.approve,
        }
    }
}

impl VoteValidator {
    pub fn check_stateless(&self, _: &Params) -> Result<(), TxError> {
        match self.kind {
            pb::ElectionKind::Admit | pb::ElectionKind::Remove => Ok(()),
            other => Err(TxError::InvalidArgument(format!(
                "a validator election is ADMIT or REMOVE, not {}",
                other.as_str_name()
            ))),
        }
    }

    /// The election this vote goes into: the open one of its kind, or a new
    /// removal election.
    fn election_for(
        &self,
        record: &gen::ValidatorRecord,
        status: ValidatorStatus,
        height: u64,
    ) -> Result<pb::Election, GovError> {
        let current = record.governance.as_ref().and_then(|g| g.election.clone());
        let open_of_kind = current
            .as_ref()
            .filter(|e| e.status == election::OPEN && e.kind == self.kind as i32);
        match (self.kind, status, open_of_kind) {
            (pb::ElectionKind::Admit, ValidatorStatus::Candidate, Some(e)) => Ok(e.clone()),
            (pb::ElectionKind::Remove, ValidatorStatus::Active, Some(e)) => Ok(e.clone()),
            (pb::ElectionKind::Remove, ValidatorStatus::Active, None) => Ok(election::open(
                pb::ElectionKind::Remove,
                current.as_ref(),
                height,
            )),
            _ => Err(GovError::ElectionClosed {
                subject: hex::encode(self.subject),
                kind: election::kind_name(self.kind as i32),
                status: status.name(),
            }),
        }
    }

    /// # Errors
    /// `NotValidator` (signer not ACTIVE), `NotFound` (no subject),
    /// `ElectionClosed`, `DoubleVote` (the other side), `InvalidTransition` (a removal that
    /// would leave no ACTIVE validator), `GovernanceCap` (active validators).
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let voter = ctx.signer;
        if state.active_power(&voter)? == 0 {
            return Err(GovError::NotValidator {
                signer: hex::encode(voter),
            }
            .into());
        }
        let (mut record, status) = match (
            state.validator(&self.subject)?,
            state.validator_status(&self.subject)?,
        ) {
            (Some(r), Some(s)) => (r, s),
            _ => {
                return Err(TxError::NotFound(format!(
                    "validator {}",
                    hex::encode(self.subject)
                )));
            }
        };
        let mut e = self.election_for(&record, status, ctx.height)?;
        let subject = expiry::Subject::Validator(self.subject);
        if e.votes.is_empty() {
            // a removal election opens with its first vote
            expiry::schedule(state, &subject, &e, &ctx.params.governance);
        }
        let subject_hex = hex::encode(self.subject);
        let t = election::cast(
            state,
            &mut e,
            &voter,
            self.approve,
            ctx.height,
            &subject_hex,
        )?;
        ctx.emit(
            Event::new("validator.voted")
                .indexed("subject", subject_hex.clone())
                .indexed("voter", hex::encode(voter))
                .plain("kind", election::kind_name(e.kind))
                .plain("round", e.round.to_string())
                .plain("approve", self.approve.to_string())
                .plain("approve_power", t.approve.to_string())
                .plain("reject_power", t.reject.to_string())
                .plain("active_power", t.active.to_string()),
        );
        let event = match (t.decision, self.kind) {
            (election::Decision::Open, _) => None,
            (election::Decision::Passed, pb::ElectionKind::Admit) => Some(ValidatorEvent::Admitted),
            (election::Decision::Failed, pb::ElectionKind::Admit) => Some(ValidatorEvent::Rejected),
            (election::Decision::Passed, _) => Some(ValidatorEvent::RemovedByVote),
            (election::Decision::Failed, _) => None,
        };
        if t.decision != election::Decision::Open {
            expiry::unschedule(state, &subject, &e, &ctx.params.governance);
            ctx.emit(
                Event::new("validator.election_closed")
                    .indexed("subject", subject_hex)
                    .plain("kind", election::kind_name(e.kind))
                    .plain("round", e.round.to_string())
                    .plain("result", election::status_name(e.status)),
            );
        }
        record
            .governance
            .get_or_insert_with(pb::ValidatorGovernance::default)
            .election = Some(e);
        match event {
            Some(ev) => {
                let next = transition(&self.subject, Some(status), ev)?;
                super::super::apply_status(state, ctx, &self.subject, &mut record, next)
            }
            None => {
                state.put_validator(&self.subject, &record);
                Ok(())
            }
        }
    }
}
