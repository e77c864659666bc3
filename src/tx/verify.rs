//! Signature verification for whole blocks: batch verification (ZIP-215, so
//! it agrees with single verification) split across cores, with a fallback to
//! single verification to find the bad ones when a batch fails. ProcessProposal
//! needs no attribution and uses [`all_verify`]: one batch per chunk, no
//! bisection, so a bad block costs one verification per signature (review m3).
//! Every signature checked here is counted in `stave_signature_checks_total`.
//!
//! Tx signatures and the signatures actions carry (KV token signatures) go
//! through the same batches; each item gets its own verdict, so a bad
//! signature is attributed to its own tx and action.

use ed25519_consensus::batch::Item;
use ed25519_consensus::{Signature, VerificationKey, VerificationKeyBytes};

use super::envelope::{sign_bytes, DecodedTx};

/// Smallest and largest chunk for one batch verification. Larger batches
/// cost less per signature (about 30% less at 1,000 than at 64 on the
/// project machine); the chunks still keep every core busy.
const MIN_CHUNK: usize = 64;
const MAX_CHUNK: usize = 512;
/// A failed batch is split in halves down to this size, then checked one
/// by one, so each verdict belongs to its own signature.
const SINGLE_BELOW: usize = 8;

/// One (key, signature, message) to check; the message is hashed at once.
pub fn item(key: &VerificationKey, signature: &Signature, msg: &[u8]) -> Item {
    Item::from((VerificationKeyBytes::from(*key), *signature, msg))
}

/// Returns, for each item, whether its signature verifies (ZIP-215).
pub fn verify_items(items: &[Item]) -> Vec<bool> {
    if items.len() < 4 {
        return items.iter().map(single).collect();
    }
    if items.len() < 2 * MIN_CHUNK {
        // One chunk: verify on this thread rather than start another
        // and wait for it (CheckTx batches are mostly this small).
        return verify_chunk(items);
    }
    let chunk = (items.len() / crate::par::threads()).clamp(MIN_CHUNK, MAX_CHUNK);
    let chunks: Vec<&[Item]> = items.chunks(chunk).collect();
    crate::par::map_from(&chunks, 2, |c| verify_chunk(c))
        .into_iter()
        .flatten()
        .collect()
}

/// Whether every item verifies, with no attribution: each chunk is one batch
/// and a failed batch is not bisected (ProcessProposal rejects the block).
pub fn all_verify(items: &[Item]) -> bool {
    if items.len() < 2 * MIN_CHUNK {
        return batch_ok(items);
    }
    let chunk = (items.len() / crate::par::threads()).clamp(MIN_CHUNK, MAX_CHUNK);
    let chunks: Vec<&[Item]> = items.chunks(chunk).collect();
    crate::par::map_from(&chunks, 2, |c| batch_ok(c))
        .into_iter()
        .all(|ok| ok)
}

fn single(item: &Item) -> bool {
    counted(1);
    item.clone().verify_single().is_ok()
}

/// One batch verification of `chunk` (true for an empty chunk).
fn batch_ok(chunk: &[Item]) -> bool {
    counted(chunk.len());
    let mut batch = ed25519_consensus::batch::Verifier::new();
    for it in chunk {
        batch.queue(it.clone());
    }
    batch.verify(rand::thread_rng()).is_ok()
}

fn counted(n: usize) {
    crate::metrics::metrics().signature_checks.inc_by(n as u64);
}

/// Batch-verifies `chunk`; on failure, bisects (ZIP-215 batch and single
/// verification agree, so a batch that passes holds only good signatures).
fn verify_chunk(chunk: &[Item]) -> Vec<bool> {
    if chunk.len() < SINGLE_BELOW {
        return chunk.iter().map(single).collect();
    }
    if batch_ok(chunk) {
        return vec![true; chunk.len()];
    }
    let (a, b) = chunk.split_at(chunk.len() / 2);
    let mut out = verify_chunk(a);
    out.extend(verify_chunk(b));
    out
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
    if txs.len() < 4 {
        // Single verification with the key decoding already parsed (an
        // `Item` would decompress it again); the same ZIP-215 rule.
        counted(txs.len());
        return txs.iter().map(|t| t.verify_signature().is_ok()).collect();
    }
    verify_items(&crate::par::map(txs, |t| tx_item(t)))
}
