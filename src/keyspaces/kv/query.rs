//! Reads of the `kv/` keyspace over committed state.

use super::{keys::split_kv_key, kv_key, kv_prefix, KvEntry};
use crate::proto::kv as pb;
use crate::store::{StoreError, View};
use prost::Message;

/// One page of (key, entry) rows and the key to continue after.
pub type Page = (Vec<(Vec<u8>, KvEntry)>, Option<Vec<u8>>);

/// The largest page `list` returns.
pub const MAX_PAGE: usize = 1000;

/// One page of a signer's entries, in key order, strictly after
/// `start_after`. Returns the entries and the key to continue from.
pub fn list(
    store: &View<'_>,
    signer: &[u8; 32],
    start_after: &[u8],
    limit: usize,
) -> Result<Page, StoreError> {
    let limit = limit.clamp(1, MAX_PAGE);
    let prefix = kv_prefix(signer);
    let after = (!start_after.is_empty()).then(|| kv_key(signer, start_after));
    let rows = store.prefix_list(&prefix, after.as_deref(), limit + 1)?;
    let mut out = Vec::with_capacity(rows.len().min(limit));
    for (k, v) in rows.iter().take(limit) {
        let key = split_kv_key(signer, k).unwrap_or_default().to_vec();
        let entry = pb::KvEntry::decode(v.as_slice()).map_err(|e| StoreError::corrupt(k, e))?;
        out.push((key, entry.into()));
    }
    let next = if rows.len() > limit {
        out.last().map(|(k, _)| k.clone())
    } else {
        None
    };
    Ok((out, next))
}
