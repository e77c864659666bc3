//! The requesting side of the peer service: signed requests to other
//! validators, answers checked before anything is kept.
//!
//! - A wrapped DEK is kept only if it unwraps with this validator's key.
//! - Content goes to `content/.tmp/`, is cut off past the upload's
//!   `encrypted_size`, and becomes visible only if its hash matches the cid.

use std::time::Duration;

use tonic::transport::{Channel, Endpoint};

use super::content::ContentError;
use super::node::LocalNode;
use super::peer_auth::{now_ms, sign, PeerError};
use crate::crypto::wrap::{unwrap_dek, WrappedDek};
use crate::proto::local::StoredDek;
use crate::proto::peer::peer_request::Body;
use crate::proto::peer::peer_service_client::PeerServiceClient;
use crate::proto::peer::{FetchContent, FetchWrappedDek, PeerRequest, SignedPeerRequest};

/// A validator to ask: its operator key and peer address (`host:port`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerTarget {
    pub operator: [u8; 32],
    pub address: String,
}

fn remote(t: &PeerTarget, reason: impl std::fmt::Display) -> PeerError {
    PeerError::Remote {
        peer: format!("{} at {}", hex::encode(t.operator), t.address),
        reason: reason.to_string(),
    }
}

async fn connect(
    t: &PeerTarget,
    timeout: Duration,
) -> Result<PeerServiceClient<Channel>, PeerError> {
    let url = if t.address.contains("://") {
        t.address.clone()
    } else {
        format!("http://{}", t.address)
    };
    let ch = Endpoint::from_shared(url)
        .map_err(|e| remote(t, e))?
        .connect_timeout(Duration::from_secs(3))
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
    pub x25519: &'a x25519_dalek::StaticSecret,
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

/// Asks `t` for this validator's wrapped DEK of `cid`; keeps nothing,
/// returns the record to store only if it unwraps.
pub async fn fetch_dek(
    me: Requester<'_>,
    chain_id: &str,
    t: &PeerTarget,
    cid: &[u8],
) -> Result<StoredDek, PeerError> {
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
    unwrap_dek(me.x25519, &wrapped, cid).map_err(|e| bad(e.to_string()))?;
    Ok(StoredDek {
        cid: cid.to_vec(),
        wrapped_dek: resp.wrapped_dek,
        ephemeral_pubkey: resp.ephemeral_pubkey,
        source_validator: t.operator.to_vec(),
    })
}

fn content_err(e: ContentError) -> PeerError {
    match e {
        ContentError::Io { .. } => PeerError::Local(e.to_string()),
        ContentError::HashMismatch { ref cid, .. }
        | ContentError::TooLarge { ref cid, .. }
        | ContentError::SizeMismatch { ref cid, .. }
        | ContentError::BadCid { ref cid } => PeerError::ContentMismatch {
            cid: cid.clone(),
            reason: e.to_string(),
        },
    }
}

/// Streams the blob of `cid` from `t` into the content store; it becomes
/// visible only if exactly `size` bytes arrive and their hash matches.
pub async fn fetch_content(
    node: &LocalNode,
    chain_id: &str,
    t: &PeerTarget,
    cid: &[u8],
    size: u64,
) -> Result<u64, PeerError> {
    let req = signed_request(
        &node.operator,
        chain_id,
        t,
        Body::FetchContent(FetchContent { cid: cid.to_vec() }),
    );
    let mut stream = connect(t, Duration::from_secs(600))
        .await?
        .fetch_content(req)
        .await
        .map_err(|s| remote(t, s.message()))?
        .into_inner();
    let mut w = node.content.begin(cid, size).map_err(content_err)?;
    while let Some(chunk) = stream.message().await.map_err(|s| remote(t, s.message()))? {
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
