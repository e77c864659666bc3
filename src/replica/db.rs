//! The databases as this node uses them: writes to its own records,
//! checked against the merged view, and reads of the merge of every
//! current validator's record of a key.

use std::collections::{BTreeMap, BTreeSet};

use super::accept::within_horizon;
use super::codec::{check_db, check_key, datakey, RecordValue};
use super::{Replica, ReplicaError};
use crate::crdt::{Entry, Stamp, View, WrongType};
use crate::local::peer_auth::now_ms;
use crate::proto::replica as pb;

/// The most ops one write call applies.
pub const MAX_OPS: usize = 10_000;

/// One write (CAD037's operations; deadlines in Unix ms).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    Set(Vec<u8>, Option<u64>),
    Del,
    SetList(Vec<Vec<u8>>),
    HSet(Vec<u8>, Vec<u8>),
    HDel(Vec<u8>),
    SAdd(Vec<Vec<u8>>),
    SRem(Vec<Vec<u8>>),
    ZAdd(Vec<u8>, i64),
    ZRem(Vec<Vec<u8>>),
    Incr(i64),
    Expire(Option<u64>),
}

/// A write to one key of one database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DbOp {
    pub db: String,
    pub key: Vec<u8>,
    pub op: Op,
}

impl TryFrom<pb::DbOp> for DbOp {
    type Error = ReplicaError;
    fn try_from(p: pb::DbOp) -> Result<Self, ReplicaError> {
        use pb::db_op::Op as P;
        check_db(&p.db)?;
        check_key(&p.key)?;
        let nz = |t: u64| (t != 0).then_some(t);
        let op = match p.op {
            None => return Err(ReplicaError::Invalid("an op with no operation".into())),
            Some(P::Set(s)) => Op::Set(s.value, nz(s.expire_at_ms)),
            Some(P::Del(_)) => Op::Del,
            Some(P::SetList(l)) => Op::SetList(l.items),
            Some(P::Hset(h)) => Op::HSet(h.field, h.value),
            Some(P::Hdel(h)) => Op::HDel(h.field),
            Some(P::Sadd(m)) => Op::SAdd(m.members),
            Some(P::Srem(m)) => Op::SRem(m.members),
            Some(P::Zadd(z)) => Op::ZAdd(z.member, z.score),
            Some(P::Zrem(m)) => Op::ZRem(m.members),
            Some(P::Incr(i)) => Op::Incr(i.amount),
            Some(P::Expire(e)) => Op::Expire(nz(e.at_ms)),
        };
        Ok(DbOp {
            db: p.db,
            key: p.key,
            op,
        })
    }
}

/// What a write did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Done,
    /// Members (or fields) changed; EXPIRE: 1 if the key was there.
    Count(i64),
    /// INCR: the value after.
    Counter(i128),
    Refused(WrongType),
}

impl Outcome {
    pub fn to_pb(&self) -> pb::DbOpResult {
        match self {
            Outcome::Done => pb::DbOpResult::default(),
            Outcome::Count(n) => pb::DbOpResult {
                count: *n,
                ..Default::default()
            },
            Outcome::Counter(v) => pb::DbOpResult {
                counter: v.to_string(),
                ..Default::default()
            },
            Outcome::Refused(w) => pb::DbOpResult {
                error: format!("WRONGTYPE {w}"),
                ..Default::default()
            },
        }
    }
}

/// Applies `op` to the entry a reader sees, at `s`.
pub fn apply(e: &mut Entry, s: Stamp, op: &Op) -> Outcome {
    let n =
        |r: Result<usize, WrongType>| r.map_or_else(Outcome::Refused, |n| Outcome::Count(n as i64));
    match op {
        Op::Set(v, at) => {
            e.set(s, v.clone(), *at);
            Outcome::Done
        }
        Op::Del => {
            e.del(s);
            Outcome::Done
        }
        Op::SetList(l) => {
            e.set_list(s, l.clone());
            Outcome::Done
        }
        Op::HSet(f, v) => e
            .hset(s, f.clone(), v.clone())
            .map_or_else(Outcome::Refused, |()| Outcome::Done),
        Op::HDel(f) => n(e.hdel(s, f).map(usize::from)),
        Op::SAdd(m) => n(e.sadd(s, m)),
        Op::SRem(m) => n(e.srem(s, m)),
        Op::ZAdd(m, sc) => e
            .zadd(s, m.clone(), *sc)
            .map_or_else(Outcome::Refused, |()| Outcome::Done),
        Op::ZRem(m) => n(e.zrem(s, m)),
        Op::Incr(a) => e
            .incr_by(s, *a)
            .map_or_else(Outcome::Refused, Outcome::Counter),
        Op::Expire(at) => Outcome::Count(i64::from(e.expire(s, *at))),
    }
}

