//! The fetch side of the worker: ask the peers of an assignment in turn,
//! keep what checks out. A wrapped DEK must unwrap *and* open the content
//! (its first STREAM chunk), read from a hash-verified blob: the local one
//! (a replica fetches its DEK only once it holds the content), or, on a
//! validator that holds the DEK but not the content, a copy fetched whole
//! into a scratch directory, checked against its cid, and deleted after the
//! check (once per fetch, however many DEK sources are tried). Bytes a peer
//! sent that no hash vouches for never decide a DEK's fate.

use super::*;
use crate::local::content::ContentStore;
use crate::local::peer_client::{fetch_content_into, BlobRequest};

impl Worker {
    fn blob<'a>(&self, chain_id: &'a str, t: &'a PeerTarget, a: &'a Assignment) -> BlobRequest<'a> {
        BlobRequest {
            chain_id,
            target: t,
            cid: &a.content_cid,
            size: a.encrypted_size,
            idle: self.cfg.idle,
        }
    }

    pub(super) async fn fetch(&self, kind: Kind, cid: &[u8], a: &Assignment) {
        let node = self.node.clone();
        let (cid_v, a2) = (cid.to_vec(), a.clone());
        let prep = tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
            mark(&node, kind, &cid_v, Op::Downloading)?;
            let view = node.chain.view();
            let chain_id = view.commit_info()?.chain_id;
            let peers = Peers {
                dek: peers_in(&node, &view, &a2.dek_holder_set)?,
                content: peers_in(&node, &view, &a2.replication_set)?,
            };
            Ok((chain_id, peers))
        })
        .await;
        let (chain_id, peers) = match prep {
            Ok(Ok(x)) => x,
            Ok(Err(e)) => return self.failed(kind, cid, e.to_string()).await,
            Err(e) => return self.failed(kind, cid, e.to_string()).await,
        };
        let sources = match kind {
            Kind::Content => &peers.content,
            Kind::Dek => &peers.dek,
        };
        let me = self.node.me();
        let replica = a.replication_set.contains(&me);
        if kind == Kind::Dek && replica && self.node.content.size(&a.content_cid).is_none() {
            let why = "waiting for the content this validator replicates";
            return self.failed(kind, cid, why.into()).await;
        }
        let mut head: Option<Result<Vec<u8>, NoHead>> = None;
        let mut errors = Vec::new();
        for t in sources {
            match self
                .try_peer(kind, &chain_id, t, &peers, a, &mut head)
                .await
            {
                Ok(()) => return,
                Err(e) => errors.push(format!("code {} {e}", e.code().value())),
            }
        }
        if sources.is_empty() {
            errors.push("no other active validator in the set".into());
        }
        self.failed(kind, cid, errors.join("; ")).await;
    }

    async fn try_peer(
        &self,
        kind: Kind,
        chain_id: &str,
        t: &PeerTarget,
        peers: &Peers,
        a: &Assignment,
        head: &mut Option<Result<Vec<u8>, NoHead>>,
    ) -> Result<(), PeerError> {
        let node = self.node.clone();
        let source = t.operator.to_vec();
        match kind {
            Kind::Content => {
                let cid = a.content_cid.clone();
                let size = fetch_content(&node, &self.blob(chain_id, t, a)).await?;
                blocking(move || mark(&node, kind, &cid, Op::Done { source, size })).await
            }
            Kind::Dek => {
                if let Some(Err(e)) = head {
                    return Err(e.to_error(a)); // no DEK can be checked: ask no source
                }
                let (stored, dek) = fetch_dek(node.requester(), chain_id, t, &a.dek_cid).await?;
                self.check_dek(chain_id, &dek, peers, a, head).await?;
                let cid = a.dek_cid.clone();
                blocking(move || {
                    node.local.put_dek(&stored)?;
                    mark(&node, kind, &cid, Op::Done { source, size: 0 })
                })
                .await
            }
        }
    }

    /// Checks that `dek` opens the upload's content, read from a
    /// hash-verified blob (see the module doc). `head` keeps that blob's
    /// head, or why there is none, for the next DEK source: the blob is
    /// fetched at most once per fetch. A DEK that unwraps but is not the
    /// content's is refused.
    async fn check_dek(
        &self,
        chain_id: &str,
        dek: &Dek,
        peers: &Peers,
        a: &Assignment,
        head: &mut Option<Result<Vec<u8>, NoHead>>,
    ) -> Result<(), PeerError> {
        if head.is_none() {
            *head = Some(self.head_of(chain_id, peers, a).await);
        }
        match head {
            Some(Ok(h)) => stream::check_head(dek, h, a.encrypted_size).map_err(|e| mismatch(a, e)),
            Some(Err(e)) => Err(e.to_error(a)),
            None => Err(mismatch(a, "no head")),
        }
    }

    /// The head of the upload's blob from a hash-verified copy.
    async fn head_of(
        &self,
        chain_id: &str,
        peers: &Peers,
        a: &Assignment,
    ) -> Result<Vec<u8>, NoHead> {
        let (node, cid, size) = (self.node.clone(), a.content_cid.clone(), a.encrypted_size);
        match blocking_value(move || local_head(&node, &cid, size)).await {
            Ok(Some(h)) => Ok(h),
            Ok(None) if a.replication_set.contains(&self.node.me()) => Err(NoHead::Unchecked(
                "cannot check it yet: the content is not held".into(),
            )),
            Ok(None) => self.verified_head(chain_id, peers, a).await,
            // this node's own disk: not the DEK source's fault
            Err(e) => Err(NoHead::Local(e.to_string())),
        }
    }

    /// The head of the upload's blob on a validator that does not replicate
    /// it: the whole blob is fetched from a replica into a scratch store (so
    /// its hash is checked against the cid, and a crash leaves nothing), its
    /// head read, and the scratch store deleted.
    async fn verified_head(
        &self,
        chain_id: &str,
        peers: &Peers,
        a: &Assignment,
    ) -> Result<Vec<u8>, NoHead> {
        let node = self.node.clone();
        let scratch = blocking_value(move || Ok(node.content.scratch()?))
            .await
            .map_err(|e| NoHead::Local(e.to_string()))?;
        let mut errors = Vec::new();
        let mut got = false;
        for t in &peers.content {
            match fetch_content_into(&self.node, &scratch, &self.blob(chain_id, t, a)).await {
                Ok(_) => {
                    got = true;
                    break;
                }
                Err(e) => errors.push(e.to_string()),
            }
        }
        let (cid, size) = (a.content_cid.clone(), a.encrypted_size);
        let head = blocking_value(move || {
            let head = if got {
                read_head(&scratch, &cid, size)
            } else {
                Ok(None)
            };
            scratch.discard()?; // before any error: no blob left behind
            head
        })
        .await
        .map_err(|e| NoHead::Local(e.to_string()))?;
        if let Some(h) = head {
            return Ok(h);
        }
        errors.push("no replica served the content".into());
        Err(NoHead::Unchecked(format!(
            "cannot check it: {}",
            errors.join("; ")
        )))
    }
}

