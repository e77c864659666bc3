//! The asking side of anti-entropy, and the worker that runs it: rounds of
//! CRC_DIFF and SYNC with each ACTIVE peer in turn, UPDATE batches of what
//! this node wrote or accepted, and the values those need, pulled by hash
//! and checked before anything is kept.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use governor::{DefaultKeyedRateLimiter, RateLimiter};
use parking_lot::Mutex;
use prost::Message;
use tonic::transport::Channel;

use super::accept::{check_meta, check_value, Checked, Refusal, MAX_VALUE_BYTES};
use super::diff::{children_of, moves_on, step, Step};
use super::store::{Held, Put, Summary};
use super::{Replica, ReplicaError, Validators};
use crate::grpc::replica::{MAX_HASHES, MAX_HAVE, MAX_SYNC_PREFIXES};
use crate::local::peer_auth::now_ms;
use crate::local::peer_client::{deadline, endpoint, signed_request, PeerTarget, IDLE};
use crate::net::rate::quota;
use crate::proto::peer::peer_request::Body;
use crate::proto::peer::replica_service_client::ReplicaServiceClient;
use crate::proto::peer::SignedPeerRequest;
use crate::proto::replica as pb;
use rayon::prelude::*;

/// A prefix holding at most this many records on one side is SYNCed
/// rather than split further.
pub const SYNC_AT: u64 = 16;
/// The most value bytes one batch of records pulls and holds at once (a
/// value larger than this is pulled alone).
pub const KEEP_BATCH_BYTES: u64 = 64 << 20;
/// The longest one unary replica call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a round or a call failed.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error("peer {peer}: {reason}")]
    Remote { peer: String, reason: String },
    #[error("peer {peer} refused: {why}")]
    Refused { peer: String, why: Refusal },
    #[error("peer {peer} answered RESOURCE_EXHAUSTED: {reason}")]
    Throttled { peer: String, reason: String },
    #[error(transparent)]
    Local(#[from] ReplicaError),
}

/// What one round with a peer did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RoundStats {
    pub crc_queries: usize,
    pub syncs: usize,
    pub received: usize,
    pub accepted: usize,
}

/// Channels to peers, kept between calls (each reconnects by itself).
#[derive(Default)]
pub struct Channels {
    open: Mutex<BTreeMap<[u8; 32], (String, Channel)>>,
}

impl Channels {
    fn get(&self, t: &PeerTarget) -> Result<Channel, SyncError> {
        let mut open = self.open.lock();
        if let Some((addr, ch)) = open.get(&t.operator) {
            if *addr == t.address {
                return Ok(ch.clone());
            }
        }
        let ch = endpoint(t).map_err(|e| remote(t, e))?.connect_lazy();
        open.insert(t.operator, (t.address.clone(), ch.clone()));
        Ok(ch)
    }
}

fn remote(t: &PeerTarget, reason: impl std::fmt::Display) -> SyncError {
    SyncError::Remote {
        peer: hex::encode(t.operator),
        reason: reason.to_string(),
    }
}

/// One node's asking side.
pub struct Syncer {
    pub replica: Arc<Replica>,
    channels: Channels,
    /// Set while a sweep runs on the blocking pool.
    pub(super) sweeping: Arc<std::sync::atomic::AtomicBool>,
    /// Paces CrcDiff and Sync calls to each peer within the rate its
    /// service allows (`round_calls_per_sec`, half the burst), so a long
    /// round is slowed, never refused.
    pace: DefaultKeyedRateLimiter<[u8; 32]>,
}

/// Retries of a round call the peer throttled, the first after
/// [`THROTTLE_PAUSE`], each pause twice the last.
const THROTTLE_RETRIES: u32 = 5;
const THROTTLE_PAUSE: Duration = Duration::from_millis(500);

impl Syncer {
    pub fn new(replica: Arc<Replica>) -> Self {
        let c = &replica.config;
        let pace = quota(c.round_calls_per_sec, c.round_calls_burst / 2);
        Syncer {
            pace: RateLimiter::keyed(pace),
            replica,
            channels: Channels::default(),
            sweeping: Arc::default(),
        }
    }

