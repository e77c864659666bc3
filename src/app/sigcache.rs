//! A bounded set of (tx id, signature) pairs whose signature already
//! verified on this node. Verification is deterministic (ZIP-215), so a hit
//! gives the same answer as verifying again; it only saves the work when the
//! same tx passes CheckTx, then PrepareProposal/ProcessProposal, then
//! FinalizeBlock.

use std::collections::HashSet;

use parking_lot::Mutex;

use crate::tx::{verify::verify_all, DecodedTx};

/// How many entries are kept before the set is cleared.
const CAPACITY: usize = 200_000;

#[derive(Default)]
pub struct SigCache {
    inner: Mutex<HashSet<[u8; 96]>>,
}

fn entry(tx_id: &[u8; 32], sig: &[u8; 64]) -> [u8; 96] {
    let mut e = [0u8; 96];
    e[..32].copy_from_slice(tx_id);
    e[32..].copy_from_slice(sig);
    e
}

impl SigCache {
    pub fn contains(&self, tx_id: &[u8; 32], sig: &[u8; 64]) -> bool {
        self.inner.lock().contains(&entry(tx_id, sig))
    }

    pub fn insert(&self, tx_id: &[u8; 32], sig: &[u8; 64]) {
        let mut set = self.inner.lock();
        if set.len() >= CAPACITY {
            set.clear();
        }
        set.insert(entry(tx_id, sig));
    }

    /// Whether each tx's signature verifies: cache hits are taken as they
    /// are, the rest are batch-verified and the good ones cached. `None`
    /// (nothing to check) comes back `false`.
    pub fn verify(&self, txs: &[Option<&DecodedTx>]) -> Vec<bool> {
        let mut ok = vec![false; txs.len()];
        let mut slots = Vec::new();
        let mut pending = Vec::new();
        for (i, t) in txs.iter().enumerate() {
            let Some(tx) = t else { continue };
            if self.contains(&tx.id, &tx.signature) {
                ok[i] = true;
            } else {
                slots.push(i);
                pending.push(*tx);
            }
        }
        for ((slot, good), tx) in slots.into_iter().zip(verify_all(&pending)).zip(pending) {
            if good {
                self.insert(&tx.id, &tx.signature);
                ok[slot] = true;
            }
        }
        ok
    }
}
