//! The peer service: validator-to-validator gRPC, served on the address
//! genesis (and later validator records) names for each validator.
//!
//! Every request is checked by [`crate::local::peer_auth::check`] and the
//! requester must be an ACTIVE validator at the latest committed height.
//! - `FetchWrappedDek(cid)`: only for a requester in the cid's DEK holder
//!   set; this node unwraps its own copy and re-wraps it to the requester's
//!   X25519 key from its validator record.
//! - `HasContent(cid)`: a signed answer whether this node holds an
//!   upload's encrypted blob or image ([`crate::local::has_content`]).
//! - `FetchContent(cid)`: streams the encrypted blob or image in 256 KiB
//!   chunks,
//!   at most [`MAX_STREAMS`] at once and [`MAX_STREAMS_PER_PEER`] per
//!   requester. A stream whose reader takes no chunk for [`IDLE`], or that
//!   runs past [`deadline`] of the blob's size, is ended, so a peer that
//!   stops reading cannot hold a slot.

use std::io::Read;
use std::sync::Arc;
use std::time::Instant;

use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::slots::{Full, Slot, StreamSlots};
use crate::crypto::wrap::wrap_dek;
use crate::local::assignments::Assignment;
use crate::local::deks::{wrapped_of, DeksExt};
use crate::local::node::{active_validator, name_in, requester_name, LocalNode};
use crate::local::peer_auth::{check, now_ms, PeerError};
use crate::local::peer_client::{deadline, IDLE};
use crate::proto::genesis::GenesisValidator;
use crate::proto::peer::peer_request::Body;
use crate::proto::peer::peer_service_server::PeerService;
use crate::proto::peer::{ContentChunk, HasContentResponse, SignedPeerRequest, WrappedDekResponse};

const CHUNK: usize = 256 * 1024;

/// Content streams served at once; each holds a blocking thread reading
/// the file, so more are refused with `PEER_BUSY` (the requester retries).
pub const MAX_STREAMS: usize = 8;
/// Content streams one requester may hold at once.
pub const MAX_STREAMS_PER_PEER: usize = 2;
/// The largest signed peer request accepted (they are about 200 bytes).
pub const MAX_REQUEST_BYTES: usize = 4096;

pub struct PeerServiceImpl {
    pub node: Arc<LocalNode>,
    streams: StreamSlots,
}

impl PeerServiceImpl {
    pub fn new(node: Arc<LocalNode>) -> Self {
        PeerServiceImpl {
            node,
            streams: StreamSlots::new(MAX_STREAMS, MAX_STREAMS_PER_PEER),
        }
    }

