//! Applying one tx to the block overlay, in the two classes of BRIEF §4:
//! a tx that fails to decode or authenticate changes nothing; a tx that
//! authenticates but whose actions fail consumes its nonce and nothing else.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use super::dispatch::dispatch;
use super::outcome::TxOutcome;
use crate::gas::{work, GasMeter, Metered, Work};
use crate::keyspaces::accounts::storage::{is_sponsored, new_account, ACCOUNT_RECORD_BYTES};
use crate::keyspaces::accounts::{pow, Account, AccountsRead, AccountsWrite};
use crate::keyspaces::params::Params;
use crate::keyspaces::validators::{Acting, ValidatorSigningRead};
use crate::keyspaces::TxContext;
use crate::store::{Overlay, StateRead, StoreError};
use crate::tx::{DecodedTx, TxError};

/// Where a tx runs: the block's height and time, the chain and its params,
/// and what the walk over the block carries from tx to tx.
#[derive(Debug, Clone)]
pub struct BlockEnv<'a> {
    pub height: u64,
    pub time_ns: i64,
    pub chain_id: &'a str,
    pub params: &'a Params,
    pub memo: &'a BlockMemo,
}

/// What a walk over one block carries from tx to tx: the bytes unsponsored
/// accounts may still add, and each signer's sponsorship at the start of
/// the block. Sponsorship is a function of the block's base state alone,
/// so it is read once per signer, not once per tx; a hit and a read give
/// the same answer, and neither is metered.
///
/// # Invariants
/// One memo per walk over one block, made fresh with [`BlockMemo::new`];
/// the base state the walk's overlay sits on never changes during it.
#[derive(Debug)]
pub struct BlockMemo {
    /// Unsponsored bytes the block may still take.
    pub unsponsored_room: Cell<u64>,
    sponsored: RefCell<BTreeMap<[u8; 32], bool>>,
    acting: RefCell<BTreeMap<[u8; 32], Acting>>,
}

impl BlockMemo {
    /// A fresh block's: the whole unsponsored budget, no signer read yet.
    pub fn new(params: &Params) -> Self {
        BlockMemo {
            unsponsored_room: Cell::new(params.storage.unsponsored_block_bytes),
            sponsored: RefCell::new(BTreeMap::new()),
            acting: RefCell::new(BTreeMap::new()),
        }
    }

    /// Whether `signer` is sponsored in `base`, the block's base state
    /// (callers that skip [`authenticate`], such as simulation, ask here).
    pub(super) fn sponsored<S: StateRead + ?Sized>(
        &self,
        base: &S,
        signer: &[u8; 32],
    ) -> Result<bool, StoreError> {
        if let Some(known) = self.sponsored.borrow().get(signer) {
            return Ok(*known);
        }
        let account = base.account(signer)?;
        let sponsored = is_sponsored(base, signer, account.as_ref())?;
        self.sponsored.borrow_mut().insert(*signer, sponsored);
        Ok(sponsored)
    }

    /// Whom the signing `key` acts as in `base`, the block's base state: a
    /// rotation takes effect in the next block, so every phase resolves a
    /// signer alike, including ProcessProposal, which runs no actions.
    pub(super) fn acting<S: StateRead + ?Sized>(
        &self,
        base: &S,
        key: &[u8; 32],
    ) -> Result<Acting, StoreError> {
        if let Some(known) = self.acting.borrow().get(key) {
            return Ok(*known);
        }
        let acting = base.acting(key)?;
        self.acting.borrow_mut().insert(*key, acting);
        Ok(acting)
    }

    /// The name `key`'s txs act under, or `OperatorKeyRetired`.
    pub(super) fn signer_name<S: StateRead + ?Sized>(
        &self,
        base: &S,
        key: &[u8; 32],
    ) -> Result<[u8; 32], TxError> {
        self.acting(base, key)?.signing_name(key)
    }
}

/// Authenticates and applies one tx. `decoded` is the stateless result and
/// `sig_ok` the signature check. Only a store fault is an `Err`.
pub fn execute_tx<S: StateRead>(
    block: &mut Overlay<S>,
    env: &BlockEnv<'_>,
    decoded: Result<&DecodedTx, &TxError>,
    sig_ok: bool,
) -> Result<TxOutcome, StoreError> {
    execute(block, env, decoded, sig_ok, Actions::Run)
}

/// Whether a walk over a block runs an authenticated tx's actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Actions {
    /// Yes (FinalizeBlock, PrepareProposal).
    Run,
    /// No: the tx comes back `Applied` after its nonce step
    /// (ProcessProposal).
    Skip,
}

