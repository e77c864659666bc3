//! Typed access to upload records.

use prost::Message;

use super::keys::upload_key;
use crate::proto::rights as pb;
use crate::store::{StateRead, StateWrite, StoreError};

pub trait UploadsRead: StateRead {
    fn upload(&self, flac_cid: &[u8]) -> Result<Option<pb::Upload>, StoreError> {
        let key = upload_key(flac_cid);
        match self.get_raw(&key)? {
            None => Ok(None),
            Some(raw) => pb::Upload::decode(raw.as_slice())
                .map(Some)
                .map_err(|e| StoreError::corrupt(&key, e)),
        }
    }
}
impl<T: StateRead + ?Sized> UploadsRead for T {}

pub trait UploadsWrite: StateWrite {
    fn put_upload(&mut self, upload: &pb::Upload) {
        self.put_raw(upload_key(&upload.flac_cid), upload.encode_to_vec());
    }
}
impl<T: StateWrite + ?Sized> UploadsWrite for T {}
