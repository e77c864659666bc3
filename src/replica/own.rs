//! This node's own records: signing them, re-signing them before the
//! horizon, and the sweep that purges what may no longer merge.

use std::collections::BTreeMap;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::accept::{within_horizon, Checked, MAX_VALUE_BYTES};
use super::codec::RecordValue;
use super::db::Working;
use super::md::{Metadata, FLAG_PLAIN};
use super::params::ReplicaParams;
use super::store::{Held, Put};
use super::{pow, Replica, ReplicaError};
use crate::crdt::Entry;
use crate::local::peer_auth::now_ms;

/// The most own records one sweep re-signs (each costs a proof of work
/// and a signature); the rest wait for the next sweep.
pub const MAX_REFRESH: usize = 256;

/// The most due own records one sweep looks at: those that show nothing
/// are skipped (they age out), and do not count against [`MAX_REFRESH`].
pub const MAX_LOOK: usize = 4_096;

/// What one sweep did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Swept {
    /// Own records re-signed.
    pub refreshed: usize,
    /// Own records due but not re-signed (of those looked at, at most
    /// [`MAX_LOOK`]): no round with a peer succeeded within a quarter
    /// horizon.
    pub held_back: usize,
    /// Others' records purged: owner not current, past the horizon, or TTL
    /// ended.
    pub purged: usize,
}

impl Replica {
    /// How many records this node owns.
    pub fn own_count(&self) -> u64 {
        self.records.usage(&self.me()).records
    }

    /// Metadata for `value` at `ts`: TTL from `ts`, work solved for `p`,
    /// signed.
    fn seal(
        &self,
        (chain_id, p): (&str, &ReplicaParams),
        datakey: &[u8; 32],
        value: &[u8],
        ts: u64,
    ) -> Metadata {
        let mut md = Metadata {
            ts,
            flags: FLAG_PLAIN,
            size: value.len() as u32,
            hash: Sha256::digest(value).into(),
            sig: [0; 64],
            ttl_begin: ts,
            ttl: p.ttl_days(),
            pow_nonce: 0,
        };
        // Work is always found: the expected tries are the divisor.
        pow::solve(&mut md, p.pow_base, rand::random(), u64::MAX);
        md.sign(&self.operator, chain_id, datakey);
        md
    }