/// Authenticates one tx and consumes its nonce, running its actions as
/// `actions` says. A tx's class (rejected or not) depends only on this
/// part and on the unsponsored budget earlier txs used, so proposals use it
/// to judge txs as FinalizeBlock will. Skipping the actions only leaves
/// more unsponsored budget than running them, so a walk that skips them
/// accepts every tx one that runs them accepted: ProcessProposal (`Skip`)
/// accepts what PrepareProposal (`Run`) kept.
pub fn authenticate_tx<S: StateRead>(
    block: &mut Overlay<S>,
    env: &BlockEnv<'_>,
    decoded: Result<&DecodedTx, &TxError>,
    sig_ok: bool,
    actions: Actions,
) -> Result<TxOutcome, StoreError> {
    execute(block, env, decoded, sig_ok, actions)
}

fn execute<S: StateRead>(
    block: &mut Overlay<S>,
    env: &BlockEnv<'_>,
    decoded: Result<&DecodedTx, &TxError>,
    sig_ok: bool,
    actions: Actions,
) -> Result<TxOutcome, StoreError> {
    let tx = match decoded {
        Ok(tx) => tx,
        Err(e) => return Ok(TxOutcome::err(None, e)),
    };
    let (unsponsored, account, name) = match authenticate(block, env, tx, sig_ok) {
        Ok(found) => found,
        Err(TxError::Store(fault)) => return Err(fault),
        Err(other) => {
            return Ok(TxOutcome::err(Some(tx.id), &other).with_gas(tx.gas_limit, 0));
        }
    };
    consume_nonce(block, env, &name, account, unsponsored);
    if actions == Actions::Skip {
        return Ok(TxOutcome::ok(tx.id, Vec::new()).with_gas(tx.gas_limit, tx.intrinsic_gas));
    }
    run_metered(block, env, (tx, name), tx.gas_limit, unsponsored)
}

/// The nonce step of an authenticated tx (BRIEF §4), which is not metered:
/// the signer's account (`account`, as `block` holds it) is created if new
/// (charged for its own record, and to the block's unsponsored budget if
/// `unsponsored`) and its nonce incremented, whatever the actions do.
pub(super) fn consume_nonce<S: StateRead>(
    block: &mut Overlay<S>,
    env: &BlockEnv<'_>,
    signer: &[u8; 32],
    account: Option<Account>,
    unsponsored: bool,
) {
    let mut account = match account {
        Some(a) => a,
        None => {
            if unsponsored {
                let room = &env.memo.unsponsored_room;
                room.set(room.get().saturating_sub(ACCOUNT_RECORD_BYTES));
            }
            new_account(env.height, env.time_ns)
        }
    };
    account.nonce += 1;
    block.put_account(signer, &account);
}

/// Runs `tx`'s actions, acting as `name` (its signer, or the validator a
/// rotated operator key signs for), in a metered tx overlay with `limit` gas, the
/// intrinsic gas charged first, and merges the overlay into `block` only if
/// every action succeeds within the limit and what it writes fits the
/// block's unsponsored budget (all of it when the signer is `unsponsored`,
/// as decided at authentication). Only a store fault is an `Err`.
pub(super) fn run_metered<S: StateRead>(
    block: &mut Overlay<S>,
    env: &BlockEnv<'_>,
    (tx, name): (&DecodedTx, [u8; 32]),
    limit: u64,
    unsponsored: bool,
) -> Result<TxOutcome, StoreError> {
    let meter = GasMeter::new(limit);
    let mut ctx = TxContext {
        height: env.height,
        time_ns: env.time_ns,
        signer: name,
        signing_key: tx.signer,
        tx_id: tx.id,
        chain_id: env.chain_id.to_string(),
        signature: tx.signature,
        action_index: 0,
        params: env.params.clone(),
        events: Vec::new(),
        unsponsored_others: Cell::new(0),
    };
    let mut overlay = Metered::new(Overlay::new(&*block), &meter, &env.params.gas);
    let mut result = meter.charge(tx.intrinsic_gas).map_err(TxError::from);
    for (i, action) in tx.actions.iter().enumerate() {
        if result.is_err() {
            break;
        }
        ctx.action_index = i as u32;
        // a retired operator key signs nothing (read unmetered, from the
        // block's base state as authentication reads it)
        if let Some(key) = action.embedded_signer() {
            let acting = env.memo.acting(block.base(), &key)?;
            if let Err(e) = acting.signing_name(&key) {
                result = Err(e);
                break;
            }
        }
        let (r, crypto) = work::measure(|| dispatch(action, &mut overlay, &mut ctx));
        let charged = overlay.charge_gas(Work::Crypto(crypto));
        result = r.and(charged.map_err(TxError::from));
    }
    let wanted = tx.gas_limit;
    match result {
        _ if meter.exhausted() => {
            let e = TxError::OutOfGas {
                limit,
                wanted: meter.overrun().unwrap_or(limit),
            };
            Ok(TxOutcome::action_failed(tx.id, &e).with_gas(wanted, meter.used()))
        }
        Err(TxError::Store(fault)) => Err(fault),
        Ok(()) => {
            let changes = overlay.into_inner().into_changes();
            let own = if unsponsored {
                changes.written_bytes()
            } else {
                0
            };
            let take = own.saturating_add(ctx.unsponsored_others.get());
            if let Err(e) = take_unsponsored(env, take) {
                return Ok(TxOutcome::action_failed(tx.id, &e).with_gas(wanted, meter.used()));
            }
            block.apply(changes);
            Ok(TxOutcome::ok(tx.id, ctx.events).with_gas(wanted, meter.used()))
        }
        Err(other) => Ok(TxOutcome::action_failed(tx.id, &other).with_gas(wanted, meter.used())),
    }
}

