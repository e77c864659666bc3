//! The requesting side of the peer service: signed requests to other
//! validators, answers checked before anything is kept.
//!
//! - A wrapped DEK is kept only if it unwraps with this validator's key.
//! - Content goes to `content/.tmp/`, is cut off past the upload's
//!   `encrypted_size`, and becomes visible only if its hash matches the cid.
//! - No answer can stall a fetch: connections carry HTTP/2 keepalive,
//!   every stream message must arrive within an idle limit ([`IDLE`] by
//!   default), and a whole blob within [`deadline`] of its size.
//! - Connections leave from this node's own peer IP ([`bind_source`]), the
//!   address its validator record names, so the responder's allow-list
//!   admits them (on loopback every connection would otherwise leave from
//!   127.0.0.1).

use std::net::IpAddr;
use std::sync::OnceLock;
use std::time::Duration;

use tonic::transport::{Channel, Endpoint};

use tokio::time::{timeout, Instant};

use super::content::{ContentError, ContentStore};
use super::node::LocalNode;
use super::peer_auth::{now_ms, sign, PeerError};
use crate::crypto::wrap::WrappedDek;
use crate::crypto::Dek;
use crate::proto::local::StoredDek;
use crate::proto::peer::peer_request::Body;
use crate::proto::peer::peer_service_client::PeerServiceClient;
use crate::proto::peer::{
    ContentChunk, FetchContent, FetchWrappedDek, HasContent, PeerRequest, SignedPeerRequest,
};

/// The default longest wait for the next message of a content stream.
pub const IDLE: Duration = Duration::from_secs(30);
/// The slowest transfer rate a blob may take (bytes per second) before
/// [`deadline`] cuts it off.
const MIN_RATE: u64 = 256 * 1024;

/// How long a blob of `size` bytes may take: a minute plus `size` at
/// 256 KiB/s.
pub fn deadline(size: u64) -> Duration {
    Duration::from_secs(60 + size / MIN_RATE)
}

/// A validator to ask: its operator key and peer address (`host:port`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerTarget {
    pub operator: [u8; 32],
    pub address: String,
}

static SOURCE: OnceLock<IpAddr> = OnceLock::new();

/// Makes every peer connection of this process leave from `ip` (the first
/// call wins). `stave start` calls it with the IP of `[peer] listen` unless
/// that is unspecified (`0.0.0.0`), when the OS chooses.
pub fn bind_source(ip: IpAddr) {
    if SOURCE.set(ip).is_err() && SOURCE.get() != Some(&ip) {
        tracing::warn!(%ip, kept = ?SOURCE.get(), "peer source address already set");
    }
}

/// The source IP peer connections bind, if any.
pub fn source() -> Option<IpAddr> {
    SOURCE.get().copied()
}

fn remote(t: &PeerTarget, reason: impl std::fmt::Display) -> PeerError {
    PeerError::Remote {
        peer: format!("{} at {}", hex::encode(t.operator), t.address),
        reason: reason.to_string(),
    }
}

/// The endpoint of `t`'s peer listener: from this node's peer IP, with
/// HTTP/2 keepalive and a 3 s connect timeout.
pub fn endpoint(t: &PeerTarget) -> Result<Endpoint, PeerError> {
    let url = if t.address.contains("://") {
        t.address.clone()
    } else {
        format!("http://{}", t.address)
    };
    Ok(Endpoint::from_shared(url)
        .map_err(|e| remote(t, e))?
        .connect_timeout(Duration::from_secs(3))
        .local_address(source())
        .http2_keep_alive_interval(Duration::from_secs(10))
        .keep_alive_timeout(Duration::from_secs(20))
        .keep_alive_while_idle(true))
}

async fn connect(
    t: &PeerTarget,
    timeout: Duration,
) -> Result<PeerServiceClient<Channel>, PeerError> {
    let ch = endpoint(t)?
        .timeout(timeout)
        .connect()
        .await
        .map_err(|e| remote(t, e))?;
    Ok(PeerServiceClient::new(ch).max_decoding_message_size(8 << 20))
}

/// Who asks: the operator key signs requests, the X25519 key unwraps answers.
#[derive(Clone, Copy)]
pub struct Requester<'a> {
    pub operator: &'a ed25519_dalek::SigningKey,
    pub x25519: &'a super::keyring::X25519Keyring,
}

impl LocalNode {
    /// This validator as a requester.
    pub fn requester(&self) -> Requester<'_> {
        Requester {
            operator: &self.operator,
            x25519: &self.x25519,
        }
    }
}

/// A request to `t`, signed by `operator`.
pub fn signed_request(
    operator: &ed25519_dalek::SigningKey,
    chain_id: &str,
    t: &PeerTarget,
    body: Body,
) -> SignedPeerRequest {
    sign(
        operator,
        &PeerRequest {
            chain_id: chain_id.to_string(),
            requester: operator.verifying_key().to_bytes().to_vec(),
            responder: t.operator.to_vec(),
            timestamp_ms: now_ms(),
            body: Some(body),
        },
    )
}

