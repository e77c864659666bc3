//! `kv.Set`-era listing: the signer's default database, in key order.

use prost::Message;

use super::db::{now_ms, KvEntry, KvType, KvdbRead};
use super::{kv_key, kv_prefix, split_kv_key};
use crate::proto::kv as pb;
use crate::store::{QueryRead, Space, StoreError};

fn hex_arg(s: &str) -> Result<Vec<u8>, String> {
    hex::decode(s).map_err(|e| format!("{s:?}: {e}"))
}

fn hex32_arg(s: &str) -> Result<[u8; 32], String> {
    hex_arg(s)?
        .as_slice()
        .try_into()
        .map_err(|_| format!("{s:?}: not 32 bytes"))
}

fn utf8_arg(s: &str) -> Result<String, String> {
    String::from_utf8(hex_arg(s)?).map_err(|e| format!("{s:?}: {e}"))
}

/// ABCI query paths of the area (point reads, provable at any retained height).
pub fn state_key(parts: &[&str]) -> Result<Vec<u8>, String> {
    use super::keys;
    match parts {
        ["kvdb", owner, db, key] => Ok(keys::kvdb_key(&hex32_arg(owner)?, db, &hex_arg(key)?)),
        ["kvtok", "token", id] => Ok(keys::token_key(&hex32_arg(id)?)),
        ["kvtok", "tuple", pid, key, ctl] => {
            let (pid, key, ctl) = (utf8_arg(pid)?, utf8_arg(key)?, utf8_arg(ctl)?);
            Ok(keys::tuple_key(&super::token::tuple_hash(&pid, &key, &ctl)))
        }
        _ => Err(format!("unknown kv query path /{}", parts.join("/"))),
    }
}

/// What a `kv.Set`-era read shows of an entry: a value's bytes, or a
/// counter's decimal (as kvdb GET renders it). Collections have no single
/// value: `None`.
pub fn rendered(e: &KvEntry) -> Option<Vec<u8>> {
    match e.kind {
        KvType::Value => Some(e.value.clone()),
        KvType::Counter => Some(e.counter.to_string().into_bytes()),
        KvType::Hash | KvType::Set | KvType::ZSet | KvType::List => None,
    }
}

/// The signer's live entry `key` in the default database at the last
/// committed block's time: an entry expired at or before it reads as absent,
/// whether or not the GC has removed it yet.
pub fn get(
    store: &dyn QueryRead,
    signer: &[u8; 32],
    key: &[u8],
) -> Result<Option<KvEntry>, StoreError> {
    let now = now_ms(store.block_time_ns()?);
    Ok(store.kv_entry(signer, key)?.filter(|e| !e.expired(now)))
}

/// One page of (key, entry) rows and the key to continue after.
pub type Page = (Vec<(Vec<u8>, KvEntry)>, Option<Vec<u8>>);

/// The largest page `list` returns.
pub const MAX_PAGE: usize = 1000;

/// One page of a signer's live entries in the default database, in key
/// order, strictly after `start_after`. Expired entries are skipped.
pub fn list(
    store: &dyn QueryRead,
    signer: &[u8; 32],
    start_after: &[u8],
    limit: usize,
) -> Result<Page, StoreError> {
    let limit = limit.clamp(1, MAX_PAGE);
    let now = now_ms(store.block_time_ns()?);
    let prefix = kv_prefix(signer);
    let mut cursor = (!start_after.is_empty()).then(|| kv_key(signer, start_after));
    let mut out = Vec::with_capacity(limit);
    loop {
        let rows = store.prefix_raw(Space::State, &prefix, cursor.as_deref(), limit + 1)?;
        let done = rows.len() <= limit;
        for (k, v) in &rows {
            cursor = Some(k.clone());
            let key = split_kv_key(signer, k).unwrap_or_default().to_vec();
            let raw = pb::KvEntry::decode(v.as_slice()).map_err(|e| StoreError::corrupt(k, e))?;
            let entry = KvEntry::try_from(raw).map_err(|e| StoreError::corrupt(k, e))?;
            if entry.expired(now) {
                continue;
            }
            if out.len() == limit {
                let next = out.last().map(|(k, _): &(Vec<u8>, KvEntry)| k.clone());
                return Ok((out, next));
            }
            out.push((key, entry));
        }
        if done {
            return Ok((out, None));
        }
    }
}