/// Takes `bytes` of the block's unsponsored budget: what an unsponsored
/// signer's tx writes (every row, key and value), measured on its changes.
///
/// # Errors
/// `UnsponsoredBudget` when less remains; the tx then fails as an action
/// would, consuming only its nonce.
fn take_unsponsored(env: &BlockEnv<'_>, bytes: u64) -> Result<(), TxError> {
    let room = env.memo.unsponsored_room.get();
    if bytes > room {
        return Err(TxError::UnsponsoredBudget {
            adding: bytes,
            room,
            block: env.params.storage.unsponsored_block_bytes,
        });
    }
    env.memo.unsponsored_room.set(room - bytes);
    Ok(())
}

/// Chain id, signature, the name the signer acts under (itself, or the
/// validator a rotated operator key signs for; a retired key is refused)
/// and that name's nonce against the block state and, for a name
/// unsponsored at the start of the block, proof of work and room in the
/// block for a new account's record; returns whether the name is
/// unsponsored, its account as the block holds it, and the name. Sponsorship is read
/// from the block's base (committed) state, so every phase (CheckTx, the
/// proposals' dry run, FinalizeBlock) decides it alike: a sponsorship or
/// validator change takes effect in the next block. A tx failing here
/// changes nothing: no account, no nonce.
pub fn authenticate<S: StateRead>(
    block: &Overlay<S>,
    env: &BlockEnv<'_>,
    tx: &DecodedTx,
    sig_ok: bool,
) -> Result<(bool, Option<Account>, [u8; 32]), TxError> {
    let state = block;
    tx.check_chain(env.chain_id)?;
    if !sig_ok {
        return Err(TxError::Signature {
            signer: tx.signer_hex(),
        });
    }
    let name = env.memo.signer_name(block.base(), &tx.signer)?;
    let account = state.account(&name)?;
    let expected = account.as_ref().map_or(0, |a| a.nonce);
    if tx.nonce != expected {
        return Err(TxError::Nonce {
            signer: hex::encode(name),
            expected,
            got: tx.nonce,
        });
    }
    let sponsored = env.memo.sponsored(block.base(), &name)?;
    if !check_work(&env.params.storage, tx, sponsored)? {
        return Ok((false, account, name));
    }
    let room = env.memo.unsponsored_room.get();
    if account.is_none() && room < ACCOUNT_RECORD_BYTES {
        return Err(TxError::NewAccountBudget {
            adding: ACCOUNT_RECORD_BYTES,
            room,
            block: env.params.storage.unsponsored_block_bytes,
        });
    }
    Ok((true, account, name))
}

/// For a signer not `sponsored` (see [`is_sponsored`]), checks the
/// envelope's proof of work; returns whether the signer is unsponsored.
/// CheckTx and every block phase use this one rule.
///
/// # Errors
/// `PowRequired` when the work does not meet the target.
pub fn check_work(
    storage: &crate::keyspaces::accounts::StorageParams,
    tx: &DecodedTx,
    sponsored: bool,
) -> Result<bool, TxError> {
    if sponsored {
        return Ok(false);
    }
    let size = tx.body_bytes.len() as u64;
    if !pow::meets(storage, &tx.id, size, tx.pow_nonce) {
        return Err(TxError::PowRequired {
            signer: tx.signer_hex(),
            pow_nonce: tx.pow_nonce,
            divisor: pow::divisor(storage, size),
        });
    }
    Ok(true)
}
