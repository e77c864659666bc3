//! Typed access to accounts.

use prost::Message;

use super::{keys::account_key, Account};
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
}
impl<T: StateRead + ?Sized> AccountsRead for T {}

pub trait AccountsWrite: StateWrite {
    fn put_account(&mut self, pubkey: &[u8; 32], account: &Account) {
        self.put_raw(
            account_key(pubkey),
            pb::Account::from(*account).encode_to_vec(),
        );
    }
}
impl<T: StateWrite + ?Sized> AccountsWrite for T {}
