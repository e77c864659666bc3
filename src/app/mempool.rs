//! CheckTx against a mempool view: the committed state plus each account's
//! pending nonce (committed nonce plus the txs this node accepted since), so
//! one account can have many txs in one block. The view is rebuilt at Commit,
//! before the recheck that follows it.

use std::collections::HashMap;

use parking_lot::Mutex;

use super::decode_cache::{DecodeCache, Keep};
use super::outcome::TxOutcome;
use super::sigcache::SigCache;
use crate::keyspaces::accounts::AccountsRead;
use crate::keyspaces::params::Params;
use crate::store::ChainStore;
use crate::tx::{DecodedTx, TxError};

/// New tx, or a recheck after a commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckKind {
    New,
    Recheck,
}

#[derive(Default)]
struct View {
    chain_id: String,
    params: Option<Params>,
    /// signer → (next pending nonce, txs pending)
    pending: HashMap<[u8; 32], (u64, u32)>,
}

/// The node-local mempool view. Its limits are node policy, not consensus.
pub struct Mempool {
    store: ChainStore,
    view: Mutex<View>,
    sigs: std::sync::Arc<SigCache>,
    decoded: std::sync::Arc<DecodeCache>,
    max_pending_per_account: u32,
}

impl Mempool {
    pub fn new(
        store: ChainStore,
        sigs: std::sync::Arc<SigCache>,
        decoded: std::sync::Arc<DecodeCache>,
        max_pending_per_account: u32,
    ) -> Self {
        Mempool {
            store,
            view: Mutex::new(View::default()),
            sigs,
            decoded,
            max_pending_per_account,
        }
    }

    /// Sets the chain and params (at start-up and after InitChain).
    pub fn set_chain(&self, chain_id: String, params: Params) {
        let mut v = self.view.lock();
        v.chain_id = chain_id;
        v.params = Some(params);
        v.pending.clear();
    }

    /// Forgets pending nonces; called in Commit before replying.
    pub fn reset(&self) {
        self.view.lock().pending.clear();
    }

    /// Checks a tx and, if it passes, records its nonce as pending.
    pub fn check(&self, raw: &[u8], kind: CheckKind) -> TxOutcome {
        self.check_batch(&[(raw, kind)])
            .into_iter()
            .next()
            .unwrap_or_else(|| TxOutcome::err(None, &TxError::NotReady("empty batch".into())))
    }

    /// Checks txs in the order CometBFT sent them: decodes each, verifies
    /// the signatures still unverified as one batch (ZIP-215, so batch and
    /// single verification agree), then admits each nonce in order.
    pub fn check_batch(&self, items: &[(&[u8], CheckKind)]) -> Vec<TxOutcome> {
        // A batch of a few large txs is spread over threads as well as
        // many small ones (review M2), leaving one core to consensus.
        let threads = crate::par::threads().saturating_sub(1).max(1);
        let decoded: Vec<Result<(DecodedTx, Option<Keep>), TxOutcome>> =
            crate::par::map_weighted_on(
                items,
                |(raw, _)| super::decode_weight(raw),
                super::DECODE_PARALLEL_FROM,
                threads,
                |(raw, kind)| self.decode(raw, *kind),
            );
        // A recheck sees the exact bytes admitted earlier, whose signature verified then.
        let to_check: Vec<Option<&DecodedTx>> = decoded
            .iter()
            .zip(items)
            .map(|(d, (_, kind))| {
                d.as_ref()
                    .ok()
                    .map(|(tx, _)| tx)
                    .filter(|_| *kind == CheckKind::New)
            })
            .collect();
        let bad_sig: Vec<bool> = self
            .sigs
            .verify(&to_check)
            .into_iter()
            .zip(&to_check)
            .map(|(ok, t)| t.is_some() && !ok)
            .collect();
        decoded
            .into_iter()
            .zip(bad_sig)
            .map(|(d, bad)| match d {
                Err(o) => o,
                Ok((tx, _)) if bad => TxOutcome::err(
                    Some(tx.id),
                    &TxError::Signature {
                        signer: tx.signer_hex(),
                    },
                ),
                Ok((tx, keep)) => {
                    let out = self.admit(&tx);
                    // Only an admitted tx's decode is kept: a tx the
                    // mempool refuses never fills the cache.
                    if let (true, Some(keep)) = (out.is_ok(), keep) {
                        self.decoded.keep(keep);
                    }
                    out
                }
            })
            .collect()
    }

