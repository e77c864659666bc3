//! Signature verification for whole blocks: batch verification (ZIP-215, so
//! it agrees with single verification) split across cores, with a fallback to
//! single verification to find the bad ones when a batch fails.
//!
//! Tx signatures and the signatures actions carry (KV token signatures) go
//! through the same batches; each item gets its own verdict, so a bad
//! signature is attributed to its own tx and action.

use ed25519_consensus::batch::Item;
use ed25519_consensus::{Signature, VerificationKey, VerificationKeyBytes};
use rayon::prelude::*;

use super::envelope::{sign_bytes, DecodedTx};

/// Chunk size for one batch verification.
const CHUNK: usize = 64;

/// One (key, signature, message) to check; the message is hashed at once.
pub fn item(key: &VerificationKey, signature: &Signature, msg: &[u8]) -> Item {
    Item::from((VerificationKeyBytes::from(*key), *signature, msg))
}

/// Returns, for each item, whether its signature verifies (ZIP-215).
pub fn verify_items(items: &[Item]) -> Vec<bool> {
    if items.len() < 4 {
        return items.iter().map(single).collect();
    }
    items
        .par_chunks(CHUNK)
        .flat_map_iter(verify_chunk)
        .collect()
}

fn single(item: &Item) -> bool {
    item.clone().verify_single().is_ok()
}

fn verify_chunk(chunk: &[Item]) -> Vec<bool> {
    let mut batch = ed25519_consensus::batch::Verifier::new();
    for it in chunk {
        batch.queue(it.clone());
    }
    if batch.verify(rand::thread_rng()).is_ok() {
        vec![true; chunk.len()]
    } else {
        chunk.iter().map(single).collect()
    }
}

/// The item of a tx's own signature.
pub fn tx_item(tx: &DecodedTx) -> Item {
    item(
        &tx.verification_key,
        &Signature::from(tx.signature),
        &sign_bytes(&tx.body_bytes),
    )
}

/// Returns, for each tx, whether its signature verifies.
pub fn verify_all(txs: &[&DecodedTx]) -> Vec<bool> {
    let items: Vec<Item> = txs.par_iter().map(|t| tx_item(t)).collect();
    verify_items(&items)
}
