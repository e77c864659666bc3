//! Typed access to entitlements. Every write keeps the
//! `entitlements_by_key/` index and the owner count in step with the
//! primary record.

use prost::Message;

use super::keys::{entitlement_by_key_key, entitlement_key, owner_count_key};
use crate::proto::rights as pb;
use crate::store::{StateRead, StateWrite, StoreError};

fn is_owner(e: &pb::Entitlement) -> bool {
    e.role == pb::Role::Owner as i32
}

pub trait EntitlementsRead: StateRead {
    fn entitlement(
        &self,
        cid: &[u8],
        pubkey: &[u8; 32],
    ) -> Result<Option<pb::Entitlement>, StoreError> {
        let key = entitlement_key(cid, pubkey);
        match self.get_raw(&key)? {
            None => Ok(None),
            Some(raw) => pb::Entitlement::decode(raw.as_slice())
                .map(Some)
                .map_err(|e| StoreError::corrupt(&key, e)),
        }
    }

    /// The role `pubkey` holds on `cid`, if any.
    fn role_of(&self, cid: &[u8], pubkey: &[u8; 32]) -> Result<Option<pb::Role>, StoreError> {
        Ok(self
            .entitlement(cid, pubkey)?
            .and_then(|e| pb::Role::try_from(e.role).ok()))
    }

    /// How many OWNER records `cid` has.
    fn owner_count(&self, cid: &[u8]) -> Result<u64, StoreError> {
        let key = owner_count_key(cid);
        match self.get_raw(&key)? {
            None => Ok(0),
            Some(raw) => {
                let arr: [u8; 8] = raw
                    .as_slice()
                    .try_into()
                    .map_err(|_| StoreError::corrupt(&key, "owner count is not 8 bytes"))?;
                Ok(u64::from_be_bytes(arr))
            }
        }
    }
}
impl<T: StateRead + ?Sized> EntitlementsRead for T {}

pub trait EntitlementsWrite: StateWrite {
    /// Writes (or replaces) the record of `(e.cid, pubkey)` and its index entry.
    fn put_entitlement(
        &mut self,
        pubkey: &[u8; 32],
        e: &pb::Entitlement,
    ) -> Result<(), StoreError> {
        let old = self.entitlement(&e.cid, pubkey)?;
        let was = old.as_ref().is_some_and(is_owner);
        self.adjust_owners(&e.cid, was, is_owner(e))?;
        let value = e.encode_to_vec();
        self.put_index_raw(entitlement_by_key_key(pubkey, &e.cid), value.clone());
        self.put_raw(entitlement_key(&e.cid, pubkey), value);
        Ok(())
    }

    /// Removes the record of `(cid, pubkey)` and its index entry.
    fn delete_entitlement(&mut self, cid: &[u8], pubkey: &[u8; 32]) -> Result<(), StoreError> {
        let old = self.entitlement(cid, pubkey)?;
        self.adjust_owners(cid, old.as_ref().is_some_and(is_owner), false)?;
        self.delete_index_raw(entitlement_by_key_key(pubkey, cid));
        self.delete_raw(entitlement_key(cid, pubkey));
        Ok(())
    }

    #[doc(hidden)]
    fn adjust_owners(&mut self, cid: &[u8], was: bool, is: bool) -> Result<(), StoreError> {
        if was == is {
            return Ok(());
        }
        let n = self.owner_count(cid)?;
        let n = if is {
            n.saturating_add(1)
        } else {
            n.saturating_sub(1)
        };
        if n == 0 {
            self.delete_raw(owner_count_key(cid));
        } else {
            self.put_raw(owner_count_key(cid), n.to_be_bytes().to_vec());
        }
        Ok(())
    }
}
impl<T: StateWrite + ?Sized> EntitlementsWrite for T {}
