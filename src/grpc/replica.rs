//! `stave.peer.v1.ReplicaService`: the answering side of UEP-20
//! anti-entropy ([`crate::replica`]), on the peer listener. Every request
//! is a `SignedPeerRequest` from an ACTIVE validator
//! ([`crate::local::peer_auth::check`]); bad records are refused one by
//! one and counted, a malformed request is `INVALID_ARGUMENT`, and UPDATEs
//! past the per-peer rate are `RESOURCE_EXHAUSTED`.

// tonic's `Status` is large; it is the error type tonic's handlers return.
#![allow(clippy::result_large_err)]

use std::collections::BTreeMap;
use std::sync::Arc;

use governor::{DefaultKeyedRateLimiter, RateLimiter};
use prost::Message;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::slots::{Full, StreamSlots};
use crate::local::node::{active_validator, name_in, requester_name};
use crate::local::peer_auth::{check, now_ms, PeerError};
use crate::local::peer_client::{deadline, IDLE};
use crate::net::rate::quota;
use crate::proto::peer::peer_request::Body;
use crate::proto::peer::replica_service_server::ReplicaService;
use crate::proto::peer::SignedPeerRequest;
use crate::proto::replica as pb;
use crate::replica::accept::{check_meta, Refusal};
use crate::replica::store::Summary;
use crate::replica::Replica;

/// The largest request the service decodes.
pub const MAX_REQUEST_BYTES: usize = 1 << 20;
/// Records in one UPDATE.
pub const MAX_UPDATE: usize = 1_000;
/// Prefixes in one CRC_DIFF.
pub const MAX_QUERIES: usize = 64;
/// Records a SYNC lists as held (the asker SYNCs at 16 or fewer).
pub const MAX_HAVE: usize = 64;
/// Records in one SYNC answer, over all its prefixes.
pub const SYNC_PAGE: usize = 1_000;
/// Prefixes in one SYNC.
pub const MAX_SYNC_PREFIXES: usize = 256;
/// Hashes in one GetValues.
pub const MAX_HASHES: usize = 1_024;
/// Value bytes one GetValues streams at most (the asker asks again).
pub const MAX_STREAM_BYTES: u64 = 64 << 20;
/// A value larger than this streams in pieces of this size.
pub const PIECE: usize = 1 << 20;

/// GetValues streams served at once (each holds a blocking thread).
pub const MAX_VALUE_STREAMS: usize = 8;
/// GetValues streams served to one peer at once.
pub const MAX_VALUE_STREAMS_PER_PEER: usize = 2;

pub struct ReplicaServiceImpl {
    replica: Arc<Replica>,
    updates: Arc<DefaultKeyedRateLimiter<[u8; 32]>>,
    /// CrcDiff and Sync calls, per peer.
    rounds: Arc<DefaultKeyedRateLimiter<[u8; 32]>>,
    streams: StreamSlots,
}

impl ReplicaServiceImpl {
    pub fn new(replica: Arc<Replica>) -> Self {
        let c = &replica.config;
        let updates = quota(c.update_per_sec, c.update_burst);
        let rounds = quota(c.round_calls_per_sec, c.round_calls_burst);
        ReplicaServiceImpl {
            replica,
            updates: Arc::new(RateLimiter::keyed(updates)),
            rounds: Arc::new(RateLimiter::keyed(rounds)),
            streams: StreamSlots::new(MAX_VALUE_STREAMS, MAX_VALUE_STREAMS_PER_PEER),
        }
    }
}

fn bad(msg: impl Into<String>) -> Status {
    Status::invalid_argument(msg.into())
}

fn refuse(e: PeerError) -> Status {
    tracing::info!(code = e.code().value(), error = %e, "replica request refused");
    e.to_status()
}

