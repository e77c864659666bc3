//! What chain state assigns: for each upload, the blob to replicate and
//! the DEK to hold, with the validators named in its sets. Read from the
//! latest committed state only.

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
}

/// Where assignments come from: committed chain state in a node, a fixed
/// list in tests.
pub trait AssignmentSource: Send + Sync + 'static {
    /// Every assignment, read from one consistent view of `state`.
    fn all(&self, state: &View<'_>) -> anyhow::Result<Vec<Assignment>>;
    /// The assignment whose DEK or content cid is `cid`.
    fn by_cid(&self, state: &View<'_>, cid: &[u8]) -> anyhow::Result<Option<Assignment>> {
        Ok(self
            .all(state)?
            .into_iter()
            .find(|a| a.dek_cid == cid || a.content_cid == cid))
    }
}

/// A fixed list (tests and benchmarks).
pub struct FixedAssignments(pub Vec<Assignment>);

impl AssignmentSource for FixedAssignments {
    fn all(&self, _state: &View<'_>) -> anyhow::Result<Vec<Assignment>> {
        Ok(self.0.clone())
    }
}
