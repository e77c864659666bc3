//! Reads of the validator records over committed state, each with its
//! pending effect on CometBFT's set.

use super::keys::{validator_key, validators_prefix};
use super::{ValidatorStatus, ValidatorsRead};
use crate::proto::genesis as gen;
use crate::proto::governance as pb;
use crate::store::{StateRead, StoreError, View};
use prost::Message;

/// The largest page [`list`] returns.
pub const MAX_PAGE: usize = 1000;

/// A record with its membership in CometBFT's set and its queued updates.
pub fn view_of<S: StateRead>(
    state: &S,
    record: gen::ValidatorRecord,
) -> Result<pb::ValidatorView, StoreError> {
    let consensus = record
        .validator
        .as_ref()
        .map(|v| v.consensus_key.clone())
        .unwrap_or_default();
    let set = state.comet_set()?;
    let member = set.members.iter().find(|m| m.consensus_key == consensus);
    let queued_powers = state
        .update_queue()?
        .updates
        .iter()
        .filter(|q| q.consensus_key == consensus)
        .map(|q| q.power)
        .collect();
    Ok(pb::ValidatorView {
        status: ValidatorStatus::try_from(record.status)
            .map_or("UNKNOWN", ValidatorStatus::name)
            .to_string(),
        comet_power: member.map_or(0, |m| m.power),
        comet_effective_height: member.map_or(0, |m| m.effective_height),
        queued_powers,
        record: Some(record),
    })
}

/// One validator by operator key.
pub fn get<S: StateRead>(
    state: &S,
    op: &[u8; 32],
) -> Result<Option<pb::ValidatorView>, StoreError> {
    match state.validator(op)? {
        None => Ok(None),
        Some(r) => view_of(state, r).map(Some),
    }
}

/// One page of validators in operator-key order, strictly after `start_after`.
pub fn list(
    view: &View<'_>,
    start_after: Option<&[u8; 32]>,
    limit: usize,
) -> Result<(Vec<pb::ValidatorView>, Option<[u8; 32]>), StoreError> {
    let limit = limit.clamp(1, MAX_PAGE);
    let after = start_after.map(validator_key);
    let rows = view.prefix_list(&validators_prefix(), after.as_deref(), limit + 1)?;
    let mut out = Vec::with_capacity(rows.len().min(limit));
    let mut last = None;
    for (k, v) in rows.iter().take(limit) {
        let r =
            gen::ValidatorRecord::decode(v.as_slice()).map_err(|e| StoreError::corrupt(k, e))?;
        last = k
            .strip_prefix(validators_prefix().as_slice())
            .and_then(|op| <[u8; 32]>::try_from(op).ok());
        out.push(view_of(view, r)?);
    }
    let next = if rows.len() > limit { last } else { None };
    Ok((out, next))
}
