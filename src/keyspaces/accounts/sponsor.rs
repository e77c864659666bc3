//! Sponsor pools and `SetAccountQuota`.
//!
//! An ACTIVE validator holds a pool of `storage.validator_budget` bytes and
//! an ACTIVE group one of `storage.group_budget`. A pool's `allocated` is
//! the sum of its sponsorships; an account's `quota` the sum of the
//! sponsorships it receives. Only an increase needs an ACTIVE pool with
//! room; a decrease returns only the quota the account does not use.

use super::storage::{new_account, ACCOUNT_RECORD_BYTES};
use super::{AccountsRead, AccountsWrite};
use crate::keyspaces::groups::require_authority;
use crate::keyspaces::params::Params;
use crate::keyspaces::validators::ValidatorsRead;
use crate::keyspaces::{Event, TxContext};
use crate::proto::accounts as pb;
use crate::store::{StateRead, StateWrite};
use crate::tx::TxError;

/// A sponsor pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pool {
    /// The pool of the validator with this operator key.
    Validator([u8; 32]),
    /// The pool of the group with this id.
    Group(String),
}

impl Pool {
    /// `v{operator:32}` or `g{group_id}`: the pool's id in keys.
    pub fn id(&self) -> Vec<u8> {
        match self {
            Pool::Validator(op) => [b"v".as_slice(), op].concat(),
            Pool::Group(g) => [b"g".as_slice(), g.as_bytes()].concat(),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Pool::Validator(op) => format!("validator {}", hex::encode(op)),
            Pool::Group(g) => format!("group {g:?}"),
        }
    }

    /// The pool's size: its budget while ACTIVE, else 0 (it may only shrink).
    fn budget<S: StateRead + ?Sized>(&self, state: &S, params: &Params) -> Result<u64, TxError> {
        Ok(match self {
            Pool::Validator(op) if state.is_active_validator(op)? => {
                params.storage.validator_budget
            }
            Pool::Group(g) if group_is_active(state, g)? => params.storage.group_budget,
            _ => 0,
        })
    }

    /// Moves `more` bytes from this pool to `account`'s sponsorship and the
    /// pool's total (the caller raises the account's quota).
    ///
    /// # Errors
    /// `SponsorBudget` when the pool has no room.
    pub fn grow<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &TxContext,
        account: &[u8; 32],
        more: u64,
    ) -> Result<(), TxError> {
        let id = self.id();
        let allocated = state.pool_allocated(&id)?;
        let budget = self.budget(state, &ctx.params)?;
        if allocated.saturating_add(more) > budget {
            return Err(TxError::SponsorBudget {
                pool: self.describe(),
                allocated,
                adding: more,
                budget,
            });
        }
        let held = state.sponsorship(account, &id)?;
        state.put_sponsorship(account, &id, held + more);
        state.put_pool_allocated(&id, allocated + more);
        Ok(())
    }
}

/// Whether the group is ACTIVE (the authority check is the caller's).
fn group_is_active<S: StateRead + ?Sized>(state: &S, group_id: &str) -> Result<bool, TxError> {
    use crate::keyspaces::groups::{GroupStatus, GroupsRead};
    Ok(state
        .group(group_id)?
        .is_some_and(|g| g.status == GroupStatus::Active as u32))
}

domain_action! {
    /// Sets the sponsorship of (the signer's pool, `account`) to `amount`.
    SetAccountQuota => pb::SetAccountQuota {
        account: Vec<u8>,
        amount: u64,
        group_id: String,
    }
}

impl SetAccountQuota {
    /// # Errors
    /// `InvalidArgument` for an account that is not a valid, non-weak
    /// ed25519 key, or a group id over `max_group_id_bytes`.
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        crate::tx::identity_key(&self.account)
            .map_err(|e| TxError::InvalidArgument(format!("account: {e}")))?;
        let max = params.rights.max_group_id_bytes as usize;
        if self.group_id.len() > max {
            return Err(TxError::InvalidArgument(format!(
                "group_id is {} bytes; allowed 0..={max}",
                self.group_id.len()
            )));
        }
        Ok(())
    }

    /// The pool the signer acts for.
    ///
    /// # Errors
    /// `NotSponsor` without a validator record; `NotTakedownAuthority` for
    /// a group the signer does not govern (or that is not ACTIVE).
    fn pool<S: StateRead>(&self, state: &S, signer: &[u8; 32]) -> Result<Pool, TxError> {
        if self.group_id.is_empty() {
            if state.validator(signer)?.is_none() {
                return Err(TxError::NotSponsor(format!(
                    "{} is not a validator operator (and names no group)",
                    hex::encode(signer)
                )));
            }
            return Ok(Pool::Validator(*signer));
        }
        require_authority(state, &self.group_id, signer, "(sponsorship)")?;
        Ok(Pool::Group(self.group_id.clone()))
    }

    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let account: [u8; 32] = self
            .account
            .as_slice()
            .try_into()
            .map_err(|_| TxError::InvalidArgument("account is not 32 bytes".into()))?;
        let pool = self.pool(state, &ctx.signer)?;
        let id = pool.id();
        let existing = state.account(&account)?;
        let creating = existing.is_none();
        let mut acc = existing.unwrap_or_else(|| new_account(ctx.height, ctx.time_ns));
        if creating && self.amount < ACCOUNT_RECORD_BYTES {
            return Err(TxError::QuotaExceeded {
                account: hex::encode(account),
                used: 0,
                adding: ACCOUNT_RECORD_BYTES,
                quota: self.amount,
            });
        }
        let old = state.sponsorship(&account, &id)?;
        let new = if self.amount >= old {
            pool.grow(state, ctx, &account, self.amount - old)?;
            self.amount
        } else {
            let unused = acc.quota.saturating_sub(acc.stored_bytes);
            let back = (old - self.amount).min(unused);
            let allocated = state.pool_allocated(&id)?;
            state.put_sponsorship(&account, &id, old - back);
            state.put_pool_allocated(&id, allocated.saturating_sub(back));
            old - back
        };
        acc.quota = acc.quota.saturating_sub(old).saturating_add(new);
        if new > old && acc.quota < acc.stored_bytes {
            return Err(TxError::InvalidArgument(format!(
                "a quota of {} would not cover the {} bytes {} already holds",
                acc.quota,
                acc.stored_bytes,
                hex::encode(account)
            )));
        }
        state.put_account(&account, &acc);
        ctx.emit(
            Event::new("account.quota")
                .indexed("account", hex::encode(account))
                .plain("pool", pool.describe())
                .plain("sponsorship", new.to_string())
                .plain("quota", acc.quota.to_string()),
        );
        Ok(())
    }
}
