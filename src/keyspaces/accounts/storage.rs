//! Charging state bytes to the account that caused them.
//!
//! A charge is admitted in one of three ways:
//! - within the account's sponsored `quota`;
//! - for an ACTIVE validator operator past its quota, by moving the
//!   shortfall from its own pool to itself (a sponsorship like any other);
//! - for an unsponsored account (quota 0), within
//!   `max_stored_bytes_per_account`. What an unsponsored *signer's* tx
//!   writes also draws on the block's `unsponsored_block_bytes`, measured on
//!   the rows it really writes (`app::execute`); so does what any tx charges
//!   to an unsponsored account other than its signer
//!   ([`TxContext::unsponsored_others`]).
//!
//! Releases never fail.

use super::sponsor::Pool;
use super::{Account, AccountsRead, AccountsWrite};
use crate::keyspaces::validators::ValidatorsRead;
use crate::keyspaces::TxContext;
use crate::store::{StateRead, StateWrite, StoreError};
use crate::tx::TxError;

/// Bytes an account record is charged: its 41-byte key, the largest record
/// and the row overhead. Accounts are never deleted, so this stays charged.
pub const ACCOUNT_RECORD_BYTES: u64 = 96;

/// The bytes one stored row is charged: its key and value.
pub fn row_bytes(key_len: usize, value_len: usize) -> u64 {
    (key_len as u64).saturating_add(value_len as u64)
}

/// A fresh record for an account first seen at `height`/`time_ns`, charged
/// for itself.
pub fn new_account(height: u64, time_ns: i64) -> Account {
    Account {
        nonce: 0,
        created_at: time_ns,
        created_height: height,
        stored_bytes: ACCOUNT_RECORD_BYTES,
        quota: 0,
    }
}

/// Whether `pubkey`'s txs need no proof of work: it holds sponsored quota or
/// is the operator of an ACTIVE validator (which sponsors itself).
pub fn is_sponsored<S: StateRead + ?Sized>(
    state: &S,
    pubkey: &[u8; 32],
    account: Option<&Account>,
) -> Result<bool, StoreError> {
    if account.is_some_and(|a| a.quota > 0) {
        return Ok(true);
    }
    state.is_active_validator(pubkey)
}

/// Adds `add` and releases `sub` bytes on `payer`'s account, creating it
/// (charged for itself) if new.
///
/// # Errors
/// `QuotaExceeded` past a sponsored quota or the unsponsored per-account
/// cap; `SponsorBudget` when a validator's own pool cannot cover it.
pub fn charge<S: StateWrite>(
    state: &mut S,
    ctx: &TxContext,
    payer: &[u8; 32],
    add: u64,
    sub: u64,
) -> Result<(), TxError> {
    let (mut account, add) = match state.account(payer)? {
        Some(a) => (a, add),
        None if add == 0 => return Ok(()),
        None => (
            Account {
                stored_bytes: 0,
                ..new_account(ctx.height, ctx.time_ns)
            },
            add.saturating_add(ACCOUNT_RECORD_BYTES),
        ),
    };
    let used = account.stored_bytes.saturating_sub(sub);
    if add > 0 {
        admit(state, ctx, payer, &mut account, used, add)?;
    }
    account.stored_bytes = used.saturating_add(add);
    state.put_account(payer, &account);
    Ok(())
}

fn admit<S: StateWrite>(
    state: &mut S,
    ctx: &TxContext,
    payer: &[u8; 32],
    account: &mut Account,
    used: u64,
    add: u64,
) -> Result<(), TxError> {
    let total = used.saturating_add(add);
    if total <= account.quota {
        return Ok(());
    }
    if state.is_active_validator(payer)? {
        let shortfall = total - account.quota;
        Pool::Validator(*payer).grow(state, ctx, payer, shortfall)?;
        account.quota += shortfall;
        return Ok(());
    }
    let exceeded = |quota| TxError::QuotaExceeded {
        account: hex::encode(payer),
        used,
        adding: add,
        quota,
    };
    if account.quota > 0 {
        return Err(exceeded(account.quota));
    }
    let cap = ctx.params.max_stored_bytes_per_account;
    if total > cap {
        return Err(exceeded(cap));
    }
    if *payer != ctx.signer {
        let others = &ctx.unsponsored_others;
        others.set(others.get().saturating_add(add));
    }
    Ok(())
}

/// Removes `sub` bytes from `payer`'s stored bytes (never fails).
pub fn release<S: StateWrite>(state: &mut S, payer: &[u8; 32], sub: u64) -> Result<(), StoreError> {
    if sub == 0 {
        return Ok(());
    }
    if let Some(mut a) = state.account(payer)? {
        a.stored_bytes = a.stored_bytes.saturating_sub(sub).max(ACCOUNT_RECORD_BYTES);
        state.put_account(payer, &a);
    }
    Ok(())
}
