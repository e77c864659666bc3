//! The joining side of a handover: after each committed block, for every
//! upload in `under_replicated/` whose handover waits for this validator,
//! check what it joined for, and confirm on chain (`ConfirmHolding`, an
//! operator-key tx through the submitter) once it holds it:
//! - as a replica, the blob and every image, hash-verified (sync status
//!   SEEDING);
//! - as a DEK holder, a wrapped DEK that unwraps and matches the
//!   manifest's `dek_commitment`.
//!
//! It also publishes `stave_under_replicated_uploads`.

use std::sync::Arc;

use tokio::sync::watch;

use super::deks::{wrapped_of, DeksExt};
use super::node::LocalNode;
use super::sync::SyncExt;
use crate::content::Submitter;
use crate::keyspaces::uploads::handover::{roles, HOLDER, REPLICA};
use crate::keyspaces::uploads::UploadsRead;
use crate::proto::local::SyncStatus;
use crate::proto::rights::Upload;
use crate::tx::Action;

/// ConfirmHolding actions per tx.
const PER_TX: usize = 32;

/// Whether this node holds everything its target role in `u` asks for.
/// Any doubt (a file missing, a DEK that does not unwrap) is a no.
fn holds(node: &LocalNode, u: &Upload, role: u8) -> anyhow::Result<bool> {
    if role & REPLICA != 0 {
        let sizes = std::iter::once(u.encrypted_size).chain(u.image_sizes.iter().copied());
        let files = std::iter::once(&u.encrypted_cid).chain(&u.image_cids);
        for (cid, size) in files.zip(sizes) {
            let seeding = node
                .local
                .content_sync(cid)?
                .is_some_and(|e| e.status() == SyncStatus::Seeding);
            if !seeding || node.content.size(cid) != Some(size) {
                return Ok(false);
            }
        }
    }
    if role & HOLDER != 0 {
        let Some(held) = node.local.dek(&u.flac_cid)? else {
            return Ok(false);
        };
        let Ok(w) = wrapped_of(&held) else {
            return Ok(false);
        };
        let Ok(dek) = node.x25519.unwrap(&w, &u.flac_cid) else {
            return Ok(false);
        };
        if crate::crypto::dek_commitment(&dek, &u.encrypted_cid).as_slice() != u.dek_commitment {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Every `under_replicated/` row, page by page.
fn all_rows(
    view: &crate::store::View<'_>,
) -> anyhow::Result<Vec<crate::proto::rights::UnderReplicated>> {
    let mut out = Vec::new();
    let mut cursor = Vec::new();
    loop {
        let (rows, next) = crate::keyspaces::uploads::query::under_replicated(view, &cursor, 0)?;
        out.extend(rows);
        match next {
            Some(n) => cursor = n,
            None => return Ok(out),
        }
    }
}

/// The uploads this validator can confirm now; publishes the gauge.
fn ready(node: &LocalNode) -> anyhow::Result<Vec<Vec<u8>>> {
    let view = node.chain.view();
    let rows = all_rows(&view)?;
    crate::metrics::metrics()
        .access
        .under_replicated
        .set(i64::try_from(rows.len()).unwrap_or(i64::MAX));
    let me = node.me();
    let mut out = Vec::new();
    for row in rows {
        let Some(u) = view.upload(&row.cid)? else {
            continue;
        };
        let Some(h) = &u.handover else {
            continue;
        };
        if !h.unconfirmed.iter().any(|j| j.validator.as_slice() == me) {
            continue;
        }
        let role = roles(&h.replication_set, &h.dek_holder_set)
            .get(&me)
            .copied()
            .unwrap_or(0);
        if holds(node, &u, role)? {
            out.push(u.flac_cid.clone());
        }
    }
    Ok(out)
}

/// Runs until `heights` closes: after each committed block, the uploads
/// this validator can confirm, up to [`PER_TX`] per tx.
pub async fn run(
    node: Arc<LocalNode>,
    submitter: Arc<Submitter>,
    mut heights: watch::Receiver<u64>,
) {
    while heights.changed().await.is_ok() {
        let n = node.clone();
        let cids = match tokio::task::spawn_blocking(move || ready(&n)).await {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => {
                tracing::warn!("checking handovers: {e:#}");
                continue;
            }
            Err(_) => continue,
        };
        let per_tx = {
            use crate::keyspaces::params::ParamsRead;
            let max = node
                .chain
                .view()
                .params()
                .ok()
                .flatten()
                .map_or(PER_TX, |p| {
                    usize::try_from(p.max_actions_per_tx).unwrap_or(PER_TX)
                });
            PER_TX.min(max).max(1)
        };
        for batch in cids.chunks(per_tx) {
            let actions = batch
                .iter()
                .map(|cid| {
                    Action::ConfirmHolding(crate::keyspaces::uploads::ConfirmHolding {
                        cid: cid.clone(),
                    })
                })
                .collect();
            match submitter.submit(actions).await {
                Ok(c) if c.code == 0 => {
                    tracing::info!(
                        uploads = batch.len(),
                        height = c.height,
                        "confirmed holding"
                    )
                }
                other => tracing::warn!(
                    uploads = batch.len(),
                    ?other,
                    "ConfirmHolding not committed"
                ),
            }
        }
    }
}
