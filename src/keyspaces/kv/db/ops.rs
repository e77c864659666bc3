//! kvdb operations, by the owner (the tx signer). Each action is one
//! operation on one key of one of the owner's databases.

use super::state::{fresh, At};
use super::{check_db_name, now_ms, parse_score, KvEntry, KvType, KvdbRead, KvdbWrite};
use crate::keyspaces::kv::keys::list_pos;
use crate::keyspaces::kv::quota::{charge, release};
use crate::keyspaces::kv::KvError;
use crate::keyspaces::params::Params;
use crate::keyspaces::{Event, TxContext};
use crate::store::{StateWrite, StoreError};
use crate::tx::TxError;

/// One kvdb operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KvdbOp {
    /// SET, with a TTL in ms (0: none). Replaces any type.
    Set {
        value: Vec<u8>,
        ttl_ms: u64,
    },
    Del,
    /// EXPIRE in ms from block time; 0 removes the expiry.
    Expire {
        ttl_ms: u64,
    },
    HSet {
        field: Vec<u8>,
        value: Vec<u8>,
    },
    HDel {
        field: Vec<u8>,
    },
    SAdd(Vec<Vec<u8>>),
    SRem(Vec<Vec<u8>>),
    ZAdd {
        member: Vec<u8>,
        score: String,
    },
    ZRem(Vec<Vec<u8>>),
    Push {
        values: Vec<Vec<u8>>,
        left: bool,
    },
    Pop {
        left: bool,
    },
    /// INCRBY (DECRBY is the negation); overflow fails.
    IncrBy(i64),
}

impl KvdbOp {
    pub fn name(&self) -> &'static str {
        match self {
            KvdbOp::Set { .. } => "set",
            KvdbOp::Del => "del",
            KvdbOp::Expire { .. } => "expire",
            KvdbOp::HSet { .. } => "hset",
            KvdbOp::HDel { .. } => "hdel",
            KvdbOp::SAdd(_) => "sadd",
            KvdbOp::SRem(_) => "srem",
            KvdbOp::ZAdd { .. } => "zadd",
            KvdbOp::ZRem(_) => "zrem",
            KvdbOp::Push { left: true, .. } => "lpush",
            KvdbOp::Push { left: false, .. } => "rpush",
            KvdbOp::Pop { left: true } => "lpop",
            KvdbOp::Pop { left: false } => "rpop",
            KvdbOp::IncrBy(_) => "incrby",
        }
    }
}

/// An operation on `kvdb/{signer}/{db}/{key}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvdbAction {
    pub db: String,
    pub key: Vec<u8>,
    pub op: KvdbOp,
}

fn check_len(what: &str, b: &[u8], min: usize, max: u32) -> Result<(), KvError> {
    if b.len() < min || b.len() > max as usize {
        return Err(KvError::BadField(format!(
            "{what} is {} bytes; allowed {min}..={max}",
            b.len()
        )));
    }
    Ok(())
}

