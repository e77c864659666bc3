//! Typed access to upload records.

use prost::Message;

use super::keys::{
    content_pool_key, upload_by_content_key, upload_by_image_key, upload_key, validator_usage_key,
};
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

    /// The upload whose encrypted blob is `encrypted_cid`, through
    /// `uploads_by_content/` (verifiable state: it also makes each
    /// `encrypted_cid` belong to one upload).
    fn upload_by_content(&self, encrypted_cid: &[u8]) -> Result<Option<pb::Upload>, StoreError> {
        match self.get_raw(&upload_by_content_key(encrypted_cid))? {
            None => Ok(None),
            Some(flac_cid) => self.upload(&flac_cid),
        }
    }

    /// The first upload that carried the image `image_cid`.
    fn upload_by_image(&self, image_cid: &[u8]) -> Result<Option<pb::Upload>, StoreError> {
        match self.get_raw(&upload_by_image_key(image_cid))? {
            None => Ok(None),
            Some(flac_cid) => self.upload(&flac_cid),
        }
    }

    /// Content bytes charged to `group_id`'s pool, the ungrouped pool when
    /// it is empty (0 if none yet).
    fn content_pool_used(&self, group_id: &str) -> Result<u64, StoreError> {
        self.usage(&content_pool_key(group_id))
    }

    /// Encrypted bytes `operator` is named to replicate (0 if none yet).
    fn validator_replicated(&self, operator: &[u8]) -> Result<u64, StoreError> {
        self.usage(&validator_usage_key(operator))
    }

    /// An 8-byte big-endian counter at `key`.
    /// The height at which `operator`'s assignments last changed (0:
    /// never).
    fn assignment_epoch(&self, operator: &[u8; 32]) -> Result<u64, StoreError> {
        let key = super::keys::assignment_epoch_key(operator);
        crate::keyspaces::u64_of(&key, self.get_raw(&key)?)
    }

    fn usage(&self, key: &[u8]) -> Result<u64, StoreError> {
        match self.get_raw(key)? {
            None => Ok(0),
            Some(raw) => <[u8; 8]>::try_from(raw.as_slice())
                .map(u64::from_be_bytes)
                .map_err(|_| StoreError::corrupt(key, "usage counter is not 8 bytes")),
        }
    }
}
impl<T: StateRead + ?Sized> UploadsRead for T {}

pub trait UploadsWrite: StateWrite {
    /// Writes the record, its `uploads_by_content/` entry and the
    /// `uploads_by_image/` entries no earlier upload wrote; returns the
    /// bytes written (what the uploader is charged).
    fn put_upload(&mut self, upload: &pb::Upload) -> Result<u64, StoreError> {
        use crate::keyspaces::accounts::storage::row_bytes;
        let key = upload_key(&upload.flac_cid);
        let value = upload.encode_to_vec();
        let mut bytes = row_bytes(key.len(), value.len());
        self.put_raw(key, value);
        if !upload.encrypted_cid.is_empty() {
            let k = upload_by_content_key(&upload.encrypted_cid);
            bytes += row_bytes(k.len(), upload.flac_cid.len());
            self.put_raw(k, upload.flac_cid.clone());
        }
        for c in &upload.image_cids {
            let k = upload_by_image_key(c);
            if self.get_raw(&k)?.is_none() {
                bytes += row_bytes(k.len(), upload.flac_cid.len());
                self.put_raw(k, upload.flac_cid.clone());
            }
        }
        Ok(bytes)
    }

    /// Sets the 8-byte big-endian counter at `key` (a `content_pool_key`
    /// or `validator_usage_key`).
    fn put_usage(&mut self, key: &[u8], bytes: u64) {
        self.put_raw(key.to_vec(), bytes.to_be_bytes().to_vec());
    }
}
impl<T: StateWrite + ?Sized> UploadsWrite for T {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{MemState, Overlay};

    #[test]
    fn an_upload_is_found_by_its_encrypted_cid() {
        let base = MemState::default();
        let mut o = Overlay::new(&base);
        let u = pb::Upload {
            flac_cid: b"flac".to_vec(),
            encrypted_cid: b"enc".to_vec(),
            ..Default::default()
        };
        o.put_upload(&u).unwrap();
        assert_eq!(o.upload_by_content(b"enc").unwrap(), Some(u));
        assert_eq!(o.upload_by_content(b"flac").unwrap(), None);
    }
}
