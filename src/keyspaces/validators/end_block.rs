//! End of block: elections open `election_blocks` expire
//! ([`super::expiry`]), unbonding validators whose period is over become REMOVED,
//! then the queued updates that fit are planned ([`super::updates::plan`]),
//! recorded as CometBFT's set (effective at H+2; a removed member stays,
//! with power 0, until then) and returned.

use std::collections::BTreeMap;

use super::lifecycle::{enter, At};
use super::status::ValidatorStatus;
use super::updates::{plan, Wanted};
use super::{GovernanceParams, ValidatorsRead, ValidatorsWrite};
use crate::keyspaces::Event;
use crate::proto::governance as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// What end of block returns to FinalizeBlock.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndBlock {
    /// (consensus key, power): CometBFT's `validator_updates`.
    pub updates: Vec<([u8; 32], u64)>,
    pub events: Vec<Event>,
}

/// Runs end of block over the block state. Only a store fault (or corrupt
/// state) is an `Err`; the caller treats it as a node fault.
pub fn end_block<S: StateWrite>(
    state: &mut S,
    height: u64,
    params: &GovernanceParams,
) -> Result<EndBlock, TxError> {
    let mut out = EndBlock::default();
    super::expiry::expire_due(state, height, params, &mut out.events)?;
    mature_unbonding(state, height, params, &mut out.events)?;
    let mut set = state.comet_set()?;
    let before = set.members.len();
    // a member removed at H stays (power 0) until H+2, when CometBFT drops it
    set.members
        .retain(|m| m.power > 0 || m.effective_height > height);
    let pruned = set.members.len() != before;
    let queue = state.update_queue()?;
    if queue.updates.is_empty() {
        if pruned {
            state.put_comet_set(&set);
        }
        return Ok(out);
    }
    let current: BTreeMap<[u8; 32], u64> = set
        .members
        .iter()
        .filter(|m| m.power > 0)
        .filter_map(|m| {
            Some((
                <[u8; 32]>::try_from(m.consensus_key.as_slice()).ok()?,
                m.power,
            ))
        })
        .collect();
    let wanted: Vec<Wanted> = queue
        .updates
        .iter()
        .filter_map(|q| {
            Some(Wanted {
                key: <[u8; 32]>::try_from(q.consensus_key.as_slice()).ok()?,
                power: q.power,
            })
        })
        .collect();
    let p = plan(&current, &wanted);
    for u in &p.updates {
        set.members.retain(|m| m.consensus_key.as_slice() != u.key);
        let pos = set
            .members
            .partition_point(|m| m.consensus_key.as_slice() < u.key.as_slice());
        set.members.insert(
            pos,
            pb::CometMember {
                consensus_key: u.key.to_vec(),
                power: u.power,
                effective_height: height + 2,
            },
        );
        out.events.push(
            Event::new("validator.update")
                .indexed("consensus_key", hex::encode(u.key))
                .plain("power", u.power.to_string())
                .plain("effective_height", (height + 2).to_string()),
        );
        out.updates.push((u.key, u.power));
    }
    // Keep each remaining entry's original queued_at.
    let mut rest = Vec::with_capacity(p.remaining.len());
    let mut pool: Vec<&pb::QueuedUpdate> = queue.updates.iter().collect();
    for w in &p.remaining {
        if let Some(i) = pool
            .iter()
            .position(|q| q.consensus_key.as_slice() == w.key && q.power == w.power)
        {
            rest.push(pool.remove(i).clone());
        }
    }
    state.put_comet_set(&set);
    state.put_update_queue(&pb::UpdateQueue { updates: rest });
    Ok(out)
}

fn mature_unbonding<S: StateWrite>(
    state: &mut S,
    height: u64,
    params: &GovernanceParams,
    events: &mut Vec<Event>,
) -> Result<(), TxError> {
    let mut totals = state.validator_totals()?;
    let due = totals.unbonding.partition_point(|u| u.until <= height);
    if due == 0 {
        return Ok(());
    }
    let matured: Vec<pb::Unbonding> = totals.unbonding.drain(..due).collect();
    state.put_validator_totals(&totals);
    for u in matured {
        let Ok(op) = <[u8; 32]>::try_from(u.operator_key.as_slice()) else {
            continue;
        };
        let Some(mut record) = state.validator(&op)? else {
            continue;
        };
        if record.status != ValidatorStatus::Unbonding as u32 {
            continue;
        }
        let at = At {
            height,
            params,
            events,
        };
        enter(state, at, &op, &mut record, ValidatorStatus::Removed)?;
    }
    Ok(())
}