    /// A slot for one stream of `requester`, or `PEER_BUSY`.
    fn slot(&self, requester: [u8; 32]) -> Result<Slot, PeerError> {
        self.streams.take(requester).map_err(|f| match f {
            Full::All(open) | Full::PerPeer(open) => PeerError::Busy { open },
        })
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
    let info = view.commit_info().map_err(local)?;
    let chain_id = info.chain_id;
    let (req, key) = check(
        signed,
        &chain_id,
        &name_in(&view, &node.key()).map_err(local)?,
        now_ms(),
    )?;
    let not_validator = || PeerError::NotValidator {
        requester: hex::encode(key),
    };
    let requester = requester_name(&view, &key)
        .map_err(local)?
        .ok_or_else(not_validator)?;
    let record = active_validator(&view, &requester)
        .map_err(local)?
        .ok_or_else(not_validator)?;
    let body = req
        .body
        .ok_or_else(|| PeerError::Decode("request has no body".into()))?;
    let cid = match &body {
        Body::FetchWrappedDek(b) => &b.cid,
        Body::FetchContent(b) => &b.cid,
        Body::HasContent(b) => &b.cid,
        Body::ReplicaUpdate(_)
        | Body::ReplicaSync(_)
        | Body::ReplicaCrcDiff(_)
        | Body::ReplicaGetValues(_) => {
            return Err(PeerError::Decode(
                "a ReplicaService body sent to PeerService".into(),
            ))
        }
    };
    let assignment = node.assignments.by_cid(&view, cid).map_err(local)?;
    // once this node's retention of a CONFIRMED takedown has ended, its
    // blob and DEK are no longer served (nor held, `local::purge`); images
    // may be covers that live uploads share
    if let Some(a) = assignment
        .as_ref()
        .filter(|a| *cid == a.dek_cid || *cid == a.content_cid)
    {
        if let Some(height) = crate::local::purge::confirmed_at(&view, a).map_err(local)? {
            let now = info.height.unwrap_or(0);
            let retention = node.takedown_retention_blocks;
            if crate::local::purge::past_retention(height, retention, now) {
                return Err(PeerError::TakenDown {
                    cid: hex::encode(&a.dek_cid),
                    height,
                });
            }
        }
    }
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
    let raw = node
        .x25519
        .unwrap(&wrapped_of(&own).map_err(local)?, &cid)
        .map_err(|e| PeerError::DekUnwrap {
            cid: hex::encode(&cid),
            reason: e.to_string(),
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

/// The requester and the open blob it asked for.
fn open_content(node: &LocalNode, a: Authed) -> Result<([u8; 32], std::fs::File), PeerError> {
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
        .and_then(|x| x.blob_size(&req.cid))
        .ok_or_else(|| not_held("no upload stores a file with this cid"))?;
    let file = std::fs::File::open(node.content.path_of(&req.cid))
        .map_err(|_| not_held("this validator does not hold the content"))?;
    Ok((a.requester, file))
}

/// The signed answer to `HasContent`: held when an upload's encrypted blob
/// or image is in the content store at its recorded size.
fn has_content(
    node: &LocalNode,
    a: Authed,
    signed: &SignedPeerRequest,
) -> Result<HasContentResponse, PeerError> {
    let Body::HasContent(req) = a.body else {
        return Err(PeerError::Decode("HasContent carries another body".into()));
    };
    let want = a
        .assignment
        .and_then(|x| x.blob_size(&req.cid))
        .ok_or_else(|| PeerError::NotHeld {
            cid: hex::encode(&req.cid),
            reason: "no upload stores a file with this cid".into(),
        })?;
    let size = node.content.size(&req.cid).filter(|s| *s == want);
    Ok(crate::local::has_content::answer(
        &node.operator,
        signed,
        &req.cid,
        size,
    ))
}

/// Sends `file` in chunks until it ends, the reader goes, a chunk waits
/// [`IDLE`] for the reader, or [`deadline`] of the size passes. Runs on a
/// blocking thread; `slot` is held until it returns.
fn send_file(
    mut file: std::fs::File,
    tx: tokio::sync::mpsc::Sender<Result<ContentChunk, Status>>,
    rt: tokio::runtime::Handle,
    slot: Slot,
) {
    let _slot = slot;
    let size = file.metadata().map_or(0, |m| m.len());
    let end = Instant::now() + deadline(size);
    let mut buf = vec![0u8; CHUNK];
    loop {
        let item = match file.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => Ok(ContentChunk {
                data: buf.get(..n).unwrap_or_default().to_vec(),
            }),
            Err(e) => Err(Status::internal(format!("reading content: {e}"))),
        };
        let stop = item.is_err();
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() || rt.block_on(tx.send_timeout(item, IDLE.min(left))).is_err() || stop {
            return;
        }
    }
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

    async fn has_content(
        &self,
        request: Request<SignedPeerRequest>,
    ) -> Result<Response<HasContentResponse>, Status> {
        let node = self.node.clone();
        let signed = request.into_inner();
        blocking(move || has_content(&node, authenticate(&node, &signed)?, &signed))
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
        let (requester, file) =
            blocking(move || open_content(&node, authenticate(&node, &signed)?)).await?;
        let slot = self.slot(requester).map_err(|e| {
            tracing::info!(code = e.code().value(), error = %e, "peer request refused");
            e.to_status()
        })?;
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        let rt = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || send_file(file, tx, rt, slot));
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service() -> (tempfile::TempDir, PeerServiceImpl) {
        use crate::local::{assignments::FixedAssignments, content::ContentStore, LocalStore};
        let dir = tempfile::tempdir().unwrap();
        let node = LocalNode {
            chain: crate::store::ChainStore::open(&dir.path().join("chain")).unwrap(),
            local: LocalStore::open(&dir.path().join("local")).unwrap(),
            content: ContentStore::open(&dir.path().join("content")).unwrap(),
            operator: ed25519_dalek::SigningKey::from_bytes(&[1; 32]),
            x25519: x25519_dalek::StaticSecret::from([2; 32]).into(),
            assignments: Arc::new(FixedAssignments(Vec::new())),
            takedown_retention_blocks: 0,
        };
        (dir, PeerServiceImpl::new(Arc::new(node)))
    }

    #[test]
    fn streams_are_capped_per_requester_and_in_all() {
        let (_d, svc) = service();
        let a = [1u8; 32];
        let s1 = svc.slot(a).unwrap();
        let _s2 = svc.slot(a).unwrap();
        assert!(matches!(svc.slot(a), Err(PeerError::Busy { open: 2 })));
        drop(s1);
        let _s3 = svc.slot(a).unwrap();
        let mut others: Vec<Slot> = (2..5u8)
            .flat_map(|i| [svc.slot([i; 32]).unwrap(), svc.slot([i; 32]).unwrap()])
            .collect();
        assert_eq!(others.len(), 6);
        assert!(matches!(
            svc.slot([9; 32]),
            Err(PeerError::Busy { open: MAX_STREAMS })
        ));
        others.clear();
        assert!(svc.slot([9; 32]).is_ok());
        assert!(!svc.streams.tracks(&[2; 32]), "freed counts are removed");
    }
}
