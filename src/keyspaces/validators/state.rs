//! Typed access to validator records.

use prost::Message;

use super::keys::validator_key;
use crate::proto::genesis as pb;
use crate::store::{StateRead, StateWrite, StoreError};

pub trait ValidatorsRead: StateRead {
    fn validator(&self, operator: &[u8; 32]) -> Result<Option<pb::ValidatorRecord>, StoreError> {
        let key = validator_key(operator);
        match self.get_raw(&key)? {
            None => Ok(None),
            Some(raw) => pb::ValidatorRecord::decode(raw.as_slice())
                .map(Some)
                .map_err(|e| StoreError::corrupt(&key, e)),
        }
    }

    /// Whether `operator` names a validator whose record is `ACTIVE`.
    fn is_active_validator(&self, operator: &[u8; 32]) -> Result<bool, StoreError> {
        Ok(self
            .validator(operator)?
            .is_some_and(|r| r.status == super::STATUS_ACTIVE))
    }
}
impl<T: StateRead + ?Sized> ValidatorsRead for T {}

pub trait ValidatorsWrite: StateWrite {
    fn put_validator(&mut self, operator: &[u8; 32], record: &pb::ValidatorRecord) {
        self.put_raw(validator_key(operator), record.encode_to_vec());
    }
}
impl<T: StateWrite + ?Sized> ValidatorsWrite for T {}
