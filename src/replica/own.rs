//! This node's own records: signing them, re-signing them before the
//! horizon, and the sweep that purges what may no longer merge.

use std::collections::BTreeMap;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::accept::{within_horizon, Checked, MAX_VALUE_BYTES};
use super::codec::RecordValue;
use super::db::Working;
use super::md::{Metadata, FLAG_PLAIN};
use super::store::{Held, Put};
use super::{pow, Replica, ReplicaError};
use crate::local::peer_auth::now_ms;

/// What one sweep did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Swept {
    /// Own records re-signed.
    pub refreshed: usize,
    /// Own records dropped: nothing in them can show any more.
    pub collected: usize,
    /// Others' records purged: owner not current, past the horizon, or TTL
    /// ended.
    pub purged: usize,
}

impl Replica {
    /// The newest `ts` among this node's records (0 for none).
    pub(super) fn last_own_ts(&self) -> Result<u64, ReplicaError> {
        let me = self.me();
        let mut last = 0;
        for dk in self.records.datakeys() {
            if let Some(h) = self.records.get(&dk)? {
                if h.owner == me {
                    last = last.max(h.md.ts);
                }
            }
        }
        Ok(last)
    }

    /// How many records this node owns.
    pub fn own_count(&self) -> Result<usize, ReplicaError> {
        let me = self.me();
        let mut n = 0;
        for dk in self.records.datakeys() {
            if self.records.get(&dk)?.is_some_and(|h| h.owner == me) {
                n += 1;
            }
        }
        Ok(n)
    }

    /// Metadata for `value` at `ts`: TTL from `ts`, work solved, signed.
    fn seal(&self, chain_id: &str, datakey: &[u8; 32], value: &[u8], ts: u64) -> Metadata {
        let mut md = Metadata {
            ts,
            flags: FLAG_PLAIN,
            size: value.len() as u32,
            hash: Sha256::digest(value).into(),
            sig: [0; 64],
            ttl_begin: ts,
            ttl: self.config.ttl_days(),
            pow_nonce: 0,
        };
        // Work is always found: the expected tries are the divisor.
        pow::solve(&mut md, self.config.pow_base, rand::random(), u64::MAX);
        md.sign(&self.operator, chain_id, datakey);
        md
    }

    /// Drops what others superseded and old removals, then signs and
    /// stores one record per key at `ts` (removing those left with
    /// nothing), and announces them. Returns the records stored.
    pub(super) fn seal_and_store(
        &self,
        keys: BTreeMap<(String, Vec<u8>), Working>,
        ts: u64,
    ) -> Result<usize, ReplicaError> {
        let chain_id = self.chain_id()?;
        let me = self.me();
        let horizon = self.config.horizon_ms();
        let mut drop = Vec::new();
        let mut values = Vec::new();
        for ((db, key), mut w) in keys {
            w.own.drop_dominated(&w.merged);
            let empty = w.own.collect(ts, ts.saturating_sub(horizon));
            let v = RecordValue {
                owner: me,
                db,
                key,
                entry: w.own,
            };
            if empty {
                drop.push(v.datakey());
                continue;
            }
            let bytes = v.encode();
            if bytes.len() > MAX_VALUE_BYTES as usize {
                return Err(ReplicaError::Invalid(format!(
                    "the record of key {} would be {} bytes; records are at most 16 MiB",
                    hex::encode(&v.key),
                    bytes.len()
                )));
            }
            values.push((v, bytes));
        }
        let puts: Vec<Put> = values
            .into_par_iter()
            .map(|(v, bytes)| {
                let dk = v.datakey();
                let md = self.seal(&chain_id, &dk, &bytes, ts);
                Put {
                    datakey: dk,
                    held: Held {
                        owner: me,
                        md,
                        db: v.db,
                        key: v.key,
                    },
                    value: bytes,
                }
            })
            .collect();
        let announce: Vec<Checked> = puts
            .iter()
            .map(|p| Checked {
                owner: me,
                datakey: p.datakey,
                md: p.held.md,
            })
            .collect();
        let stored = self.records.put(puts)?;
        self.records.remove(&drop)?;
        self.queues.announce(announce, None);
        self.publish_count();
        Ok(stored.len())
    }

    /// Re-signs this node's records older than a quarter of the horizon,
    /// and purges others' records that may no longer merge. Run every
    /// few minutes; cheap when nothing is due.
    pub fn sweep(&self) -> Result<Swept, ReplicaError> {
        let now = now_ms();
        let me = self.me();
        let horizon = self.config.horizon_ms();
        let current = self.validators()?.current;
        let mut out = Swept::default();
        let mut purge = Vec::new();
        let mut due = Vec::new();
        for dk in self.records.datakeys() {
            let Some(h) = self.records.get(&dk)? else {
                continue;
            };
            let stale = !within_horizon(h.md.ts, now, horizon) || h.md.expires_at() <= now;
            if !current.contains(&h.owner) || (h.owner != me && stale) {
                purge.push(dk);
            } else if h.owner == me && !within_horizon(h.md.ts, now, horizon / 4) {
                due.push((h.db, h.key));
            }
        }
        out.purged = self.records.remove(&purge)?;
        crate::metrics::metrics()
            .replica
            .purged
            .inc_by(out.purged as u64);
        if !due.is_empty() && current.contains(&me) {
            let mut last = self.own.lock();
            let ts = now.max(last.saturating_add(1));
            let mut keys = BTreeMap::new();
            for (db, key) in due {
                let w = self.working(&db, &key, &current)?;
                keys.insert((db, key), w);
            }
            let n = keys.len();
            out.refreshed = self.seal_and_store(keys, ts)?;
            out.collected = n - out.refreshed.min(n);
            *last = ts;
        }
        self.publish_count();
        Ok(out)
    }
}
