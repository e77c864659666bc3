//! The `accounts/` keyspace and who pays for state.
//!
//! - `accounts/{pubkey}` holds the next nonce, the creation height and time,
//!   the bytes of state charged to the account and its sponsored quota.
//!   Accounts are created on first use (or by a sponsor).
//! - Every byte of state is charged to the account that caused it
//!   ([`storage::charge`]). A sponsored account (quota > 0, or an ACTIVE
//!   validator operator drawing on its own pool) holds at most its quota.
//!   An unsponsored account holds at most `max_stored_bytes_per_account`,
//!   its writes share the block's `unsponsored_block_bytes`, and its txs
//!   carry proof of work ([`pow`]).
//! - `sponsor_pools/{pool}` and `sponsorships/{account}{pool}` record what
//!   ACTIVE validators and ACTIVE groups moved to accounts
//!   ([`SetAccountQuota`]).

mod keys;
mod params;
pub mod pow;
mod sponsor;
mod state;
pub mod storage;

pub use keys::{account_key, pool_key, sponsorship_key};
pub use params::StorageParams;
pub use sponsor::{Pool, SetAccountQuota};
pub use state::{AccountsRead, AccountsWrite};

use crate::proto::accounts as pb;

/// An account (domain type of `stave.accounts.v1.Account`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Account {
    /// The nonce the next tx must carry.
    pub nonce: u64,
    pub created_at: i64,
    pub created_height: u64,
    /// Bytes of state charged to the account, its own record included.
    pub stored_bytes: u64,
    /// Bytes sponsors moved to the account; 0 = unsponsored.
    pub quota: u64,
}

impl From<pb::Account> for Account {
    fn from(a: pb::Account) -> Self {
        Account {
            nonce: a.nonce,
            created_at: a.created_at,
            created_height: a.created_height,
            stored_bytes: a.stored_bytes,
            quota: a.quota,
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
            quota: a.quota,
        }
    }
}
