//! Takedowns reach the disks. Consumers are refused at once (the access
//! decision). During the node's `takedown_retention_blocks` the data is
//! retained and replicated as before (a handover still completes). Once
//! they have passed, the upload is no longer wanted, peers refuse its blob
//! and DEK ([`crate::grpc::peer`]), and a full reconcile round records in `local/purged/{cid}` what it is about to
//! delete, deletes the upload's content files (encrypted blob, and images
//! no live upload shares), its wrapped DEK (then scrubbed from the store's
//! files) and their sync entries, and marks the record done, for the
//! operator (`stave query local status`).
//!
//! Node-local only: chain state does not change. The deletion is
//! idempotent and checked again on every full round after the retention,
//! so a node killed part-way, or a fetch that finished after it, is
//! cleaned on the next round.

use std::collections::BTreeSet;

use prost::Message;

use super::assignments::Assignment;
use super::deks::DeksExt;
use super::node::LocalNode;
use super::sync::SyncExt;
use super::{decode, decode_rows, keys, LocalError, LocalRaw};
use crate::keyspaces::takedowns::{TakedownStatus, TakedownsRead};
use crate::proto::local::{AwaitingPurge, PurgedUpload};
use crate::store::View;

/// The default `[reconcile] takedown_retention_blocks`: about a day of
/// one-second blocks.
pub const DEFAULT_RETENTION_BLOCKS: u64 = 86_400;

/// An upload under a CONFIRMED takedown, with the height it was
/// confirmed at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TakenDown {
    pub upload: Assignment,
    pub height: u64,
}

/// The height `upload` (by its flac cid, the `takedowns/` key) was taken
/// down at, if its takedown is CONFIRMED in `view`.
pub fn confirmed_at(view: &View<'_>, upload: &Assignment) -> anyhow::Result<Option<u64>> {
    Ok(view
        .takedown(&upload.dek_cid)?
        .filter(|t| TakedownStatus::of(t.status) == Some(TakedownStatus::Confirmed))
        .map(|t| t.resolved_at))
}

/// Splits `assignments` at committed `height` into the uploads still
/// wanted (no takedown, or one whose `retention` has not ended: the data
/// is retained, and replication and handovers go on) and every taken-down
/// one, reading the takedowns from `view`.
pub fn partition(
    view: &View<'_>,
    assignments: Vec<Assignment>,
    (height, retention): (u64, u64),
) -> anyhow::Result<(Vec<Assignment>, Vec<TakenDown>)> {
    let (mut live, mut taken) = (Vec::new(), Vec::new());
    for a in assignments {
        match confirmed_at(view, &a)? {
            Some(at) => {
                if purge_height(at, retention) > height {
                    live.push(a.clone());
                }
                taken.push(TakenDown {
                    upload: a,
                    height: at,
                })
            }
            None => live.push(a),
        }
    }
    Ok((live, taken))
}

/// Whether this node's retention of an upload taken down at
/// `takedown_height` has ended at `height` (it no longer holds or serves
/// the data).
pub fn past_retention(takedown_height: u64, retention: u64, height: u64) -> bool {
    purge_height(takedown_height, retention) <= height
}

/// The first height at which the data of a takedown confirmed at
/// `takedown_height` is deleted.
pub fn purge_height(takedown_height: u64, retention: u64) -> u64 {
    takedown_height.saturating_add(retention)
}

/// The taken-down uploads at a committed height: those whose retention
/// has ended, and those held until a later height.
#[derive(Debug, Default, PartialEq)]
pub struct Split {
    pub due: Vec<TakenDown>,
    pub awaiting: Vec<AwaitingPurge>,
}

impl Split {
    /// The earliest height an awaiting upload becomes due.
    pub fn next_due(&self) -> Option<u64> {
        self.awaiting.iter().map(|a| a.purge_height).min()
    }
}

/// Splits `taken` at `height` (pure).
pub fn split(taken: &[TakenDown], height: u64, retention: u64) -> Split {
    let mut s = Split::default();
    for t in taken {
        let at = purge_height(t.height, retention);
        if at <= height {
            s.due.push(t.clone());
        } else {
            s.awaiting.push(AwaitingPurge {
                cid: t.upload.dek_cid.clone(),
                takedown_height: t.height,
                purge_height: at,
            });
        }
    }
    s.awaiting.sort_by(|a, b| a.cid.cmp(&b.cid));
    s.awaiting.dedup_by(|a, b| a.cid == b.cid);
    s
}

/// Typed access to `local/purged/`.
pub trait PurgedExt: LocalRaw {
    fn purged(&self, cid: &[u8]) -> Result<Option<PurgedUpload>, LocalError> {
        let key = keys::purged(cid);
        self.get_raw(&key)?
            .map(|raw| decode(&key, &raw))
            .transpose()
    }
    fn put_purged(&self, p: &PurgedUpload) -> Result<(), LocalError> {
        self.put_raw(&keys::purged(&p.cid), &p.encode_to_vec())
    }
    /// Every purge record, in cid order.
    fn all_purged(&self) -> Result<Vec<PurgedUpload>, LocalError> {
        let prefix = keys::purged_prefix();
        Ok(
            decode_rows::<PurgedUpload>(&prefix, self.scan_raw(&prefix)?)
                .into_iter()
                .map(|(_, p)| p)
                .collect(),
        )
    }
}
impl<T: LocalRaw + ?Sized> PurgedExt for T {}