    /// A CrcDiff or Sync call: paced, and retried when the peer throttles
    /// it anyway.
    async fn round_call<R: Message, F>(
        &self,
        chain_id: &str,
        t: &PeerTarget,
        body: Body,
        call: impl Fn(ReplicaServiceClient<Channel>, SignedPeerRequest) -> F,
    ) -> Result<R, SyncError>
    where
        F: std::future::Future<Output = Result<tonic::Response<R>, tonic::Status>>,
    {
        let mut pause = THROTTLE_PAUSE;
        let mut tries = 0;
        loop {
            self.pace.until_key_ready(&t.operator).await;
            match self.unary(chain_id, t, body.clone(), &call).await {
                Err(SyncError::Throttled { .. }) if tries < THROTTLE_RETRIES => {
                    tries += 1;
                    tokio::time::sleep(pause).await;
                    pause *= 2;
                }
                other => return other,
            }
        }
    }

    fn client(&self, t: &PeerTarget) -> Result<ReplicaServiceClient<Channel>, SyncError> {
        Ok(ReplicaServiceClient::new(self.channels.get(t)?).max_decoding_message_size(8 << 20))
    }

    fn signed(
        &self,
        chain_id: &str,
        t: &PeerTarget,
        body: Body,
    ) -> crate::proto::peer::SignedPeerRequest {
        signed_request(&self.replica.operator, chain_id, t, body)
    }

    /// One unary call to `t`: `body` signed, sent with `call`, within
    /// [`CALL_TIMEOUT`]; both messages' bytes counted.
    async fn unary<R: Message, F>(
        &self,
        chain_id: &str,
        t: &PeerTarget,
        body: Body,
        call: impl FnOnce(ReplicaServiceClient<Channel>, SignedPeerRequest) -> F,
    ) -> Result<R, SyncError>
    where
        F: std::future::Future<Output = Result<tonic::Response<R>, tonic::Status>>,
    {
        let req = self.signed(chain_id, t, body);
        let sent = req.encoded_len();
        let resp = tokio::time::timeout(CALL_TIMEOUT, call(self.client(t)?, req))
            .await
            .map_err(|_| remote(t, "the call timed out"))?
            .map_err(|s| match s.code() {
                tonic::Code::ResourceExhausted => SyncError::Throttled {
                    peer: hex::encode(t.operator),
                    reason: s.message().to_string(),
                },
                _ => remote(t, s.message()),
            })?
            .into_inner();
        self.replica
            .stats
            .bytes(t.operator, sent, resp.encoded_len());
        Ok(resp)
    }

    async fn crc_diff(
        &self,
        chain_id: &str,
        t: &PeerTarget,
        queries: Vec<pb::CrcQuery>,
    ) -> Result<Vec<pb::CrcAnswer>, SyncError> {
        let body = Body::ReplicaCrcDiff(pb::ReplicaCrcDiff { queries });
        let resp: pb::CrcDiffResponse = self
            .round_call(
                chain_id,
                t,
                body,
                |mut c, r| async move { c.crc_diff(r).await },
            )
            .await?;
        Ok(resp.answers)
    }

    async fn sync_page(
        &self,
        chain_id: &str,
        t: &PeerTarget,
        q: pb::ReplicaSync,
    ) -> Result<pb::SyncResponse, SyncError> {
        self.round_call(chain_id, t, Body::ReplicaSync(q), |mut c, r| async move {
            c.sync(r).await
        })
        .await
    }

    /// Sends one UPDATE batch.
    pub(super) async fn update(
        &self,
        chain_id: &str,
        t: &PeerTarget,
        records: Vec<pb::RecordMeta>,
    ) -> Result<pb::UpdateResponse, SyncError> {
        let body = Body::ReplicaUpdate(pb::ReplicaUpdate { records });
        self.unary(
            chain_id,
            t,
            body,
            |mut c, r| async move { c.update(r).await },
        )
        .await
    }

