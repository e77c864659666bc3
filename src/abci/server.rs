//! The ABCI socket server. CometBFT opens four connections (consensus,
//! mempool, query, snapshot); each gets its own OS thread. The thread reads
//! whatever requests have arrived, answers them in order and sends all the
//! answers with one write before it reads again.
//!
//! CheckTx runs on the mempool connection's thread itself: a run of
//! consecutive CheckTx requests is checked as one batch
//! ([`mempool::answer_batch`]). There is no hop to another thread, no task
//! wake-up and no write per response, which is where tower-abci's server
//! spent its time under load (BENCHMARKS.md (b), "A thread per ABCI
//! connection"). The other requests go to the same tower services as before.
//!
//! This replaces tower-abci's server, which BRIEF §2 names, as the default;
//! `[abci] server = "tower"` still selects it. The request and response
//! types and the services stay tower-abci's `v038` ones.
//!
//! # Invariants
//! - Answers go out in request order; nothing read is left unanswered when
//!   the thread blocks reading again, so CometBFT never waits on a Flush.
//! - A broken frame or a service error closes that connection. CometBFT v0.38
//!   then exits (and replays after a restart); Stave itself goes on serving.
//! - A panic while checking txs refuses that batch (NOT_READY); it never
//!   closes the mempool connection.

use std::io::{Read, Write};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use prost::Message;
use tendermint::abci::MethodKind;
use tendermint::v0_38::abci::{Request, Response};
use tendermint_proto::v0_38::abci as pb;
use tower::{Service, ServiceExt};
use tower_abci::BoxError;

use super::frame::{next_frame, put_frame, FrameError};
use super::mempool::{answer_batch, internal_error, MAX_BATCH};
use super::{consensus::Consensus, info::InfoService, snapshot::SnapshotService};
use crate::app::{CheckKind, Mempool};

/// Bytes read from the socket at a time.
const READ_CHUNK: usize = 64 << 10;

