//! Listings for the gRPC queries: the releases of a cid, of a party, and
//! the earlier versions of one id. Each is a bounded page: at most `limit`
//! rows (0 = 100, at most 1000) and at most [`MAX_PAGE_BYTES`] of records,
//! under the clients' 4 MiB message limit; `next_cursor` is empty at the
//! end.

use prost::Message;

use super::keys::{by_party_key, by_party_prefix, version_key, versions_prefix};
use super::ReleasesRead;
use crate::proto::ddex as pb;
use crate::store::{Space, StateRead, StoreError};

/// At most this many rows per page (0 asks for 100).
pub const MAX_PAGE: u32 = 1000;

/// At most this many bytes of records per page (a page holds at least one
/// record, and a record is at most `max_release_bytes` plus its tracks).
pub const MAX_PAGE_BYTES: usize = 3 << 20;

fn page(limit: u32) -> usize {
    match limit {
        0 => 100,
        n => n.min(MAX_PAGE) as usize,
    }
}

/// A page: records until the byte budget; `cursor_of` names where the next
/// page starts after a record. `full` says whether the rows filled `limit`.
fn budgeted(
    records: Vec<pb::ReleaseRecord>,
    full: bool,
    cursor_of: impl Fn(&pb::ReleaseRecord) -> Vec<u8>,
) -> (Vec<pb::ReleaseRecord>, Vec<u8>) {
    let mut out = Vec::new();
    let mut bytes = 0usize;
    let total = records.len();
    for r in records {
        bytes = bytes.saturating_add(r.encoded_len());
        if bytes > MAX_PAGE_BYTES && !out.is_empty() {
            let next = out.last().map(&cursor_of).unwrap_or_default();
            return (out, next);
        }
        out.push(r);
    }
    let next = match (full && out.len() == total, out.last()) {
        (true, Some(last)) => cursor_of(last),
        _ => Vec::new(),
    };
    (out, next)
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

fn by_id(r: &pb::ReleaseRecord) -> Vec<u8> {
    r.release_id.as_bytes().to_vec()
}

/// The releases `cid` is in, after the release id `cursor`.
pub fn by_cid<S: StateRead + ?Sized>(
    s: &S,
    cid: &[u8],
    cursor: &[u8],
    limit: u32,
) -> Result<(Vec<pb::ReleaseRecord>, Vec<u8>), StoreError> {
    let n = page(limit);
    let after = (!cursor.is_empty()).then(|| String::from_utf8_lossy(cursor).into_owned());
    let rows = s.cid_releases(cid, after.as_deref(), n)?;
    let full = rows.len() == n;
    let recs = records(s, rows.into_iter().map(|(id, _)| id))?;
    Ok(budgeted(recs, full, by_id))
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
    let full = rows.len() == n;
    let ids = rows.iter().map(|(k, _)| {
        String::from_utf8_lossy(k.get(prefix.len()..).unwrap_or_default()).into_owned()
    });
    let recs = records(s, ids)?;
    Ok(budgeted(recs, full, by_id))
}

/// The earlier versions of `id`, oldest first, after the version in
/// `cursor` (4 bytes, big-endian; empty from the start).
pub fn versions<S: StateRead + ?Sized>(
    s: &S,
    id: &str,
    cursor: &[u8],
    limit: u32,
) -> Result<(Vec<pb::ReleaseRecord>, Vec<u8>), StoreError> {
    let n = page(limit);
    let after = <[u8; 4]>::try_from(cursor)
        .ok()
        .map(|b| version_key(id, u32::from_be_bytes(b)));
    let rows = s.prefix_raw(Space::State, &versions_prefix(id), after.as_deref(), n)?;
    let full = rows.len() == n;
    let recs = rows
        .into_iter()
        .map(|(k, v)| {
            pb::ReleaseRecord::decode(v.as_slice()).map_err(|e| StoreError::corrupt(&k, e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(budgeted(recs, full, |r| r.version.to_be_bytes().to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(id: &str, bytes: usize) -> pb::ReleaseRecord {
        pb::ReleaseRecord {
            release_id: id.into(),
            parties: vec!["x".repeat(bytes)],
            ..Default::default()
        }
    }

    #[test]
    fn pages_stop_at_the_byte_budget_and_say_where_to_go_on() {
        let big = MAX_PAGE_BYTES / 2 + 10;
        let (out, next) = budgeted(
            vec![rec("a", big), rec("b", big), rec("c", 1)],
            false,
            by_id,
        );
        assert_eq!(out.len(), 1);
        assert_eq!(next, b"a");
        let (out, next) = budgeted(vec![rec("a", 1), rec("b", 1)], false, by_id);
        assert_eq!((out.len(), next.len()), (2, 0), "the last page");
        let (out, next) = budgeted(vec![rec("a", 1), rec("b", 1)], true, by_id);
        assert_eq!((out.len(), next), (2, b"b".to_vec()), "a full page goes on");
        let (out, _) = budgeted(vec![rec("a", MAX_PAGE_BYTES * 2)], false, by_id);
        assert_eq!(out.len(), 1, "one record always fits");
    }
}
