//! Records this validator's deliveries on chain: after each committed
//! block, the pending grants (`local/access/pending/`) are coalesced by
//! (cid, consumer, territory, context) into one `RecordGrants` action with
//! counts and sent through the operator-key submitter, which waits for its
//! commit: at most one tx per block.
//!
//! Before sending, each entry is decided again on the latest committed
//! state. An entry the chain would refuse (the policy changed since the
//! delivery, or this validator left the holder set) is refused here:
//! counted (`local/access/refused`, `stave_access_grant_refused_total`,
//! the admin status) and dropped. A batch refused on chain anyway is sent
//! again, halved each time, so one bad entry ends up alone and refused.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::watch;

use super::Access;
use crate::content::Submitter;
use crate::keyspaces::casbin::CacheUse;
use crate::keyspaces::grants::{RecordGrant, RecordGrants};
use crate::keyspaces::params::ParamsRead;
use crate::keyspaces::rights::{access, block_secs};
use crate::keyspaces::uploads::UploadsRead;
use crate::keyspaces::validators::ValidatorsRead;
use crate::local::grants::GrantsExt;
use crate::proto::local::PendingGrant;
use crate::proto::rights::Condition;
use crate::store::View;
use crate::tx::Action;

/// Bytes of a tx left for everything but the entries (signature, nonce,
/// gas, proof of work, framing).
const TX_OVERHEAD: u64 = 4096;

/// Heights between two sweeps of expired request nonces.
const SWEEP_EVERY: u64 = 16;

/// One entry of the next batch: the coalesced deliveries and their rows.
#[derive(Debug)]
struct Entry {
    grant: RecordGrant,
    seqs: Vec<u64>,
}

/// The next batch, and the rows to refuse now.
#[derive(Debug, Default)]
struct Batch {
    entries: Vec<Entry>,
    refused: Vec<u64>,
}

type Group = (Vec<u8>, Vec<u8>, String, Vec<(String, String)>);

fn group_of(g: &PendingGrant) -> Group {
    let ctx = g
        .context
        .iter()
        .map(|c| (c.key.clone(), c.value.clone()))
        .collect();
    (
        g.cid.clone(),
        g.consumer_pubkey.clone(),
        g.territory.clone(),
        ctx,
    )
}

/// Coalesces pending rows into at most `max` entries of at most
/// `max_bytes` in all, in delivery order. Rows that do not decode are
/// refused.
fn coalesce(
    rows: Vec<(u64, Result<PendingGrant, crate::local::LocalError>)>,
    max: usize,
    max_bytes: u64,
) -> Batch {
    let mut batch = Batch::default();
    let mut index: BTreeMap<Group, usize> = BTreeMap::new();
    let mut bytes = 0u64;
    for (seq, row) in rows {
        let Ok(g) = row else {
            batch.refused.push(seq);
            continue;
        };
        let key = group_of(&g);
        if let Some(&i) = index.get(&key) {
            if let Some(e) = batch.entries.get_mut(i) {
                e.grant.count = e.grant.count.saturating_add(1);
                e.seqs.push(seq);
            }
            continue;
        }
        let size = (g.cid.len() + g.consumer_pubkey.len() + g.territory.len() + 16) as u64
            + g.context
                .iter()
                .map(|c| (c.key.len() + c.value.len() + 8) as u64)
                .sum::<u64>();
        if batch.entries.len() >= max || bytes + size > max_bytes {
            continue;
        }
        bytes += size;
        index.insert(key, batch.entries.len());
        batch.entries.push(Entry {
            grant: RecordGrant {
                cid: g.cid,
                consumer_pubkey: g.consumer_pubkey,
                territory: g.territory,
                context: g.context,
                count: 1,
            },
            seqs: vec![seq],
        });
    }
    batch
}

/// Whether the chain would record `g` from `me` now.
fn would_record(view: &View<'_>, me: &[u8; 32], g: &RecordGrant) -> anyhow::Result<bool> {
    let Some(upload) = view.upload(&g.cid)? else {
        return Ok(false);
    };
    if !upload.dek_holder_set.iter().any(|k| k.as_slice() == me) || !view.is_active_validator(me)? {
        return Ok(false);
    }
    let Ok(consumer) = <[u8; 32]>::try_from(g.consumer_pubkey.as_slice()) else {
        return Ok(false);
    };
    let context: &[Condition] = &g.context;
    let req = access::AccessRequest {
        cid: &g.cid,
        consumer: &consumer,
        territory: &g.territory,
        now: block_secs(view.commit_info()?.last_block_time_ns),
        context,
    };
    Ok(access::decide_with(view, &req, CacheUse::Query)?.allowed())
}

/// The next batch, at most `cap` entries, each decided again.
fn prepare(a: &Access, cap: usize) -> anyhow::Result<Batch> {
    let view = a.node.chain.view();
    let params = view.params()?.unwrap_or_default();
    let max = (params.rights.max_grants_per_validator_per_block as usize).min(cap);
    let max_bytes = params.max_tx_bytes.saturating_sub(TX_OVERHEAD);
    let mut batch = coalesce(a.node.local.pending_grants()?, max, max_bytes);
    let me = a.node.me();
    let mut kept = Vec::with_capacity(batch.entries.len());
    for e in std::mem::take(&mut batch.entries) {
        if would_record(&view, &me, &e.grant)? {
            kept.push(e);
        } else {
            batch.refused.extend(e.seqs);
        }
    }
    batch.entries = kept;
    Ok(batch)
}

