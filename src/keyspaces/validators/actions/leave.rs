//! `LeaveValidator`: an ACTIVE validator starts UNBONDING (it stays in
//! CometBFT's set until the unbonding period ends); a CANDIDATE withdraws
//! and is REMOVED at once.

use crate::keyspaces::params::Params;
use crate::keyspaces::validators::expiry::{self, Subject};
use crate::keyspaces::validators::{election, transition, ValidatorEvent, ValidatorsRead};
use crate::keyspaces::TxContext;
use crate::proto::governance as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// The signer leaves the validator set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaveValidator;

impl From<pb::LeaveValidator> for LeaveValidator {
    fn from(_: pb::LeaveValidator) -> Self {
        LeaveValidator
    }
}

impl From<LeaveValidator> for pb::LeaveValidator {
    fn from(_: LeaveValidator) -> Self {
        pb::LeaveValidator {}
    }
}

impl LeaveValidator {
    pub fn check_stateless(&self, _: &Params) -> Result<(), TxError> {
        Ok(())
    }

    /// # Errors
    /// `InvalidTransition` when the signer is not ACTIVE or CANDIDATE, or is
    /// the last ACTIVE validator.
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let op = ctx.signer;
        let status = state.validator_status(&op)?;
        let next = transition(&op, status, ValidatorEvent::Leave)?;
        let Some(mut record) = state.validator(&op)? else {
            return Err(TxError::NotFound(format!("validator {}", hex::encode(op))));
        };
        if let Some(e) = record.governance.as_mut().and_then(|g| g.election.as_mut()) {
            if e.status == election::OPEN {
                e.status = election::WITHDRAWN;
                e.closed_at = ctx.height;
                expiry::unschedule(state, &Subject::Validator(op), e, &ctx.params.governance);
            }
        }
        super::super::apply_status(state, ctx, &op, &mut record, next)
    }
}
