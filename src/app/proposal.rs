//! PrepareProposal and ProcessProposal.

use super::execute::{execute_tx, BlockEnv};
use super::{App, AppError};
use crate::store::Overlay;

impl App {
    /// Applies the candidate txs in order against a scratch overlay and keeps
    /// those that decode, authenticate (chain, signature, nonce in sequence)
    /// and fit in `max_tx_bytes`. A tx whose actions fail is kept: it still
    /// consumes its nonce, and dropping it would leave it in every mempool,
    /// blocking its account's later nonces.
    pub fn prepare_proposal<T: AsRef<[u8]> + Sync + Clone>(
        &self,
        height: u64,
        time_ns: i64,
        txs: &[T],
        max_tx_bytes: i64,
    ) -> Result<Vec<T>, AppError> {
        let params = self.params()?.clone();
        let (decoded, sig_ok) = self.decode_and_verify(txs, &params);
        let env = BlockEnv {
            height,
            time_ns,
            chain_id: self.chain_id(),
            params: &params,
        };
        let mut scratch = Overlay::new(self.store().committed());
        let mut kept = Vec::new();
        let mut bytes: i64 = 0;
        let budget = if max_tx_bytes <= 0 { i64::MAX } else { max_tx_bytes };
        for ((raw, d), ok) in txs.iter().zip(&decoded).zip(sig_ok) {
            let len = raw.as_ref().len() as i64;
            // CometBFT counts each tx with its protobuf framing overhead.
            let framed = len + 8;
            if bytes + framed > budget {
                continue;
            }
            let Ok(tx) = d else { continue };
            let outcome = execute_tx(&mut scratch, &env, Ok(tx), ok)?;
            if outcome.is_ok() || outcome_consumed_nonce(&outcome) {
                bytes += framed;
                kept.push(raw.clone());
            }
        }
        Ok(kept)
    }

    /// Accepts a proposal only if every tx decodes, names this chain and
    /// carries a valid signature. Nonce and action failures are results,
    /// not grounds for rejection.
    pub fn process_proposal(&self, txs: &[impl AsRef<[u8]> + Sync]) -> Result<bool, AppError> {
        let params = self.params()?.clone();
        let (decoded, sig_ok) = self.decode_and_verify(txs, &params);
        for (d, ok) in decoded.iter().zip(sig_ok) {
            match d {
                Ok(tx) if ok && tx.check_chain(self.chain_id()).is_ok() => {}
                _ => return Ok(false),
            }
        }
        Ok(true)
    }
}

/// Whether a failed outcome still changed the nonce (authenticated, action failed).
fn outcome_consumed_nonce(o: &super::TxOutcome) -> bool {
    use crate::tx::Code;
    !matches!(
        o.code,
        Code::Decode
            | Code::NonCanonical
            | Code::Signature
            | Code::WrongChain
            | Code::Nonce
            | Code::TxTooLarge
            | Code::ActionCount
            | Code::InvalidSigner
            | Code::MemoTooLarge
            | Code::NotReady
            | Code::MempoolPolicy
    )
}
