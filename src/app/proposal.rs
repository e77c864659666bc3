//! PrepareProposal and ProcessProposal. Both apply the txs in order against a
//! scratch overlay over committed state, with the same authentication code
//! FinalizeBlock runs, so they agree with it on which txs authenticate.
//! PrepareProposal also runs the actions, exactly as FinalizeBlock will, so
//! it leaves out a new unsponsored account FinalizeBlock would refuse for
//! lack of room in the unsponsored budget (NEW_ACCOUNT_BUDGET), whatever
//! used that room. ProcessProposal runs no actions: it finds at least as
//! much room at every tx, so it accepts every proposal an honest
//! PrepareProposal made, and costs one authentication per tx.

use super::execute::{authenticate_tx, Actions, BlockEnv, BlockMemo};
use super::{App, AppError, TxClass, TxOutcome};
use crate::keyspaces::params::Params;
use crate::store::{Overlay, StoreError};
use crate::tx::{Code, DecodedTx, TxError};

/// Why ProcessProposal rejected a proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// The txs' declared `gas_limit`s sum past `max_block_gas`.
    OverBlockGas,
    /// A signature in the block does not verify (not attributed: the
    /// batch check names no tx).
    Signature,
    /// Tx `index` does not decode or authenticate, with `code`.
    Tx { index: usize, code: Code },
}

impl Rejection {
    /// A stable name: the tx code's name, or `OVER_MAX_BLOCK_GAS`.
    pub fn reason(&self) -> &'static str {
        match self {
            Rejection::OverBlockGas => "OVER_MAX_BLOCK_GAS",
            Rejection::Signature => Code::Signature.name(),
            Rejection::Tx { code, .. } => code.name(),
        }
    }

    /// The offending tx's index, when one is known.
    pub fn index(&self) -> Option<usize> {
        match self {
            Rejection::Tx { index, .. } => Some(*index),
            _ => None,
        }
    }
}

/// A proposal's height, block time and txs.
struct Block<'a, T> {
    height: u64,
    time_ns: i64,
    txs: &'a [T],
}

/// CometBFT counts each tx with its protobuf framing (tag + length varint).
fn framed_len(len: usize) -> i64 {
    let mut varint = 1;
    let mut n = len >> 7;
    while n > 0 {
        varint += 1;
        n >>= 7;
    }
    (len + 1 + varint) as i64
}

/// Whether the txs' declared gas limits, read without decoding them, sum
/// to at most `max`. A tx whose limit cannot be read would not decode
/// either, and is named as undecodable.
fn declared_gas_fits<T: AsRef<[u8]>>(txs: &[T], max: u64) -> Result<(), Rejection> {
    let mut sum = 0u64;
    for (index, t) in txs.iter().enumerate() {
        match crate::gas::peek::declared_gas(t.as_ref()) {
            Some(g) => sum = sum.saturating_add(g),
            None => {
                return Err(Rejection::Tx {
                    index,
                    code: Code::Decode,
                })
            }
        }
        if sum > max {
            tracing::warn!(
                declared = sum,
                max,
                "proposal declares more than max_block_gas"
            );
            return Err(Rejection::OverBlockGas);
        }
    }
    Ok(())
}

impl App {
    /// Walks `txs` in order over a scratch overlay on committed state. For
    /// each tx, `visit` gets the raw tx and a `run` closure that applies it
    /// (FinalizeBlock's authentication and nonce step, then the actions
    /// `actions` selects) and returns its outcome; a tx `visit` does not run
    /// is skipped. `visit` returns `false` to stop early.
    fn dry_run<T, V>(
        &self,
        block: Block<'_, T>,
        actions: Actions,
        params: &Params,
        decoded: &[Result<DecodedTx, TxError>],
        sig_ok: Vec<bool>,
        mut visit: V,
    ) -> Result<(), AppError>
    where
        V: FnMut(
            &T,
            u64,
            &mut dyn FnMut() -> Result<TxOutcome, StoreError>,
        ) -> Result<bool, AppError>,
    {
        let Block {
            height,
            time_ns,
            txs,
        } = block;
        let memo = BlockMemo::new(params);
        let env = BlockEnv {
            height,
            time_ns,
            chain_id: self.chain_id(),
            params,
            memo: &memo,
        };
        let mut scratch = Overlay::new(self.store().committed());
        for ((raw, d), ok) in txs.iter().zip(decoded).zip(sig_ok) {
            let gas = d.as_ref().map_or(0, |t| t.gas_limit);
            let mut run = || authenticate_tx(&mut scratch, &env, d.as_ref(), ok, actions);
            if !visit(raw, gas, &mut run)? {
                break;
            }
        }
        Ok(())
    }

