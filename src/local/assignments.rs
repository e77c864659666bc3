//! What chain state assigns: for each upload, the blob to replicate and
//! the DEK to hold, with the validators named in its sets. Read from the
//! latest committed state only.

use crate::keyspaces::uploads::{uploads_prefix, UploadsRead};
use crate::proto::rights::Upload;
use crate::store::View;

/// One upload as the local store sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// The cid the wrapped DEKs are keyed by (`local/deks/{cid}`).
    pub dek_cid: Vec<u8>,
    /// The cid of the encrypted blob that replicas store.
    pub content_cid: Vec<u8>,
    /// The blob's size; a peer sending more is cut off.
    pub encrypted_size: u64,
    /// Operator keys of the validators that store and seed the blob.
    pub replication_set: Vec<[u8; 32]>,
    /// Operator keys of the validators that hold wrapped DEKs.
    pub dek_holder_set: Vec<[u8; 32]>,
    /// The manifest's commitment to the DEK (`crypto::dek_commitment`).
    pub dek_commitment: Vec<u8>,
    /// The upload's images (cid, size): stored in the clear and replicated
    /// by the same set as the blob.
    pub images: Vec<(Vec<u8>, u64)>,
}

impl Assignment {
    /// Every file the replication set stores, with its size: the encrypted
    /// blob, then the images.
    pub fn blobs(&self) -> impl Iterator<Item = (&Vec<u8>, u64)> {
        std::iter::once((&self.content_cid, self.encrypted_size))
            .chain(self.images.iter().map(|(c, s)| (c, *s)))
    }

    /// The size of the stored file `cid`, if this upload has one.
    pub fn blob_size(&self, cid: &[u8]) -> Option<u64> {
        self.blobs()
            .find(|(c, _)| c.as_slice() == cid)
            .map(|(_, s)| s)
    }
}

/// Where assignments come from: committed chain state in a node, a fixed
/// list in tests.
pub trait AssignmentSource: Send + Sync + 'static {
    /// Every assignment, read from one consistent view of `state`.
    fn all(&self, state: &View<'_>) -> anyhow::Result<Vec<Assignment>>;
    /// The assignments naming `me` (in either set). By default every
    /// assignment, which [`super::reconcile::wanted`] filters.
    fn for_validator(&self, state: &View<'_>, me: &[u8; 32]) -> anyhow::Result<Vec<Assignment>> {
        let _ = me;
        self.all(state)
    }
    /// The assignment whose DEK or content cid is `cid`.
    fn by_cid(&self, state: &View<'_>, cid: &[u8]) -> anyhow::Result<Option<Assignment>> {
        Ok(self
            .all(state)?
            .into_iter()
            .find(|a| a.dek_cid == cid || a.blob_size(cid).is_some()))
    }
}

/// A fixed list (tests and benchmarks).
pub struct FixedAssignments(pub Vec<Assignment>);

impl AssignmentSource for FixedAssignments {
    fn all(&self, _state: &View<'_>) -> anyhow::Result<Vec<Assignment>> {
        Ok(self.0.clone())
    }
}

fn keys32(set: &[Vec<u8>]) -> Vec<[u8; 32]> {
    set.iter()
        .filter_map(|k| <[u8; 32]>::try_from(k.as_slice()).ok())
        .collect()
}

/// The assignment an upload record makes: its DEK is keyed by `flac_cid`,
/// its replicated files are `encrypted_cid` and the images.
pub fn of_upload(u: &Upload) -> Assignment {
    Assignment {
        dek_cid: u.flac_cid.clone(),
        content_cid: u.encrypted_cid.clone(),
        encrypted_size: u.encrypted_size,
        replication_set: keys32(&u.replication_set),
        dek_holder_set: keys32(&u.dek_holder_set),
        dek_commitment: u.dek_commitment.clone(),
        images: u
            .image_cids
            .iter()
            .cloned()
            .zip(u.image_sizes.iter().copied())
            .collect(),
    }
}

/// Assignments read from the committed `uploads/` keyspace.
pub struct ChainAssignments;

impl AssignmentSource for ChainAssignments {
    fn all(&self, state: &View<'_>) -> anyhow::Result<Vec<Assignment>> {
        let prefix = uploads_prefix();
        let mut out = Vec::new();
        for (key, raw) in state.prefix_list(&prefix, None, usize::MAX)? {
            // consensus wrote it; if it still does not decode, one bad
            // record must not stop every other upload from syncing
            match <Upload as prost::Message>::decode(raw.as_slice()) {
                Ok(u) => out.push(of_upload(&u)),
                Err(e) => {
                    tracing::error!(key = %hex::encode(&key), error = %e, "skipping a corrupt upload record")
                }
            }
        }
        Ok(out)
    }

    /// From `assignments/{me}/`: only the uploads this validator serves,
    /// not every upload on chain.
    fn for_validator(&self, state: &View<'_>, me: &[u8; 32]) -> anyhow::Result<Vec<Assignment>> {
        let mut out = Vec::new();
        for cid in crate::keyspaces::uploads::query::assigned_to(state, me)? {
            if let Some(u) = state.upload(&cid)? {
                out.push(of_upload(&u));
            }
        }
        Ok(out)
    }

    fn by_cid(&self, state: &View<'_>, cid: &[u8]) -> anyhow::Result<Option<Assignment>> {
        if let Some(u) = state.upload(cid)? {
            return Ok(Some(of_upload(&u)));
        }
        if let Some(u) = state.upload_by_content(cid)? {
            return Ok(Some(of_upload(&u)));
        }
        Ok(state.upload_by_image(cid)?.as_ref().map(of_upload))
    }
}
