//! The `releases/` keyspace: `releases/{flac_cid}`, written once by
//! `PublishRelease`, which also moves the upload to `PUBLISHED` and creates
//! the publisher's `OWNER` entitlement.

mod publish;

pub use publish::PublishRelease;

use prost::Message;

use crate::proto::rights as pb;
use crate::store::{StateRead, StateWrite, StoreError};

const PREFIX: &[u8] = b"releases/";

/// `releases/{flac_cid}`.
pub fn release_key(flac_cid: &[u8]) -> Vec<u8> {
    let mut k = PREFIX.to_vec();
    k.extend_from_slice(flac_cid);
    k
}

pub trait ReleasesRead: StateRead {
    fn release(&self, flac_cid: &[u8]) -> Result<Option<pb::Release>, StoreError> {
        let key = release_key(flac_cid);
        match self.get_raw(&key)? {
            None => Ok(None),
            Some(raw) => pb::Release::decode(raw.as_slice())
                .map(Some)
                .map_err(|e| StoreError::corrupt(&key, e)),
        }
    }
}
impl<T: StateRead + ?Sized> ReleasesRead for T {}

pub trait ReleasesWrite: StateWrite {
    /// Writes the release; returns the bytes written (what the publisher is
    /// charged).
    fn put_release(&mut self, r: &pb::Release) -> u64 {
        let key = release_key(&r.flac_cid);
        let value = r.encode_to_vec();
        let bytes = crate::keyspaces::accounts::storage::row_bytes(key.len(), value.len());
        self.put_raw(key, value);
        bytes
    }
}
impl<T: StateWrite + ?Sized> ReleasesWrite for T {}

/// The release's decoded ERN (the stored `ddex_ern` bytes).
pub fn ern_of(r: &pb::Release) -> Result<pb::ErnRelease, prost::DecodeError> {
    pb::ErnRelease::decode(r.ddex_ern.as_slice())
}
