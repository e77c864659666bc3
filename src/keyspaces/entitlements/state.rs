//! Typed access to entitlements. Every write keeps the
//! `entitlements_by_key/` index and the owner count in step with the
//! primary record.

use prost::Message;

use super::keys::{
    entitlement_by_key_key, entitlement_count_key, entitlement_key, owner_count_key,
};
use crate::proto::rights as pb;
use crate::store::{StateRead, StateWrite, StoreError};

fn is_owner(e: &pb::Entitlement) -> bool {
    e.role == pb::Role::Owner as i32
}

fn read_count(state: &(impl StateRead + ?Sized), key: &[u8]) -> Result<u64, StoreError> {
    crate::keyspaces::u64_of(key, state.get_raw(key)?)
}

/// Counts one up or down under `key`; a count of 0 is deleted.
fn step_count<S: StateWrite + ?Sized>(
    state: &mut S,
    key: Vec<u8>,
    up: bool,
) -> Result<(), StoreError> {
    let n = read_count(state, &key)?;
    let n = if up {
        n.saturating_add(1)
    } else {
        n.saturating_sub(1)
    };
    if n == 0 {
        state.delete_raw(key);
    } else {
        state.put_raw(key, n.to_be_bytes().to_vec());
    }
    Ok(())
}

/// The bytes a record costs its grantor: the primary row and its
/// `entitlements_by_key/` row.
pub fn entitlement_bytes(pubkey: &[u8; 32], e: &pb::Entitlement) -> u64 {
    use crate::keyspaces::accounts::storage::row_bytes;
    let value = e.encoded_len();
    let by_key = entitlement_by_key_key(pubkey, &e.cid).len();
    let primary = entitlement_key(&e.cid, pubkey).len();
    row_bytes(primary, value).saturating_add(row_bytes(by_key, value))
}

/// The account a record is charged to: its grantor.
pub fn payer_of(e: &pb::Entitlement) -> Option<[u8; 32]> {
    e.grantor.as_slice().try_into().ok()
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
        read_count(self, &owner_count_key(cid))
    }

    /// How many entitlement records `cid` has.
    fn entitlement_count(&self, cid: &[u8]) -> Result<u64, StoreError> {
        read_count(self, &entitlement_count_key(cid))
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
        if old.is_none() {
            step_count(self, entitlement_count_key(&e.cid), true)?;
        }
        let value = e.encode_to_vec();
        self.put_index_raw(entitlement_by_key_key(pubkey, &e.cid), value.clone());
        self.put_raw(entitlement_key(&e.cid, pubkey), value);
        Ok(())
    }

    /// Removes the record of `(cid, pubkey)` and its index entry.
    fn delete_entitlement(&mut self, cid: &[u8], pubkey: &[u8; 32]) -> Result<(), StoreError> {
        let old = self.entitlement(cid, pubkey)?;
        self.adjust_owners(cid, old.as_ref().is_some_and(is_owner), false)?;
        if old.is_some() {
            step_count(self, entitlement_count_key(cid), false)?;
        }
        self.delete_index_raw(entitlement_by_key_key(pubkey, cid));
        self.delete_raw(entitlement_key(cid, pubkey));
        Ok(())
    }

    #[doc(hidden)]
    fn adjust_owners(&mut self, cid: &[u8], was: bool, is: bool) -> Result<(), StoreError> {
        if was == is {
            return Ok(());
        }
        step_count(self, owner_count_key(cid), is)
    }
}
impl<T: StateWrite + ?Sized> EntitlementsWrite for T {}
