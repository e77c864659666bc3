//! Content survives validator churn. When an ACTIVE validator becomes
//! UNBONDING or REMOVED, it is queued in `churn/`; EndBlock then walks its
//! `assignments/{validator}/` rows, at most `rights.reassignments_per_block`
//! uploads per block, and gives each upload a replacement:
//!
//! the ACTIVE validators outside the upload's sets, ranked by
//! `SHA-256(flac_cid ‖ operator key)`, the first whose replication quota
//! has room (when the leaving member was a replica) takes the leaving
//! member's place in the target sets ([`super::handover::start`]). The
//! leaving member keeps serving until the replacement confirms. With no
//! candidate, the upload is listed in `under_replicated/` with the reason,
//! and the validator in `stranded/`: when a validator becomes ACTIVE, the
//! stranded ones are queued again, so their uploads get the newcomer.
//!
//! Everything read is verifiable state (the ACTIVE validators come from
//! CometBFT's set as Stave recorded it); the order is key order.

use sha2::{Digest, Sha256};

use super::handover::{self, HOLDER, REPLICA};
use super::keys::{assignments_prefix, churn_key, churn_prefix, stranded_key, stranded_prefix};
use super::UploadsRead;
use crate::keyspaces::rights::{hx, RightsParams};
use crate::keyspaces::validators::ValidatorsRead;
use crate::proto::rights as pb;
use crate::store::{Overlay, Space, StateRead, StateWrite};
use crate::tx::TxError;

/// Queues `operator`'s uploads for reassignment from their start (it
/// stopped being ACTIVE).
pub fn enqueue<S: StateWrite>(state: &mut S, operator: &[u8; 32]) -> Result<(), TxError> {
    state.put_raw(churn_key(operator), Vec::new());
    Ok(())
}

/// `operator` became ACTIVE: its own walk (if it left before) stops, and
/// the stranded validators' uploads are walked again.
pub fn on_active<S: StateWrite>(state: &mut S, operator: &[u8; 32]) -> Result<(), TxError> {
    state.delete_raw(churn_key(operator));
    state.delete_raw(stranded_key(operator));
    restrand(state)
}

/// Queues every stranded validator's walk again (a validator became
/// ACTIVE, or [`RESTRAND_EVERY`] heights passed: quotas may have room).
fn restrand<S: StateWrite>(state: &mut S) -> Result<(), TxError> {
    let prefix = stranded_prefix();
    for (key, _) in state.prefix_raw(Space::State, &prefix, None, usize::MAX)? {
        if let Some(op) = key
            .get(prefix.len()..)
            .and_then(|k| <[u8; 32]>::try_from(k).ok())
        {
            enqueue(state, &op)?;
        }
        state.delete_raw(key);
    }
    Ok(())
}

/// Heights between two walks of the stranded validators' uploads.
pub const RESTRAND_EVERY: u64 = 256;