    /// Drops what others superseded and old removals, then signs and
    /// stores one record per key at its `last` stamp, and announces them.
    /// A record left with nothing is stored empty, never deleted: the
    /// empty copy supersedes the older ones peers hold, and ages out with
    /// them. Returns the records stored.
    pub(super) fn seal_and_store(
        &self,
        keys: BTreeMap<(String, Vec<u8>), Working>,
    ) -> Result<usize, ReplicaError> {
        let chain_id = self.chain_id()?;
        let params = self.params()?;
        let me = self.me();
        let horizon = params.horizon_ms();
        let mut values = Vec::new();
        for ((db, key), w) in keys {
            let ts = w.last;
            let v = RecordValue {
                owner: me,
                db,
                key,
                entry: settled(w.own, &w.merged, ts, horizon),
            };
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
                let md = self.seal((&chain_id, &params), &dk, &bytes, ts);
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

    /// Purges every record that may no longer merge (past the horizon,
    /// TTL ended, or, when this node is a current validator itself, an
    /// owner no longer current), and re-signs up to [`MAX_REFRESH`] of this
    /// node's records older than a quarter of the horizon: those still
    /// showing, and those the neutralisation changes. It refreshes nothing
    /// unless a round with a peer succeeded within the last quarter
    /// horizon (or there are no peers): a node cut off knows nothing of
    /// others' removals, so its records must age out rather than outlive
    /// them. Due records are looked at in datakey order from where the
    /// last sweep stopped, wrapping round. It reads every record's metadata
    /// (a page at a time); run every minute, off the worker's loop.
    pub fn sweep(&self) -> Result<Swept, ReplicaError> {
        let now = now_ms();
        let me = self.me();
        let horizon = self.params()?.horizon_ms();
        let v = self.validators()?;
        let listed = v.current.contains(&me);
        let mut out = Swept::default();
        let mut purge = Vec::new();
        let cursor = *self.refresh_after.lock();
        let (mut later, mut earlier) = (Vec::new(), Vec::new());
        // signed by a retired operator key: re-signed first (note_signer)
        let resign_before = self.resign_before();
        let mut unresigned = 0usize;
        self.records.for_each(|dk, h| {
            let stale = !within_horizon(h.md.ts, now, horizon) || h.md.expires_at() <= now;
            let old_key = h.owner == me && h.md.ts < resign_before;
            if stale || (listed && !v.current.contains(&h.owner)) {
                purge.push(dk);
            } else if h.owner == me && (old_key || !within_horizon(h.md.ts, now, horizon / 4)) {
                unresigned += usize::from(old_key);
                let side = if dk > cursor {
                    &mut later
                } else {
                    &mut earlier
                };
                if side.len() < MAX_LOOK {
                    side.push(Due {
                        dk,
                        db: h.db.clone(),
                        key: h.key.clone(),
                    });
                }
            }
        })?;
        // done once the chain names this key for this node and no own
        // record an earlier key signed is left (re-signed or aged out)
        if resign_before > 0 && unresigned == 0 && v.signers.get(&me) == Some(&self.key()) {
            self.resigned()?;
        }
        let mut due = later;
        due.extend(earlier);
        due.truncate(MAX_LOOK);
        out.purged = self.records.remove(&purge)?;
        crate::metrics::metrics()
            .replica
            .purged
            .inc_by(out.purged as u64);
        let synced = v.peers.is_empty() || within_horizon(self.last_round_ms(), now, horizon / 4);
        out.held_back = if synced { 0 } else { due.len() };
        if !due.is_empty() && listed && synced {
            let (n, last) = self.refresh(due, now, &v.current)?;
            out.refreshed = n;
            *self.refresh_after.lock() = last;
        }
        self.publish_count();
        Ok(out)
    }

    /// Re-signs, in order, the records of `due` worth keeping at `now` (or
    /// one past their stamp), up to [`MAX_REFRESH`] of them; returns how
    /// many, and the datakey of the last one looked at.
    fn refresh(
        &self,
        due: Vec<Due>,
        now: u64,
        current: &std::collections::BTreeSet<[u8; 32]>,
    ) -> Result<(usize, [u8; 32]), ReplicaError> {
        let horizon = self.params()?.horizon_ms();
        let _one = self.own.lock();
        let mut keys = BTreeMap::new();
        let mut last = [0; 32];
        for d in due {
            if keys.len() >= MAX_REFRESH {
                break;
            }
            last = d.dk;
            let mut w = self.working(&d.db, &d.key, current)?;
            let after = settled(w.own.clone(), &w.merged, now, horizon);
            let shows = w.merged.read(now).is_some();
            if after == w.own && !(shows && after != Entry::default()) {
                continue; // nothing to keep alive, nothing to neutralise
            }
            w.last = now.max(w.last.saturating_add(1));
            keys.insert((d.db, d.key), w);
        }
        if keys.is_empty() {
            return Ok((0, last));
        }
        Ok((self.seal_and_store(keys)?, last))
    }
}

/// An own record due for re-signing.
struct Due {
    dk: [u8; 32],
    db: String,
    key: Vec<u8>,
}

/// An own record as it is signed at `ts`: what others superseded
/// neutralised, removals older than the horizon collected, and nothing
/// at all when nothing in it can show again.
fn settled(mut own: Entry, merged: &Entry, ts: u64, horizon_ms: u64) -> Entry {
    own.drop_dominated(merged, ts);
    if own.collect(ts, ts.saturating_sub(horizon_ms)) {
        Entry::default()
    } else {
        own
    }
}