/// The request's body and requester: signed, for this node and chain,
/// fresh, by an ACTIVE validator.
fn authenticate(r: &Replica, signed: &SignedPeerRequest) -> Result<(Body, [u8; 32]), Status> {
    let view = r.chain.view();
    let chain_id = view
        .commit_info()
        .map_err(|e| Status::internal(e.to_string()))?
        .chain_id;
    let internal = |e: crate::store::StoreError| Status::internal(e.to_string());
    let me = name_in(&view, &r.key()).map_err(internal)?;
    let (req, key) = check(signed, &chain_id, &me, now_ms()).map_err(refuse)?;
    let not_validator = || {
        refuse(PeerError::NotValidator {
            requester: hex::encode(key),
        })
    };
    let who = requester_name(&view, &key)
        .map_err(internal)?
        .ok_or_else(not_validator)?;
    let active = active_validator(&view, &who).map_err(|e| Status::internal(e.to_string()))?;
    if active.is_none() {
        return Err(not_validator());
    }
    let body = req.body.ok_or_else(|| bad("request has no body"))?;
    Ok((body, who))
}

fn prefix_ok(p: &[u8]) -> Result<(), Status> {
    if p.len() > 32 {
        return Err(bad(format!("prefix of {} bytes; at most 32", p.len())));
    }
    Ok(())
}

fn update(r: &Replica, who: [u8; 32], u: pb::ReplicaUpdate) -> Result<pb::UpdateResponse, Status> {
    if u.records.len() > MAX_UPDATE {
        return Err(bad(format!(
            "{} records; at most {MAX_UPDATE}",
            u.records.len()
        )));
    }
    let chain_id = r.chain_id().map_err(|e| Status::internal(e.to_string()))?;
    let v = r
        .validators()
        .map_err(|e| Status::internal(e.to_string()))?;
    let ctx = r
        .ctx(&chain_id, &v, now_ms())
        .map_err(|e| Status::internal(e.to_string()))?;
    let mut resp = pb::UpdateResponse::default();
    for m in &u.records {
        match check_meta(m, &ctx) {
            Err(why) => {
                why.count();
                resp.refused += 1;
            }
            Ok(c) => {
                let held = r
                    .records
                    .get(&c.datakey)
                    .map_err(|e| Status::internal(e.to_string()))?;
                if held.as_ref().is_some_and(|h| h.owner != c.owner) {
                    // the held record's datakey is its owner's: this one
                    // cannot be
                    Refusal::Mismatch.count();
                    resp.refused += 1;
                } else if held.is_some_and(|h| !c.md.newer_than(&h.md)) {
                    resp.known += 1;
                } else {
                    resp.accepted += 1;
                    r.queues.want(c, who);
                }
            }
        }
    }
    r.stats.with(who, |s| {
        s.records_received += u.records.len() as u64;
        s.refused += u64::from(resp.refused);
    });
    Ok(resp)
}

fn crc_diff(r: &Replica, q: pb::ReplicaCrcDiff) -> Result<pb::CrcDiffResponse, Status> {
    if q.queries.len() > MAX_QUERIES {
        return Err(bad(format!(
            "{} prefixes; at most {MAX_QUERIES}",
            q.queries.len()
        )));
    }
    let mut answers = Vec::with_capacity(q.queries.len());
    for query in q.queries {
        prefix_ok(&query.prefix)?;
        let theirs = Summary {
            crc: query.crc,
            count: query.count,
        };
        let (s, kids) = r.records.crc_answer(&query.prefix, theirs);
        let mut a = pb::CrcAnswer {
            prefix: query.prefix,
            crc: s.crc,
            count: s.count,
            ..Default::default()
        };
        for (i, c) in kids {
            a.child_index.push(u32::from(i));
            a.child_crc.push(c.crc);
            a.child_count.push(c.count);
        }
        answers.push(a);
    }
    Ok(pb::CrcDiffResponse { answers })
}