    /// The values of `hashes` `t` holds, whole; pieces that do not add up
    /// end the stream.
    async fn values(
        &self,
        chain_id: &str,
        t: &PeerTarget,
        hashes: Vec<[u8; 32]>,
    ) -> Result<BTreeMap<[u8; 32], Vec<u8>>, SyncError> {
        let asked: BTreeSet<[u8; 32]> = hashes.iter().copied().collect();
        let body = Body::ReplicaGetValues(pb::ReplicaGetValues {
            hashes: hashes.iter().map(|h| h.to_vec()).collect(),
        });
        let req = self.signed(chain_id, t, body);
        self.replica.stats.bytes(t.operator, req.encoded_len(), 0);
        let mut c = self.client(t)?;
        let mut s = tokio::time::timeout(CALL_TIMEOUT, c.get_values(req))
            .await
            .map_err(|_| remote(t, "GetValues timed out"))?
            .map_err(|st| remote(t, st.message()))?
            .into_inner();
        let mut out: BTreeMap<[u8; 32], Vec<u8>> = BTreeMap::new();
        let mut total = 0u64;
        let started = tokio::time::Instant::now();
        loop {
            if started.elapsed() > deadline(total) {
                return Err(remote(t, "GetValues fell below the minimum rate"));
            }
            let next = tokio::time::timeout(IDLE, s.message())
                .await
                .map_err(|_| remote(t, "GetValues went idle"))?
                .map_err(|st| remote(t, st.message()))?;
            let Some(piece) = next else { break };
            self.replica.stats.bytes(t.operator, 0, piece.encoded_len());
            let Ok(h) = <[u8; 32]>::try_from(piece.hash.as_slice()) else {
                break;
            };
            total += piece.data.len() as u64;
            if total > KEEP_BATCH_BYTES + crate::grpc::replica::PIECE as u64 {
                Refusal::Oversize.count();
                break;
            }
            let buf = out.entry(h).or_default();
            let fits = asked.contains(&h)
                && piece.size <= MAX_VALUE_BYTES
                && piece.offset == buf.len() as u64
                && buf.len() + piece.data.len() <= piece.size as usize;
            if !fits {
                Refusal::Oversize.count();
                out.remove(&h);
                break;
            }
            buf.extend_from_slice(&piece.data);
        }
        Ok(out)
    }
}

impl Syncer {
    /// One round with `t`: descends the CRC tree where it differs, SYNCs
    /// the small prefixes, pulls and keeps the newer records.
    pub async fn round(
        &self,
        chain_id: &str,
        v: &Validators,
        t: &PeerTarget,
    ) -> Result<RoundStats, SyncError> {
        let r = &self.replica;
        let mut st = RoundStats::default();
        let mut queries = vec![query(r, Vec::new())];
        let mut syncs: Vec<(Vec<u8>, bool)> = Vec::new();
        while !queries.is_empty() {
            let batch: Vec<_> = queries
                .drain(..queries.len().min(crate::grpc::replica::MAX_QUERIES))
                .collect();
            st.crc_queries += batch.len();
            let answers = self.crc_diff(chain_id, t, batch.clone()).await?;
            if answers.len() != batch.len() {
                return Err(self.refused(t, Refusal::Crc));
            }
            for (q, a) in batch.iter().zip(&answers) {
                let theirs = Summary {
                    crc: a.crc,
                    count: a.count,
                };
                let mine = Summary {
                    crc: q.crc,
                    count: q.count,
                };
                if a.prefix != q.prefix {
                    return Err(self.refused(t, Refusal::Crc));
                }
                // Children, when sent, must add up, whatever is done next.
                let kids = children_of(a).map_err(|why| self.refused(t, why))?;
                match step(mine, theirs) {
                    Step::Skip => continue,
                    Step::SyncAll => {
                        syncs.push((q.prefix.clone(), false));
                        continue;
                    }
                    Step::SyncHave => {
                        syncs.push((q.prefix.clone(), true));
                        continue;
                    }
                    Step::Split => {}
                }
                let local: BTreeMap<u8, Summary> =
                    r.records.children(&q.prefix).into_iter().collect();
                for (i, theirs) in kids {
                    let mine = local.get(&i).copied().unwrap_or_default();
                    let p = [q.prefix.as_slice(), &[i]].concat();
                    match step(mine, theirs) {
                        Step::Skip => {}
                        Step::SyncAll => syncs.push((p, false)),
                        Step::SyncHave => syncs.push((p, true)),
                        Step::Split => queries.push(query(r, p)),
                    }
                }
            }
        }
        st.syncs = syncs.len();
        let pending = syncs
            .into_iter()
            .map(|(prefix, list)| self.sync_query(prefix, list))
            .collect::<Result<VecDeque<_>, _>>()?;
        let (got, acc) = self.sync_all(chain_id, v, t, pending).await?;
        st.received = got;
        st.accepted = acc;
        Ok(st)
    }

