//! Rebuilding the index space from verifiable state alone. A node restored
//! from a snapshot receives only verifiable state; each keyspace that keeps
//! index rows derives them here from its primary rows, exactly as its
//! action handlers would have written them.

use std::collections::BTreeMap;

use crate::store::{Rows, Space, StateRead, StoreError};

/// Index rows by key, as they would be stored.
pub type IndexRows = BTreeMap<Vec<u8>, Vec<u8>>;

/// Every row of the verifiable state under `prefix`, in key order.
pub(crate) fn all_under<S: StateRead + ?Sized>(s: &S, prefix: &[u8]) -> Result<Rows, StoreError> {
    s.prefix_raw(Space::State, prefix, None, usize::MAX)
}

/// The whole index space `state` implies: grants and entitlements by key,
/// casbin rules by subject, releases by party, KV token postings, counts
/// and histories, and the score order of kvdb sorted sets.
pub fn rebuild<S: StateRead + ?Sized>(state: &S) -> Result<IndexRows, StoreError> {
    let mut out = IndexRows::new();
    super::grants::rebuild_index(state, &mut out)?;
    super::entitlements::rebuild_index(state, &mut out)?;
    super::casbin::rebuild_index(state, &mut out)?;
    super::releases::rebuild_index(state, &mut out)?;
    super::kv::token::rebuild_index(state, &mut out)?;
    super::kv::db::rebuild_index(state, &mut out)?;
    Ok(out)
}
