//! The fetch side of the worker: ask the peers of an assignment in turn,
//! keep what checks out. Content must hash to its cid. A wrapped DEK must
//! unwrap *and* match the manifest's `dek_commitment` (SHA-256 over a domain
//! tag, the DEK and the content cid), so a DEK holder checks its DEK without
//! downloading the blob (review M7). A replica still fetches its DEK after
//! its content: the reconciler orders them. Bytes a peer sent that no hash
//! vouches for never decide a DEK's fate.

use super::*;
use crate::local::peer_client::BlobRequest;
use crate::proto::local::StoredDek;

impl Worker {
    fn blob<'a>(
        &self,
        chain_id: &'a str,
        t: &'a PeerTarget,
        cid: &'a [u8],
        size: u64,
    ) -> BlobRequest<'a> {
        BlobRequest {
            chain_id,
            target: t,
            cid,
            size,
            idle: self.cfg.idle,
        }
    }

    pub(super) async fn fetch(&self, kind: Kind, cid: &[u8], a: &Assignment) {
        let node = self.node.clone();
        let cid_v = cid.to_vec();
        let set = match kind {
            Kind::Content => a.replication_set.clone(),
            Kind::Dek => a.dek_holder_set.clone(),
        };
        let announced = self.announced.clone();
        let prep = tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
            mark(&node, kind, &cid_v, Op::Downloading)?;
            let view = node.chain.view();
            let chain_id = view.commit_info()?.chain_id;
            let mut peers = peers_in(&node, &view, &set)?;
            let ann = match (kind, &announced) {
                (Kind::Content, Some(a)) => a.announcing(&cid_v),
                _ => BTreeSet::new(),
            };
            announcing_first(&mut peers, &ann);
            Ok((chain_id, peers, ann))
        })
        .await;
        let (chain_id, sources, ann) = match prep {
            Ok(Ok(x)) => x,
            Ok(Err(e)) => return self.failed(kind, cid, e.to_string()).await,
            Err(e) => return self.failed(kind, cid, e.to_string()).await,
        };
        let mut errors = Vec::new();
        for t in &sources {
            match self.try_peer(kind, &chain_id, t, cid, a).await {
                Ok(()) => {
                    if kind == Kind::Content {
                        let label = if ann.contains(&t.operator) {
                            "announced"
                        } else {
                            "unannounced"
                        };
                        crate::metrics::metrics()
                            .replica
                            .fetch_source
                            .with_label_values(&[label])
                            .inc();
                    }
                    return;
                }
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
        cid: &[u8],
        a: &Assignment,
    ) -> Result<(), PeerError> {
        let node = self.node.clone();
        let source = t.operator.to_vec();
        match kind {
            Kind::Content => {
                // the encrypted blob or one of the images
                let want = a.blob_size(cid).ok_or_else(|| PeerError::NotHeld {
                    cid: hex::encode(cid),
                    reason: "the upload stores no such file".into(),
                })?;
                let size = fetch_content(&node, &self.blob(chain_id, t, cid, want)).await?;
                let cid = cid.to_vec();
                blocking(move || mark(&node, kind, &cid, Op::Done { source, size })).await
            }
            Kind::Dek => {
                let (stored, dek) = fetch_dek(node.requester(), chain_id, t, &a.dek_cid).await?;
                check_dek(&dek, a)?;
                let cid = a.dek_cid.clone();
                blocking(move || {
                    // wrapped again to this node's own key, under the
                    // keyring: the peer wrapped to the key the chain named
                    // when it answered, which a rotation may have retired
                    node.x25519
                        .seal_own(&dek, &cid, |w| -> anyhow::Result<()> {
                            let w = w?;
                            node.local.put_dek(&StoredDek {
                                wrapped_dek: w.ciphertext,
                                ephemeral_pubkey: w.ephemeral_pubkey.to_vec(),
                                ..stored
                            })?;
                            Ok(())
                        })?;
                    mark(&node, kind, &cid, Op::Done { source, size: 0 })
                })
                .await
            }
        }
    }
}

/// Puts the peers that announce the cid first; stable, so each group
/// keeps its (random) order.
pub(super) fn announcing_first(peers: &mut [PeerTarget], ann: &BTreeSet<[u8; 32]>) {
    peers.sort_by_key(|p| !ann.contains(&p.operator));
}

/// A DEK that unwraps is kept only if it is the one the uploader committed
/// to in the manifest; no blob is read or downloaded to check it.
fn check_dek(dek: &Dek, a: &Assignment) -> Result<(), PeerError> {
    let got = crate::crypto::dek_commitment(dek, &a.content_cid);
    if got.as_slice() == a.dek_commitment.as_slice() {
        return Ok(());
    }
    Err(mismatch(
        a,
        format!(
            "its commitment {} is not the manifest's dek_commitment {}",
            hex::encode(got),
            hex::encode(&a.dek_commitment)
        ),
    ))
}

pub(super) async fn blocking(
    f: impl FnOnce() -> anyhow::Result<()> + Send + 'static,
) -> Result<(), PeerError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| PeerError::Local(e.to_string()))?
        .map_err(|e| PeerError::Local(format!("{e:#}")))
}

/// The validators to ask: the members of `set` with a validator record,
/// whatever their status (a leaving member serves until its replacement
/// confirms), but this one, in a random order, so that retries do not
/// always start at the same peer.
fn peers_in(
    node: &LocalNode,
    view: &View<'_>,
    set: &[[u8; 32]],
) -> anyhow::Result<Vec<PeerTarget>> {
    use rand::seq::SliceRandom;
    let me = node.me();
    let mut peers = Vec::new();
    for op in set.iter().filter(|op| **op != me) {
        if let Some(v) = serving_validator(view, op)? {
            peers.push(PeerTarget {
                operator: *op,
                address: v.address,
            });
        }
    }
    peers.shuffle(&mut rand::thread_rng());
    Ok(peers)
}

fn mismatch(a: &Assignment, reason: impl std::fmt::Display) -> PeerError {
    PeerError::DekMismatch {
        cid: hex::encode(&a.dek_cid),
        content: hex::encode(&a.content_cid),
        reason: reason.to_string(),
    }
}

#[cfg(test)]
mod order {
    use super::*;

    #[test]
    fn announcing_peers_are_asked_first_and_each_group_keeps_its_order() {
        let peer = |b: u8| PeerTarget {
            operator: [b; 32],
            address: format!("127.0.0.1:{b}"),
        };
        let mut peers: Vec<_> = [5, 1, 4, 2, 3].into_iter().map(peer).collect();
        let ann = BTreeSet::from([[4; 32], [3; 32]]);
        announcing_first(&mut peers, &ann);
        let got: Vec<u8> = peers.iter().map(|p| p.operator[0]).collect();
        assert_eq!(got, vec![4, 3, 5, 1, 2]);
        // Nobody announcing: the order is left alone.
        announcing_first(&mut peers, &BTreeSet::new());
        let again: Vec<u8> = peers.iter().map(|p| p.operator[0]).collect();
        assert_eq!(again, got);
    }
}