/// What this node holds of a taken-down upload, and may delete.
#[derive(Debug, Default)]
struct Held {
    /// Content files on disk (cid, size): the encrypted blob, and each
    /// image no live upload here wants.
    files: Vec<(Vec<u8>, u64)>,
    /// Their cids, present on disk or not (their sync entries go too).
    cids: Vec<Vec<u8>>,
    dek: bool,
}

impl Held {
    fn read(node: &LocalNode, a: &Assignment, keep: &BTreeSet<Vec<u8>>) -> anyhow::Result<Self> {
        let mut h = Held {
            dek: node.local.holds_dek_row(&a.dek_cid)?,
            ..Default::default()
        };
        for (cid, _) in a.blobs() {
            // a cover shared with a live upload, or with an upload job of
            // this node, stays
            if keep.contains(cid) && *cid != a.content_cid {
                continue;
            }
            h.cids.push(cid.clone());
            if let Some(size) = node.content.size(cid) {
                h.files.push((cid.clone(), size));
            }
        }
        Ok(h)
    }
}

impl Held {
    fn is_empty(&self) -> bool {
        self.files.is_empty() && !self.dek
    }
}

/// Deletes what `h` names: files, the wrapped DEK, then the sync entries;
/// returns the bytes of the files removed.
fn remove(node: &LocalNode, a: &Assignment, h: &Held) -> anyhow::Result<u64> {
    let mut bytes = 0u64;
    for (cid, size) in &h.files {
        node.content.remove(cid)?;
        bytes = bytes.saturating_add(*size);
    }
    {
        let _held = node.local.dek_lock();
        if node.local.holds_dek_row(&a.dek_cid)? {
            node.local.delete_dek(&a.dek_cid)?;
        }
    }
    node.local
        .delete_sync_entries(&h.cids, std::slice::from_ref(&a.dek_cid))?;
    Ok(bytes)
}

/// The record of `t`'s purge with what `h` adds: each file once, the bytes
/// of files not listed before.
fn record(before: Option<PurgedUpload>, t: &TakenDown, h: &Held, height: u64) -> PurgedUpload {
    let mut rec = before.unwrap_or_else(|| PurgedUpload {
        cid: t.upload.dek_cid.clone(),
        takedown_height: t.height,
        purged_height: height,
        purged_at_ms: super::peer_auth::now_ms(),
        ..Default::default()
    });
    let mut added = 0u64;
    for (cid, size) in &h.files {
        if !rec.files.contains(cid) {
            rec.files.push(cid.clone());
            added = added.saturating_add(*size);
        }
    }
    rec.dek_removed |= h.dek;
    rec.bytes_freed = rec.bytes_freed.saturating_add(added);
    rec
}

/// Deletes what this node holds of the taken-down upload `t` at committed
/// `height`, keeping the images in `keep` (wanted by live uploads, local
/// upload jobs or uploads still in their retention). The record is written
/// first, naming what is about to go, and marked `done` once the files,
/// the DEK (scrubbed) and the sync entries are gone, so a node killed
/// part-way finishes on its next round. Returns the record when this call
/// changed it; an upload this node held nothing of gets none.
pub fn purge(
    node: &LocalNode,
    t: &TakenDown,
    keep: &BTreeSet<Vec<u8>>,
    height: u64,
) -> anyhow::Result<Option<PurgedUpload>> {
    let a = &t.upload;
    let before = node.local.purged(&a.dek_cid)?;
    let h = Held::read(node, a, keep)?;
    let finished = before.as_ref().is_none_or(|r| r.done);
    if h.is_empty() && finished {
        node.local
            .delete_sync_entries(&h.cids, std::slice::from_ref(&a.dek_cid))?;
        return Ok(None);
    }
    let mut rec = record(before.clone(), t, &h, height);
    rec.done = false;
    rec.dek_scrubbed &= !h.dek;
    if before.as_ref() != Some(&rec) {
        node.local.put_purged(&rec)?;
    }
    let bytes = remove(node, a, &h)?;
    if rec.dek_removed && !rec.dek_scrubbed {
        node.local.scrub(&[super::keys::dek(&a.dek_cid)])?;
        rec.dek_scrubbed = true;
    }
    rec.done = true;
    node.local.put_purged(&rec)?;
    let m = &crate::metrics::metrics().takedown;
    m.purged_bytes.inc_by(bytes);
    if before.is_none_or(|r| !r.done) {
        m.purges.inc();
    }
    tracing::info!(
        cid = %hex::encode(&a.dek_cid),
        takedown_height = t.height,
        files = h.files.len(),
        bytes,
        dek = h.dek,
        "takedown purged"
    );
    Ok(Some(rec))
}