/// One prefix's page, at most `budget` records scanned, and how many were.
fn sync_page(
    r: &Replica,
    q: pb::SyncPrefix,
    budget: usize,
) -> Result<(pb::SyncPage, usize), Status> {
    prefix_ok(&q.prefix)?;
    if q.have.len() > MAX_HAVE {
        return Err(bad(format!(
            "{} held records listed; at most {MAX_HAVE}",
            q.have.len()
        )));
    }
    let after: Option<[u8; 32]> = match q.start_after.len() {
        0 => None,
        _ => Some(
            q.start_after
                .as_slice()
                .try_into()
                .map_err(|_| bad("start_after is not a 32-byte datakey"))?,
        ),
    };
    let have: BTreeMap<&[u8], u32> = q
        .have
        .iter()
        .map(|m| (m.datakey.as_slice(), m.crc))
        .collect();
    let (rows, more) = r
        .records
        .scan(&q.prefix, after.as_ref(), budget)
        .map_err(|e| Status::internal(e.to_string()))?;
    let scanned = rows.len();
    let next_after = match (more, rows.last()) {
        (true, Some((dk, _))) => dk.to_vec(),
        _ => Vec::new(),
    };
    let records = rows
        .into_iter()
        .filter(|(dk, h)| have.get(dk.as_slice()) != Some(&h.md.crc()))
        .map(|(dk, h)| pb::RecordMeta {
            owner: h.owner.to_vec(),
            datakey: dk.to_vec(),
            metadata: h.md.to_bytes().to_vec(),
        })
        .collect();
    let page = pb::SyncPage {
        prefix: q.prefix,
        records,
        next_after,
    };
    Ok((page, scanned))
}

fn sync(r: &Replica, q: pb::ReplicaSync) -> Result<pb::SyncResponse, Status> {
    if q.prefixes.len() > MAX_SYNC_PREFIXES {
        return Err(bad(format!(
            "{} prefixes; at most {MAX_SYNC_PREFIXES}",
            q.prefixes.len()
        )));
    }
    let mut pages = Vec::new();
    let mut left = SYNC_PAGE;
    for p in q.prefixes {
        if left == 0 {
            break;
        }
        let (page, scanned) = sync_page(r, p, left)?;
        // the rows scanned count, answered or not, so a call's work is
        // bounded (an empty prefix counts one)
        left = left.saturating_sub(scanned.max(1));
        pages.push(page);
    }
    Ok(pb::SyncResponse { pages })
}

/// Streams the values of `hashes` this node holds, in pieces, until they
/// end, the reader goes, a piece waits [`IDLE`] for the reader, or the
/// reader falls below the minimum rate ([`deadline`] of what was sent): a
/// slow reader cannot hold a stream slot for long.
fn send_values(
    r: Arc<Replica>,
    who: [u8; 32],
    hashes: Vec<[u8; 32]>,
    tx: tokio::sync::mpsc::Sender<Result<pb::ValueChunk, Status>>,
    rt: tokio::runtime::Handle,
) {
    let mut sent = 0u64;
    let started = std::time::Instant::now();
    for h in hashes {
        let value = match r.records.value(&h) {
            Ok(Some(v)) => v,
            Ok(None) => continue,
            Err(e) => {
                let _ = rt.block_on(tx.send_timeout(Err(Status::internal(e.to_string())), IDLE));
                return;
            }
        };
        if sent >= MAX_STREAM_BYTES {
            return;
        }
        sent += value.len() as u64;
        let size = value.len() as u32;
        let mut offset = 0usize;
        loop {
            let end = (offset + PIECE).min(value.len());
            let c = pb::ValueChunk {
                hash: h.to_vec(),
                offset: offset as u64,
                size,
                data: value.get(offset..end).unwrap_or_default().to_vec(),
            };
            r.stats.bytes(who, c.encoded_len(), 0);
            if rt.block_on(tx.send_timeout(Ok(c), IDLE)).is_err() {
                return;
            }
            if started.elapsed() > deadline(sent) {
                let slow = Status::deadline_exceeded("reading below the minimum rate");
                let _ = rt.block_on(tx.send_timeout(Err(slow), IDLE));
                return;
            }
            offset = end;
            if offset >= value.len() {
                break;
            }
        }
    }
}

/// Refuses (`RESOURCE_EXHAUSTED`) a call of `what` past `who`'s rate; a
/// `flood` refused so (UPDATE) is counted (`reason="rate"`), a round call
/// only as throttled: an honest asker paces itself and retries.
fn limited(
    limiter: &DefaultKeyedRateLimiter<[u8; 32]>,
    r: &Replica,
    who: [u8; 32],
    (what, flood): (&str, bool),
) -> Result<(), Status> {
    if limiter.check_key(&who).is_ok() {
        return Ok(());
    }
    if flood {
        Refusal::Rate.count();
        r.stats.with(who, |s| s.refused += 1);
    } else {
        crate::metrics::metrics().replica.throttled.inc();
        tracing::debug!(peer = %hex::encode(who), what, "round call throttled");
    }
    Err(Status::resource_exhausted(format!(
        "too many {what} calls from this peer; slow down"
    )))
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Status> + Send + 'static,
) -> Result<T, Status> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Status::internal(e.to_string()))?
}

