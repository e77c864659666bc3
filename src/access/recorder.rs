//! Records this validator's deliveries on chain: after each committed
//! block, the pending grants (`local/access/pending/{seq}`) are coalesced by
//! (cid, consumer, territory, context) into one `RecordGrants` action with
//! counts and sent through the operator-key submitter, which waits for its
//! commit: at most one tx per block.
//!
//! **Each delivery is recorded once.** A batch names its range of sequence
//! numbers `[from, to)`, always a prefix of what is pending, and the chain
//! refuses (CONFLICT) a range that starts below the end of this validator's
//! last recorded one (`grant_seq/{validator}`). Each round first reads that
//! end from committed state and forgets the rows below it, so a batch that
//! committed unseen (a timeout, a crash before the rows were deleted) is
//! never counted twice.
//!
//! Before sending, each entry is checked as the chain will check it (form,
//! holder, access decision on the latest committed state). An entry the
//! chain would refuse (the policy changed since the delivery, or this
//! validator left the holder set) is refused here: counted
//! (`local/access/refused`, `stave_access_grant_refused_total`, the admin
//! status) and dropped. A batch refused on chain anyway is sent again with
//! half the entries, so a bad entry ends up alone and is refused.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::watch;

use super::Access;
use crate::content::submitter::SubmitError;
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
use crate::tx::{Action, Code};

/// Bytes of a tx left for everything but the entries (signature, nonce,
/// gas, proof of work, framing).
const TX_OVERHEAD: u64 = 4096;

/// Entries per batch: one `RecordGrant` uses about 0.9M gas
/// (docs/gas-per-action.md), so a batch stays near a tenth of the default
/// `max_block_gas` and never fills a block.
pub const MAX_ENTRIES: usize = 100;

/// Heights between two sweeps of expired request nonces.
const SWEEP_EVERY: u64 = 16;

/// One entry of the next batch: the coalesced deliveries and their rows.
#[derive(Debug)]
struct Entry {
    grant: RecordGrant,
    seqs: Vec<u64>,
}

/// The next batch, its range, and the rows to refuse now.
#[derive(Debug, Default)]
struct Batch {
    entries: Vec<Entry>,
    refused: Vec<u64>,
    /// `[from, to)`: the rows the batch covers (entries and refusals).
    from: u64,
    to: u64,
}

type Group = (Vec<u8>, Vec<u8>, String, Vec<(String, String)>, i32);

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
        g.use_type,
    )
}

/// Coalesces pending rows, in order, into at most `max` entries of at
/// most `max_bytes` in all; stops at the first row that does not fit, so a
/// batch always covers a prefix of the rows. Rows that do not decode are
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
        if batch.to == 0 {
            batch.from = seq;
        }
        let Ok(g) = row else {
            batch.refused.push(seq);
            batch.to = seq + 1;
            continue;
        };
        let key = group_of(&g);
        if let Some(&i) = index.get(&key) {
            if let Some(e) = batch.entries.get_mut(i) {
                e.grant.count = e.grant.count.saturating_add(1);
                e.seqs.push(seq);
            }
            batch.to = seq + 1;
            continue;
        }
        let size = (g.cid.len() + g.consumer_pubkey.len() + g.territory.len() + 16) as u64
            + g.context
                .iter()
                .map(|c| (c.key.len() + c.value.len() + 8) as u64)
                .sum::<u64>();
        if batch.entries.len() >= max || bytes + size > max_bytes {
            break;
        }
        bytes += size;
        batch.to = seq + 1;
        index.insert(key, batch.entries.len());
        batch.entries.push(Entry {
            grant: RecordGrant {
                cid: g.cid,
                consumer_pubkey: g.consumer_pubkey,
                territory: g.territory,
                context: g.context,
                count: 1,
                use_type: g.use_type,
            },
            seqs: vec![seq],
        });
    }
    batch
}

/// What every entry of a round is checked against, read once.
struct Recordable<'a> {
    view: &'a View<'a>,
    me: [u8; 32],
    /// Whether this validator is ACTIVE (else nothing is recordable).
    active: bool,
    /// The committed block time.
    now: u64,
    params: &'a crate::keyspaces::params::Params,
}

