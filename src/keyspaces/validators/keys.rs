//! Key builders of the `validators/` keyspace and its bookkeeping.

const PREFIX: &[u8] = b"validators/";
const META: &[u8] = b"validator_meta/";
const BY_CONSENSUS: &[u8] = b"validators_by_consensus/";
const OPERATOR_KEYS: &[u8] = b"operator_keys/";

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

/// `validator_meta/`: the prefix of the records below.
pub fn validator_meta_prefix() -> Vec<u8> {
    META.to_vec()
}

fn meta(name: &[u8]) -> Vec<u8> {
    let mut k = validator_meta_prefix();
    k.extend_from_slice(name);
    k
}

/// `validator_meta/totals`: active power and count, records, unbonding list.
pub fn totals_key() -> Vec<u8> {
    meta(b"totals")
}

/// `validator_meta/comet_set`: CometBFT's set as Stave's updates made it.
pub fn comet_set_key() -> Vec<u8> {
    meta(b"comet_set")
}

/// `validator_meta/queue`: updates waiting for room.
pub fn queue_key() -> Vec<u8> {
    meta(b"queue")
}

/// `validators_by_consensus/{consensus_key}` → operator key. In the
/// verifiable state, not the index space: `ApplyValidator`'s uniqueness
/// check reads it, so it must be part of what consensus commits to.
pub fn by_consensus_key(consensus: &[u8; 32]) -> Vec<u8> {
    let mut k = BY_CONSENSUS.to_vec();
    k.extend_from_slice(consensus);
    k
}

/// `operator_keys/{key}` → `OperatorKey`: a key that signs, or signed, for
/// a validator after a `RotateOperatorKey`. In the verifiable state: every
/// tx's authentication reads it.
pub fn operator_key_key(key: &[u8; 32]) -> Vec<u8> {
    let mut k = OPERATOR_KEYS.to_vec();
    k.extend_from_slice(key);
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bookkeeping_never_lands_under_the_record_prefix() {
        for k in [totals_key(), comet_set_key(), queue_key()] {
            assert!(!k.starts_with(&validators_prefix()));
        }
    }

    proptest! {
        #[test]
        fn validator_keys_keep_operator_order(a in any::<[u8; 32]>(), b in any::<[u8; 32]>()) {
            prop_assert_eq!(a.cmp(&b), validator_key(&a).cmp(&validator_key(&b)));
            prop_assert_eq!(a.cmp(&b), by_consensus_key(&a).cmp(&by_consensus_key(&b)));
            prop_assert_eq!(a.cmp(&b), operator_key_key(&a).cmp(&operator_key_key(&b)));
            prop_assert_eq!(validator_key(&a).len(), PREFIX.len() + 32);
        }
    }
}
