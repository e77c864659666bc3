//! The content inventory (issue 26 item 4): each validator announces the
//! cids it holds, as CAD037 sets in its own replica, and content fetchers
//! try validators that announce a cid first.
//!
//! Database `inventory`, keys written only by their owner (so a merged read
//! is that owner's record):
//! - `holder/{operator hex}/{shard:02x}`: a set of the cids held whose
//!   SHA-256 starts with byte `shard` (256 shards keep each record small);
//! - `holder/{operator hex}/load`: the number of cids held, as a decimal
//!   value: the coarse load figure.
//!
//! [`publish`] writes only what changed, at most every
//! `[replica] inventory_interval_secs`.

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest, Sha256};

use super::db::{DbOp, Op};
use super::{Replica, ReplicaError};
use crate::crdt::Visible;
use crate::local::content::ContentStore;
use crate::proto::replica as pb;

/// The inventory's database.
pub const DB: &str = "inventory";

fn shard(cid: &[u8]) -> u8 {
    Sha256::digest(cid)[0]
}

/// `holder/{operator hex}/{shard:02x}`.
pub fn shard_key(operator: &[u8; 32], shard: u8) -> Vec<u8> {
    format!("holder/{}/{shard:02x}", hex::encode(operator)).into_bytes()
}

/// `holder/{operator hex}/load`.
pub fn load_key(operator: &[u8; 32]) -> Vec<u8> {
    format!("holder/{}/load", hex::encode(operator)).into_bytes()
}

impl Replica {
    /// What `owner`'s own record of `key` reads as (others' writes to an
    /// owner's inventory keys are ignored).
    fn owner_view(
        &self,
        owner: &[u8; 32],
        key: &[u8],
        now: u64,
    ) -> Result<Option<Visible>, ReplicaError> {
        let e = self.entries(DB, key, &BTreeSet::from([*owner]), now)?;
        Ok(e.get(owner).and_then(|e| e.read(now)).map(|v| v.value))
    }

    fn own_set(&self, key: &[u8], now: u64) -> Result<BTreeSet<Vec<u8>>, ReplicaError> {
        Ok(match self.owner_view(&self.me(), key, now)? {
            Some(Visible::Set(s)) => s,
            _ => BTreeSet::new(),
        })
    }

    fn load_of(&self, operator: &[u8; 32], now: u64) -> Result<Option<u64>, ReplicaError> {
        Ok(match self.owner_view(operator, &load_key(operator), now)? {
            Some(Visible::Value(v)) => std::str::from_utf8(&v).ok().and_then(|s| s.parse().ok()),
            _ => None,
        })
    }

    /// Announces `held` (the cids this node holds): adds and removes set
    /// members where the announced sets differ, and the load figure when it
    /// changed. Returns the records written.
    pub fn publish_inventory(&self, held: &[Vec<u8>]) -> Result<usize, ReplicaError> {
        let now = crate::local::peer_auth::now_ms();
        let me = self.me();
        let mut want: BTreeMap<u8, BTreeSet<Vec<u8>>> = BTreeMap::new();
        for cid in held {
            want.entry(shard(cid)).or_default().insert(cid.clone());
        }
        let mut ops = Vec::new();
        for s in 0..=u8::MAX {
            let key = shard_key(&me, s);
            let have = self.own_set(&key, now)?;
            let empty = BTreeSet::new();
            let target = want.get(&s).unwrap_or(&empty);
            let add: Vec<_> = target.difference(&have).cloned().collect();
            let rem: Vec<_> = have.difference(target).cloned().collect();
            let op = |op| DbOp {
                db: DB.into(),
                key: key.clone(),
                op,
            };
            if !add.is_empty() {
                ops.push(op(Op::SAdd(add)));
            }
            if !rem.is_empty() {
                ops.push(op(Op::SRem(rem)));
            }
        }
        let count = held.len() as u64;
        if self.load_of(&me, now)? != Some(count) {
            ops.push(DbOp {
                db: DB.into(),
                key: load_key(&me),
                op: Op::Set(count.to_string().into_bytes(), None),
            });
        }
        if ops.is_empty() {
            return Ok(0);
        }
        Ok(self.write(&ops)?.1)
    }

    /// Publishes what `content` holds.
    /// Nothing while this node is not ACTIVE: its records would not travel.
    pub fn publish_content(&self, content: &ContentStore) -> Result<usize, ReplicaError> {
        if !self.validators()?.me_active {
            return Ok(0);
        }
        let held = content
            .list()
            .map_err(|e| ReplicaError::Invalid(format!("listing content: {e}")))?;
        self.publish_inventory(&held)
    }

    /// The current validators announcing `cid`, least loaded first.
    pub fn holders(&self, cid: &[u8]) -> Result<Vec<pb::Holder>, ReplicaError> {
        let now = crate::local::peer_auth::now_ms();
        let current = self.validators()?.current;
        let mut out = Vec::new();
        for v in &current {
            let key = shard_key(v, shard(cid));
            let held =
                matches!(self.owner_view(v, &key, now)?, Some(Visible::Set(s)) if s.contains(cid));
            if held {
                let announced_ms = self
                    .records
                    .get(&super::codec::datakey(v, DB, &key))?
                    .map_or(0, |h| h.md.ts);
                out.push(pb::Holder {
                    operator_key: v.to_vec(),
                    load: self.load_of(v, now)?.unwrap_or(u64::MAX),
                    announced_ms,
                });
            }
        }
        out.sort_by_key(|h| (h.load, h.operator_key.clone()));
        Ok(out)
    }
}

impl crate::local::worker::Announcements for Replica {
    fn announcing(&self, cid: &[u8]) -> BTreeSet<[u8; 32]> {
        match self.holders(cid) {
            Ok(hs) => hs
                .iter()
                .filter_map(|h| <[u8; 32]>::try_from(h.operator_key.as_slice()).ok())
                .collect(),
            Err(e) => {
                tracing::warn!(error = %e, "reading the content inventory");
                BTreeSet::new()
            }
        }
    }
}
