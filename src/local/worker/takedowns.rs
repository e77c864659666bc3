//! The takedown step of a full round ([`crate::local::purge`]): taken-down
//! uploads leave the wanted set, and those whose retention ended are
//! deleted, whether this validator is still assigned them or only still
//! holds their files or DEK from an earlier assignment.

use std::collections::BTreeSet;

use super::*;
use crate::local::purge::{self, TakenDown};
use crate::local::reconcile::{Plan, Wanted};

/// What the takedown step found.
#[derive(Debug, Default)]
pub(super) struct Outcome {
    /// The earliest height an upload still held becomes due.
    pub next_due: Option<u64>,
    /// Every due upload was checked and cleaned.
    pub ok: bool,
}

/// Held files and DEKs that `live` no longer asks for, minus those of the
/// assigned taken-down uploads (already in hand).
fn strays(p: &Plan, taken: &[TakenDown]) -> Vec<Vec<u8>> {
    let known: BTreeSet<&Vec<u8>> = taken
        .iter()
        .flat_map(|t| t.upload.blobs().map(|(c, _)| c).chain([&t.upload.dek_cid]))
        .collect();
    let all: BTreeSet<&Vec<u8>> = p
        .unassigned_content
        .iter()
        .chain(&p.unassigned_deks)
        .filter(|c| !known.contains(c))
        .collect();
    all.into_iter().cloned().collect()
}

/// The taken-down uploads of held files or DEKs no assignment names any
/// more.
fn unassigned_taken(node: &LocalNode, cids: &[Vec<u8>]) -> anyhow::Result<Vec<TakenDown>> {
    if cids.is_empty() {
        return Ok(Vec::new());
    }
    let view = node.chain.view();
    let mut out: Vec<TakenDown> = Vec::new();
    for cid in cids {
        let Some(a) = node.assignments.by_cid(&view, cid)? else {
            continue;
        };
        if out.iter().any(|t| t.upload.dek_cid == a.dek_cid) {
            continue;
        }
        if let Some(height) = purge::confirmed_at(&view, &a)? {
            out.push(TakenDown { upload: a, height });
        }
    }
    Ok(out)
}

/// What no purge may delete: the files live uploads here want, the images
/// of taken-down uploads still in their retention, and the images this
/// node's unfinished upload jobs name (a shared cover).
fn keep(
    node: &LocalNode,
    want: &Wanted,
    waiting: &[&TakenDown],
) -> anyhow::Result<BTreeSet<Vec<u8>>> {
    use crate::local::processing::{is_terminal, ProcessingExt};
    let mut keep: BTreeSet<Vec<u8>> = want.content.keys().cloned().collect();
    for t in waiting {
        keep.extend(t.upload.images.iter().map(|(c, _)| c.clone()));
    }
    for j in node.local.all_jobs()? {
        if !is_terminal(j.status()) {
            keep.extend(j.image_cids.iter().cloned());
        }
    }
    Ok(keep)
}

/// Deletes the due uploads of `taken` (plus taken-down uploads of held
/// strays in `p`), publishes the gauge, and says when to look again. A
/// failed deletion is logged and retried the next full round.
pub(super) fn step(
    node: &LocalNode,
    mut taken: Vec<TakenDown>,
    (want, p): (&Wanted, &Plan),
    height: u64,
    retention: u64,
) -> Outcome {
    let mut ok = true;
    match unassigned_taken(node, &strays(p, &taken)) {
        Ok(more) => taken.extend(more),
        Err(e) => {
            ok = false;
            tracing::warn!(error = %format!("{e:#}"), "takedown check of unassigned content failed");
        }
    }
    let s = purge::split(&taken, height, retention);
    crate::metrics::metrics()
        .takedown
        .awaiting
        .set(s.awaiting.len() as i64);
    if s.due.is_empty() {
        return Outcome {
            next_due: s.next_due(),
            ok,
        };
    }
    let due_at = |t: &TakenDown| purge::purge_height(t.height, retention) <= height;
    let waiting: Vec<&TakenDown> = taken.iter().filter(|t| !due_at(t)).collect();
    let keep = match keep(node, want, &waiting) {
        Ok(k) => k,
        Err(e) => {
            tracing::warn!(error = %format!("{e:#}"), "takedown purge: reading upload jobs failed; retried next round");
            return Outcome {
                next_due: s.next_due(),
                ok: false,
            };
        }
    };
    for t in &s.due {
        if let Err(e) = purge::purge(node, t, &keep, height) {
            ok = false;
            tracing::warn!(cid = %hex::encode(&t.upload.dek_cid), error = %format!("{e:#}"), "takedown purge failed; retried next round");
        }
    }
    Outcome {
        next_due: s.next_due(),
        ok,
    }
}
