//! End-of-block garbage collection: expired entries (found through the
//! expiry queue, ordered by time) and orphaned members of deleted or expired
//! collections (found through the GC queue). At most `kvdb_gc_per_block`
//! rows are removed per block; the rest waits for the next block. No scans.
//!
//! # Invariants
//! - Every state effect (which entries expire, which members go, what is
//!   given back to whose quota) is decided from verifiable state alone: the
//!   expiry and GC queues are state keys (review m5). Index space is only
//!   maintained: a deleted sorted set's score rows are removed through the
//!   index-space queue `kvdbzgc/`, with a budget of their own.
//! - Orphaned members stay charged to their owner until deleted: each pass
//!   gives back exactly the bytes it removed (review M3).

use prost::Message;

use super::ops::drop_entry;
use super::state::At;
use super::{corrupt, now_ms, KvdbRead};
use crate::keyspaces::kv::keys;
use crate::keyspaces::kv::quota::release;
use crate::keyspaces::params::Params;
use crate::proto::kv as pb;
use crate::store::{Space, StateWrite, StoreError};

/// Runs the GC at the end of a block whose time is `time_ns`. Returns the
/// number of state rows it removed.
pub fn end_block<S: StateWrite>(
    state: &mut S,
    time_ns: i64,
    params: &Params,
) -> Result<u64, StoreError> {
    let per_block = params.kv_tokens.kvdb_gc_per_block as usize;
    let mut budget = per_block;
    expire_due(state, now_ms(time_ns), &mut budget)?;
    collect_orphans(state, &mut budget)?;
    collect_score_rows(state, per_block)?;
    Ok((per_block - budget) as u64)
}

fn expire_due<S: StateWrite>(
    state: &mut S,
    now: i64,
    budget: &mut usize,
) -> Result<(), StoreError> {
    if *budget == 0 {
        return Ok(());
    }
    let rows = state.prefix_raw(Space::State, keys::expiry_prefix(), None, *budget)?;
    for (k, _) in rows {
        let Some((t, owner, db, key)) = keys::split_expiry_key(&k) else {
            return Err(corrupt(&k, "not an expiry queue key"));
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
            _ => state.delete_raw(k),
        }
        *budget -= 1;
    }
    Ok(())
}

/// The bytes a member row was charged: what follows its one-byte tag in the
/// key (hash field, set or sorted-set member, list position) plus its value
/// (hash value, score, list element). `collections.rs` charges the same.
fn row_charge(member_prefix_len: usize, k: &[u8], v: &[u8]) -> u64 {
    (k.len().saturating_sub(member_prefix_len + 1) + v.len()) as u64
}

fn collect_orphans<S: StateWrite>(state: &mut S, budget: &mut usize) -> Result<(), StoreError> {
    while *budget > 0 {
        let queued = state.prefix_raw(Space::State, keys::gc_prefix(), None, 1)?;
        let Some((qk, raw)) = queued.into_iter().next() else {
            return Ok(());
        };
        let mut item = pb::KvdbOrphans::decode(raw.as_slice()).map_err(|e| corrupt(&qk, e))?;
        let owner: [u8; 32] = item
            .owner
            .as_slice()
            .try_into()
            .map_err(|_| corrupt(&qk, "owner is not 32 bytes"))?;
        let plen = item.member_prefix.len();
        let members = state.prefix_raw(Space::State, &item.member_prefix, None, *budget)?;
        let mut freed = 0u64;
        for (k, v) in &members {
            freed = freed.saturating_add(row_charge(plen, k, v));
            state.delete_raw(k.clone());
        }
        *budget -= members.len();
        let done = state
            .prefix_raw(Space::State, &item.member_prefix, None, 1)?
            .is_empty();
        if done {
            release(state, &owner, item.charged)?;
            state.delete_raw(qk);
            *budget = budget.saturating_sub(1);
            continue;
        }
        let freed = freed.min(item.charged);
        release(state, &owner, freed)?;
        item.charged -= freed;
        state.put_raw(qk, item.encode_to_vec());
    }
    Ok(())
}

/// Index maintenance only: removes up to `budget` score rows of deleted
/// sorted sets. What it finds never changes state.
fn collect_score_rows<S: StateWrite>(state: &mut S, mut budget: usize) -> Result<(), StoreError> {
    while budget > 0 {
        let queued = state.prefix_raw(Space::Index, keys::zorder_gc_prefix(), None, 1)?;
        let Some((qk, _)) = queued.into_iter().next() else {
            return Ok(());
        };
        let mprefix = qk.get(keys::zorder_gc_prefix().len()..).unwrap_or_default();
        let zprefix = keys::zorder_prefix(mprefix);
        let rows = state.prefix_raw(Space::Index, &zprefix, None, budget)?;
        budget -= rows.len();
        for (k, _) in rows {
            state.delete_index_raw(k);
        }
        if !state
            .prefix_raw(Space::Index, &zprefix, None, 1)?
            .is_empty()
        {
            return Ok(()); // the budget ran out; the rest next block
        }
        state.delete_index_raw(qk);
    }
    Ok(())
}
