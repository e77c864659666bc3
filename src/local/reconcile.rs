//! The reconciler's decisions as a pure function: chain assignments for
//! this validator plus the local sync state → the entries to write and the
//! fetches to start. I/O lives in [`super::worker`].
//!
//! # Invariants
//! - Every assigned cid ends with a sync entry.
//! - Nothing held, nothing in flight and nothing failed whose retry time
//!   is in the future is fetched.
//! - The DEK of content this validator replicates is fetched only after
//!   that content is held (it stays PENDING until then).
//! - Nothing is ever deleted: content or DEKs no longer assigned are
//!   reported in [`Plan::unassigned_content`] / [`Plan::unassigned_deks`].

use std::collections::{BTreeMap, BTreeSet};

use super::assignments::Assignment;
use super::sync::SyncRecord;
use crate::proto::local::{ContentSync, DekSync, SyncStatus};

/// What is fetched: a content blob or a wrapped DEK.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Content,
    Dek,
}

/// What chain state says this validator should hold.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// Content cid → size, for uploads whose replication set names us: the
    /// encrypted blobs and the images.
    pub content: BTreeMap<Vec<u8>, u64>,
    /// DEK cids of uploads whose DEK holder set names us.
    pub deks: BTreeSet<Vec<u8>>,
    /// DEK cid → content cid, for uploads we both replicate and hold the
    /// DEK of: that DEK is fetched only once the content is held, so it is
    /// checked against the hash-verified blob, never against bytes a peer
    /// chose.
    pub dek_after_content: BTreeMap<Vec<u8>, Vec<u8>>,
}

/// This validator's share of `assignments`.
pub fn wanted(me: &[u8; 32], assignments: &[Assignment]) -> Wanted {
    let mut w = Wanted::default();
    for a in assignments {
        if a.replication_set.contains(me) {
            for (cid, size) in a.blobs() {
                w.content.insert(cid.clone(), size);
            }
        }
        if a.dek_holder_set.contains(me) {
            w.deks.insert(a.dek_cid.clone());
            if a.replication_set.contains(me) {
                w.dek_after_content
                    .insert(a.dek_cid.clone(), a.content_cid.clone());
            }
        }
    }
    w
}

/// The local side, as the worker read it.
#[derive(Debug, Default, Clone)]
pub struct LocalView {
    pub content_sync: BTreeMap<Vec<u8>, ContentSync>,
    pub dek_sync: BTreeMap<Vec<u8>, DekSync>,
    /// Content files present and hash-verified.
    pub files: BTreeSet<Vec<u8>>,
    /// Cids with a wrapped DEK in `local/deks/`.
    pub held_deks: BTreeSet<Vec<u8>>,
    /// Fetches running now.
    pub in_flight: BTreeSet<(Kind, Vec<u8>)>,
}

/// What to do.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Plan {
    pub content_writes: Vec<ContentSync>,
    pub dek_writes: Vec<DekSync>,
    pub fetch: Vec<(Kind, Vec<u8>)>,
    pub unassigned_content: Vec<Vec<u8>>,
    pub unassigned_deks: Vec<Vec<u8>>,
}

/// What a missing, unheld entry needs: (write it as PENDING?, fetch it?).
fn missing(status: Option<SyncStatus>, retry_at: u64, in_flight: bool, now: u64) -> (bool, bool) {
    match status {
        None | Some(SyncStatus::Unspecified) => (true, !in_flight),
        _ if in_flight => (false, false),
        Some(SyncStatus::Pending) => (false, true),
        // a DOWNLOADING entry with nothing in flight was cut off by a restart;
        // SEEDING or RECEIVED with nothing on disk lost its data
        Some(SyncStatus::Downloading | SyncStatus::Seeding | SyncStatus::Received) => (true, true),
        Some(SyncStatus::Failed) => (false, retry_at <= now),
    }
}

