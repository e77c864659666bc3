//! kvdb reads at a block time `now_ms` (queries use the last committed
//! block's time): an entry expired at or before it reads as absent.

use super::state::At;
use super::{format_score, KvEntry, KvType, KvdbRead};
use crate::keyspaces::kv::{keys, KvError};
use crate::store::{Space, StateRead, StoreError};

/// Why a read failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Kv(#[from] KvError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A page of keys and the key to continue after.
pub type KeysPage = (Vec<Vec<u8>>, Option<Vec<u8>>);
/// A page of (member, stored bytes) and the member to continue after.
pub type MembersPage = (Vec<(Vec<u8>, Vec<u8>)>, Option<Vec<u8>>);

/// The largest page of a listing read.
pub const MAX_PAGE: usize = 1000;

fn typed<S: StateRead>(
    s: &S,
    at: At<'_>,
    now: i64,
    want: KvType,
) -> Result<Option<KvEntry>, ReadError> {
    match s.kvdb_live(at, now)? {
        Some(e) if e.kind != want => Err(KvError::WrongType {
            key: hex::encode(at.key),
            held: e.kind.name(),
            wanted: want.name(),
        }
        .into()),
        other => Ok(other),
    }
}

/// GET: a value's bytes, or a counter's decimal; WRONGTYPE for collections.
pub fn get<S: StateRead>(s: &S, at: At<'_>, now: i64) -> Result<Option<Vec<u8>>, ReadError> {
    match s.kvdb_live(at, now)? {
        None => Ok(None),
        Some(e) if e.kind == KvType::Value => Ok(Some(e.value)),
        Some(e) if e.kind == KvType::Counter => Ok(Some(e.counter.to_string().into_bytes())),
        Some(e) => Err(KvError::WrongType {
            key: hex::encode(at.key),
            held: e.kind.name(),
            wanted: "value",
        }
        .into()),
    }
}

/// The live entry itself (EXISTS, TYPE, and the lengths HLEN SCARD ZCARD LLEN).
pub fn entry<S: StateRead>(s: &S, at: At<'_>, now: i64) -> Result<Option<KvEntry>, ReadError> {
    Ok(s.kvdb_live(at, now)?)
}

/// TTL in ms: -2 missing, -1 no expiry.
pub fn ttl<S: StateRead>(s: &S, at: At<'_>, now: i64) -> Result<i64, ReadError> {
    Ok(s.kvdb_live(at, now)?.map(|e| e.ttl_ms(now)).unwrap_or(-2))
}

/// The length of a collection of type `want` (0 when missing).
pub fn len<S: StateRead>(s: &S, at: At<'_>, now: i64, want: KvType) -> Result<u64, ReadError> {
    Ok(typed(s, at, now, want)?.map(|e| e.len).unwrap_or(0))
}

/// KEYS: live keys of a database in key order, strictly after `after`.
pub fn keys_page<S: StateRead>(
    s: &S,
    owner: &[u8; 32],
    db: &str,
    after: &[u8],
    limit: usize,
    now: i64,
) -> Result<KeysPage, ReadError> {
    let prefix = keys::kvdb_prefix(owner, db);
    let limit = limit.clamp(1, MAX_PAGE);
    let mut cursor = (!after.is_empty()).then(|| keys::kvdb_key(owner, db, after));
    let mut out = Vec::new();
    loop {
        let rows = s.prefix_raw(Space::State, &prefix, cursor.as_deref(), limit + 1)?;
        let done = rows.len() <= limit;
        for (k, _) in &rows {
            let key = k[prefix.len()..].to_vec();
            let at = At {
                owner,
                db,
                key: &key,
            };
            if s.kvdb_live(at, now)?.is_some() {
                if out.len() == limit {
                    return Ok((out.clone(), out.last().cloned()));
                }
                out.push(key);
            }
            cursor = Some(k.clone());
        }
        if done {
            return Ok((out, None));
        }
    }
}