fn refuse(a: &Access, seqs: &[u64]) -> anyhow::Result<()> {
    if seqs.is_empty() {
        return Ok(());
    }
    a.node.local.refuse_pending(seqs)?;
    a.settled(seqs.len() as u64);
    let m = &crate::metrics::metrics().access;
    m.grant_refused.inc_by(seqs.len() as u64);
    m.pending
        .set(i64::try_from(a.pending()).unwrap_or(i64::MAX));
    tracing::warn!(
        deliveries = seqs.len(),
        "the chain would refuse these deliveries' grants: counted as refused"
    );
    Ok(())
}

/// One round; returns the entry cap for the next (halved after a batch
/// the chain refused, reset after one it took).
async fn round(a: &Arc<Access>, submitter: &Submitter, cap: usize) -> anyhow::Result<usize> {
    let b = {
        let a = a.clone();
        tokio::task::spawn_blocking(move || prepare(&a, cap)).await??
    };
    let a2 = a.clone();
    let refused = b.refused;
    tokio::task::spawn_blocking(move || refuse(&a2, &refused)).await??;
    if b.entries.is_empty() {
        return Ok(usize::MAX);
    }
    let seqs: Vec<u64> = b
        .entries
        .iter()
        .flat_map(|e| e.seqs.iter().copied())
        .collect();
    let only = b.entries.len() == 1;
    let action = Action::RecordGrants(RecordGrants {
        grants: b.entries.into_iter().map(|e| e.grant).collect(),
    });
    let outcome = submitter.submit(vec![action]).await;
    let ok = matches!(&outcome, Ok(c) if c.code == 0);
    if ok {
        let a2 = a.clone();
        let n = seqs.len() as u64;
        tokio::task::spawn_blocking(move || a2.node.local.remove_pending(&seqs)).await??;
        a.settled(n);
        let m = &crate::metrics::metrics().access;
        m.recorded.inc_by(n);
        m.pending
            .set(i64::try_from(a.pending()).unwrap_or(i64::MAX));
        return Ok(usize::MAX);
    }
    tracing::warn!(?outcome, "RecordGrants not committed");
    let refused_on_chain = matches!(&outcome, Ok(c) if c.code != 0)
        || matches!(
            &outcome,
            Err(crate::content::submitter::SubmitError::Simulation { .. })
        );
    if refused_on_chain && only {
        let a2 = a.clone();
        tokio::task::spawn_blocking(move || refuse(&a2, &seqs)).await??;
        return Ok(usize::MAX);
    }
    Ok(if refused_on_chain {
        (cap.min(seqs.len()) / 2).max(1)
    } else {
        cap
    })
}

/// Runs until `heights` closes: a round after each committed block while
/// deliveries are pending, and a sweep of expired nonces now and then.
pub async fn run(a: Arc<Access>, submitter: Arc<Submitter>, mut heights: watch::Receiver<u64>) {
    let mut cap = usize::MAX;
    while heights.changed().await.is_ok() {
        let h = *heights.borrow_and_update();
        if h.is_multiple_of(SWEEP_EVERY) {
            let a2 = a.clone();
            let now = crate::content::now_ms();
            let swept =
                tokio::task::spawn_blocking(move || a2.node.local.forget_expired_nonces(now)).await;
            if let Ok(Err(e)) = swept {
                tracing::warn!("forgetting expired access nonces: {e}");
            }
        }
        if a.pending() == 0 {
            continue;
        }
        match round(&a, &submitter, cap).await {
            Ok(next) => cap = next,
            Err(e) => tracing::warn!("recording grants: {e:#}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cid: u8, who: u8, territory: &str) -> PendingGrant {
        PendingGrant {
            cid: vec![cid; 36],
            consumer_pubkey: vec![who; 32],
            territory: territory.into(),
            ..PendingGrant::default()
        }
    }

    #[test]
    fn deliveries_coalesce_by_consumer_cid_and_territory_within_the_caps() {
        let rows = vec![
            (1, Ok(row(1, 1, "GB"))),
            (2, Ok(row(1, 1, "GB"))),
            (3, Ok(row(1, 2, "GB"))),
            (4, Err(crate::local::LocalError::corrupt(b"k", "bad"))),
            (5, Ok(row(1, 1, "DE"))),
            (6, Ok(row(1, 1, "GB"))),
            (7, Ok(row(2, 3, "GB"))),
        ];
        let b = coalesce(rows, 3, u64::MAX);
        let got: Vec<(u8, u32, Vec<u64>)> = b
            .entries
            .iter()
            .map(|e| (e.grant.consumer_pubkey[0], e.grant.count, e.seqs.clone()))
            .collect();
        assert_eq!(
            got,
            vec![(1, 3, vec![1, 2, 6]), (2, 1, vec![3]), (1, 1, vec![5])]
        );
        assert_eq!(b.refused, vec![4], "the row that does not decode");
        // row 7 waits for the next batch: nothing lost, nothing refused
        let small = coalesce(
            vec![(1, Ok(row(1, 1, "GB"))), (2, Ok(row(2, 2, "GB")))],
            10,
            100,
        );
        assert_eq!(
            small.entries.len(),
            1,
            "the byte budget holds the second back"
        );
    }
}
