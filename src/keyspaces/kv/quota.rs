//! Stored-bytes quota of the kv area, on the shared account record.

use crate::keyspaces::accounts::{Account, AccountsRead, AccountsWrite};
use crate::keyspaces::TxContext;
use crate::store::StateWrite;
use crate::tx::TxError;

/// Adds `add` and removes `sub` bytes from `who`'s stored bytes.
///
/// # Errors
/// `QuotaExceeded` when bytes are added past `max_stored_bytes_per_account`.
pub fn charge<S: StateWrite>(
    state: &mut S,
    ctx: &TxContext,
    who: &[u8; 32],
    add: u64,
    sub: u64,
) -> Result<(), TxError> {
    let mut account = state.account(who)?.unwrap_or(Account {
        nonce: 0,
        created_at: ctx.time_ns,
        created_height: ctx.height,
        stored_bytes: 0,
    });
    let used = account.stored_bytes.saturating_sub(sub);
    let quota = ctx.params.max_stored_bytes_per_account;
    if add > 0 && used.saturating_add(add) > quota {
        return Err(TxError::QuotaExceeded {
            account: hex::encode(who),
            used,
            adding: add,
            quota,
        });
    }
    account.stored_bytes = used + add;
    state.put_account(who, &account);
    Ok(())
}

/// Removes `sub` bytes from `who`'s stored bytes (never fails).
pub fn release<S: StateWrite>(
    state: &mut S,
    who: &[u8; 32],
    sub: u64,
) -> Result<(), crate::store::StoreError> {
    if let Some(mut a) = state.account(who)? {
        a.stored_bytes = a.stored_bytes.saturating_sub(sub);
        state.put_account(who, &a);
    }
    Ok(())
}