/// Why a connection was closed.
#[derive(Debug, thiserror::Error)]
pub enum ConnError {
    #[error("socket: {0}")]
    Io(#[from] std::io::Error),
    #[error("framing: {0}")]
    Frame(#[from] FrameError),
    #[error("undecodable request ({len} bytes): {source}")]
    Decode {
        len: usize,
        source: prost::DecodeError,
    },
    #[error("invalid request: {0}")]
    Request(#[from] tendermint::Error),
    #[error("CheckTx type {0} is neither New (0) nor Recheck (1)")]
    CheckTxType(i32),
    #[error("{kind} service failed: {source}")]
    Service {
        kind: &'static str,
        source: BoxError,
    },
}

/// Buffers above this are given back after use (a large FinalizeBlock
/// must not pin its peak memory for the connection's life).
const KEEP_BUFFER: usize = 4 << 20;

/// What answers the requests of every connection.
#[derive(Clone)]
pub struct Handlers {
    pub consensus: Consensus,
    pub mempool: Arc<Mempool>,
    /// Held while a CheckTx batch runs: admission reads then updates the
    /// pending nonces, so two connections checking at once (CometBFT has
    /// one mempool connection, but a reconnect can overlap) must not
    /// interleave. Uncontended in normal running.
    pub checktx: Arc<parking_lot::Mutex<()>>,
    pub info: InfoService,
    pub snapshot: SnapshotService,
    /// The runtime the tower services' futures run on.
    pub runtime: tokio::runtime::Handle,
}

impl Handlers {
    /// Handlers over `app`; starts the consensus actor thread.
    pub fn new(app: crate::app::App, runtime: tokio::runtime::Handle) -> Self {
        Handlers {
            info: InfoService {
                store: app.store().clone(),
            },
            mempool: app.mempool(),
            checktx: Arc::default(),
            snapshot: SnapshotService::new(app.snapshot_files(), app.restorer()),
            consensus: Consensus::spawn(app),
            runtime,
        }
    }
}

/// Serves one connection until CometBFT closes it or it breaks.
pub fn run_connection<S: Read + Write>(mut sock: S, h: &Handlers) -> Result<(), ConnError> {
    let mut chunk = vec![0u8; READ_CHUNK];
    let mut inbuf = BytesMut::with_capacity(READ_CHUNK);
    let mut out = Vec::with_capacity(READ_CHUNK);
    // A connection that sends CheckTx is a CometBFT mempool's; a new one
    // means a new, empty mempool (CometBFT restarted beside a running Stave),
    // so the pending nonces of the old one are forgotten (review m7).
    let mut fresh_mempool = true;
    loop {
        let n = match sock.read(&mut chunk) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            r => r?,
        };
        if n == 0 {
            return Ok(());
        }
        inbuf.extend_from_slice(chunk.get(..n).unwrap_or_default());
        let mut reqs = Vec::new();
        while let Some(body) = next_frame(&mut inbuf)? {
            let len = body.len();
            reqs.push(
                pb::Request::decode(body).map_err(|source| ConnError::Decode { len, source })?,
            );
        }
        let answered = answer_all(reqs, h, &mut fresh_mempool, &mut out);
        if !out.is_empty() {
            sock.write_all(&out)?;
            out.clear();
        }
        answered?;
        if out.capacity() > KEEP_BUFFER {
            out.shrink_to(READ_CHUNK);
        }
        if inbuf.is_empty() && inbuf.capacity() > KEEP_BUFFER {
            inbuf = BytesMut::with_capacity(READ_CHUNK);
        }
    }
}

/// Answers `reqs` in order into `out`, batching each run of CheckTx.
fn answer_all(
    reqs: Vec<pb::Request>,
    h: &Handlers,
    fresh_mempool: &mut bool,
    out: &mut Vec<u8>,
) -> Result<(), ConnError> {
    let mut checks = Checks {
        txs: Vec::new(),
        fresh_mempool,
    };
    for req in reqs {
        match req.value {
            Some(pb::request::Value::CheckTx(c)) => {
                checks.txs.push((c.tx, check_kind(c.r#type)?));
                if checks.txs.len() == MAX_BATCH {
                    answer_checks(h, &mut checks, out);
                }
            }
            value => {
                answer_checks(h, &mut checks, out);
                put_frame(&answer_one(h, pb::Request { value })?, out);
            }
        }
    }
    answer_checks(h, &mut checks, out);
    Ok(())
}

fn check_kind(t: i32) -> Result<CheckKind, ConnError> {
    match pb::CheckTxType::try_from(t) {
        Ok(pb::CheckTxType::New) => Ok(CheckKind::New),
        Ok(pb::CheckTxType::Recheck) => Ok(CheckKind::Recheck),
        Err(_) => Err(ConnError::CheckTxType(t)),
    }
}

/// A run of CheckTx waiting to be answered, and whether its connection has
/// checked anything before.
struct Checks<'a> {
    txs: Vec<(Bytes, CheckKind)>,
    fresh_mempool: &'a mut bool,
}

fn answer_checks(h: &Handlers, checks: &mut Checks<'_>, out: &mut Vec<u8>) {
    if checks.txs.is_empty() {
        return;
    }
    let items: Vec<(&[u8], CheckKind)> = checks.txs.iter().map(|(t, k)| (t.as_ref(), *k)).collect();
    let answers = {
        let _serial = h.checktx.lock();
        if std::mem::take(checks.fresh_mempool) {
            h.mempool.reset();
        }
        answer_batch(&h.mempool, &items) // a panic inside refuses the batch
    };
    for answer in answers {
        let resp = pb::Response {
            value: Some(pb::response::Value::CheckTx(answer.into())),
        };
        put_frame(&resp, out);
    }
    checks.txs.clear();
}

/// Any request other than CheckTx, through its tower service.
fn answer_one(h: &Handlers, req: pb::Request) -> Result<pb::Response, ConnError> {
    let req = Request::try_from(req)?;
    let resp: Response = match req.kind() {
        MethodKind::Flush => Response::Flush,
        MethodKind::Consensus => call(h, "consensus", h.consensus.clone(), req.try_into()?)?.into(),
        MethodKind::Info => call(h, "info", h.info.clone(), req.try_into()?)?.into(),
        MethodKind::Snapshot => call(h, "snapshot", h.snapshot.clone(), req.try_into()?)?.into(),
        // answer_all batches every CheckTx before it gets here.
        MethodKind::Mempool => Response::CheckTx(internal_error()),
    };
    Ok(resp.into())
}

fn call<S, R>(h: &Handlers, kind: &'static str, svc: S, req: R) -> Result<S::Response, ConnError>
where
    S: Service<R, Error = BoxError>,
{
    h.runtime
        .block_on(svc.oneshot(req))
        .map_err(|source| ConnError::Service { kind, source })
}