/// The ACTIVE validators' operator keys, in key order: the members of
/// CometBFT's set with power and those with power queued (admitted, not
/// yet in the set), each still ACTIVE.
fn active<S: StateRead>(state: &S) -> Result<Vec<[u8; 32]>, TxError> {
    let mut out = Vec::new();
    let set = state.comet_set()?;
    let queue = state.update_queue()?;
    let keys = set
        .members
        .iter()
        .filter(|m| m.power > 0)
        .map(|m| &m.consensus_key)
        .chain(
            queue
                .updates
                .iter()
                .filter(|q| q.power > 0)
                .map(|q| &q.consensus_key),
        );
    for key in keys {
        let Ok(consensus) = <[u8; 32]>::try_from(key.as_slice()) else {
            continue;
        };
        if let Some(op) = state.validator_by_consensus(&consensus)? {
            if state.is_active_validator(&op)? {
                out.push(op);
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// `leaving`'s replacement for `u`, by the rule of the module doc.
fn replacement<S: StateRead>(
    state: &S,
    u: &pb::Upload,
    role: u8,
    active: &[[u8; 32]],
    p: &RightsParams,
) -> Result<Option<[u8; 32]>, TxError> {
    let taken = handover::roles(&u.replication_set, &u.dek_holder_set);
    let mut ranked: Vec<([u8; 32], [u8; 32])> = active
        .iter()
        .filter(|k| !taken.contains_key(*k))
        .map(|k| {
            let mut h = Sha256::new();
            h.update(&u.flac_cid);
            h.update(k);
            (h.finalize().into(), *k)
        })
        .collect();
    ranked.sort();
    for (_, k) in ranked {
        if role & REPLICA == 0 || handover::has_room(state, &k, u, p)? {
            return Ok(Some(k));
        }
    }
    Ok(None)
}

fn swap(set: &[Vec<u8>], out: &[u8; 32], inn: &[u8; 32]) -> Vec<Vec<u8>> {
    set.iter()
        .map(|k| {
            if k.as_slice() == out {
                inn.to_vec()
            } else {
                k.clone()
            }
        })
        .collect()
}

/// Replaces `leaving` in the upload `cid`'s target sets.
fn reassign<S: StateWrite>(
    state: &mut S,
    cid: &[u8],
    leaving: &[u8; 32],
    active: &[[u8; 32]],
    height: u64,
    p: &RightsParams,
) -> Result<(), TxError> {
    let Some(mut u) = state.upload(cid)? else {
        return Ok(());
    };
    if state.is_active_validator(leaving)? {
        // it came back before its walk reached this upload
        return Ok(());
    }
    let (reps, holds) = match &u.handover {
        Some(h) => (h.replication_set.clone(), h.dek_holder_set.clone()),
        None => (u.replication_set.clone(), u.dek_holder_set.clone()),
    };
    let role = handover::roles(&reps, &holds)
        .get(leaving)
        .copied()
        .unwrap_or(0);
    if role == 0 {
        return Ok(());
    }
    let Some(new) = replacement(state, &u, role, active, p)? else {
        let why = format!("no ACTIVE validator can replace {}", hx(leaving));
        handover::flag(state, cid, why, height);
        state.put_raw(stranded_key(leaving), Vec::new());
        return Ok(());
    };
    let target = (swap(&reps, leaving, &new), swap(&holds, leaving, &new));
    debug_assert!(role & (REPLICA | HOLDER) != 0);
    handover::start(state, &mut u, target, height, p)
}

/// Reassigns up to `rights.reassignments_per_block` uploads of the queued
/// validators, in key order, and forgets a validator once its walk ends.
/// Only a store fault (or corrupt state) is an `Err`.
pub fn end_block<B: StateRead>(
    state: &mut Overlay<B>,
    height: u64,
    p: &RightsParams,
) -> Result<usize, TxError> {
    if height.is_multiple_of(RESTRAND_EVERY) {
        restrand(state)?;
    }
    let mut budget = p.reassignments_per_block as usize;
    let queue = state.prefix_raw(Space::State, &churn_prefix(), None, budget.max(1))?;
    if queue.is_empty() {
        return Ok(0);
    }
    let active = active(state)?;
    let mut done = 0;
    for (key, cursor) in queue {
        let Some(op) = key
            .get(churn_prefix().len()..)
            .and_then(|k| <[u8; 32]>::try_from(k).ok())
        else {
            state.delete_raw(key);
            continue;
        };
        if budget == 0 {
            break;
        }
        let prefix = assignments_prefix(&op);
        let after = (!cursor.is_empty()).then(|| [prefix.as_slice(), &cursor].concat());
        let rows = state.prefix_raw(Space::State, &prefix, after.as_deref(), budget + 1)?;
        let more = rows.len() > budget;
        let mut last = cursor;
        for (row, _) in rows.into_iter().take(budget) {
            let cid = row.get(prefix.len()..).unwrap_or_default().to_vec();
            // a refusal (a content pool filled meanwhile) leaves this upload
            // as it was, listed; a store fault stops the node
            let mut one = Overlay::new(&*state);
            match reassign(&mut one, &cid, &op, &active, height, p) {
                Ok(()) => {
                    let changes = one.into_changes();
                    state.apply(changes);
                }
                Err(TxError::Store(e)) => return Err(TxError::Store(e)),
                Err(e) => {
                    handover::flag(state, &cid, format!("reassignment refused: {e}"), height);
                    state.put_raw(stranded_key(&op), Vec::new());
                }
            }
            last = cid;
            budget -= 1;
            done += 1;
        }
        if more {
            state.put_raw(key, last);
        } else {
            state.delete_raw(key);
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests;
