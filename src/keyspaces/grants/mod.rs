//! The `grants/` keyspace, the audit log of access grants:
//! `grants/{cid}/{consumer}/{block_height}`, with the index
//! `grants_by_key/{consumer}/{cid}/{block_height}` (same value, index
//! space). Written by `RecordGrant`.

mod keys;
mod record;

pub use keys::{
    grant_by_key_key, grant_key, grant_rate_key, grants_by_key_prefix, grants_cid_prefix,
};
pub use record::RecordGrant;

use prost::Message;

use crate::keyspaces::entitlements::query::{cursor, decode_page, page_size, Page};
use crate::keyspaces::u64_of;
use crate::proto::rights as pb;
use crate::store::{StateRead, StateWrite, StoreError, View};

pub trait GrantsRead: StateRead {
    fn grant(
        &self,
        cid: &[u8],
        consumer: &[u8; 32],
        height: u64,
    ) -> Result<Option<pb::Grant>, StoreError> {
        let key = grant_key(cid, consumer, height);
        match self.get_raw(&key)? {
            None => Ok(None),
            Some(raw) => pb::Grant::decode(raw.as_slice())
                .map(Some)
                .map_err(|e| StoreError::corrupt(&key, e)),
        }
    }

    /// Grants `validator` recorded at `height` (0 when its latest were
    /// recorded at another height).
    fn grants_recorded_at(&self, validator: &[u8; 32], height: u64) -> Result<u64, StoreError> {
        let key = grant_rate_key(validator);
        let Some(raw) = self.get_raw(&key)? else {
            return Ok(0);
        };
        let arr: [u8; 16] = raw
            .as_slice()
            .try_into()
            .map_err(|_| StoreError::corrupt(&key, "grant rate is not 16 bytes"))?;
        let (at, n) = arr.split_at(8);
        Ok(if at == height.to_be_bytes() {
            u64_of(&key, Some(n.to_vec()))?
        } else {
            0
        })
    }
}
impl<T: StateRead + ?Sized> GrantsRead for T {}

pub trait GrantsWrite: StateWrite {
    /// Writes the grant and its index entry; returns the bytes written
    /// (what the recording validator is charged).
    fn put_grant(&mut self, consumer: &[u8; 32], g: &pb::Grant) -> u64 {
        use crate::keyspaces::accounts::storage::row_bytes;
        let value = g.encode_to_vec();
        let by_key = grant_by_key_key(consumer, &g.cid, g.block_height);
        let primary = grant_key(&g.cid, consumer, g.block_height);
        let bytes = row_bytes(by_key.len(), value.len()) + row_bytes(primary.len(), value.len());
        self.put_index_raw(by_key, value.clone());
        self.put_raw(primary, value);
        bytes
    }

    fn put_grants_recorded_at(&mut self, validator: &[u8; 32], height: u64, n: u64) {
        let mut v = height.to_be_bytes().to_vec();
        v.extend_from_slice(&n.to_be_bytes());
        self.put_raw(grant_rate_key(validator), v);
    }
}
impl<T: StateWrite + ?Sized> GrantsWrite for T {}

/// Grants of `cid`, in (consumer, height) order.
pub fn by_cid(
    view: &View<'_>,
    cid: &[u8],
    after: &[u8],
    limit: u32,
) -> Result<Page<pb::Grant>, StoreError> {
    let n = page_size(limit);
    decode_page(
        view.prefix_list(&grants_cid_prefix(cid), cursor(after), n + 1)?,
        n,
    )
}

/// Grants of `consumer`, in (cid, height) order, from the index.
pub fn by_key(
    view: &View<'_>,
    consumer: &[u8; 32],
    after: &[u8],
    limit: u32,
) -> Result<Page<pb::Grant>, StoreError> {
    let n = page_size(limit);
    decode_page(
        view.index_prefix_list(&grants_by_key_prefix(consumer), cursor(after), n + 1)?,
        n,
    )
}
