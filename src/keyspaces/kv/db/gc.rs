//! End-of-block garbage collection: expired entries (found through the
//! expiry queue, ordered by time) and orphaned members of deleted or expired
//! collections (found through the GC queue). At most `kvdb_gc_per_block`
//! rows are removed per block; the rest waits for the next block. No scans.

use super::ops::drop_entry;
use super::state::At;
use super::{now_ms, KvdbRead};
use crate::keyspaces::kv::keys;
use crate::keyspaces::params::Params;
use crate::store::{Space, StateWrite, StoreError};

/// Runs the GC at the end of a block whose time is `time_ns`. Returns the
/// number of rows it removed.
pub fn end_block<S: StateWrite>(
    state: &mut S,
    time_ns: i64,
    params: &Params,
) -> Result<u64, StoreError> {
    let mut budget = params.kv_tokens.kvdb_gc_per_block as usize;
    let start = budget;
    expire_due(state, now_ms(time_ns), &mut budget)?;
    collect_orphans(state, &mut budget)?;
    Ok((start - budget) as u64)
}

fn expire_due<S: StateWrite>(
    state: &mut S,
    now: i64,
    budget: &mut usize,
) -> Result<(), StoreError> {
    if *budget == 0 {
        return Ok(());
    }
    let rows = state.prefix_raw(Space::Index, keys::expiry_prefix(), None, *budget)?;
    for (k, _) in rows {
        let Some((t, owner, db, key)) = keys::split_expiry_key(&k) else {
            state.delete_index_raw(k);
            continue;
        };
        if t > now {
            break;
        }
        let at = At {
            owner: &owner,
            db: &db,
            key: &key,
        };
        match state.kvdb_entry(at)? {
            Some(e) if e.expire_ms == t && e.expired(now) => drop_entry(state, at, &e)?,
            _ => state.delete_index_raw(k),
        }
        *budget -= 1;
    }
    Ok(())
}

fn collect_orphans<S: StateWrite>(state: &mut S, budget: &mut usize) -> Result<(), StoreError> {
    while *budget > 0 {
        let queued = state.prefix_raw(Space::State, keys::gc_prefix(), None, 1)?;
        let Some((qk, mprefix)) = queued.into_iter().next() else {
            return Ok(());
        };
        let members = state.prefix_raw(Space::State, &mprefix, None, *budget)?;
        for (k, _) in &members {
            state.delete_raw(k.clone());
        }
        *budget -= members.len();
        let zprefix = keys::zorder_prefix(&mprefix);
        let zs = state.prefix_raw(Space::Index, &zprefix, None, (*budget).max(1))?;
        for (k, _) in &zs {
            state.delete_index_raw(k.clone());
        }
        *budget = budget.saturating_sub(zs.len());
        let more_members = !state
            .prefix_raw(Space::State, &mprefix, None, 1)?
            .is_empty();
        let more_z = !state
            .prefix_raw(Space::Index, &zprefix, None, 1)?
            .is_empty();
        if more_members || more_z {
            return Ok(());
        }
        state.delete_raw(qk);
        *budget = budget.saturating_sub(1);
    }
    Ok(())
}
