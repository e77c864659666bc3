//! Key builders of `grants/` and its index `grants_by_key/`. `{cid}` is a
//! length byte and the cid; `{period}` is the grant period's first second
//! of block time, 8 bytes big-endian, so a consumer's grants of one cid
//! sort by time.

use crate::keyspaces::rights::cid_segment;

const PREFIX: &[u8] = b"grants/";
const BY_KEY: &[u8] = b"grants_by_key/";
const RATE: &[u8] = b"grant_rate/";
const SEQ: &[u8] = b"grant_seq/";

/// `grants/{cid}/`.
pub fn grants_cid_prefix(cid: &[u8]) -> Vec<u8> {
    let mut k = PREFIX.to_vec();
    k.extend_from_slice(&cid_segment(cid));
    k
}

/// `grants/{cid}/{consumer}/{period}`.
pub fn grant_key(cid: &[u8], consumer: &[u8; 32], period: u64) -> Vec<u8> {
    let mut k = grants_cid_prefix(cid);
    k.extend_from_slice(consumer);
    k.extend_from_slice(&period.to_be_bytes());
    k
}

/// `grants_by_key/{consumer}/` (index space).
pub fn grants_by_key_prefix(consumer: &[u8; 32]) -> Vec<u8> {
    let mut k = BY_KEY.to_vec();
    k.extend_from_slice(consumer);
    k
}

/// `grants_by_key/{consumer}/{cid}/{period}` (index space).
pub fn grant_by_key_key(consumer: &[u8; 32], cid: &[u8], period: u64) -> Vec<u8> {
    let mut k = grants_by_key_prefix(consumer);
    k.extend_from_slice(&cid_segment(cid));
    k.extend_from_slice(&period.to_be_bytes());
    k
}

/// The (cid, period) after a `grants_by_key/{consumer}/` prefix.
pub fn split_by_key_rest(rest: &[u8]) -> Option<(&[u8], u64)> {
    let (len, rest) = rest.split_first()?;
    let (cid, period) = rest.split_at_checked(usize::from(*len))?;
    Some((cid, u64::from_be_bytes(period.try_into().ok()?)))
}

/// `grant_rate/{validator}`: the height of the validator's latest recorded
/// grant and how many it recorded at that height (two big-endian u64s;
/// verifiable state, read by `max_grants_per_validator_per_block`).
pub fn grant_rate_key(validator: &[u8; 32]) -> Vec<u8> {
    let mut k = RATE.to_vec();
    k.extend_from_slice(validator);
    k
}

/// `grant_seq/{validator}`: the end of the validator's last recorded
/// delivery range (`RecordGrants.to`), 8 bytes big-endian.
pub fn grant_seq_key(validator: &[u8; 32]) -> Vec<u8> {
    let mut k = SEQ.to_vec();
    k.extend_from_slice(validator);
    k
}

/// `grants/`: every grant record (verifiable state).
pub fn grants_root() -> &'static [u8] {
    PREFIX
}

/// The (cid, consumer, period) of a `grants/{cid}/{consumer}/{period}` key.
pub fn split_grant_key(k: &[u8]) -> Option<(&[u8], [u8; 32], u64)> {
    let rest = k.strip_prefix(PREFIX)?;
    let (len, rest) = rest.split_first()?;
    let (cid, rest) = rest.split_at_checked(usize::from(*len))?;
    let (consumer, period) = rest.split_at_checked(32)?;
    Some((
        cid,
        consumer.try_into().ok()?,
        u64::from_be_bytes(period.try_into().ok()?),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn grant_keys_split_back(cid in proptest::collection::vec(any::<u8>(), 1..80),
                                 consumer in any::<[u8; 32]>(), period in any::<u64>()) {
            let k = grant_key(&cid, &consumer, period);
            prop_assert_eq!(split_grant_key(&k), Some((&cid[..], consumer, period)));
            prop_assert_eq!(split_grant_key(&k[..k.len() - 1]), None);
        }

        #[test]
        fn period_order_is_key_order(c in proptest::collection::vec(any::<u8>(), 1..40),
            k in any::<[u8; 32]>(), a in any::<u64>(), b in any::<u64>()) {
            prop_assert_eq!(a.cmp(&b), grant_key(&c, &k, a).cmp(&grant_key(&c, &k, b)));
            prop_assert_eq!(a.cmp(&b), grant_by_key_key(&k, &c, a).cmp(&grant_by_key_key(&k, &c, b)));
            prop_assert!(grant_key(&c, &k, a).starts_with(&grants_cid_prefix(&c)));
            prop_assert!(grant_by_key_key(&k, &c, a).starts_with(&grants_by_key_prefix(&k)));
        }
    }
}