/// Plans one kind: `wanted` (cid → size) against `entries` and `held`.
fn plan_kind<R: SyncRecord>(
    kind: Kind,
    wanted: &mut dyn Iterator<Item = (&Vec<u8>, u64)>,
    entries: &BTreeMap<Vec<u8>, R>,
    held: &BTreeSet<Vec<u8>>,
    in_flight: &BTreeSet<(Kind, Vec<u8>)>,
    now_ms: u64,
) -> (Vec<R>, Vec<(Kind, Vec<u8>)>) {
    let (mut writes, mut fetch) = (Vec::new(), Vec::new());
    for (cid, size) in wanted {
        let entry = entries.get(cid);
        if held.contains(cid) {
            if entry.map(|e| e.sync_status()) != Some(R::HELD) {
                let mut e = entry.cloned().unwrap_or_default();
                *e.cid_mut() = cid.clone();
                e.note_size(size, true);
                e.error_mut().clear();
                e.set_sync_status(R::HELD);
                writes.push(e);
            }
            continue;
        }
        let flying = in_flight.contains(&(kind, cid.clone()));
        let mut entry = entry.cloned();
        let retry_at = entry.as_mut().map_or(0, |e| *e.retry_at_mut());
        let status = entry.as_ref().map(|e| e.sync_status());
        let (write, go) = missing(status, retry_at, flying, now_ms);
        if write {
            // an entry back to PENDING keeps its attempts, so backoff goes on
            let mut e = entry.unwrap_or_default();
            *e.cid_mut() = cid.clone();
            e.note_size(size, false);
            e.set_sync_status(SyncStatus::Pending);
            writes.push(e);
        }
        if go {
            fetch.push((kind, cid.clone()));
        }
    }
    (writes, fetch)
}

/// Keys of `a` and `b` that `wanted` lacks.
fn unassigned<'a, V>(
    a: impl Iterator<Item = &'a Vec<u8>>,
    b: &'a BTreeMap<Vec<u8>, V>,
    wanted: impl Fn(&Vec<u8>) -> bool,
) -> Vec<Vec<u8>> {
    let all: BTreeSet<&Vec<u8>> = a.chain(b.keys()).collect();
    all.into_iter().filter(|c| !wanted(c)).cloned().collect()
}

/// Decides what to write and fetch. `now_ms` is the node's clock.
pub fn plan(wanted: &Wanted, local: &LocalView, now_ms: u64) -> Plan {
    let (content_writes, mut fetch) = plan_kind(
        Kind::Content,
        &mut wanted.content.iter().map(|(c, s)| (c, *s)),
        &local.content_sync,
        &local.files,
        &local.in_flight,
        now_ms,
    );
    let (dek_writes, mut dek_fetch) = plan_kind(
        Kind::Dek,
        &mut wanted.deks.iter().map(|c| (c, 0)),
        &local.dek_sync,
        &local.held_deks,
        &local.in_flight,
        now_ms,
    );
    let waiting = |cid: &Vec<u8>| {
        wanted
            .dek_after_content
            .get(cid)
            .filter(|content| !local.files.contains(*content))
    };
    dek_fetch.retain(|(_, cid)| waiting(cid).is_none());
    fetch.extend(dek_fetch);
    let mut dek_writes = dek_writes;
    note_waiting(&mut dek_writes, &local.dek_sync, &local.held_deks, |c| {
        waiting(c).cloned()
    });
    Plan {
        content_writes,
        dek_writes,
        fetch,
        unassigned_content: unassigned(local.files.iter(), &local.content_sync, |c| {
            wanted.content.contains_key(c)
        }),
        unassigned_deks: unassigned(local.held_deks.iter(), &local.dek_sync, |c| {
            wanted.deks.contains(c)
        }),
    }
}

/// How the error of a DEK entry that waits for its content starts.
pub const WAITING: &str = "waiting for content";

/// Says on each PENDING DEK entry that waits for its content which content
/// it waits for, so the operator sees why it is not fetched.
fn note_waiting(
    writes: &mut Vec<DekSync>,
    entries: &BTreeMap<Vec<u8>, DekSync>,
    held: &BTreeSet<Vec<u8>>,
    waiting: impl Fn(&Vec<u8>) -> Option<Vec<u8>>,
) {
    let cids: BTreeSet<Vec<u8>> = writes
        .iter()
        .map(|e| e.cid.clone())
        .chain(entries.keys().cloned())
        .collect();
    for cid in cids {
        let Some(content) = waiting(&cid) else {
            continue;
        };
        if held.contains(&cid) {
            continue;
        }
        let reason = format!(
            "waiting for content {} (this validator replicates it)",
            hex::encode(&content)
        );
        let pos = writes.iter().position(|e| e.cid == cid);
        let mut e = match pos {
            Some(i) => writes.swap_remove(i),
            None => match entries.get(&cid) {
                Some(e) => e.clone(),
                None => continue,
            },
        };
        let changed = e.status() == SyncStatus::Pending && e.error != reason;
        if changed {
            e.error = reason;
        }
        if changed || pos.is_some() {
            writes.push(e);
        }
    }
    writes.sort_by(|a, b| a.cid.cmp(&b.cid));
}

/// The delay before retry number `attempts` (1-based): doubling from
/// `base_ms`, capped at `max_ms`.
pub fn backoff_ms(attempts: u32, base_ms: u64, max_ms: u64) -> u64 {
    let shift = attempts.saturating_sub(1).min(20);
    base_ms.saturating_mul(1u64 << shift).min(max_ms)
}

#[cfg(test)]
mod tests;