    /// Keeps the candidate txs that decode and authenticate (chain,
    /// signature, nonce in sequence, room in the unsponsored budget for a
    /// new unsponsored account), within `max_tx_bytes` and, by their
    /// declared `gas_limit`, within `max_block_gas`. A tx whose
    /// actions fail is kept: it still consumes its nonce, and dropping it
    /// would leave it in every mempool, blocking its account's later nonces.
    pub fn prepare_proposal<T: AsRef<[u8]> + Sync + Clone>(
        &self,
        height: u64,
        time_ns: i64,
        txs: &[T],
        max_tx_bytes: i64,
    ) -> Result<Vec<T>, AppError> {
        let budget = if max_tx_bytes <= 0 {
            i64::MAX
        } else {
            max_tx_bytes
        };
        let params = self.params()?.clone();
        let (decoded, sig_ok) = self.decode_and_verify(txs, &params, false);
        let block = Block {
            height,
            time_ns,
            txs,
        };
        let (mut kept, mut used, mut gas_used) = (Vec::new(), 0i64, 0u64);
        let max_gas = params.gas.max_block_gas;
        self.dry_run(
            block,
            Actions::Run,
            &params,
            &decoded,
            sig_ok,
            |raw, gas, run| {
                let len = framed_len(raw.as_ref().len());
                let fits = used + len <= budget && gas_used.saturating_add(gas) <= max_gas;
                // Too big for what is left: skipped, never applied to the scratch.
                if fits && run()?.class != TxClass::Rejected {
                    used += len;
                    gas_used += gas;
                    kept.push(raw.clone());
                }
                Ok(true)
            },
        )?;
        Ok(kept)
    }

    /// Accepts a proposal only if its txs' summed `gas_limit` fits
    /// `max_block_gas` (read before any decode or signature check) and every
    /// tx decodes and authenticates (chain, signature, nonce in sequence),
    /// exactly as FinalizeBlock will judge it; otherwise says why not.
    /// Action failures are results, not grounds for rejection, and so is
    /// anything only this node's mempool policy refuses. Decoding stops
    /// at the first failure and signatures are checked with no bisection, so
    /// a bad proposal costs at most one decode and one check per item.
    pub fn process_proposal<T: AsRef<[u8]> + Sync>(
        &self,
        height: u64,
        time_ns: i64,
        txs: &[T],
    ) -> Result<Result<(), Rejection>, AppError> {
        let params = self.params()?.clone();
        if let Err(why) = declared_gas_fits(txs, params.gas.max_block_gas) {
            return Ok(Err(why));
        }
        let decoded = match self.decode_and_verify_strict(txs, &params) {
            Ok(d) => d,
            Err(why) => return Ok(Err(why)),
        };
        let sig_ok = vec![true; decoded.len()];
        let decoded: Vec<Result<DecodedTx, TxError>> = decoded.into_iter().map(Ok).collect();
        let block = Block {
            height,
            time_ns,
            txs,
        };
        let mut verdict = Ok(());
        let mut index = 0;
        self.dry_run(
            block,
            Actions::Skip,
            &params,
            &decoded,
            sig_ok,
            |_, _, run| {
                let o = run()?;
                if o.class == TxClass::Rejected {
                    verdict = Err(Rejection::Tx {
                        index,
                        code: o.code,
                    });
                }
                index += 1;
                Ok(verdict.is_ok())
            },
        )?;
        Ok(verdict)
    }
}
