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
    /// How many records this node owns.
    pub fn own_count(&self) -> u64 {
        self.records.usage(&self.me()).records
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
    /// stores one record per key at its `last` stamp (removing those left
    /// with nothing), and announces them. Returns the records stored.
    pub(super) fn seal_and_store(
        &self,
        keys: BTreeMap<(String, Vec<u8>), Working>,
    ) -> Result<usize, ReplicaError> {
        let chain_id = self.chain_id()?;
        let me = self.me();
        let horizon = self.config.horizon_ms();
        let mut drop = Vec::new();
        let mut values = Vec::new();
        for ((db, key), mut w) in keys {
            let ts = w.last;
            w.own.drop_dominated(&w.merged, ts);
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
            values.push((v, bytes, ts));
        }
        let puts: Vec<Put> = values
            .into_par_iter()
            .map(|(v, bytes, ts)| {
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
        let keys: std::collections::BTreeSet<_> = stored.keys.iter().collect();
        self.queues.announce(
            announce.into_iter().filter(|c| keys.contains(&c.datakey)),
            None,
        );
        self.publish_count();
        if stored.over_quota > 0 {
            return Err(ReplicaError::Invalid(format!(
                "{} records were not written: this node's own records are at their quota ({:?} held, [replica] max_records_per_owner / max_bytes_per_owner)",
                stored.over_quota,
                self.records.usage(&me)
            )));
        }
        Ok(stored.keys.len())
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
        self.records.for_each(|dk, h| {
            let stale = !within_horizon(h.md.ts, now, horizon) || h.md.expires_at() <= now;
            if !current.contains(&h.owner) || (h.owner != me && stale) {
                purge.push(dk);
            } else if h.owner == me && !within_horizon(h.md.ts, now, horizon / 4) {
                due.push((h.db.clone(), h.key.clone()));
            }
        })?;
        out.purged = self.records.remove(&purge)?;
        crate::metrics::metrics()
            .replica
            .purged
            .inc_by(out.purged as u64);
        if !due.is_empty() && current.contains(&me) {
            let _one = self.own.lock();
            let mut keys = BTreeMap::new();
            for (db, key) in due {
                let mut w = self.working(&db, &key, &current)?;
                w.last = now.max(w.last.saturating_add(1));
                keys.insert((db, key), w);
            }
            let n = keys.len();
            out.refreshed = self.seal_and_store(keys)?;
            out.collected = n - out.refreshed.min(n);
        }
        self.publish_count();
        Ok(out)
    }
}