impl KvdbAction {
    /// Name, key, member and value sizes, scores and member counts.
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        let p = &params.kv_tokens;
        check_db_name(&self.db, p.kvdb_max_db_name_bytes)?;
        if self.key.is_empty() || self.key.len() > params.max_kv_key_bytes as usize {
            return Err(KvError::BadKey {
                len: self.key.len(),
                max: params.max_kv_key_bytes,
            }
            .into());
        }
        let (kmax, vmax) = (params.max_kv_key_bytes, params.max_kv_value_bytes);
        let value = |v: &[u8]| -> Result<(), KvError> {
            if v.len() > vmax as usize {
                return Err(KvError::ValueTooLarge {
                    len: v.len(),
                    max: vmax,
                });
            }
            Ok(())
        };
        let many = |ms: &[Vec<u8>], what: &str| -> Result<(), KvError> {
            if ms.is_empty() || ms.len() as u64 > p.kvdb_max_members {
                return Err(KvError::BadField(format!(
                    "{} {what}s; allowed 1..={}",
                    ms.len(),
                    p.kvdb_max_members
                )));
            }
            ms.iter().try_for_each(|m| check_len(what, m, 1, kmax))
        };
        match &self.op {
            KvdbOp::Set { value: v, .. } => value(v)?,
            KvdbOp::Del | KvdbOp::Expire { .. } | KvdbOp::Pop { .. } | KvdbOp::IncrBy(_) => {}
            KvdbOp::HSet { field, value: v } => {
                check_len("field", field, 1, kmax)?;
                value(v)?;
            }
            KvdbOp::HDel { field } => check_len("field", field, 1, kmax)?,
            KvdbOp::SAdd(ms) | KvdbOp::SRem(ms) | KvdbOp::ZRem(ms) => many(ms, "member")?,
            KvdbOp::ZAdd { member, score } => {
                check_len("member", member, 1, kmax)?;
                parse_score(score)?;
            }
            KvdbOp::Push { values, .. } => {
                if values.is_empty() || values.len() as u64 > p.kvdb_max_members {
                    return Err(
                        KvError::BadField(format!("{} values to push", values.len())).into(),
                    );
                }
                values.iter().try_for_each(|v| value(v))?;
            }
        }
        Ok(())
    }

    /// Applies the operation inside the tx overlay.
    ///
    /// # Errors
    /// `KV_WRONGTYPE` on a key of another type, `NOT_FOUND` on a missing key
    /// (DEL, EXPIRE, HDEL, SREM, ZREM, pops), `KV_OVERFLOW`,
    /// `KV_COLLECTION_FULL`, `QUOTA_EXCEEDED`.
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let owner = ctx.signer;
        let at = At {
            owner: &owner,
            db: &self.db,
            key: &self.key,
        };
        let now = now_ms(ctx.time_ns);
        let mut ev = Event::new(&format!("kvdb.{}", self.op.name()))
            .indexed("owner", hex::encode(owner))
            .indexed("db", self.db.clone())
            .indexed("key", hex::encode(&self.key));
        match &self.op {
            KvdbOp::Set { value, ttl_ms } => {
                if let Some(old) = current(state, at, now)? {
                    drop_entry(state, at, &old)?;
                }
                let mut e = fresh(KvType::Value, &self.key, 0);
                e.value = value.clone();
                e.bytes += value.len() as u64;
                e.expire_ms = expiry(now, *ttl_ms, &self.key)?;
                state.set_expiry(at, e.expire_ms, true);
                save(state, ctx, at, &mut e, 0)?;
            }
            KvdbOp::Del => {
                let e = current(state, at, now)?.ok_or_else(|| missing(at))?;
                drop_entry(state, at, &e)?;
            }
            KvdbOp::Expire { ttl_ms } => {
                let mut e = current(state, at, now)?.ok_or_else(|| missing(at))?;
                state.set_expiry(at, e.expire_ms, false);
                e.expire_ms = if *ttl_ms == 0 {
                    0
                } else {
                    expiry(now, *ttl_ms, &self.key)?
                };
                state.set_expiry(at, e.expire_ms, true);
                let b = e.bytes;
                save(state, ctx, at, &mut e, b)?;
            }
            KvdbOp::IncrBy(delta) => {
                let mut e =
                    open(state, at, now, KvType::Counter, true)?.ok_or_else(|| missing(at))?;
                let before = if e.updated_height == 0 { 0 } else { e.bytes };
                if e.updated_height == 0 {
                    e.bytes += 8;
                }
                e.counter = e
                    .counter
                    .checked_add(*delta)
                    .ok_or_else(|| KvError::Overflow {
                        key: hex::encode(&self.key),
                        value: e.counter,
                        delta: *delta,
                    })?;
                ev = ev.plain("value", e.counter.to_string());
                save(state, ctx, at, &mut e, before)?;
            }
            op => super::collections::apply(state, ctx, at, now, op, &mut ev)?,
        }
        ctx.emit(ev);
        Ok(())
    }
}