/// Asks `t` for this validator's wrapped DEK of `cid`; keeps nothing.
/// Returns the record to store and the raw DEK, only if it unwraps; the
/// caller still checks that the DEK opens the content.
pub async fn fetch_dek(
    me: Requester<'_>,
    chain_id: &str,
    t: &PeerTarget,
    cid: &[u8],
) -> Result<(StoredDek, Dek), PeerError> {
    let req = signed_request(
        me.operator,
        chain_id,
        t,
        Body::FetchWrappedDek(FetchWrappedDek { cid: cid.to_vec() }),
    );
    let resp = connect(t, Duration::from_secs(15))
        .await?
        .fetch_wrapped_dek(req)
        .await
        .map_err(|s| remote(t, s.message()))?
        .into_inner();
    let bad = |reason: String| PeerError::DekUnwrap {
        cid: hex::encode(cid),
        reason,
    };
    if resp.cid != cid {
        return Err(bad(format!("answer names cid {}", hex::encode(&resp.cid))));
    }
    let eph: [u8; 32] = resp
        .ephemeral_pubkey
        .as_slice()
        .try_into()
        .map_err(|_| bad("ephemeral key is not 32 bytes".into()))?;
    let wrapped = WrappedDek {
        ephemeral_pubkey: eph,
        ciphertext: resp.wrapped_dek.clone(),
    };
    let dek = me
        .x25519
        .unwrap(&wrapped, cid)
        .map_err(|e| bad(e.to_string()))?;
    let stored = StoredDek {
        cid: cid.to_vec(),
        wrapped_dek: resp.wrapped_dek,
        ephemeral_pubkey: resp.ephemeral_pubkey,
        source_validator: t.operator.to_vec(),
        job_id: vec![],
    };
    Ok((stored, dek))
}

/// Asks `t` whether it holds the blob of `cid`; checks that the answer is
/// signed by `t_key`, the key that signs for `t` (its operator key unless
/// rotated, [`super::node::signing_key_in`]). `Some(size)` when it does.
pub async fn has_content(
    me: &ed25519_dalek::SigningKey,
    chain_id: &str,
    (t, t_key): (&PeerTarget, &[u8; 32]),
    cid: &[u8],
) -> Result<Option<u64>, PeerError> {
    let req = signed_request(
        me,
        chain_id,
        t,
        Body::HasContent(HasContent { cid: cid.to_vec() }),
    );
    let resp = connect(t, Duration::from_secs(10))
        .await?
        .has_content(req.clone())
        .await
        .map_err(|s| remote(t, s.message()))?
        .into_inner();
    super::has_content::verify(t_key, &req, cid, &resp)
}

fn content_err(e: ContentError) -> PeerError {
    match e {
        ContentError::Io { .. } | ContentError::NoRoom { .. } => PeerError::Local(e.to_string()),
        ContentError::HashMismatch { ref cid, .. }
        | ContentError::TooLarge { ref cid, .. }
        | ContentError::SizeMismatch { ref cid, .. }
        | ContentError::BadCid { ref cid } => PeerError::ContentMismatch {
            cid: cid.clone(),
            reason: e.to_string(),
        },
    }
}

type ChunkStream = tonic::Streaming<ContentChunk>;

/// Opens the content stream of `cid` at `t`.
async fn open_stream(
    me: &ed25519_dalek::SigningKey,
    chain_id: &str,
    t: &PeerTarget,
    cid: &[u8],
    within: Duration,
) -> Result<ChunkStream, PeerError> {
    let req = signed_request(
        me,
        chain_id,
        t,
        Body::FetchContent(FetchContent { cid: cid.to_vec() }),
    );
    Ok(connect(t, within)
        .await?
        .fetch_content(req)
        .await
        .map_err(|s| remote(t, s.message()))?
        .into_inner())
}

/// The next chunk, within `idle` and before `end`.
async fn next_chunk(
    stream: &mut ChunkStream,
    t: &PeerTarget,
    idle: Duration,
    end: Instant,
) -> Result<Option<ContentChunk>, PeerError> {
    let wait = idle.min(end.saturating_duration_since(Instant::now()));
    match timeout(wait, stream.message()).await {
        Ok(r) => r.map_err(|s| remote(t, s.message())),
        Err(_) if Instant::now() >= end => Err(remote(t, "transfer deadline passed")),
        Err(_) => Err(remote(t, format!("no data for {} s", wait.as_secs()))),
    }
}

/// One blob to fetch: from whom, which, how big, how patiently.
#[derive(Debug, Clone, Copy)]
pub struct BlobRequest<'a> {
    pub chain_id: &'a str,
    pub target: &'a PeerTarget,
    pub cid: &'a [u8],
    /// The upload's `encrypted_size`; a peer sending more is cut off.
    pub size: u64,
    /// The longest wait for the next message.
    pub idle: Duration,
}

impl BlobRequest<'_> {
    async fn open(&self, node: &LocalNode) -> Result<ChunkStream, PeerError> {
        let t = self.target;
        open_stream(
            &node.operator,
            self.chain_id,
            t,
            self.cid,
            deadline(self.size),
        )
        .await
    }
}

/// Streams the blob into the content store; it becomes visible only if
/// exactly `size` bytes arrive and their hash matches, each message within
/// `idle` and the whole within [`deadline`].
pub async fn fetch_content(node: &LocalNode, r: &BlobRequest<'_>) -> Result<u64, PeerError> {
    fetch_content_into(node, &node.content, r).await
}

/// [`fetch_content`] into `store` (a scratch store, say).
pub async fn fetch_content_into(
    node: &LocalNode,
    store: &ContentStore,
    r: &BlobRequest<'_>,
) -> Result<u64, PeerError> {
    let (t, cid, size) = (r.target, r.cid, r.size);
    let end = Instant::now() + deadline(size);
    let mut stream = r.open(node).await?;
    let mut w = store.begin(cid, size).map_err(content_err)?;
    while let Some(chunk) = next_chunk(&mut stream, t, r.idle, end).await? {
        w = tokio::task::spawn_blocking(move || w.write(&chunk.data).map(|()| w))
            .await
            .map_err(|e| PeerError::Local(e.to_string()))?
            .map_err(content_err)?;
    }
    tokio::task::spawn_blocking(move || w.finish(Some(size)))
        .await
        .map_err(|e| PeerError::Local(e.to_string()))?
        .map_err(content_err)
}
