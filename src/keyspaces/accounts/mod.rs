//! The `accounts/` keyspace: `accounts/{pubkey}` holds the next nonce, the
//! creation height and time, and the bytes of state the account holds.
//! Accounts are created implicitly on first use.

mod keys;
mod state;

pub use keys::account_key;
pub use state::{AccountsRead, AccountsWrite};

use crate::proto::accounts as pb;

/// An account (domain type of `stave.accounts.v1.Account`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Account {
    /// The nonce the next tx must carry.
    pub nonce: u64,
    pub created_at: i64,
    pub created_height: u64,
    pub stored_bytes: u64,
}

impl From<pb::Account> for Account {
    fn from(a: pb::Account) -> Self {
        Account {
            nonce: a.nonce,
            created_at: a.created_at,
            created_height: a.created_height,
            stored_bytes: a.stored_bytes,
        }
    }
}

impl From<Account> for pb::Account {
    fn from(a: Account) -> Self {
        pb::Account {
            nonce: a.nonce,
            created_at: a.created_at,
            created_height: a.created_height,
            stored_bytes: a.stored_bytes,
        }
    }
}