/// A key's state while a write call works on it.
pub(super) struct Working {
    /// Every current owner's record merged, this node's included.
    pub merged: Entry,
    /// This node's own record.
    pub own: Entry,
    /// The later of this node's record's `ts` and the newest stamp any
    /// owner's record of the key holds (0 for none), then of its last
    /// write: each write stamps one past it at least, and the record is
    /// signed at the last, so no record holds a stamp later than its `ts`
    /// (peers refuse one that does) and a write always follows what its
    /// writer saw, even from a peer whose clock runs ahead. Stamps only
    /// need to rise within a key, so a burst of writes to many keys never
    /// runs ahead of the clock.
    pub last: u64,
}

impl Replica {
    /// The entries of (db, key) held for each of `owners` that may still
    /// merge at `now` (a record past the horizon or its TTL waits for the
    /// sweep to purge it, and merges nothing meanwhile; a value that does
    /// not decode is skipped: it was checked when kept).
    pub(super) fn entries(
        &self,
        db: &str,
        key: &[u8],
        owners: &BTreeSet<[u8; 32]>,
        now: u64,
    ) -> Result<BTreeMap<[u8; 32], Entry>, ReplicaError> {
        let horizon = self.params()?.horizon_ms();
        let mut out = BTreeMap::new();
        for o in self.records.owners_of(db, key)? {
            if !owners.contains(&o) {
                continue;
            }
            let Some(held) = self.records.get(&datakey(&o, db, key))? else {
                continue;
            };
            if !within_horizon(held.md.ts, now, horizon) || held.md.expires_at() <= now {
                continue;
            }
            let Some(raw) = self.records.value(&held.md.hash)? else {
                continue;
            };
            match RecordValue::decode(&raw) {
                Ok(v) => {
                    out.insert(o, v.entry);
                }
                Err(e) => tracing::warn!(error = %e, "a held replica value does not decode"),
            }
        }
        Ok(out)
    }

    pub(super) fn working(
        &self,
        db: &str,
        key: &[u8],
        current: &BTreeSet<[u8; 32]>,
    ) -> Result<Working, ReplicaError> {
        let me = self.me();
        let mut entries = self.entries(db, key, current, now_ms())?;
        let own = entries.remove(&me).unwrap_or_default();
        let merged = entries.values().fold(own.clone(), |acc, e| acc.merge(e));
        let signed = self
            .records
            .get(&datakey(&me, db, key))?
            .map_or(0, |h| h.md.ts);
        let seen = merged.newest().map_or(0, |s| s.ms);
        Ok(Working {
            merged,
            own,
            last: signed.max(seen),
        })
    }

    /// Applies `ops` in order, each at a stamp after the last, and signs
    /// one record per key written, stored in one batch and announced.
    ///
    /// # Errors
    /// A malformed op (nothing is written), this node not being a current
    /// validator, a record over 16 MiB, or a store failure.
    pub fn write(&self, ops: &[DbOp]) -> Result<(Vec<Outcome>, usize), ReplicaError> {
        if ops.len() > MAX_OPS {
            return Err(ReplicaError::Invalid(format!(
                "{} ops; at most {MAX_OPS} per call",
                ops.len()
            )));
        }
        let v = self.validators()?;
        let me = self.me();
        if !v.me_active {
            return Err(ReplicaError::NotValidator(hex::encode(me)));
        }
        let current = v.current;
        let _one = self.own.lock();
        let mut keys: BTreeMap<(String, Vec<u8>), Working> = BTreeMap::new();
        let mut outcomes = Vec::with_capacity(ops.len());
        for o in ops {
            let slot = (o.db.clone(), o.key.clone());
            if !keys.contains_key(&slot) {
                let w = self.working(&o.db, &o.key, &current)?;
                keys.insert(slot.clone(), w);
            }
            let Some(w) = keys.get_mut(&slot) else {
                continue;
            };
            let s = Stamp::next(Some(Stamp::new(w.last, me)), now_ms(), me);
            w.last = s.ms;
            let before = w.merged.clone();
            outcomes.push(apply(&mut w.merged, s, &o.op));
            w.own = w.own.merge(&Entry::delta(&before, &w.merged));
        }
        let n = self.seal_and_store(keys)?;
        Ok((outcomes, n))
    }

    /// What a reader sees of (db, key) at `now_ms`, and whose records it
    /// merged.
    pub fn read(
        &self,
        db: &str,
        key: &[u8],
        now_ms: u64,
    ) -> Result<(Option<View>, Vec<[u8; 32]>), ReplicaError> {
        check_db(db)?;
        check_key(key)?;
        let current = self.validators()?.current;
        let entries = self.entries(db, key, &current, now_ms)?;
        let merged = entries
            .values()
            .fold(Entry::default(), |acc, e| acc.merge(e));
        Ok((merged.read(now_ms), entries.into_keys().collect()))
    }
}