fn missing(at: At<'_>) -> TxError {
    TxError::NotFound(format!(
        "kvdb key {} in {} of {}",
        hex::encode(at.key),
        at.db,
        hex::encode(at.owner)
    ))
}

fn expiry(now: i64, ttl_ms: u64, key: &[u8]) -> Result<i64, KvError> {
    if ttl_ms == 0 {
        return Ok(0);
    }
    i64::try_from(ttl_ms)
        .ok()
        .and_then(|t| now.checked_add(t))
        .ok_or_else(|| {
            KvError::BadField(format!(
                "ttl {ttl_ms} ms overflows for key {}",
                hex::encode(key)
            ))
        })
}

/// The live entry; an expired one is removed first (so it reads as absent).
pub(super) fn current<S: StateWrite>(
    state: &mut S,
    at: At<'_>,
    now: i64,
) -> Result<Option<KvEntry>, StoreError> {
    match state.kvdb_entry(at)? {
        Some(e) if e.expired(now) => {
            drop_entry(state, at, &e)?;
            Ok(None)
        }
        other => Ok(other),
    }
}

/// The live entry of type `want` (or a fresh one when `create`).
pub(super) fn open<S: StateWrite>(
    state: &mut S,
    at: At<'_>,
    now: i64,
    want: KvType,
    create: bool,
) -> Result<Option<KvEntry>, TxError> {
    match current(state, at, now)? {
        Some(e) if e.kind != want => Err(KvError::WrongType {
            key: hex::encode(at.key),
            held: e.kind.name(),
            wanted: want.name(),
        }
        .into()),
        Some(e) => Ok(Some(e)),
        None if create => {
            let inc = state.next_incarnation()?;
            Ok(Some(fresh(want, at.key, inc)))
        }
        None => Ok(None),
    }
}

/// Removes an entry: its expiry slot and its members (queued for the GC).
/// The entry's own bytes are given back now; its members' bytes stay charged
/// until the GC really deletes them (review M3).
pub(super) fn drop_entry<S: StateWrite>(
    state: &mut S,
    at: At<'_>,
    e: &KvEntry,
) -> Result<(), StoreError> {
    let members = if e.len > 0 {
        e.bytes.saturating_sub(at.key.len() as u64)
    } else {
        0
    };
    release(state, at.owner, e.bytes - members)?;
    state.set_expiry(at, e.expire_ms, false);
    if e.len > 0 {
        state.queue_orphans(at, e, members)?;
    }
    state.delete_kvdb_entry(at);
    Ok(())
}

/// Writes `e`, charging `e.bytes - before` to the owner.
pub(super) fn save<S: StateWrite>(
    state: &mut S,
    ctx: &TxContext,
    at: At<'_>,
    e: &mut KvEntry,
    before: u64,
) -> Result<(), TxError> {
    if e.bytes >= before {
        charge(state, ctx, at.owner, e.bytes - before, 0)?;
    } else {
        charge(state, ctx, at.owner, 0, before - e.bytes)?;
    }
    e.updated_height = ctx.height;
    e.updated_at = ctx.time_ns;
    state.put_kvdb_entry(at, e);
    Ok(())
}

/// List element key position.
pub(super) fn pos_key(p: i64) -> [u8; 8] {
    list_pos(p)
}

/// Fails when `e` would pass the member cap with `adding` more.
pub(super) fn check_cap(
    ctx: &TxContext,
    at: At<'_>,
    e: &KvEntry,
    adding: u64,
) -> Result<(), KvError> {
    let max = ctx.params.kv_tokens.kvdb_max_members;
    let len = e.len.saturating_add(adding);
    if len > max {
        return Err(KvError::CollectionFull {
            key: hex::encode(at.key),
            len,
            max,
        });
    }
    Ok(())
}
