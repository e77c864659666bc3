//! A bounded set of (tx id, signature) pairs whose signature already
//! verified on this node. Verification is deterministic (ZIP-215), so a hit
//! gives the same answer as verifying again; it only saves the work when the
//! same tx passes CheckTx, then PrepareProposal/ProcessProposal, then
//! FinalizeBlock.

use std::collections::HashSet;

use parking_lot::Mutex;

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
}