impl ReplicaServiceImpl {
    /// Authenticates, runs `f` on the blocking pool, counts the bytes.
    async fn unary<T: Message + Send + 'static>(
        &self,
        signed: SignedPeerRequest,
        f: impl FnOnce(&Replica, [u8; 32], Body) -> Result<T, Status> + Send + 'static,
    ) -> Result<Response<T>, Status> {
        let r = self.replica.clone();
        let resp = blocking(move || {
            let (body, who) = authenticate(&r, &signed)?;
            let out = f(&r, who, body)?;
            r.stats.bytes(who, out.encoded_len(), signed.encoded_len());
            Ok(out)
        })
        .await?;
        Ok(Response::new(resp))
    }
}

#[tonic::async_trait]
impl ReplicaService for ReplicaServiceImpl {
    async fn update(
        &self,
        request: Request<SignedPeerRequest>,
    ) -> Result<Response<pb::UpdateResponse>, Status> {
        let limiter = self.updates.clone();
        self.unary(request.into_inner(), move |r, who, body| {
            let Body::ReplicaUpdate(u) = body else {
                return Err(bad("Update carries another body"));
            };
            limited(&limiter, r, who, ("UPDATE", true))?;
            update(r, who, u)
        })
        .await
    }

    async fn crc_diff(
        &self,
        request: Request<SignedPeerRequest>,
    ) -> Result<Response<pb::CrcDiffResponse>, Status> {
        let limiter = self.rounds.clone();
        self.unary(request.into_inner(), move |r, who, body| {
            let Body::ReplicaCrcDiff(q) = body else {
                return Err(bad("CrcDiff carries another body"));
            };
            limited(&limiter, r, who, ("CrcDiff", false))?;
            crc_diff(r, q)
        })
        .await
    }

    async fn sync(
        &self,
        request: Request<SignedPeerRequest>,
    ) -> Result<Response<pb::SyncResponse>, Status> {
        let limiter = self.rounds.clone();
        self.unary(request.into_inner(), move |r, who, body| {
            let Body::ReplicaSync(q) = body else {
                return Err(bad("Sync carries another body"));
            };
            limited(&limiter, r, who, ("Sync", false))?;
            sync(r, q)
        })
        .await
    }

    type GetValuesStream = ReceiverStream<Result<pb::ValueChunk, Status>>;

    async fn get_values(
        &self,
        request: Request<SignedPeerRequest>,
    ) -> Result<Response<Self::GetValuesStream>, Status> {
        let r = self.replica.clone();
        let signed = request.into_inner();
        let (who, hashes) = blocking(move || {
            let (body, who) = authenticate(&r, &signed)?;
            let Body::ReplicaGetValues(g) = body else {
                return Err(bad("GetValues carries another body"));
            };
            if g.hashes.len() > MAX_HASHES {
                return Err(bad(format!(
                    "{} hashes; at most {MAX_HASHES}",
                    g.hashes.len()
                )));
            }
            let hashes = g
                .hashes
                .iter()
                .map(|h| <[u8; 32]>::try_from(h.as_slice()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| bad("a hash is not 32 bytes"))?;
            r.stats.bytes(who, 0, signed.encoded_len());
            Ok((who, hashes))
        })
        .await?;
        let slot = self.streams.take(who).map_err(|f| match f {
            Full::PerPeer(n) => Status::resource_exhausted(format!(
                "{n} value streams open from this peer; retry later"
            )),
            Full::All(_) => Status::resource_exhausted("too many value streams; retry later"),
        })?;
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        let (r, rt) = (self.replica.clone(), tokio::runtime::Handle::current());
        tokio::task::spawn_blocking(move || {
            let _held = slot;
            send_values(r, who, hashes, tx, rt)
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}
