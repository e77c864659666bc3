//! Applying one tx to the block overlay, in the two classes of BRIEF §4:
//! a tx that fails to decode or authenticate changes nothing; a tx that
//! authenticates but whose actions fail consumes its nonce and nothing else.

use super::dispatch::dispatch;
use super::outcome::TxOutcome;
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
            other => Ok(TxOutcome::err(Some(tx.id), &other)),
        };
    }
    // The nonce is consumed (and the account created) whatever the actions do.
    let mut account = block.account(&tx.signer)?.unwrap_or(Account {
        nonce: 0,
        created_at: env.time_ns,
        created_height: env.height,
        stored_bytes: 0,
    });
    account.nonce += 1;
    block.put_account(&tx.signer, &account);
    if !run_actions {
        return Ok(TxOutcome::ok(tx.id, Vec::new()));
    }

    let mut ctx = TxContext {
        height: env.height,
        time_ns: env.time_ns,
        signer: tx.signer,
        tx_id: tx.id,
        chain_id: env.chain_id.to_string(),
        signature: tx.signature,
        params: env.params.clone(),
        events: Vec::new(),
    };
    let mut overlay = Overlay::new(&*block);
    let mut result = Ok(());
    for action in &tx.actions {
        result = dispatch(action, &mut overlay, &mut ctx);
        if result.is_err() {
            break;
        }
    }
    match result {
        Ok(()) => {
            let changes = overlay.into_changes();
            block.apply(changes);
            Ok(TxOutcome::ok(tx.id, ctx.events))
        }
        Err(e) => {
            drop(overlay);
            match e {
                TxError::Store(fault) => Err(fault),
                other => Ok(TxOutcome::action_failed(tx.id, &other)),
            }
        }
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
