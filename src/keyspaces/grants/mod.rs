//! The `grants/` keyspace, the audit log of access grants:
//! `grants/{cid}/{consumer}/{period}`, with the index
//! `grants_by_key/{consumer}/{cid}/{period}` (same value, index space).
//! One record per (cid, consumer, grant period), counting the deliveries
//! DEK holders recorded in it, so the log grows with distinct listeners per
//! period, not with plays. Written by `RecordGrant` and `RecordGrants`.

mod keys;
mod rebuild;
mod record;

pub use keys::{
    grant_by_key_key, grant_key, grant_rate_key, grant_seq_key, grants_by_key_prefix,
    grants_cid_prefix,
};
pub use rebuild::rebuild_index;
pub use record::{period_start, RecordGrant, RecordGrants};

use prost::Message;

use crate::keyspaces::entitlements::query::{cursor, decode_page, page_size, resolve, Page};
use crate::keyspaces::u64_of;
use crate::proto::rights as pb;
use crate::store::{QueryRead, Space, StateRead, StateWrite, StoreError};

pub trait GrantsRead: StateRead {
    /// The record of the grant period starting at `period` (unix seconds,
    /// [`period_start`]).
    fn grant(
        &self,
        cid: &[u8],
        consumer: &[u8; 32],
        period: u64,
    ) -> Result<Option<pb::Grant>, StoreError> {
        let key = grant_key(cid, consumer, period);
        match self.get_raw(&key)? {
            None => Ok(None),
            Some(raw) => pb::Grant::decode(raw.as_slice())
                .map(Some)
                .map_err(|e| StoreError::corrupt(&key, e)),
        }
    }

    /// The end of `validator`'s last recorded delivery range (0: none).
    fn grant_seq(&self, validator: &[u8; 32]) -> Result<u64, StoreError> {
        let key = grant_seq_key(validator);
        u64_of(&key, self.get_raw(&key)?)
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
    /// Writes the grant and its index entry; returns the bytes the two
    /// rows take (what the recording validator is charged for a new one).
    fn put_grant(&mut self, consumer: &[u8; 32], g: &pb::Grant) -> u64 {
        use crate::keyspaces::accounts::storage::row_bytes;
        let value = g.encode_to_vec();
        let by_key = grant_by_key_key(consumer, &g.cid, g.period_start);
        let primary = grant_key(&g.cid, consumer, g.period_start);
        let bytes = row_bytes(by_key.len(), value.len()) + row_bytes(primary.len(), value.len());
        self.put_index_raw(by_key, value.clone());
        self.put_raw(primary, value);
        bytes
    }

    fn put_grant_seq(&mut self, validator: &[u8; 32], to: u64) {
        self.put_raw(grant_seq_key(validator), to.to_be_bytes().to_vec());
    }

    fn put_grants_recorded_at(&mut self, validator: &[u8; 32], height: u64, n: u64) {
        let mut v = height.to_be_bytes().to_vec();
        v.extend_from_slice(&n.to_be_bytes());
        self.put_raw(grant_rate_key(validator), v);
    }
}
impl<T: StateWrite + ?Sized> GrantsWrite for T {}

/// Grants of `cid`, in (consumer, period) order.
pub fn by_cid(
    view: &dyn QueryRead,
    cid: &[u8],
    after: &[u8],
    limit: u32,
) -> Result<Page<pb::Grant>, StoreError> {
    let n = page_size(limit);
    decode_page(
        view.prefix_raw(Space::State, &grants_cid_prefix(cid), cursor(after), n + 1)?,
        n,
    )
}

/// Grants of `consumer`, in (cid, period) order, from the index.
pub fn by_key(
    view: &dyn QueryRead,
    consumer: &[u8; 32],
    after: &[u8],
    limit: u32,
) -> Result<Page<pb::Grant>, StoreError> {
    let n = page_size(limit);
    let prefix = grants_by_key_prefix(consumer);
    let rows = view.prefix_raw(Space::Index, &prefix, cursor(after), n + 1)?;
    let rows = resolve(view, rows, |k| {
        let (cid, period) = keys::split_by_key_rest(k.strip_prefix(prefix.as_slice())?)?;
        Some(grant_key(cid, consumer, period))
    })?;
    decode_page(rows, n)
}
