//! Signature verification for whole blocks: batch verification (ZIP-215, so
//! it agrees with single verification) split across cores, with a fallback to
//! single verification to find the bad ones when a batch fails.

use rayon::prelude::*;

use super::envelope::{sign_bytes, DecodedTx};

/// Chunk size for one batch verification.
const CHUNK: usize = 64;

/// Returns, for each tx, whether its signature verifies.
pub fn verify_all(txs: &[&DecodedTx]) -> Vec<bool> {
    if txs.len() < 4 {
        return txs.iter().map(|t| t.verify_signature().is_ok()).collect();
    }
    txs.par_chunks(CHUNK).flat_map_iter(verify_chunk).collect()
}

fn verify_chunk(chunk: &[&DecodedTx]) -> Vec<bool> {
    let msgs: Vec<Vec<u8>> = chunk.iter().map(|t| sign_bytes(&t.body_bytes)).collect();
    let mut batch = ed25519_consensus::batch::Verifier::new();
    for (t, msg) in chunk.iter().zip(&msgs) {
        let sig = ed25519_consensus::Signature::from(t.signature);
        batch.queue((
            ed25519_consensus::VerificationKeyBytes::from(t.verification_key),
            sig,
            msg,
        ));
    }
    if batch.verify(rand::thread_rng()).is_ok() {
        vec![true; chunk.len()]
    } else {
        chunk.iter().map(|t| t.verify_signature().is_ok()).collect()
    }
}
