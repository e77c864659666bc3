//! Applying one tx to the block overlay, in the two classes of BRIEF §4:
//! a tx that fails to decode or authenticate changes nothing; a tx that
//! authenticates but whose actions fail consumes its nonce and nothing else.

use super::dispatch::dispatch;
use super::outcome::TxOutcome;
use crate::gas::{work, GasMeter, Metered, Work};
use crate::keyspaces::accounts::{Account, AccountsRead, AccountsWrite};
use crate::keyspaces::params::Params;
use crate::keyspaces::TxContext;
use crate::store::{Overlay, StateRead, StoreError};
use crate::tx::{DecodedTx, TxError};

/// Where a tx runs: the block's height and time, the chain and its params.
#[derive(Debug, Clone)]
pub struct BlockEnv<'a> {
    pub height: u64,
    pub time_ns: i64,
    pub chain_id: &'a str,
    pub params: &'a Params,
}

/// Authenticates and applies one tx. `decoded` is the stateless result and
/// `sig_ok` the signature check. Only a store fault is an `Err`.
pub fn execute_tx<S: StateRead>(
    block: &mut Overlay<S>,
    env: &BlockEnv<'_>,
    decoded: Result<&DecodedTx, &TxError>,
    sig_ok: bool,
) -> Result<TxOutcome, StoreError> {
    execute(block, env, decoded, sig_ok, true)
}

/// Authenticates one tx and consumes its nonce, without running its
/// actions. A tx's class (rejected or not) depends only on this part, so
/// proposals use it to judge txs exactly as FinalizeBlock will, at a
/// fraction of the cost. An authenticated tx comes back `Applied`.
pub fn authenticate_tx<S: StateRead>(
    block: &mut Overlay<S>,
    env: &BlockEnv<'_>,
    decoded: Result<&DecodedTx, &TxError>,
    sig_ok: bool,
) -> Result<TxOutcome, StoreError> {
    execute(block, env, decoded, sig_ok, false)
}

fn execute<S: StateRead>(
    block: &mut Overlay<S>,
    env: &BlockEnv<'_>,
    decoded: Result<&DecodedTx, &TxError>,
    sig_ok: bool,
    run_actions: bool,
) -> Result<TxOutcome, StoreError> {
    let tx = match decoded {
        Ok(tx) => tx,
        Err(e) => return Ok(TxOutcome::err(None, e)),
    };
    if let Err(e) = authenticate(block, env, tx, sig_ok) {
        return match e {
            TxError::Store(fault) => Err(fault),
            other => Ok(TxOutcome::err(Some(tx.id), &other).with_gas(tx.gas_limit, 0)),
        };
    }
    consume_nonce(block, env, &tx.signer)?;
    if !run_actions {
        return Ok(TxOutcome::ok(tx.id, Vec::new()).with_gas(tx.gas_limit, tx.intrinsic_gas));
    }
    run_metered(block, env, tx, tx.gas_limit)
}

/// The nonce step of an authenticated tx (BRIEF §4), which is not metered:
/// the signer's account is created if new and its nonce incremented,
/// whatever the actions do.
pub(super) fn consume_nonce<S: StateRead>(
    block: &mut Overlay<S>,
    env: &BlockEnv<'_>,
    signer: &[u8; 32],
) -> Result<(), StoreError> {
    let mut account = block.account(signer)?.unwrap_or(Account {
        nonce: 0,
        created_at: env.time_ns,
        created_height: env.height,
        stored_bytes: 0,
    });
    account.nonce += 1;
    block.put_account(signer, &account);
    Ok(())
}

/// Runs `tx`'s actions in a metered tx overlay with `limit` gas, the
/// intrinsic gas charged first, and merges the overlay into `block` only if
/// every action succeeds within the limit. Only a store fault is an `Err`.
pub(super) fn run_metered<S: StateRead>(
    block: &mut Overlay<S>,
    env: &BlockEnv<'_>,
    tx: &DecodedTx,
    limit: u64,
) -> Result<TxOutcome, StoreError> {
    let meter = GasMeter::new(limit);
    let mut ctx = TxContext {
        height: env.height,
        time_ns: env.time_ns,
        signer: tx.signer,
        tx_id: tx.id,
        chain_id: env.chain_id.to_string(),
        signature: tx.signature,
        action_index: 0,
        params: env.params.clone(),
        events: Vec::new(),
    };
    let mut overlay = Metered::new(Overlay::new(&*block), &meter, &env.params.gas);
    let mut result = meter.charge(tx.intrinsic_gas).map_err(TxError::from);
    for (i, action) in tx.actions.iter().enumerate() {
        if result.is_err() {
            break;
        }
        ctx.action_index = i as u32;
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
            block.apply(changes);
            Ok(TxOutcome::ok(tx.id, ctx.events).with_gas(wanted, meter.used()))
        }
        Err(other) => Ok(TxOutcome::action_failed(tx.id, &other).with_gas(wanted, meter.used())),
    }
}

/// Chain id, signature and nonce against the block state.
pub fn authenticate<S: StateRead>(
    state: &S,
    env: &BlockEnv<'_>,
    tx: &DecodedTx,
    sig_ok: bool,
) -> Result<(), TxError> {
    tx.check_chain(env.chain_id)?;
    if !sig_ok {
        return Err(TxError::Signature {
            signer: tx.signer_hex(),
        });
    }
    let expected = state.next_nonce(&tx.signer)?;
    if tx.nonce != expected {
        return Err(TxError::Nonce {
            signer: tx.signer_hex(),
            expected,
            got: tx.nonce,
        });
    }
    Ok(())
}
