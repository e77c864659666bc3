//! Key builders of the `validators/` keyspace.

const PREFIX: &[u8] = b"validators/";

/// `validators/`.
pub fn validators_prefix() -> Vec<u8> {
    PREFIX.to_vec()
}

/// `validators/{operator_key}`.
pub fn validator_key(operator: &[u8; 32]) -> Vec<u8> {
    let mut k = validators_prefix();
    k.extend_from_slice(operator);
    k
}
