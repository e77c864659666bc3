//! Listings for the gRPC queries: the releases of a cid, of a party, and
//! the earlier versions of one id, each a bounded page.

use super::keys::{by_party_key, by_party_prefix, versions_prefix};
use super::ReleasesRead;
use crate::proto::ddex as pb;
use crate::store::{Space, StateRead, StoreError};

/// At most this many rows per page (0 asks for 100).
pub const MAX_PAGE: u32 = 1000;

fn page(limit: u32) -> usize {
    match limit {
        0 => 100,
        n => n.min(MAX_PAGE) as usize,
    }
}

/// Records by id, in the given order, skipping ids with no record.
fn records<S: StateRead + ?Sized>(
    s: &S,
    ids: impl IntoIterator<Item = String>,
) -> Result<Vec<pb::ReleaseRecord>, StoreError> {
    let mut out = Vec::new();
    for id in ids {
        if let Some(r) = s.release(&id)? {
            out.push(r);
        }
    }
    Ok(out)
}

/// The releases `cid` is in, after the release id `cursor`; returns the
/// page and the next cursor (empty at the end).
pub fn by_cid<S: StateRead + ?Sized>(
    s: &S,
    cid: &[u8],
    cursor: &[u8],
    limit: u32,
) -> Result<(Vec<pb::ReleaseRecord>, Vec<u8>), StoreError> {
    let n = page(limit);
    let after = (!cursor.is_empty()).then(|| String::from_utf8_lossy(cursor).into_owned());
    let rows = s.cid_releases(cid, after.as_deref(), n)?;
    let next = if rows.len() == n {
        rows.last()
            .map(|(id, _)| id.as_bytes().to_vec())
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    Ok((records(s, rows.into_iter().map(|(id, _)| id))?, next))
}

/// The releases naming `party`, after the release id `cursor`.
pub fn by_party<S: StateRead + ?Sized>(
    s: &S,
    party: &str,
    cursor: &[u8],
    limit: u32,
) -> Result<(Vec<pb::ReleaseRecord>, Vec<u8>), StoreError> {
    let n = page(limit);
    let prefix = by_party_prefix(party);
    let after = (!cursor.is_empty()).then(|| by_party_key(party, &String::from_utf8_lossy(cursor)));
    let rows = s.prefix_raw(Space::Index, &prefix, after.as_deref(), n)?;
    let ids: Vec<String> = rows
        .iter()
        .map(|(k, _)| {
            String::from_utf8_lossy(k.get(prefix.len()..).unwrap_or_default()).into_owned()
        })
        .collect();
    let next = if ids.len() == n {
        ids.last()
            .map(|id| id.as_bytes().to_vec())
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    Ok((records(s, ids)?, next))
}

/// The earlier versions of `id`, oldest first (at most
/// `rights.max_release_versions`, so one page).
pub fn versions<S: StateRead + ?Sized>(
    s: &S,
    id: &str,
) -> Result<Vec<pb::ReleaseRecord>, StoreError> {
    use prost::Message;
    let rows = s.prefix_raw(Space::State, &versions_prefix(id), None, MAX_PAGE as usize)?;
    rows.into_iter()
        .map(|(k, v)| {
            pb::ReleaseRecord::decode(v.as_slice()).map_err(|e| StoreError::corrupt(&k, e))
        })
        .collect()
}