pub(super) async fn blocking(
    f: impl FnOnce() -> anyhow::Result<()> + Send + 'static,
) -> Result<(), PeerError> {
    blocking_value(f).await
}

async fn blocking_value<T: Send + 'static>(
    f: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> Result<T, PeerError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| PeerError::Local(e.to_string()))?
        .map_err(|e| PeerError::Local(format!("{e:#}")))
}

/// The validators to ask: the active ones of each set but this one, in a
/// random order, so that retries do not always start at the same peer.
struct Peers {
    dek: Vec<PeerTarget>,
    content: Vec<PeerTarget>,
}

fn peers_in(
    node: &LocalNode,
    view: &View<'_>,
    set: &[[u8; 32]],
) -> anyhow::Result<Vec<PeerTarget>> {
    use rand::seq::SliceRandom;
    let me = node.me();
    let mut peers = Vec::new();
    for op in set.iter().filter(|op| **op != me) {
        if let Some(v) = active_validator(view, op)? {
            peers.push(PeerTarget {
                operator: *op,
                address: v.address,
            });
        }
    }
    peers.shuffle(&mut rand::thread_rng());
    Ok(peers)
}

/// The head of the local blob of `cid` if it is held (a visible file passed
/// its hash check) and has the upload's size.
fn local_head(node: &LocalNode, cid: &[u8], size: u64) -> anyhow::Result<Option<Vec<u8>>> {
    read_head(&node.content, cid, size)
}

/// The head of `cid`'s file in `store`, if it is there with `size` bytes.
fn read_head(store: &ContentStore, cid: &[u8], size: u64) -> anyhow::Result<Option<Vec<u8>>> {
    use std::io::Read;
    if store.size(cid) != Some(size) {
        return Ok(None);
    }
    let mut head = Vec::new();
    std::fs::File::open(store.path_of(cid))?
        .take(stream::head_len(size))
        .read_to_end(&mut head)?;
    Ok(Some(head))
}

/// Why no verified head is at hand.
#[derive(Debug, Clone)]
enum NoHead {
    /// This node's own fault (disk, scratch space).
    Local(String),
    /// No hash-verified copy could be had: the DEK cannot be checked.
    Unchecked(String),
}

impl NoHead {
    fn to_error(&self, a: &Assignment) -> PeerError {
        match self {
            NoHead::Local(e) => PeerError::Local(e.clone()),
            NoHead::Unchecked(why) => mismatch(a, why),
        }
    }
}

fn mismatch(a: &Assignment, reason: impl std::fmt::Display) -> PeerError {
    PeerError::DekMismatch {
        cid: hex::encode(&a.dek_cid),
        content: hex::encode(&a.content_cid),
        reason: reason.to_string(),
    }
}
