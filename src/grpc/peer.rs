//! The peer service: validator-to-validator gRPC, served on the address
//! genesis (and later validator records) names for each validator.
//!
//! Every request is checked by [`crate::local::peer_auth::check`] and the
//! requester must be an ACTIVE validator at the latest committed height.
//! - `FetchWrappedDek(cid)`: only for a requester in the cid's DEK holder
//!   set; this node unwraps its own copy and re-wraps it to the requester's
//!   X25519 key from its validator record.
//! - `FetchContent(cid)`: streams the encrypted blob in 256 KiB chunks,
//!   at most [`MAX_STREAMS`] at once.

use std::io::Read;
use std::sync::Arc;

use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use crate::crypto::wrap::{unwrap_dek, wrap_dek};
use crate::local::assignments::Assignment;
use crate::local::deks::{wrapped_of, DeksExt};
use crate::local::node::{active_validator, LocalNode};
use crate::local::peer_auth::{check, now_ms, PeerError};
use crate::proto::genesis::GenesisValidator;
use crate::proto::peer::peer_request::Body;
use crate::proto::peer::peer_service_server::PeerService;
use crate::proto::peer::{ContentChunk, SignedPeerRequest, WrappedDekResponse};

const CHUNK: usize = 256 * 1024;

/// Content streams served at once; each holds a blocking thread reading
/// the file, so more are refused with `PEER_BUSY` (the requester retries).
pub const MAX_STREAMS: usize = 8;

pub struct PeerServiceImpl {
    pub node: Arc<LocalNode>,
    streams: Arc<tokio::sync::Semaphore>,
}

impl PeerServiceImpl {
    pub fn new(node: Arc<LocalNode>) -> Self {
        PeerServiceImpl {
            node,
            streams: Arc::new(tokio::sync::Semaphore::new(MAX_STREAMS)),
        }
    }
}

struct Authed {
    body: Body,
    requester: [u8; 32],
    record: GenesisValidator,
    assignment: Option<Assignment>,
}

fn local(e: impl std::fmt::Display) -> PeerError {
    PeerError::Local(e.to_string())
}

/// Checks the request against the latest committed state; looks up the
/// assignment of `cid_of(body)` in the same view.
fn authenticate(node: &LocalNode, signed: &SignedPeerRequest) -> Result<Authed, PeerError> {
    let view = node.chain.view();
    let chain_id = view.commit_info().map_err(local)?.chain_id;
    let (req, requester) = check(signed, &chain_id, &node.me(), now_ms())?;
    let record = active_validator(&view, &requester)
        .map_err(local)?
        .ok_or_else(|| PeerError::NotValidator {
            requester: hex::encode(requester),
        })?;
    let body = req
        .body
        .ok_or_else(|| PeerError::Decode("request has no body".into()))?;
    let cid = match &body {
        Body::FetchWrappedDek(b) => &b.cid,
        Body::FetchContent(b) => &b.cid,
    };
    let assignment = node.assignments.by_cid(&view, cid).map_err(local)?;
    Ok(Authed {
        body,
        requester,
        record,
        assignment,
    })
}

fn rewrap(node: &LocalNode, a: Authed) -> Result<WrappedDekResponse, PeerError> {
    let Body::FetchWrappedDek(req) = a.body else {
        return Err(PeerError::Decode(
            "FetchWrappedDek carries another body".into(),
        ));
    };
    let cid = req.cid;
    let not_held = |reason: &str| PeerError::NotHeld {
        cid: hex::encode(&cid),
        reason: reason.into(),
    };
    let asg = a
        .assignment
        .filter(|x| x.dek_cid == cid)
        .ok_or_else(|| not_held("no upload has this DEK cid"))?;
    if !asg.dek_holder_set.contains(&a.requester) {
        return Err(PeerError::NotDekHolder {
            requester: hex::encode(a.requester),
            cid: hex::encode(&cid),
        });
    }
    let own = node
        .local
        .dek(&cid)
        .map_err(local)?
        .ok_or_else(|| not_held("this validator holds no wrapped DEK for it"))?;
    let raw = unwrap_dek(&node.x25519, &wrapped_of(&own).map_err(local)?, &cid).map_err(|e| {
        PeerError::DekUnwrap {
            cid: hex::encode(&cid),
            reason: e.to_string(),
        }
    })?;
    let to: [u8; 32] = a
        .record
        .x25519_key
        .as_slice()
        .try_into()
        .map_err(|_| local("requester's X25519 key is not 32 bytes"))?;
    let w = wrap_dek(&raw, &to, &cid).map_err(local)?;
    Ok(WrappedDekResponse {
        cid,
        ephemeral_pubkey: w.ephemeral_pubkey.to_vec(),
        wrapped_dek: w.ciphertext,
        source_validator: node.me().to_vec(),
    })
}

fn open_content(node: &LocalNode, a: Authed) -> Result<std::fs::File, PeerError> {
    let Body::FetchContent(req) = a.body else {
        return Err(PeerError::Decode(
            "FetchContent carries another body".into(),
        ));
    };
    let not_held = |reason: &str| PeerError::NotHeld {
        cid: hex::encode(&req.cid),
        reason: reason.into(),
    };
    a.assignment
        .filter(|x| x.content_cid == req.cid)
        .ok_or_else(|| not_held("no upload has this content cid"))?;
    std::fs::File::open(node.content.path_of(&req.cid))
        .map_err(|_| not_held("this validator does not hold the content"))
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, PeerError> + Send + 'static,
) -> Result<T, Status> {
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => {
            tracing::info!(code = e.code().value(), error = %e, "peer request refused");
            Err(e.to_status())
        }
        Err(e) => Err(Status::internal(e.to_string())),
    }
}

#[tonic::async_trait]
impl PeerService for PeerServiceImpl {
    async fn fetch_wrapped_dek(
        &self,
        request: Request<SignedPeerRequest>,
    ) -> Result<Response<WrappedDekResponse>, Status> {
        let node = self.node.clone();
        let signed = request.into_inner();
        blocking(move || rewrap(&node, authenticate(&node, &signed)?))
            .await
            .map(Response::new)
    }

    type FetchContentStream = ReceiverStream<Result<ContentChunk, Status>>;

    async fn fetch_content(
        &self,
        request: Request<SignedPeerRequest>,
    ) -> Result<Response<Self::FetchContentStream>, Status> {
        let node = self.node.clone();
        let signed = request.into_inner();
        let mut file = blocking(move || open_content(&node, authenticate(&node, &signed)?)).await?;
        let permit = self.streams.clone().try_acquire_owned().map_err(|_| {
            let e = PeerError::Busy { open: MAX_STREAMS };
            tracing::info!(code = e.code().value(), error = %e, "peer request refused");
            e.to_status()
        })?;
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let mut buf = vec![0u8; CHUNK];
            loop {
                let item = match file.read(&mut buf) {
                    Ok(0) => return,
                    Ok(n) => Ok(ContentChunk {
                        data: buf[..n].to_vec(),
                    }),
                    Err(e) => Err(Status::internal(format!("reading content: {e}"))),
                };
                let stop = item.is_err();
                if tx.blocking_send(item).is_err() || stop {
                    return;
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}