/// Members (with their stored bytes) of a live collection, after `after`.
pub fn members<S: StateRead>(
    s: &S,
    at: At<'_>,
    now: i64,
    want: KvType,
    after: &[u8],
    limit: usize,
) -> Result<MembersPage, ReadError> {
    let Some(e) = typed(s, at, now, want)? else {
        return Ok((Vec::new(), None));
    };
    let limit = limit.clamp(1, MAX_PAGE);
    let prefix = keys::member_key(&at.members(&e), want.member_tag(), &[]);
    let start =
        (!after.is_empty()).then(|| keys::member_key(&at.members(&e), want.member_tag(), after));
    let rows = s.prefix_raw(Space::State, &prefix, start.as_deref(), limit + 1)?;
    let more = rows.len() > limit;
    let out: Vec<(Vec<u8>, Vec<u8>)> = rows
        .into_iter()
        .take(limit)
        .map(|(k, v)| (k[prefix.len()..].to_vec(), v))
        .collect();
    let next = if more {
        out.last().map(|(m, _)| m.clone())
    } else {
        None
    };
    Ok((out, next))
}

/// One member's stored bytes (HGET, SISMEMBER, ZSCORE).
pub fn member<S: StateRead>(
    s: &S,
    at: At<'_>,
    now: i64,
    want: KvType,
    m: &[u8],
) -> Result<Option<Vec<u8>>, ReadError> {
    match typed(s, at, now, want)? {
        None => Ok(None),
        Some(e) => Ok(s.kvdb_member(at, &e, m)?),
    }
}

/// ZSCORE as a decimal string.
pub fn zscore<S: StateRead>(
    s: &S,
    at: At<'_>,
    now: i64,
    m: &[u8],
) -> Result<Option<String>, ReadError> {
    Ok(member(s, at, now, KvType::ZSet, m)?
        .and_then(|raw| <[u8; 16]>::try_from(raw.as_slice()).ok())
        .map(|b| format_score(i128::from_be_bytes(b))))
}

/// ZRANGE by score: members with `min <= score <= max`, ascending, at most `limit`.
pub fn zrange_by_score<S: StateRead>(
    s: &S,
    at: At<'_>,
    now: i64,
    min: i128,
    max: i128,
    limit: usize,
) -> Result<Vec<(Vec<u8>, String)>, ReadError> {
    let Some(e) = typed(s, at, now, KvType::ZSet)? else {
        return Ok(Vec::new());
    };
    let mp = at.members(&e);
    let prefix = keys::zorder_prefix(&mp);
    let limit = limit.clamp(1, MAX_PAGE);
    // Start just before `min`'s score bytes: the 15-byte stem sorts first.
    let mut cursor = Some(keys::zorder_key(&mp, min, &[]));
    if let Some(c) = cursor.as_mut() {
        c.pop();
    }
    let mut out = Vec::new();
    loop {
        let rows = s.prefix_raw(Space::Index, &prefix, cursor.as_deref(), limit)?;
        let done = rows.len() < limit;
        for (k, _) in rows {
            let rest = &k[prefix.len()..];
            let Some(sb) = rest.get(..16).and_then(|b| <[u8; 16]>::try_from(b).ok()) else {
                continue;
            };
            let score = (u128::from_be_bytes(sb) ^ (1 << 127)) as i128;
            if score > max {
                return Ok(out);
            }
            if score >= min {
                out.push((rest[16..].to_vec(), format_score(score)));
                if out.len() >= limit {
                    return Ok(out);
                }
            }
            cursor = Some(k.clone());
        }
        if done {
            return Ok(out);
        }
    }
}

/// LRANGE with Redis indexes (negative counts from the end), inclusive.
pub fn lrange<S: StateRead>(
    s: &S,
    at: At<'_>,
    now: i64,
    start: i64,
    stop: i64,
) -> Result<Vec<Vec<u8>>, ReadError> {
    let Some(e) = typed(s, at, now, KvType::List)? else {
        return Ok(Vec::new());
    };
    let n = e.len as i64;
    let norm = |i: i64| if i < 0 { n + i } else { i };
    let (a, b) = (norm(start).max(0), norm(stop).min(n - 1));
    let b = b.min(a.saturating_add(MAX_PAGE as i64 - 1));
    let mut out = Vec::new();
    for i in a..=b {
        let key = keys::list_pos(e.head + i);
        if let Some(v) = s.kvdb_member(at, &e, &key)? {
            out.push(v);
        }
    }
    Ok(out)
}