    fn refused(&self, t: &PeerTarget, why: Refusal) -> SyncError {
        why.count();
        self.replica.stats.with(t.operator, |s| s.refused += 1);
        SyncError::Refused {
            peer: hex::encode(t.operator),
            why,
        }
    }

    /// The SYNC request of one prefix: with this node's records there as
    /// digests when `list`.
    fn sync_query(&self, prefix: Vec<u8>, list: bool) -> Result<pb::SyncPrefix, SyncError> {
        let have = if list {
            let (rows, _) = self
                .replica
                .records
                .scan(&prefix, None, MAX_HAVE)
                .map_err(ReplicaError::from)?;
            rows.into_iter()
                .map(|(dk, h)| pb::HeldDigest {
                    datakey: dk.to_vec(),
                    crc: h.md.crc(),
                })
                .collect()
        } else {
            Vec::new()
        };
        Ok(pb::SyncPrefix {
            prefix,
            have,
            start_after: Vec::new(),
        })
    }

    /// SYNCs the prefixes, up to [`MAX_SYNC_PREFIXES`] a request and every
    /// page of each, keeping what is newer after each answer. Returns the
    /// records received and kept.
    async fn sync_all(
        &self,
        chain_id: &str,
        v: &Validators,
        t: &PeerTarget,
        mut pending: VecDeque<pb::SyncPrefix>,
    ) -> Result<(usize, usize), SyncError> {
        let (mut received, mut accepted) = (0, 0);
        while !pending.is_empty() {
            let n = pending.len().min(MAX_SYNC_PREFIXES);
            let asked: Vec<pb::SyncPrefix> = pending.drain(..n).collect();
            let resp = self
                .sync_page(
                    chain_id,
                    t,
                    pb::ReplicaSync {
                        prefixes: asked.clone(),
                    },
                )
                .await?;
            if resp.pages.is_empty() || resp.pages.len() > asked.len() {
                return Err(remote(t, "SYNC answered no prefix"));
            }
            let mut records = Vec::new();
            for (q, page) in asked.iter().zip(&resp.pages) {
                if page.prefix != q.prefix {
                    return Err(remote(t, "SYNC pages out of order"));
                }
                if !page.next_after.is_empty() {
                    if !moves_on(q, &page.next_after) {
                        return Err(remote(t, "SYNC paged backwards or out of the prefix"));
                    }
                    pending.push_back(pb::SyncPrefix {
                        start_after: page.next_after.clone(),
                        ..q.clone()
                    });
                }
                records.extend(page.records.iter().cloned());
            }
            // prefixes the answer did not reach go again
            for q in asked.into_iter().skip(resp.pages.len()).rev() {
                pending.push_front(q);
            }
            received += records.len();
            accepted += self.take(chain_id, v, t, &records, false).await?;
        }
        Ok((received, accepted))
    }

    /// Checks `records` from `t`, pulls the values of the newer ones that
    /// are not held, checks and keeps them. `forward`: announce what was
    /// kept to every peer but `t` (UPDATEs are forwarded, SYNC answers
    /// not). Returns how many were kept.
    pub async fn take(
        &self,
        chain_id: &str,
        v: &Validators,
        t: &PeerTarget,
        records: &[pb::RecordMeta],
        forward: bool,
    ) -> Result<usize, SyncError> {
        let r = &self.replica;
        let ctx = r.ctx(chain_id, v, now_ms())?;
        // signatures are most of the cost: checked on every core
        let checked: Vec<Result<Checked, Refusal>> =
            records.par_iter().map(|m| check_meta(m, &ctx)).collect();
        let mut newer = Vec::new();
        let mut refused = 0u64;
        for c in checked {
            match c {
                Err(why) => {
                    why.count();
                    refused += 1;
                }
                Ok(c) => {
                    let held = r.records.get(&c.datakey).map_err(ReplicaError::from)?;
                    if held.is_none_or(|h| c.md.newer_than(&h.md)) {
                        newer.push(c);
                    }
                }
            }
        }
        let kept = self.keep(chain_id, t, newer).await?;
        r.stats.with(t.operator, |s| {
            s.records_received += records.len() as u64;
            s.refused += refused;
        });
        if forward {
            r.queues.announce(kept.iter().copied(), Some(t.operator));
        }
        Ok(kept.len())
    }

