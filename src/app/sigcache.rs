//! A bounded set of (tx id, signature) pairs whose signature already
//! verified on this node. Verification is deterministic (ZIP-215), so a hit
//! gives the same answer as verifying again; it only saves the work when the
//! same tx passes CheckTx, then PrepareProposal/ProcessProposal, then
//! FinalizeBlock.

use std::collections::HashSet;

use parking_lot::Mutex;

use ed25519_consensus::batch::Item;

use crate::tx::verify::{all_verify, tx_item, verify_all, verify_items};
use crate::tx::{DecodedTx, TxError, UnverifiedTx};

/// Entries per generation (two generations are kept).
const GENERATION: usize = 100_000;

/// Two generations: when the current one fills, the previous one is
/// dropped and the current one takes its place. The newest `GENERATION`
/// entries always survive, so a full mempool's signatures are not all
/// forgotten at once and sent back to verification on the consensus path.
pub struct SigCache {
    inner: Mutex<Generations>,
    generation: usize,
}

#[derive(Default)]
struct Generations {
    current: HashSet<[u8; 96]>,
    previous: HashSet<[u8; 96]>,
}

impl Default for SigCache {
    fn default() -> Self {
        Self::with_generation(GENERATION)
    }
}

fn entry(tx_id: &[u8; 32], sig: &[u8; 64]) -> [u8; 96] {
    let mut e = [0u8; 96];
    e[..32].copy_from_slice(tx_id);
    e[32..].copy_from_slice(sig);
    e
}

impl SigCache {
    /// A cache that keeps at most `2 × generation` entries.
    fn with_generation(generation: usize) -> Self {
        SigCache {
            inner: Mutex::new(Generations::default()),
            generation: generation.max(1),
        }
    }

    /// Whether the pair verified here before. A hit in the older generation
    /// is moved to the current one, so a tx that ProcessProposal found here
    /// is still found by FinalizeBlock after a rollover in between. (Recheck
    /// does not ask: it re-admits bytes whose signature verified on entry.)
    pub fn contains(&self, tx_id: &[u8; 32], sig: &[u8; 64]) -> bool {
        let e = entry(tx_id, sig);
        let mut g = self.inner.lock();
        if g.current.contains(&e) {
            return true;
        }
        if g.previous.remove(&e) {
            self.add(&mut g, e);
            return true;
        }
        false
    }

    pub fn insert(&self, tx_id: &[u8; 32], sig: &[u8; 64]) {
        let e = entry(tx_id, sig);
        let mut g = self.inner.lock();
        if !g.current.contains(&e) {
            g.previous.remove(&e);
            self.add(&mut g, e);
        }
    }