    /// Decode, stateless checks, chain id and proof of work (no signature).
    /// A new tx's decode comes back as a [`Keep`] to cache once admitted;
    /// a recheck's embedded signatures are taken as verified (they were on
    /// entry, and the tx id covers them), and a recheck that misses the
    /// cache does not fill it: the scan over the whole mempool after each
    /// Commit would otherwise push out the txs of the next block.
    fn decode(&self, raw: &[u8], kind: CheckKind) -> Result<(DecodedTx, Option<Keep>), TxOutcome> {
        let (chain_id, params) = {
            let v = self.view.lock();
            match &v.params {
                Some(p) => (v.chain_id.clone(), p.clone()),
                None => {
                    return Err(TxOutcome::err(
                        None,
                        &TxError::NotReady("no genesis yet".into()),
                    ))
                }
            }
        };
        let (unverified, keep) = self.decoded.decode_unkept(raw, &params);
        let (tx, keep) = match kind {
            CheckKind::New => (unverified.verify_singly(), keep),
            CheckKind::Recheck => (unverified.resolve_verified(), None),
        };
        let tx = tx.map_err(|e| TxOutcome::err(None, &e))?;
        tx.check_chain(&chain_id)
            .map_err(|e| TxOutcome::err(Some(tx.id), &e))?;
        self.check_work(&tx, &params)
            .map_err(|e| TxOutcome::err(Some(tx.id), &e).with_gas(tx.gas_limit, 0))?;
        Ok((tx, keep))
    }

    /// An unsponsored signer's proof of work against committed state, before
    /// its signature is verified and outside the ordered admit step.
    fn check_work(&self, tx: &DecodedTx, params: &Params) -> Result<(), TxError> {
        let committed = self.store.committed();
        let account = committed.account(&tx.signer)?;
        super::execute::check_work(&committed, &params.storage, tx, account.as_ref())?;
        Ok(())
    }

    /// Decode, chain id and signature of one tx (warms the signature cache).
    pub fn precheck(&self, raw: &[u8], kind: CheckKind) -> Result<DecodedTx, TxOutcome> {
        let (tx, _) = self.decode(raw, kind)?;
        if kind == CheckKind::New && !self.sigs.contains(&tx.id, &tx.signature) {
            tx.verify_signature()
                .map_err(|e| TxOutcome::err(Some(tx.id), &e))?;
            self.sigs.insert(&tx.id, &tx.signature);
        }
        Ok(tx)
    }

    /// The ordered part of CheckTx: the nonce against the pending view. Must
    /// run in the order CometBFT sent the txs.
    pub fn admit(&self, tx: &DecodedTx) -> TxOutcome {
        match self.try_admit(tx) {
            // CometBFT packs its mempool and reaps by `gas_wanted`.
            Ok(()) => TxOutcome::ok(tx.id, Vec::new()).with_gas(tx.gas_limit, 0),
            Err(e) => TxOutcome::err(Some(tx.id), &e).with_gas(tx.gas_limit, 0),
        }
    }

    fn try_admit(&self, tx: &DecodedTx) -> Result<(), TxError> {
        // The pending entry, when there is one, is already at or past the
        // committed nonce (the view is cleared at every Commit), so the store
        // is read once per account per block, not once per tx.
        let known = self.view.lock().pending.get(&tx.signer).copied();
        let (next, count) = match known {
            Some(entry) => entry,
            None => (self.store.committed().next_nonce(&tx.signer)?, 0),
        };
        let mut v = self.view.lock();
        if tx.nonce != next {
            return Err(TxError::Nonce {
                signer: tx.signer_hex(),
                expected: next,
                got: tx.nonce,
            });
        }
        if count >= self.max_pending_per_account {
            return Err(TxError::MempoolPolicy(format!(
                "{} already has {count} pending txs (node limit {})",
                tx.signer_hex(),
                self.max_pending_per_account
            )));
        }
        v.pending.insert(tx.signer, (next + 1, count + 1));
        Ok(())
    }
}
