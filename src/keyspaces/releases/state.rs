//! Typed access to releases: the current record, its earlier versions, the
//! per-cid deal rows and the party index. Every write returns the bytes it
//! stored, which the signer is charged.

use prost::Message;

use super::keys::{by_cid_key, by_cid_prefix, by_party_key, release_key, version_key};
use crate::keyspaces::accounts::storage::row_bytes;
use crate::proto::ddex as pb;
use crate::store::decode_row as decode;
use crate::store::{Space, StateRead, StateWrite, StoreError};

/// The bytes a record is charged at: its value under the longer of its two
/// keys (`releases/` now, `release_versions/` once replaced), so moving it
/// to the history costs nothing more.
pub fn record_bytes(r: &pb::ReleaseRecord) -> u64 {
    let key = release_key(&r.release_id)
        .len()
        .max(version_key(&r.release_id, r.version).len());
    row_bytes(key, r.encoded_len())
}

pub trait ReleasesRead: StateRead {
    fn release(&self, id: &str) -> Result<Option<pb::ReleaseRecord>, StoreError> {
        let key = release_key(id);
        decode(&key, self.get_raw(&key)?)
    }

    fn release_version(&self, id: &str, v: u32) -> Result<Option<pb::ReleaseRecord>, StoreError> {
        let key = version_key(id, v);
        decode(&key, self.get_raw(&key)?)
    }

    /// Up to `limit` `(release_id, deals)` rows of `cid`, after `after`
    /// (a release id), in id order.
    fn cid_releases(
        &self,
        cid: &[u8],
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<(String, pb::CidDeals)>, StoreError> {
        let prefix = by_cid_prefix(cid);
        let after = after.map(|id| by_cid_key(cid, id));
        let rows = self.prefix_raw(Space::State, &prefix, after.as_deref(), limit)?;
        rows.into_iter()
            .map(|(k, v)| {
                let id = k.get(prefix.len()..).unwrap_or_default();
                let id = String::from_utf8_lossy(id).into_owned();
                let deals =
                    pb::CidDeals::decode(v.as_slice()).map_err(|e| StoreError::corrupt(&k, e))?;
                Ok((id, deals))
            })
            .collect()
    }
}
impl<T: StateRead + ?Sized> ReleasesRead for T {}

pub trait ReleasesWrite: StateWrite {
    fn put_release(&mut self, r: &pb::ReleaseRecord) {
        self.put_raw(release_key(&r.release_id), r.encode_to_vec());
    }

    fn put_release_version(&mut self, r: &pb::ReleaseRecord) {
        self.put_raw(version_key(&r.release_id, r.version), r.encode_to_vec());
    }

    fn delete_release_version(&mut self, id: &str, version: u32) {
        self.delete_raw(version_key(id, version));
    }

    /// Writes `releases_by_cid/{cid}/{id}`; returns its bytes.
    fn put_cid_deals(&mut self, cid: &[u8], id: &str, deals: &pb::CidDeals) -> u64 {
        let key = by_cid_key(cid, id);
        let value = deals.encode_to_vec();
        let bytes = row_bytes(key.len(), value.len());
        self.put_raw(key, value);
        bytes
    }

    /// Deletes `releases_by_cid/{cid}/{id}`; returns the bytes it held.
    fn delete_cid_deals(&mut self, cid: &[u8], id: &str) -> Result<u64, StoreError> {
        let key = by_cid_key(cid, id);
        let Some(old) = self.get_raw(&key)? else {
            return Ok(0);
        };
        let bytes = row_bytes(key.len(), old.len());
        self.delete_raw(key);
        Ok(bytes)
    }

    /// Writes the index row `releases_by_party/{party}/{id}`; returns its
    /// bytes.
    fn put_party_row(&mut self, party: &str, id: &str) -> u64 {
        let key = by_party_key(party, id);
        let bytes = row_bytes(key.len(), 0);
        self.put_index_raw(key, Vec::new());
        bytes
    }

    fn delete_party_row(&mut self, party: &str, id: &str) -> u64 {
        let key = by_party_key(party, id);
        let bytes = row_bytes(key.len(), 0);
        self.delete_index_raw(key);
        bytes
    }
}
impl<T: StateWrite + ?Sized> ReleasesWrite for T {}
