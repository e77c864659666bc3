//! Hash, set, sorted-set and list operations: one member per key.

use super::ops::{check_cap, open, pos_key, save, KvdbOp};
use super::state::At;
use super::{parse_score, KvEntry, KvType, KvdbRead, KvdbWrite};
use crate::keyspaces::kv::KvError;
use crate::keyspaces::{Event, TxContext};
use crate::store::StateWrite;
use crate::tx::TxError;

fn not_found(at: At<'_>, what: &str) -> TxError {
    TxError::NotFound(format!(
        "{what} in kvdb key {} of {}",
        hex::encode(at.key),
        at.db
    ))
}

/// Saves a collection, or removes it once empty (no members remain).
fn finish<S: StateWrite>(
    state: &mut S,
    ctx: &TxContext,
    at: At<'_>,
    e: &mut KvEntry,
    before: u64,
) -> Result<(), TxError> {
    if e.len == 0 {
        super::ops::drop_entry(
            state,
            at,
            &KvEntry {
                bytes: before,
                ..e.clone()
            },
        )?;
        return Ok(());
    }
    save(state, ctx, at, e, before)
}

fn score_of(raw: &[u8]) -> Option<i128> {
    raw.try_into().ok().map(i128::from_be_bytes)
}

/// Applies a collection operation.
pub(super) fn apply<S: StateWrite>(
    state: &mut S,
    ctx: &TxContext,
    at: At<'_>,
    now: i64,
    op: &KvdbOp,
    ev: &mut Event,
) -> Result<(), TxError> {
    let (kind, create) = match op {
        KvdbOp::HSet { .. } => (KvType::Hash, true),
        KvdbOp::HDel { .. } => (KvType::Hash, false),
        KvdbOp::SAdd(_) => (KvType::Set, true),
        KvdbOp::SRem(_) => (KvType::Set, false),
        KvdbOp::ZAdd { .. } => (KvType::ZSet, true),
        KvdbOp::ZRem(_) => (KvType::ZSet, false),
        KvdbOp::Push { .. } => (KvType::List, true),
        KvdbOp::Pop { .. } => (KvType::List, false),
        KvdbOp::Set { .. } | KvdbOp::Del | KvdbOp::Expire { .. } | KvdbOp::IncrBy(_) => {
            return Err(TxError::InvalidArgument(format!(
                "{} is not a collection op",
                op.name()
            )))
        }
    };
    let mut e = open(state, at, now, kind, create)?.ok_or_else(|| not_found(at, "no key"))?;
    let before = if e.updated_height == 0 { 0 } else { e.bytes };
    match op {
        KvdbOp::HSet { field, value } => {
            match state.kvdb_member(at, &e, field)? {
                Some(old) => e.bytes = e.bytes - old.len() as u64 + value.len() as u64,
                None => {
                    check_cap(ctx, at, &e, 1)?;
                    e.len += 1;
                    e.bytes += (field.len() + value.len()) as u64;
                }
            }
            state.put_kvdb_member(at, &e, field, value.clone());
        }
        KvdbOp::HDel { field } => {
            let old = state
                .kvdb_member(at, &e, field)?
                .ok_or_else(|| not_found(at, "no field"))?;
            state.delete_kvdb_member(at, &e, field);
            e.len -= 1;
            e.bytes = e.bytes.saturating_sub((field.len() + old.len()) as u64);
        }
        KvdbOp::SAdd(ms) => {
            let mut added = 0;
            for m in ms {
                if state.kvdb_member(at, &e, m)?.is_none() {
                    check_cap(ctx, at, &e, 1)?;
                    state.put_kvdb_member(at, &e, m, Vec::new());
                    e.len += 1;
                    e.bytes += m.len() as u64;
                    added += 1;
                }
            }
            *ev = ev.clone().plain("added", added.to_string());
        }
        KvdbOp::SRem(ms) | KvdbOp::ZRem(ms) => {
            let mut removed = 0;
            for m in ms {
                if let Some(old) = state.kvdb_member(at, &e, m)? {
                    if kind == KvType::ZSet {
                        let s = score_of(&old).unwrap_or_default();
                        state.delete_zorder(at, &e, s, m);
                    }
                    state.delete_kvdb_member(at, &e, m);
                    e.len -= 1;
                    e.bytes = e.bytes.saturating_sub((m.len() + old.len()) as u64);
                    removed += 1;
                }
            }
            *ev = ev.clone().plain("removed", removed.to_string());
        }
        KvdbOp::ZAdd { member, score } => {
            let s = parse_score(score)?;
            match state.kvdb_member(at, &e, member)? {
                Some(old) => {
                    let o = score_of(&old).unwrap_or_default();
                    state.delete_zorder(at, &e, o, member);
                }
                None => {
                    check_cap(ctx, at, &e, 1)?;
                    e.len += 1;
                    e.bytes += (member.len() + 16) as u64;
                }
            }
            state.put_kvdb_member(at, &e, member, s.to_be_bytes().to_vec());
            state.put_zorder(at, &e, s, member);
        }
        KvdbOp::Push { values, left } => {
            check_cap(ctx, at, &e, values.len() as u64)?;
            for v in values {
                let pos = if *left {
                    e.head = e
                        .head
                        .checked_sub(1)
                        .ok_or_else(|| KvError::BadField("list head".into()))?;
                    e.head
                } else {
                    let p = e.tail;
                    e.tail = e
                        .tail
                        .checked_add(1)
                        .ok_or_else(|| KvError::BadField("list tail".into()))?;
                    p
                };
                state.put_kvdb_member(at, &e, &pos_key(pos), v.clone());
                e.len += 1;
                e.bytes += (8 + v.len()) as u64;
            }
        }
        KvdbOp::Pop { left } => {
            let pos = if *left { e.head } else { e.tail - 1 };
            let v = state
                .kvdb_member(at, &e, &pos_key(pos))?
                .ok_or_else(|| not_found(at, "no element"))?;
            state.delete_kvdb_member(at, &e, &pos_key(pos));
            if *left {
                e.head += 1;
            } else {
                e.tail -= 1;
            }
            e.len -= 1;
            e.bytes = e.bytes.saturating_sub((8 + v.len()) as u64);
            *ev = popped_event(ev.clone(), &v);
        }
        KvdbOp::Set { .. } | KvdbOp::Del | KvdbOp::Expire { .. } | KvdbOp::IncrBy(_) => {}
    }
    finish(state, ctx, at, &mut e, before)
}

/// The most of a popped element a `kvdb.lpop`/`rpop` event carries. CometBFT
/// stores and serves every event byte, so a small pop tx must not make a
/// large event (review m10); clients read long elements with LRANGE first.
pub const MAX_EVENT_VALUE_BYTES: usize = 1024;

/// The pop event: the element's length and its first
/// [`MAX_EVENT_VALUE_BYTES`] bytes as hex, `truncated` when that is not all.
fn popped_event(ev: Event, v: &[u8]) -> Event {
    let shown = v.get(..MAX_EVENT_VALUE_BYTES).unwrap_or(v);
    let ev = ev
        .plain("value", hex::encode(shown))
        .plain("value_len", v.len().to_string());
    if shown.len() < v.len() {
        ev.plain("truncated", "true")
    } else {
        ev
    }
}
