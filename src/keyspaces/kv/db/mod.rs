//! Typed KV databases (CAD037 types, owner-scoped): `kvdb/{owner}/{db}/{key}`
//! holds `[value, type, utime, expire]`; every collection member lives under
//! its own key, so an operation costs O(log n), never a rewrite.
//!
//! # Invariants
//! - An entry whose expiry is at or before the block time reads as absent.
//! - A DEL or an expiry starts a new incarnation at once; the old members
//!   are orphans, invisible, and removed by the end-of-block GC (bounded).
//! - `entry.bytes` is exactly what the owner's quota is charged for it.

mod collections;
mod compat;
pub mod gc;
mod ops;
pub mod query;
mod rebuild;
mod score;
mod state;
mod wire;

pub use compat::{KvDelete, KvSet};
pub use ops::{KvdbAction, KvdbOp};
pub use rebuild::rebuild_index;
pub use score::{format_score, parse_score};
pub use state::{At, KvdbRead, KvdbWrite};

use crate::keyspaces::kv::KvError;
use crate::proto::kv as pb;
use crate::store::StoreError;

/// CAD037 type tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum KvType {
    Value = 0,
    Hash = 1,
    Set = 2,
    ZSet = 3,
    List = 4,
    Counter = 5,
}

impl KvType {
    pub fn name(self) -> &'static str {
        match self {
            KvType::Value => "value",
            KvType::Hash => "hash",
            KvType::Set => "set",
            KvType::ZSet => "zset",
            KvType::List => "list",
            KvType::Counter => "counter",
        }
    }

    fn from_tag(t: u32) -> Option<Self> {
        Some(match t {
            0 => KvType::Value,
            1 => KvType::Hash,
            2 => KvType::Set,
            3 => KvType::ZSet,
            4 => KvType::List,
            5 => KvType::Counter,
            _ => return None,
        })
    }

    /// The member tag of a collection type.
    pub fn member_tag(self) -> u8 {
        match self {
            KvType::Hash => b'h',
            KvType::Set => b's',
            KvType::ZSet => b'z',
            KvType::List => b'l',
            KvType::Value | KvType::Counter => b'-',
        }
    }

    pub fn is_collection(self) -> bool {
        !matches!(self, KvType::Value | KvType::Counter)
    }
}

/// A kvdb entry (domain type of `stave.kv.v1.KvEntry`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvEntry {
    pub value: Vec<u8>,
    pub updated_height: u64,
    pub updated_at: i64,
    pub kind: KvType,
    /// Unix ms of block time; 0 = none.
    pub expire_ms: i64,
    pub len: u64,
    pub head: i64,
    pub tail: i64,
    pub counter: i64,
    pub incarnation: u64,
    pub bytes: u64,
}

impl KvEntry {
    /// Expired at block time `now_ms`?
    pub fn expired(&self, now_ms: i64) -> bool {
        self.expire_ms != 0 && self.expire_ms <= now_ms
    }

    /// `TTL`: remaining ms, or -1 for no expiry.
    pub fn ttl_ms(&self, now_ms: i64) -> i64 {
        match self.expire_ms {
            0 => -1,
            t => t.saturating_sub(now_ms).max(0),
        }
    }
}

impl TryFrom<pb::KvEntry> for KvEntry {
    type Error = String;
    fn try_from(e: pb::KvEntry) -> Result<Self, String> {
        Ok(KvEntry {
            kind: KvType::from_tag(e.r#type).ok_or(format!("type tag {}", e.r#type))?,
            value: e.value,
            updated_height: e.updated_height,
            updated_at: e.updated_at,
            expire_ms: e.expire_ms,
            len: e.len,
            head: e.head,
            tail: e.tail,
            counter: e.counter,
            incarnation: e.incarnation,
            bytes: e.bytes,
        })
    }
}

impl From<&KvEntry> for pb::KvEntry {
    fn from(e: &KvEntry) -> Self {
        pb::KvEntry {
            value: e.value.clone(),
            updated_height: e.updated_height,
            updated_at: e.updated_at,
            r#type: e.kind as u32,
            expire_ms: e.expire_ms,
            len: e.len,
            head: e.head,
            tail: e.tail,
            counter: e.counter,
            incarnation: e.incarnation,
            bytes: e.bytes,
        }
    }
}

/// Block time in unix ms (floor).
pub fn now_ms(time_ns: i64) -> i64 {
    time_ns.div_euclid(1_000_000)
}

/// A database name: 1..=max bytes of `[A-Za-z0-9_.-]`.
pub fn check_db_name(db: &str, max: u32) -> Result<(), KvError> {
    let bad = |reason: String| KvError::BadDbName {
        got: db.chars().take(80).collect(),
        reason,
    };
    if db.is_empty() || db.len() > max as usize {
        return Err(bad(format!("{} bytes; allowed 1..={max}", db.len())));
    }
    if !db
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
    {
        return Err(bad("only A-Z a-z 0-9 _ . - are allowed".into()));
    }
    Ok(())
}

pub(crate) fn corrupt(key: &[u8], e: impl std::fmt::Display) -> StoreError {
    StoreError::corrupt(key, e)
}
