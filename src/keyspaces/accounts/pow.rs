//! Proof of work of an unsponsored tx (UEP-20's shape): the hash
//! `SHA-256("stave/pow/v1" || tx_id || pow_nonce)` read as a 256-bit
//! big-endian number must be below `2^256 / divisor`, where the divisor is
//! `pow_base + tx_bytes * pow_retention`. Checked exactly, as
//! `hash * divisor < 2^256`, with no division and no floats.

use sha2::{Digest, Sha256};

use super::StorageParams;

/// The domain tag of the work hash.
pub const POW_DOMAIN: &[u8] = b"stave/pow/v1";

/// The expected number of hashes a tx of `tx_bytes` needs (the divisor).
pub fn divisor(params: &StorageParams, tx_bytes: u64) -> u64 {
    params
        .pow_base
        .saturating_add(tx_bytes.saturating_mul(params.pow_retention))
}

/// `SHA-256("stave/pow/v1" || tx_id || pow_nonce as 8 bytes big-endian)`.
pub fn work_hash(tx_id: &[u8; 32], pow_nonce: u64) -> [u8; 32] {
    Sha256::new()
        .chain_update(POW_DOMAIN)
        .chain_update(tx_id)
        .chain_update(pow_nonce.to_be_bytes())
        .finalize()
        .into()
}

/// Whether `hash * divisor < 2^256` (so `hash < 2^256 / divisor`).
pub fn below_target(hash: &[u8; 32], divisor: u64) -> bool {
    let mut carry: u128 = 0;
    for limb in hash.rchunks_exact(8) {
        let mut b = [0u8; 8];
        b.copy_from_slice(limb);
        let product = u128::from(u64::from_be_bytes(b)) * u128::from(divisor) + carry;
        carry = product >> 64;
    }
    carry == 0
}

/// Whether `pow_nonce` is valid work for the tx `tx_id` of `tx_bytes`.
pub fn meets(params: &StorageParams, tx_id: &[u8; 32], tx_bytes: u64, pow_nonce: u64) -> bool {
    below_target(&work_hash(tx_id, pow_nonce), divisor(params, tx_bytes))
}

/// The first nonce from `start` that meets the target, trying at most
/// `max_tries` (clients mine; the node only checks).
pub fn mine(
    params: &StorageParams,
    tx_id: &[u8; 32],
    tx_bytes: u64,
    start: u64,
    max_tries: u64,
) -> Option<u64> {
    let d = divisor(params, tx_bytes);
    (0..max_tries)
        .map(|i| start.wrapping_add(i))
        .find(|n| below_target(&work_hash(tx_id, *n), d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_comparison_is_exact() {
        let mut h = [0u8; 32];
        assert!(below_target(&h, u64::MAX));
        h[0] = 0x80; // 2^255
        assert!(below_target(&h, 1));
        assert!(!below_target(&h, 2));
        h[0] = 0x7f;
        h[1..].fill(0xff); // 2^255 - 1
        assert!(below_target(&h, 2));
        assert!(!below_target(&h, 3));
        assert!(below_target(&[0xff; 32], 1));
    }

    #[test]
    fn mined_nonces_meet_their_target_and_others_mostly_do_not() {
        let p = StorageParams {
            pow_base: 64,
            pow_retention: 1,
            ..StorageParams::default()
        };
        let id = [7u8; 32];
        let n = mine(&p, &id, 100, 0, 1_000_000).expect("found");
        assert!(meets(&p, &id, 100, n));
        let hits = (0..10_000u64).filter(|n| meets(&p, &id, 100, *n)).count();
        // Expected 10,000 / 164 ≈ 61.
        assert!((20..150).contains(&hits), "{hits}");
    }
}