impl Recordable<'_> {
    /// Whether the chain would record `g` from this validator now.
    fn allows(&self, g: &RecordGrant) -> anyhow::Result<bool> {
        if !self.active || g.check_stateless(self.params).is_err() {
            return Ok(false);
        }
        let Some(upload) = self.view.upload(&g.cid)? else {
            return Ok(false);
        };
        if !upload
            .dek_holder_set
            .iter()
            .any(|k| k.as_slice() == self.me)
        {
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
            use_type: g.use_type,
            now: self.now,
            context,
        };
        Ok(access::decide_with(self.view, &req, CacheUse::Query)?.allowed())
    }
}

/// The next batch, at most `cap` entries, each checked again; first
/// forgets the rows the chain already recorded (below `grant_seq`).
fn prepare(a: &Access, cap: usize) -> anyhow::Result<Batch> {
    use crate::keyspaces::grants::GrantsRead;
    let view = a.node.chain.view();
    let params = view.params()?.unwrap_or_default();
    let me = a.node.me();
    let recorded = view.grant_seq(&me)?;
    let mut rows = a.node.local.pending_grants()?;
    let done: Vec<u64> = rows
        .iter()
        .map(|(s, _)| *s)
        .filter(|s| *s < recorded)
        .collect();
    if !done.is_empty() {
        a.node.local.remove_pending(&done)?;
        a.settled(done.len() as u64);
        crate::metrics::metrics()
            .access
            .recorded
            .inc_by(done.len() as u64);
        rows.retain(|(s, _)| *s >= recorded);
    }
    let max = (params.rights.max_grants_per_validator_per_block as usize)
        .min(MAX_ENTRIES)
        .min(cap);
    let max_bytes = params.max_tx_bytes.saturating_sub(TX_OVERHEAD);
    let mut batch = coalesce(rows, max, max_bytes);
    let check = Recordable {
        view: &view,
        me,
        active: view.is_active_validator(&me)?,
        now: block_secs(view.commit_info()?.block_time_ns()?),
        params: &params,
    };
    let mut kept = Vec::with_capacity(batch.entries.len());
    for e in std::mem::take(&mut batch.entries) {
        if check.allows(&e.grant)? {
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
    tracing::warn!(
        deliveries = seqs.len(),
        "the chain would refuse these deliveries' grants: counted as refused"
    );
    Ok(())
}

/// How a batch's tx ended.
enum Sent {
    /// Committed with code 0.
    Recorded,
    /// Refused by the chain for what it carries (simulation, CheckTx or
    /// FinalizeBlock).
    Refused,
    /// Over the gas a tx may use: fewer entries next time.
    TooBig,
    /// Unknown: not committed in time, CometBFT down, the nonce spent, or
    /// a refusal that says nothing about the entries (CONFLICT: part of
    /// the range was recorded by an earlier tx; mempool, readiness or gas
    /// limits). The next round reads `grant_seq`, forgets what was
    /// recorded, and sends the rest.
    Unknown,
}

/// Codes that say nothing about the entries themselves.
fn transient(code: u32) -> bool {
    [
        Code::Conflict,
        Code::Nonce,
        Code::MempoolPolicy,
        Code::NotReady,
    ]
    .iter()
    .any(|c| c.value() == code)
}

/// Codes of a tx over the gas it may use.
fn too_big(code: u32) -> bool {
    [Code::OutOfGas, Code::GasLimit, Code::BlockGasExceeded]
        .iter()
        .any(|c| c.value() == code)
}

fn by_code(code: u32) -> Sent {
    match code {
        0 => Sent::Recorded,
        c if too_big(c) => Sent::TooBig,
        c if transient(c) => Sent::Unknown,
        _ => Sent::Refused,
    }
}

fn sent(outcome: &Result<crate::client::CommittedTx, SubmitError>) -> Sent {
    match outcome {
        Ok(c) => by_code(c.code),
        Err(SubmitError::Simulation { code, .. } | SubmitError::Refused { code, .. }) => {
            by_code(*code)
        }
        Err(_) => Sent::Unknown,
    }
}

async fn blocking(f: impl FnOnce() -> anyhow::Result<()> + Send + 'static) -> anyhow::Result<()> {
    tokio::task::spawn_blocking(f).await?
}

/// One round; returns the entry cap for the next (halved after a batch
/// the chain refused, reset after one it took).
async fn round(a: &Arc<Access>, submitter: &Submitter, cap: usize) -> anyhow::Result<usize> {
    let b = {
        let a = a.clone();
        tokio::task::spawn_blocking(move || prepare(&a, cap)).await??
    };
    let (a2, refused) = (a.clone(), b.refused);
    blocking(move || refuse(&a2, &refused)).await?;
    if b.entries.is_empty() {
        return Ok(usize::MAX);
    }
    let seqs: Vec<u64> = b
        .entries
        .iter()
        .flat_map(|e| e.seqs.iter().copied())
        .collect();
    let entries = b.entries.len();
    let action = Action::RecordGrants(RecordGrants {
        grants: b.entries.into_iter().map(|e| e.grant).collect(),
        from: b.from,
        to: b.to,
    });
    let outcome = submitter.submit(vec![action]).await;
    match sent(&outcome) {
        Sent::Recorded => {
            let (a2, n) = (a.clone(), seqs.len() as u64);
            blocking(move || Ok(a2.node.local.remove_pending(&seqs)?)).await?;
            a.settled(n);
            let m = &crate::metrics::metrics().access;
            m.recorded.inc_by(n);
            Ok(usize::MAX)
        }
        Sent::Refused | Sent::TooBig if entries == 1 => {
            tracing::warn!(
                ?outcome,
                "RecordGrants refused for one entry: counted as refused"
            );
            let a2 = a.clone();
            blocking(move || refuse(&a2, &seqs)).await?;
            Ok(usize::MAX)
        }
        Sent::Refused | Sent::TooBig => {
            tracing::warn!(?outcome, entries, "RecordGrants refused: halving the batch");
            Ok((entries / 2).max(1))
        }
        Sent::Unknown => {
            tracing::info!(?outcome, "RecordGrants not seen committed yet");
            Ok(cap)
        }
    }
}

/// Runs until `heights` closes: a round after each committed block while
/// deliveries are pending, and a sweep of expired nonces every
/// [`SWEEP_EVERY`] heights.
pub async fn run(a: Arc<Access>, submitter: Arc<Submitter>, mut heights: watch::Receiver<u64>) {
    let mut cap = usize::MAX;
    let mut swept = 0u64;
    while heights.changed().await.is_ok() {
        let h = *heights.borrow_and_update();
        if h >= swept.saturating_add(SWEEP_EVERY) {
            swept = h;
            let a2 = a.clone();
            let now = crate::content::now_ms();
            let r =
                blocking(move || Ok(a2.node.local.forget_expired_nonces(now).map(|_| ())?)).await;
            if let Err(e) = r {
                tracing::warn!("forgetting expired access nonces: {e:#}");
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
    fn deliveries_coalesce_by_consumer_cid_and_territory_into_a_prefix() {
        let rows = vec![
            (1, Ok(row(1, 1, "GB"))),
            (2, Ok(row(1, 1, "GB"))),
            (3, Ok(row(1, 2, "GB"))),
            (4, Err(crate::local::LocalError::corrupt(b"k", "bad"))),
            (5, Ok(row(1, 1, "DE"))),
            (6, Ok(row(1, 1, "GB"))),
            (7, Ok(row(2, 3, "GB"))),
            (8, Ok(row(1, 1, "GB"))),
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
        // row 7 does not fit: the batch ends before it (row 8 waits too)
        assert_eq!((b.from, b.to), (1, 7));
        let small = coalesce(
            vec![(1, Ok(row(1, 1, "GB"))), (2, Ok(row(2, 2, "GB")))],
            10,
            100,
        );
        assert_eq!(
            (small.entries.len(), small.from, small.to),
            (1, 1, 2),
            "the byte budget"
        );
    }
}
