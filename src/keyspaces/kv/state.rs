//! Typed access to kv entries.

use prost::Message;

use super::{keys::kv_key, KvEntry};
use crate::proto::kv as pb;
use crate::store::{StateRead, StateWrite, StoreError};

pub trait KvRead: StateRead {
    fn kv_entry(&self, signer: &[u8; 32], key: &[u8]) -> Result<Option<KvEntry>, StoreError> {
        let k = kv_key(signer, key);
        match self.get_raw(&k)? {
            None => Ok(None),
            Some(raw) => pb::KvEntry::decode(raw.as_slice())
                .map(|e| Some(e.into()))
                .map_err(|e| StoreError::corrupt(&k, e)),
        }
    }
}
impl<T: StateRead + ?Sized> KvRead for T {}

pub trait KvWrite: StateWrite {
    fn put_kv_entry(&mut self, signer: &[u8; 32], key: &[u8], entry: KvEntry) {
        self.put_raw(
            kv_key(signer, key),
            pb::KvEntry::from(entry).encode_to_vec(),
        );
    }
    fn delete_kv_entry(&mut self, signer: &[u8; 32], key: &[u8]) {
        self.delete_raw(kv_key(signer, key));
    }
}
impl<T: StateWrite + ?Sized> KvWrite for T {}
