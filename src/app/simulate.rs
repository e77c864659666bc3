//! `Simulate`: a tx's gas, measured by running its actions against the
//! latest committed state with `max_block_gas` as its limit, after the
//! same (unmetered) nonce step a block runs. Nothing is written. The
//! signature, the nonce and the declared `gas_limit` are not checked, so a
//! client can measure a tx before it fixes its limit and signs.

use super::execute::{consume_nonce, run_metered, BlockEnv, BlockMemo};
use super::{AppError, TxOutcome};
use crate::keyspaces::accounts::AccountsRead;
use crate::keyspaces::params::ParamsRead;
use crate::store::{ChainStore, Overlay};
use crate::tx::{TxError, UnverifiedTx};

/// What a simulation found.
#[derive(Debug, Clone)]
pub struct Simulation {
    /// The result the actions would have, with `gas_used` set.
    pub outcome: TxOutcome,
    pub intrinsic_gas: u64,
    pub max_block_gas: u64,
    /// The committed height simulated against (the tx runs as if at the next).
    pub height: u64,
}

/// Simulates `raw` against the committed state of `store`.
///
/// # Errors
/// A store fault, or [`AppError::NoGenesis`] before InitChain. Every problem
/// with the tx is in the outcome.
pub fn simulate(store: &ChainStore, raw: &[u8]) -> Result<Simulation, AppError> {
    // One snapshot for the height, the params and the state simulated on.
    let view = store.view();
    let info = view.commit_info()?;
    let params = view.params()?.ok_or(AppError::NoGenesis)?;
    let height = info.height.ok_or(AppError::NoGenesis)?;
    let max_block_gas = params.gas.max_block_gas;
    let sim = |outcome, intrinsic_gas| Simulation {
        outcome,
        intrinsic_gas,
        max_block_gas,
        height,
    };
    let tx = match UnverifiedTx::decode_unlimited(raw, &params).verify_singly() {
        Ok(tx) => tx,
        Err(e) => return Ok(sim(TxOutcome::err(None, &e), 0)),
    };
    if let Err(e) = tx.check_chain(&info.chain_id) {
        return Ok(sim(TxOutcome::err(Some(tx.id), &e), tx.intrinsic_gas));
    }
    let memo = BlockMemo::new(&params);
    let env = BlockEnv {
        height: height + 1,
        time_ns: info.block_time_ns()?,
        chain_id: &info.chain_id,
        params: &params,
        memo: &memo,
    };
    let mut scratch = Overlay::new(&view);
    // As in a block: the actions run after the nonce step, and see its account.
    let name = match memo.signer_name(scratch.base(), &tx.signer) {
        Ok(name) => name,
        Err(TxError::Store(fault)) => return Err(fault.into()),
        Err(e) => return Ok(sim(TxOutcome::err(Some(tx.id), &e), tx.intrinsic_gas)),
    };
    let unsponsored = !memo.sponsored(scratch.base(), &name)?;
    let account = scratch.account(&name)?;
    consume_nonce(&mut scratch, &env, &name, account, unsponsored);
    let outcome = crate::keyspaces::casbin::cache::as_query(|| {
        run_metered(&mut scratch, &env, (&tx, name), max_block_gas, unsponsored)
    })?;
    Ok(sim(outcome, tx.intrinsic_gas))
}