    /// Pulls the values `newer` needs from `t` (those not already held),
    /// checks each and stores the records, in batches of at most
    /// [`KEEP_BATCH_BYTES`] of values, so that what a peer may send is
    /// bounded in memory. Returns what was kept.
    pub async fn keep(
        &self,
        chain_id: &str,
        t: &PeerTarget,
        newer: Vec<Checked>,
    ) -> Result<Vec<Checked>, SyncError> {
        let mut kept = Vec::new();
        let mut batch = Vec::new();
        let mut bytes = 0u64;
        for c in newer {
            let size = u64::from(c.md.size);
            if !batch.is_empty() && (bytes + size > KEEP_BATCH_BYTES || batch.len() >= MAX_HASHES) {
                kept.extend(
                    self.keep_batch(chain_id, t, std::mem::take(&mut batch))
                        .await?,
                );
                bytes = 0;
            }
            bytes += size;
            batch.push(c);
        }
        if !batch.is_empty() {
            kept.extend(self.keep_batch(chain_id, t, batch).await?);
        }
        Ok(kept)
    }

    async fn keep_batch(
        &self,
        chain_id: &str,
        t: &PeerTarget,
        newer: Vec<Checked>,
    ) -> Result<Vec<Checked>, SyncError> {
        let r = &self.replica;
        let mut values: BTreeMap<[u8; 32], Vec<u8>> = BTreeMap::new();
        let mut missing = Vec::new();
        for c in &newer {
            match r.records.value(&c.md.hash).map_err(ReplicaError::from)? {
                Some(v) => {
                    values.insert(c.md.hash, v);
                }
                None => missing.push(c.md.hash),
            }
        }
        missing.sort();
        missing.dedup();
        let mut want = missing;
        while !want.is_empty() {
            let got = self.values(chain_id, t, want.clone()).await?;
            if got.is_empty() {
                break;
            }
            want.retain(|h| !got.contains_key(h));
            values.extend(got);
        }
        let mut puts = Vec::new();
        let mut refused = 0u64;
        let verdicts: Vec<_> = newer
            .par_iter()
            .filter_map(|c| values.get(&c.md.hash).map(|v| (*c, v, check_value(c, v))))
            .collect();
        for (c, value, verdict) in verdicts {
            match verdict {
                Err(why) => {
                    why.count();
                    refused += 1;
                }
                Ok(rv) => puts.push((
                    c,
                    Put {
                        datakey: c.datakey,
                        held: Held {
                            owner: c.owner,
                            md: c.md,
                            db: rv.db,
                            key: rv.key,
                        },
                        value: value.clone(),
                    },
                )),
            }
        }
        let bytes: BTreeMap<[u8; 32], u64> = puts
            .iter()
            .map(|(c, p)| (c.datakey, 128 + p.value.len() as u64))
            .collect();
        let checked: BTreeMap<[u8; 32], Checked> =
            puts.iter().map(|(c, _)| (c.datakey, *c)).collect();
        let stored = r
            .records
            .put(puts.into_iter().map(|(_, p)| p).collect())
            .map_err(ReplicaError::from)?;
        for _ in 0..stored.over_quota {
            Refusal::Quota.count();
        }
        refused += stored.over_quota as u64;
        let kept: Vec<Checked> = stored
            .keys
            .iter()
            .filter_map(|dk| checked.get(dk).copied())
            .collect();
        let kept_bytes: u64 = stored.keys.iter().filter_map(|dk| bytes.get(dk)).sum();
        crate::metrics::metrics()
            .replica
            .accepted
            .inc_by(kept.len() as u64);
        r.stats.with(t.operator, |s| {
            s.records_accepted += kept.len() as u64;
            s.bytes_accepted += kept_bytes;
            s.refused += refused;
        });
        r.publish_count();
        Ok(kept)
    }
}

fn query(r: &Replica, prefix: Vec<u8>) -> pb::CrcQuery {
    let s = r.records.summary(&prefix);
    pb::CrcQuery {
        prefix,
        crc: s.crc,
        count: s.count,
    }
}
