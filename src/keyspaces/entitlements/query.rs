//! Paged reads of entitlements over one committed view. By cid reads the
//! cid's range of `entitlements/`; by key reads the index
//! `entitlements_by_key/`. Neither scans other cids or keys.

use prost::Message;

use super::keys::{entitlements_by_key_prefix, entitlements_cid_prefix};
use crate::proto::rights as pb;
use crate::store::{QueryRead, Rows, Space, StoreError};

/// The largest page.
pub const MAX_PAGE: usize = 1000;
/// The page size when the caller asks for 0.
pub const DEFAULT_PAGE: usize = 100;

/// One page of records and the opaque cursor to continue after (`None` at the end).
pub type Page<T> = (Vec<T>, Option<Vec<u8>>);

/// The page size for a requested `limit`.
pub fn page_size(limit: u32) -> usize {
    match limit {
        0 => DEFAULT_PAGE,
        n => (n as usize).min(MAX_PAGE),
    }
}

/// Decodes a page of rows read with `limit + 1`; the cursor is the last
/// returned row's key.
pub fn decode_page<T: Message + Default>(rows: Rows, limit: usize) -> Result<Page<T>, StoreError> {
    let more = rows.len() > limit;
    let mut out = Vec::with_capacity(rows.len().min(limit));
    let mut last = None;
    for (k, v) in rows.into_iter().take(limit) {
        out.push(T::decode(v.as_slice()).map_err(|e| StoreError::corrupt(&k, e))?);
        last = Some(k);
    }
    Ok((out, if more { last } else { None }))
}

/// Index rows with each row's copy replaced by the primary record it
/// names (`primary` maps an index key to the primary key), read from
/// verifiable state: a proven listing then proves what it returns.
///
/// # Errors
/// [`StoreError::Corrupt`] when an index key names no primary key, or its
/// primary record is missing.
pub fn resolve(
    view: &dyn QueryRead,
    rows: Rows,
    primary: impl Fn(&[u8]) -> Option<Vec<u8>>,
) -> Result<Rows, StoreError> {
    rows.into_iter()
        .map(|(k, _)| {
            let pk = primary(&k)
                .ok_or_else(|| StoreError::corrupt(&k, "index key names no primary key"))?;
            let v = view
                .get_raw(&pk)?
                .ok_or_else(|| StoreError::corrupt(&k, "index row without its primary record"))?;
            Ok((k, v))
        })
        .collect()
}

/// An empty cursor means "from the start".
pub fn cursor(c: &[u8]) -> Option<&[u8]> {
    (!c.is_empty()).then_some(c)
}

/// Entitlements of `cid`, in pubkey order.
pub fn by_cid(
    view: &dyn QueryRead,
    cid: &[u8],
    after: &[u8],
    limit: u32,
) -> Result<Page<pb::Entitlement>, StoreError> {
    let n = page_size(limit);
    let rows = view.prefix_raw(
        Space::State,
        &entitlements_cid_prefix(cid),
        cursor(after),
        n + 1,
    )?;
    decode_page(rows, n)
}

/// Entitlements held by `pubkey`, in cid order, from the index.
pub fn by_key(
    view: &dyn QueryRead,
    pubkey: &[u8; 32],
    after: &[u8],
    limit: u32,
) -> Result<Page<pb::Entitlement>, StoreError> {
    let n = page_size(limit);
    let prefix = entitlements_by_key_prefix(pubkey);
    let rows = view.prefix_raw(Space::Index, &prefix, cursor(after), n + 1)?;
    let rows = resolve(view, rows, |k| {
        let cid = super::keys::split_cid_segment(k.strip_prefix(prefix.as_slice())?)?;
        Some(super::keys::entitlement_key(cid, pubkey))
    })?;
    decode_page(rows, n)
}
