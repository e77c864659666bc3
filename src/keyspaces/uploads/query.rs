//! Reads of who serves uploads, for queries and the node's own workers.

use super::keys::{assignments_prefix, under_replicated_prefix};
use crate::keyspaces::entitlements::query::{cursor, decode_page, page_size, Page};
use crate::proto::rights as pb;
use crate::store::{StoreError, View};

/// Uploads under replication (`under_replicated/`), in cid order.
pub fn under_replicated(
    view: &View<'_>,
    after: &[u8],
    limit: u32,
) -> Result<Page<pb::UnderReplicated>, StoreError> {
    let n = page_size(limit);
    decode_page(
        view.prefix_list(&under_replicated_prefix(), cursor(after), n + 1)?,
        n,
    )
}

/// The flac cids of every upload `operator` serves, from
/// `assignments/{operator}/`, in cid order.
pub fn assigned_to(view: &View<'_>, operator: &[u8; 32]) -> Result<Vec<Vec<u8>>, StoreError> {
    let prefix = assignments_prefix(operator);
    Ok(view
        .prefix_list(&prefix, None, usize::MAX)?
        .into_iter()
        .filter_map(|(k, _)| k.get(prefix.len()..).map(<[u8]>::to_vec))
        .collect())
}
