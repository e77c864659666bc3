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
pub fn view_of<S: StateRead + ?Sized>(
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
pub fn get<S: StateRead + ?Sized>(
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

/// The operator key, status and record of every ACTIVE and UNBONDING
/// validator, in operator-key order.
pub fn listed(
    view: &View<'_>,
) -> Result<Vec<([u8; 32], ValidatorStatus, gen::GenesisValidator)>, StoreError> {
    let listed = [ValidatorStatus::Active, ValidatorStatus::Unbonding];
    let mut out = Vec::new();
    let mut after: Option<Vec<u8>> = None;
    loop {
        let rows = view.prefix_list(&validators_prefix(), after.as_deref(), MAX_PAGE)?;
        for (k, v) in &rows {
            let r = gen::ValidatorRecord::decode(v.as_slice())
                .map_err(|e| StoreError::corrupt(k, e))?;
            let op = k
                .strip_prefix(validators_prefix().as_slice())
                .and_then(|op| <[u8; 32]>::try_from(op).ok());
            let status = listed.into_iter().find(|s| *s as u32 == r.status);
            if let (Some(op), Some(status), Some(val)) = (op, status, r.validator) {
                out.push((op, status, val));
            }
        }
        if rows.len() < MAX_PAGE {
            return Ok(out);
        }
        after = rows.last().map(|(k, _)| k.clone());
    }
}

/// The peer `address` of every ACTIVE and UNBONDING validator (the peer
/// listener's allow-list), in operator-key order.
pub fn peer_addresses(view: &View<'_>) -> Result<Vec<String>, StoreError> {
    Ok(listed(view)?
        .into_iter()
        .map(|(_, _, v)| v.address)
        .collect())
}

/// ABCI query paths of the governance keyspaces, as state keys (`None`: not
/// a governance path):
///
/// | path | value |
/// | --- | --- |
/// | `/validators/{operator hex}` | `stave.genesis.v1.ValidatorRecord` |
/// | `/validator_meta/{comet_set\|queue\|totals}` | `CometSet`, `UpdateQueue`, `ValidatorTotals` |
/// | `/groups/{group_id}` | `stave.governance.v1.GroupRecord` |
/// | `/takedowns/{cid hex}` | `stave.governance.v1.Takedown` |
/// | `/flags/{cid hex}/{jurisdiction}` | `stave.governance.v1.Flag` |
pub fn abci_state_key(parts: &[&str]) -> Option<Result<Vec<u8>, String>> {
    let hex_of = |s: &str| hex::decode(s).map_err(|e| format!("{s:?}: {e}"));
    Some(match parts {
        ["validators", op] => hex_of(op).and_then(|b| {
            <[u8; 32]>::try_from(b.as_slice())
                .map(|k| validator_key(&k))
                .map_err(|_| format!("{op:?}: not 32 bytes"))
        }),
        ["validator_meta", "comet_set"] => Ok(super::comet_set_key()),
        ["validator_meta", "queue"] => Ok(super::queue_key()),
        ["validator_meta", "totals"] => Ok(super::totals_key()),
        ["groups", id] => Ok(crate::keyspaces::groups::group_key(id)),
        ["takedowns", cid] => hex_of(cid).map(|c| crate::keyspaces::takedowns::takedown_key(&c)),
        ["flags", cid, j] => hex_of(cid).map(|c| crate::keyspaces::takedowns::flag_key(&c, j)),
        _ => return None,
    })
}
