//! `stave query local status`: counts per sync state, failures with their
//! reasons, the last reconcile height; and the Prometheus gauges.

use crate::local::grants::GrantsExt;
use std::collections::BTreeMap;

use super::node::LocalNode;
use super::processing::{is_terminal, job_status_name, ProcessingExt};
use super::purge::{self, PurgedExt};
use super::reconcile::{wanted, Kind};
use super::sync::{status_name, SyncExt, STATUSES};
use super::MetaExt;
use crate::proto::local::{
    ContentSync, DekSync, JobSummary, LocalStatusResponse, StatusCount, SyncFailure, SyncStatus,
};

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Content => "content",
        Kind::Dek => "deks",
    }
}

/// Counts per (kind, status), every status listed (zeros included).
pub fn counts(
    content: &BTreeMap<Vec<u8>, ContentSync>,
    deks: &BTreeMap<Vec<u8>, DekSync>,
) -> Vec<StatusCount> {
    let mut out = Vec::new();
    let statuses: [(Kind, Vec<SyncStatus>); 2] = [
        (
            Kind::Content,
            content.values().map(|e| e.status()).collect(),
        ),
        (Kind::Dek, deks.values().map(|e| e.status()).collect()),
    ];
    for (kind, all) in statuses {
        for s in STATUSES {
            out.push(StatusCount {
                kind: kind_name(kind).into(),
                status: status_name(s).into(),
                count: all.iter().filter(|x| **x == s).count() as u64,
            });
        }
    }
    out
}

/// Failed entries with their reasons.
pub fn failures(
    content: &BTreeMap<Vec<u8>, ContentSync>,
    deks: &BTreeMap<Vec<u8>, DekSync>,
) -> Vec<SyncFailure> {
    let c = content
        .values()
        .filter(|e| e.status() == SyncStatus::Failed)
        .map(|e| SyncFailure {
            kind: "content".into(),
            cid: e.cid.clone(),
            error: e.error.clone(),
            retry_at_ms: e.retry_at_ms,
            attempts: e.attempts,
        });
    // a DEK that waits for its content says so (see reconcile::plan)
    let d = deks
        .values()
        .filter(|e| {
            e.status() == SyncStatus::Failed
                || (e.status() == SyncStatus::Pending
                    && e.error.starts_with(crate::local::reconcile::WAITING))
        })
        .map(|e| SyncFailure {
            kind: "deks".into(),
            cid: e.cid.clone(),
            error: e.error.clone(),
            retry_at_ms: e.retry_at_ms,
            attempts: e.attempts,
        });
    c.chain(d).collect()
}

/// Sets the `stave_local_sync_entries{kind,status}` gauges.
pub fn publish_gauges(counts: &[StatusCount]) {
    let g = &crate::metrics::metrics().local_sync;
    for c in counts {
        g.with_label_values(&[c.kind.as_str(), c.status.as_str()])
            .set(c.count as i64);
    }
}

/// Keeps the entries this validator is assigned now: what the counts, the
/// failures and the gauges are about.
pub fn keep_assigned(
    want: &crate::local::reconcile::Wanted,
    content: &mut BTreeMap<Vec<u8>, ContentSync>,
    deks: &mut BTreeMap<Vec<u8>, DekSync>,
) {
    content.retain(|c, _| want.content.contains_key(c));
    deks.retain(|c, _| want.deks.contains(c));
}

/// The status of `node`'s local store (blocking: reads RocksDB).
pub fn status(node: &LocalNode) -> anyhow::Result<LocalStatusResponse> {
    let mut content = node.local.all_content_sync()?;
    let mut deks = node.local.all_dek_sync()?;
    let view = node.chain.view();
    let all = node.assignments.for_validator(&view, &node.me())?;
    let height = view.commit_info()?.height.unwrap_or(0);
    let retention = node.takedown_retention_blocks;
    let (live, taken) = purge::partition(&view, all, (height, retention))?;
    drop(view);
    let want = wanted(&node.me(), &live);
    let purged = node.local.all_purged()?;
    let split = purge::split(&taken, height, retention);
    let taken_files: std::collections::BTreeSet<&Vec<u8>> = taken
        .iter()
        .flat_map(|t| t.upload.blobs().map(|(c, _)| c))
        .collect();
    let mut unassigned: Vec<Vec<u8>> = node
        .content
        .list()?
        .into_iter()
        .chain(content.keys().cloned())
        .filter(|c| !want.content.contains_key(c) && !taken_files.contains(c))
        .collect();
    unassigned.sort();
    unassigned.dedup();
    // an entry left from an earlier assignment shows in `unassigned_content`
    keep_assigned(&want, &mut content, &mut deks);
    let last = node.local.last_reconcile_height()?;
    let mut jobs: Vec<JobSummary> = node
        .local
        .all_jobs()?
        .iter()
        .filter(|j| !is_terminal(j.status()))
        .map(|j| JobSummary {
            job_id: j.job_id.clone(),
            status: job_status_name(j.status()).to_string(),
            uploader_pubkey: j.uploader_pubkey.clone(),
            created_at: j.created_at,
            audio_bytes: j.audio_bytes,
            awaiting_signature: j.manifest.is_some() && j.uploader_signature.is_empty(),
        })
        .collect();
    jobs.sort_by_key(|j| j.created_at);
    let active_jobs = jobs.len() as u64;
    let counts = counts(&content, &deks);
    publish_gauges(&counts);
    Ok(LocalStatusResponse {
        counts,
        failures: failures(&content, &deks),
        last_reconcile_height: last.unwrap_or(0),
        reconciled: last.is_some(),
        unassigned_content: unassigned,
        active_jobs,
        jobs,
        pending_grants: node.local.pending_grants()?.len() as u64,
        refused_grants: node.local.refused_grants()?,
        purged,
        awaiting_purge: split.awaiting,
    })
}