    /// Adds to the current generation; when it is full, it becomes the
    /// previous one and the old previous one, emptied (its capacity kept),
    /// becomes the current one.
    fn add(&self, g: &mut Generations, e: [u8; 96]) {
        if g.current.len() >= self.generation {
            let Generations { current, previous } = g;
            std::mem::swap(current, previous);
            current.clear();
        }
        g.current.insert(e);
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

    /// Resolves a block's txs: every signature still unverified (the tx
    /// signatures and those the actions carry) goes through one set of
    /// batches. Returns each tx's decode result (as [`DecodedTx::decode`]
    /// gives it) and whether its own signature verifies. A cache hit stands
    /// for both: an entry is only made for a tx whose embedded signatures
    /// verified too, and those are covered by the tx id.
    pub fn verify_block(
        &self,
        txs: Vec<UnverifiedTx>,
    ) -> (Vec<Result<DecodedTx, TxError>>, Vec<bool>) {
        let hit: Vec<bool> = txs
            .iter()
            .map(|t| {
                t.decoded()
                    .is_ok_and(|tx| self.contains(&tx.id, &tx.signature))
            })
            .collect();
        // Per tx not in the cache: its embedded items, then its own signature.
        let missed: Vec<&UnverifiedTx> = txs
            .iter()
            .zip(&hit)
            .filter(|(_, h)| !**h)
            .map(|(t, _)| t)
            .collect();
        let items = items_of(&missed);
        let mut verdicts = verify_items(&items).into_iter();
        let mut decoded = Vec::with_capacity(txs.len());
        let mut sig_ok = Vec::with_capacity(txs.len());
        for (t, h) in txs.into_iter().zip(hit) {
            let n = t.embedded().count();
            let (d, own) = if h {
                (t.resolve(&vec![true; n]), true)
            } else {
                let embedded: Vec<bool> = verdicts.by_ref().take(n).collect();
                let own = t.decoded().is_ok() && verdicts.next().unwrap_or(false);
                (t.resolve(&embedded), own)
            };
            if let (Ok(tx), true, false) = (&d, own, h) {
                self.insert(&tx.id, &tx.signature);
            }
            sig_ok.push(d.is_ok() && own);
            decoded.push(d);
        }
        (decoded, sig_ok)
    }

    /// ProcessProposal's check: every signature of every tx (its own and
    /// those its actions carry) verifies. Judged in whole batches with no
    /// attribution, so a bad block costs one check per signature (review
    /// m3). Returns the decoded txs, or `None` if any signature fails.
    pub fn verify_block_strict(&self, txs: Vec<UnverifiedTx>) -> Option<Vec<DecodedTx>> {
        let missed: Vec<&UnverifiedTx> = txs
            .iter()
            .filter(|t| {
                !t.decoded()
                    .is_ok_and(|tx| self.contains(&tx.id, &tx.signature))
            })
            .collect();
        let items = items_of(&missed);
        if !all_verify(&items) {
            return None;
        }
        let mut decoded = Vec::with_capacity(txs.len());
        for t in txs {
            let n = t.embedded().count();
            let tx = t.resolve(&vec![true; n]).ok()?;
            self.insert(&tx.id, &tx.signature);
            decoded.push(tx);
        }
        Some(decoded)
    }
}

/// Per tx, in order: its embedded items, then its own signature's item.
fn items_of(txs: &[&UnverifiedTx]) -> Vec<Item> {
    crate::par::map(txs, |t| {
        t.embedded()
            .cloned()
            .chain(t.decoded().ok().map(tx_item))
            .collect::<Vec<Item>>()
    })
    .into_iter()
    .flatten()
    .collect()
}

#[cfg(test)]
mod tests {
    use super::SigCache;

    fn key(n: u32) -> ([u8; 32], [u8; 64]) {
        let mut id = [0u8; 32];
        id[..4].copy_from_slice(&n.to_be_bytes());
        (id, [7u8; 64])
    }

    #[test]
    fn the_newest_generation_survives_a_rollover() {
        let c = SigCache::with_generation(100);
        for n in 0..250 {
            let (id, sig) = key(n);
            c.insert(&id, &sig);
        }
        // 0..100 filled the first generation, 100..200 the second; the
        // insert of 200 dropped 0..100.
        for n in 0..100 {
            let (id, sig) = key(n);
            assert!(!c.contains(&id, &sig), "entry {n} outlived two generations");
        }
        // 200..250 are current; 100..150 are found in the previous generation
        // (and promoted, filling the current one to exactly 100).
        for n in (200..250).chain(100..150) {
            let (id, sig) = key(n);
            assert!(c.contains(&id, &sig), "entry {n} was forgotten");
        }
        // Another signature for a known id is a different entry.
        let (id, _) = key(249);
        assert!(!c.contains(&id, &[8u8; 64]));
    }

    #[test]
    fn a_hit_in_the_previous_generation_outlives_its_neighbours() {
        let c = SigCache::with_generation(100);
        for n in 0..101 {
            let (id, sig) = key(n);
            c.insert(&id, &sig);
        }
        // 0..100 are now the previous generation; a hit moves 0 forward.
        let (id0, sig0) = key(0);
        assert!(c.contains(&id0, &sig0));
        for n in 101..200 {
            let (id, sig) = key(n);
            c.insert(&id, &sig);
        }
        // The rollover at 199 dropped 1..100, but not the promoted 0.
        assert!(c.contains(&id0, &sig0), "a promoted entry was dropped");
        let (id1, sig1) = key(1);
        assert!(
            !c.contains(&id1, &sig1),
            "an unused entry outlived two generations"
        );
    }
}
