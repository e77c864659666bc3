//! CheckTx against a mempool view: the committed state plus each account's
//! pending nonce (committed nonce plus the txs this node accepted since), so
//! one account can have many txs in one block. The view is rebuilt at Commit,
//! before the recheck that follows it.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use super::decode_cache::{DecodeCache, Keep};
use super::outcome::TxOutcome;
use super::sigcache::SigCache;
use crate::keyspaces::accounts::storage::is_sponsored;
use crate::keyspaces::accounts::AccountsRead;
use crate::keyspaces::params::Params;
use crate::keyspaces::validators::{Acting, ValidatorSigningRead};
use crate::store::{ChainStore, StoreError};
use crate::tx::{DecodedTx, TxError};

/// Each release's publisher signature, checked before the tx takes a place
/// in the mempool (node-local policy: execution checks it again, which is
/// what consensus relies on, and covers a proposer that includes a bad one).
fn check_release_signatures(tx: &DecodedTx, chain_id: &str) -> Result<(), TxError> {
    for a in &tx.actions {
        if let crate::tx::Action::PublishRelease(p) = a {
            let id = crate::ddex::validate::release_id_of(&p.message).unwrap_or_default();
            crate::keyspaces::releases::sign::verify(
                chain_id,
                &id,
                &p.message,
                &tx.signer,
                &p.publisher_signature,
            )?;
        }
    }
    Ok(())
}

/// New tx, or a recheck after a commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckKind {
    New,
    Recheck,
}

#[derive(Default)]
struct View {
    chain_id: Arc<str>,
    params: Option<Arc<Params>>,
    /// What this node knows of each signer seen since the last Commit.
    signers: HashMap<[u8; 32], Signer>,
    /// Bumped at every Commit and chain change: a read of the committed
    /// state begun before one is not remembered after it.
    generation: u64,
}

impl View {
    fn forget(&mut self) {
        self.signers.clear();
        self.signers.shrink_to(SIGNERS_KEPT_ROOM);
        self.generation += 1;
    }
}

/// One signer as CheckTx sees it: read from the committed state once per
/// block, then advanced by the txs this node admits.
#[derive(Debug, Clone, Copy)]
struct Signer {
    /// Sponsored in the committed state (its txs need no proof of work).
    sponsored: bool,
    /// The nonce its next tx must carry: the committed one plus `pending`.
    next: u64,
    /// Its txs this node admitted since the last Commit.
    pending: u32,
    /// Whom it acts as in the committed state: its own account, or the
    /// validator a rotated operator key signs for (whose nonce it takes).
    acting: Acting,
}

/// Signers remembered between two Commits at most, unless they have an
/// admitted tx (those are always recorded): a flood of txs from fresh keys
/// that fail later checks cannot grow the view past this. Past it, a
/// signer's committed state is read for each of its txs.
const MAX_SIGNERS_READ: usize = 1 << 18;

/// Entries whose room the view keeps after a Commit; a flood's larger map
/// is given back.
const SIGNERS_KEPT_ROOM: usize = 1 << 14;

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
        v.chain_id = chain_id.into();
        v.params = Some(Arc::new(params));
        v.forget();
    }

    /// Forgets pending nonces and what was read of the committed state;
    /// called in Commit before replying.
    pub fn reset(&self) {
        self.view.lock().forget();
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
                        self.decoded.keep(keep, tx);
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
                Some(p) => (v.chain_id.clone(), Arc::clone(p)),
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
        if kind == CheckKind::New {
            check_release_signatures(&tx, &chain_id)
                .map_err(|e| TxOutcome::err(Some(tx.id), &e).with_gas(tx.gas_limit, 0))?;
        }
        Ok((tx, keep))
    }

    /// An unsponsored signer's proof of work against committed state, before
    /// its signature is verified and outside the ordered admit step.
    fn check_work(&self, tx: &DecodedTx, params: &Params) -> Result<(), TxError> {
        let (signer, _) = self.signer(&tx.signer)?;
        signer.acting.signing_name(&tx.signer)?;
        super::execute::check_work(&params.storage, tx, signer.sponsored)?;
        Ok(())
    }

    /// `key`'s entry in the view, read from the committed state the first
    /// time it is asked for after a Commit, with the view's generation
    /// when it was read.
    fn signer(&self, key: &[u8; 32]) -> Result<(Signer, u64), StoreError> {
        let generation = {
            let v = self.view.lock();
            if let Some(known) = v.signers.get(key) {
                return Ok((*known, v.generation));
            }
            v.generation
        };
        let committed = self.store.committed();
        let acting = committed.acting(key)?;
        let name = acting.name(key);
        let account = committed.account(&name)?;
        let read = Signer {
            sponsored: is_sponsored(&committed, &name, account.as_ref())?,
            next: account.map_or(0, |a| a.nonce),
            pending: 0,
            acting,
        };
        let mut v = self.view.lock();
        if v.generation == generation && v.signers.len() < MAX_SIGNERS_READ {
            v.signers.entry(*key).or_insert(read);
        }
        Ok((read, generation))
    }

    /// The nonce CheckTx accepts next from `key`, if this node read or
    /// admitted any of its txs since the last Commit (else the committed
    /// nonce is the answer).
    pub fn next_nonce(&self, key: &[u8; 32]) -> Option<u64> {
        self.view.lock().signers.get(key).map(|s| s.next)
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
        // The entry, once read, is already at or past the committed nonce
        // (the view is cleared at every Commit), so the store is read once
        // per signer per block, not once per tx.
        for _ in 0..2 {
            let (read, generation) = self.signer(&tx.signer)?;
            if let Some(admitted) = self.admit_read(tx, read, generation) {
                return admitted;
            }
        }
        Err(TxError::NotReady(
            "two commits ran while this tx was checked; send it again".into(),
        ))
    }

    /// Admits `tx` on its signer's entry in the view, or on `read` (the
    /// committed state read at `generation`) when the view did not keep it.
    /// `None` when a Commit ran since that read: it must be read again.
    fn admit_read(
        &self,
        tx: &DecodedTx,
        read: Signer,
        generation: u64,
    ) -> Option<Result<(), TxError>> {
        let mut v = self.view.lock();
        let known = match v.signers.get(&tx.signer) {
            Some(known) => *known,
            // not remembered: past the view's cap, read this block
            None if v.generation == generation => read,
            None => return None,
        };
        Some(self.admit_at(&mut v, tx, known))
    }

    /// Admits `tx` on `known`, its signer's entry, under the view's lock.
    fn admit_at(&self, v: &mut View, tx: &DecodedTx, known: Signer) -> Result<(), TxError> {
        // again here: a Commit since the decode may have retired the key
        known.acting.signing_name(&tx.signer)?;
        if tx.nonce != known.next {
            return Err(TxError::Nonce {
                signer: tx.signer_hex(),
                expected: known.next,
                got: tx.nonce,
            });
        }
        if known.pending >= self.max_pending_per_account {
            return Err(TxError::MempoolPolicy(format!(
                "{} already has {} pending txs (node limit {})",
                tx.signer_hex(),
                known.pending,
                self.max_pending_per_account
            )));
        }
        let admitted = Signer {
            next: known.next + 1,
            pending: known.pending + 1,
            ..known
        };
        v.signers.insert(tx.signer, admitted);
        Ok(())
    }
}

#[cfg(test)]
#[path = "mempool_tests.rs"]
mod tests;
