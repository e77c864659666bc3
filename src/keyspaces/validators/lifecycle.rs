//! The effects of entering a status: totals, the unbonding list, the
//! update queue and the events. Shared by the handlers and end of block.

use super::actions::key32;
use super::expiry;
use super::status::ValidatorStatus;
use super::{GovError, GovernanceParams, ValidatorsRead, ValidatorsWrite};
use crate::keyspaces::Event;
use crate::proto::genesis as gen;
use crate::proto::governance as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// Where a status change happens.
pub(crate) struct At<'a> {
    pub height: u64,
    pub params: &'a GovernanceParams,
    pub events: &'a mut Vec<Event>,
}

fn last_active(op: &[u8; 32], action: &'static str) -> GovError {
    GovError::InvalidTransition {
        subject: hex::encode(op),
        from: "the last ACTIVE validator",
        action,
    }
}

/// Moves `record` (of `op`) to `next`, keeping the totals and the update
/// queue in step, and stores it.
///
/// A CANDIDATE that becomes REMOVED (rejected, withdrawn, expired) is
/// deleted with its consensus-key index entry and its election's due entry,
/// so failed applications leave no state; unless its consensus key is still
/// known to CometBFT (a former validator that re-applied soon after it
/// left), in which case the record stays REMOVED.
pub(crate) fn enter<S: StateWrite>(
    state: &mut S,
    at: At<'_>,
    op: &[u8; 32],
    record: &mut gen::ValidatorRecord,
    next: ValidatorStatus,
) -> Result<(), TxError> {
    let from = record.status;
    let power = record.validator.as_ref().map_or(0, |v| v.power);
    let consensus = key32(
        "consensus key",
        record
            .validator
            .as_ref()
            .map_or(&[][..], |v| v.consensus_key.as_slice()),
    )?;
    let mut totals = state.validator_totals()?;
    let gov = record
        .governance
        .get_or_insert_with(pb::ValidatorGovernance::default);
    let was_active = from == ValidatorStatus::Active as u32;
    let was_candidate = from == ValidatorStatus::Candidate as u32;
    if was_candidate {
        totals.candidates = totals.candidates.saturating_sub(1);
    }
    let mut event = Event::new(match next {
        ValidatorStatus::Active => "validator.admitted",
        ValidatorStatus::Unbonding => "validator.unbonding",
        ValidatorStatus::Removed => "validator.removed",
        ValidatorStatus::Candidate => "validator.applied",
    })
    .indexed("operator", hex::encode(op))
    .indexed("consensus_key", hex::encode(consensus));
    if was_active {
        if totals.active_count <= 1 {
            return Err(last_active(op, "leaving").into());
        }
        // its uploads get replacements (EndBlock, under a budget)
        crate::keyspaces::uploads::churn::enqueue(state, op)?;
        totals.active_count -= 1;
        totals.active_power = totals.active_power.saturating_sub(power);
    }
    match next {
        ValidatorStatus::Active => {
            GovError::room(
                "active validators",
                u64::from(totals.active_count),
                u64::from(at.params.max_active_validators),
            )?;
            totals.active_count += 1;
            totals.active_power = totals.active_power.saturating_add(power);
            // uploads stranded by validators that left may come here
            crate::keyspaces::uploads::churn::on_active(state, op)?;
            record.admitted_height = at.height;
            state.enqueue_update(&consensus, power, at.height)?;
            event = event.plain("power", power.to_string());
        }
        ValidatorStatus::Unbonding => {
            let until = at.height.saturating_add(at.params.unbonding_blocks);
            gov.unbonding_until = until;
            let entry = pb::Unbonding {
                until,
                operator_key: op.to_vec(),
            };
            let pos = totals
                .unbonding
                .partition_point(|u| (u.until, &u.operator_key) <= (until, &entry.operator_key));
            totals.unbonding.insert(pos, entry);
            event = event.plain("until", until.to_string());
        }
        ValidatorStatus::Removed => {
            gov.removed_at = at.height;
            // the records cap counts live records only
            totals.records = totals.records.saturating_sub(1);
            // Only a validator that reached CometBFT's set leaves it.
            if was_active || from == ValidatorStatus::Unbonding as u32 {
                state.enqueue_update(&consensus, 0, at.height)?;
            }
            let from_name = ValidatorStatus::try_from(from).map_or("?", ValidatorStatus::name);
            event = event.plain("from", from_name);
        }
        ValidatorStatus::Candidate => {}
    }
    record.status = next as u32;
    state.put_validator_totals(&totals);
    at.events.push(event.plain("height", at.height.to_string()));
    if was_candidate && next == ValidatorStatus::Removed && !known_to_comet(state, &consensus)? {
        forget(state, at.params, op, record, &consensus)?;
    } else {
        state.put_validator(op, record);
    }
    Ok(())
}

/// Whether `consensus` is in CometBFT's set (power 0 included, until its
/// H+2) or has an update queued: then the record that names it stays.
pub(crate) fn known_to_comet<S: crate::store::StateRead + ?Sized>(
    state: &S,
    consensus: &[u8; 32],
) -> Result<bool, TxError> {
    let in_set = state
        .comet_set()?
        .members
        .iter()
        .any(|m| m.consensus_key.as_slice() == consensus);
    let queued = state
        .update_queue()?
        .updates
        .iter()
        .any(|u| u.consensus_key.as_slice() == consensus);
    Ok(in_set || queued)
}

/// Deletes a never-admitted candidate's record and what points at it.
fn forget<S: StateWrite>(
    state: &mut S,
    params: &GovernanceParams,
    op: &[u8; 32],
    record: &gen::ValidatorRecord,
    consensus: &[u8; 32],
) -> Result<(), TxError> {
    if let Some(e) = record.governance.as_ref().and_then(|g| g.election.as_ref()) {
        expiry::unschedule(state, &expiry::Subject::Validator(*op), e, params);
    }
    if state.validator_by_consensus(consensus)? == Some(*op) {
        state.delete_validator_by_consensus(consensus);
    }
    state.delete_validator(op);
    Ok(())
}
