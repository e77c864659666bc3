//! The `deks/` keyspace: `deks/{cid}`, the uploader's recovery wrapped DEK,
//! the only wrapped DEK on chain. Written only by `UploadComplete`.

use prost::Message;

use crate::proto::rights as pb;
use crate::store::{StateRead, StateWrite, StoreError};

const PREFIX: &[u8] = b"deks/";

/// `deks/{cid}`.
pub fn dek_key(cid: &[u8]) -> Vec<u8> {
    let mut k = PREFIX.to_vec();
    k.extend_from_slice(cid);
    k
}

pub trait DeksRead: StateRead {
    fn recovery_dek(&self, cid: &[u8]) -> Result<Option<pb::WrappedDek>, StoreError> {
        let key = dek_key(cid);
        match self.get_raw(&key)? {
            None => Ok(None),
            Some(raw) => pb::WrappedDek::decode(raw.as_slice())
                .map(Some)
                .map_err(|e| StoreError::corrupt(&key, e)),
        }
    }
}
impl<T: StateRead + ?Sized> DeksRead for T {}

pub trait DeksWrite: StateWrite {
    fn put_recovery_dek(&mut self, dek: &pb::WrappedDek) {
        self.put_raw(dek_key(&dek.cid), dek.encode_to_vec());
    }
}
impl<T: StateWrite + ?Sized> DeksWrite for T {}
