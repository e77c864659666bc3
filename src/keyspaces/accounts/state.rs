//! Typed access to accounts, sponsorships and sponsor pools.

use prost::Message;

use super::keys::{account_key, pool_key, sponsorship_key};
use super::Account;
use crate::proto::accounts as pb;
use crate::store::{StateRead, StateWrite, StoreError};

pub trait AccountsRead: StateRead {
    fn account(&self, pubkey: &[u8; 32]) -> Result<Option<Account>, StoreError> {
        let key = account_key(pubkey);
        match self.get_raw(&key)? {
            None => Ok(None),
            Some(raw) => pb::Account::decode(raw.as_slice())
                .map(|a| Some(a.into()))
                .map_err(|e| StoreError::corrupt(&key, e)),
        }
    }

    /// The nonce the account's next tx must carry (0 for a new account).
    fn next_nonce(&self, pubkey: &[u8; 32]) -> Result<u64, StoreError> {
        Ok(self.account(pubkey)?.map(|a| a.nonce).unwrap_or(0))
    }

    /// What the pool `pool_id` has moved to `account` (0: nothing).
    fn sponsorship(&self, account: &[u8; 32], pool_id: &[u8]) -> Result<u64, StoreError> {
        let key = sponsorship_key(account, pool_id);
        crate::keyspaces::u64_of(&key, self.get_raw(&key)?)
    }

    /// What the pool `pool_id` has moved to accounts in total.
    fn pool_allocated(&self, pool_id: &[u8]) -> Result<u64, StoreError> {
        let key = pool_key(pool_id);
        match self.get_raw(&key)? {
            None => Ok(0),
            Some(raw) => pb::SponsorPool::decode(raw.as_slice())
                .map(|p| p.allocated)
                .map_err(|e| StoreError::corrupt(&key, e)),
        }
    }
}
impl<T: StateRead + ?Sized> AccountsRead for T {}

pub trait AccountsWrite: StateWrite {
    fn put_account(&mut self, pubkey: &[u8; 32], account: &Account) {
        self.put_raw(
            account_key(pubkey),
            pb::Account::from(*account).encode_to_vec(),
        );
    }

    /// Sets a sponsorship; an amount of 0 deletes it.
    fn put_sponsorship(&mut self, account: &[u8; 32], pool_id: &[u8], amount: u64) {
        let key = sponsorship_key(account, pool_id);
        if amount == 0 {
            self.delete_raw(key);
        } else {
            self.put_raw(key, amount.to_be_bytes().to_vec());
        }
    }

    /// Sets a pool's total; 0 deletes its record.
    fn put_pool_allocated(&mut self, pool_id: &[u8], allocated: u64) {
        let key = pool_key(pool_id);
        if allocated == 0 {
            self.delete_raw(key);
        } else {
            self.put_raw(key, pb::SponsorPool { allocated }.encode_to_vec());
        }
    }
}
impl<T: StateWrite + ?Sized> AccountsWrite for T {}
