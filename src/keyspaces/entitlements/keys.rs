//! Key builders of `entitlements/`, its index `entitlements_by_key/` and
//! the per-cid counts `entitlement_owners/` and `entitlement_counts/`.
//!
//! `{cid}` is written as one length byte and the cid
//! ([`cid_segment`]), so the cid boundary is unambiguous; pubkeys are 32
//! bytes.

use crate::keyspaces::rights::cid_segment;

const PREFIX: &[u8] = b"entitlements/";
const BY_KEY: &[u8] = b"entitlements_by_key/";
const OWNERS: &[u8] = b"entitlement_owners/";
const COUNTS: &[u8] = b"entitlement_counts/";

/// `entitlements/`: every entitlement (verifiable state).
pub fn entitlements_prefix() -> Vec<u8> {
    PREFIX.to_vec()
}

/// `entitlements/{cid}/`: the entitlements of one cid.
pub fn entitlements_cid_prefix(cid: &[u8]) -> Vec<u8> {
    let mut k = entitlements_prefix();
    k.extend_from_slice(&cid_segment(cid));
    k
}

/// `entitlements/{cid}/{pubkey}`.
pub fn entitlement_key(cid: &[u8], pubkey: &[u8; 32]) -> Vec<u8> {
    let mut k = entitlements_cid_prefix(cid);
    k.extend_from_slice(pubkey);
    k
}

/// `entitlements_by_key/`: the whole index (index space).
pub fn entitlements_by_key_root() -> Vec<u8> {
    BY_KEY.to_vec()
}

/// `entitlements_by_key/{pubkey}/`: one key's entitlements (index space).
pub fn entitlements_by_key_prefix(pubkey: &[u8; 32]) -> Vec<u8> {
    let mut k = entitlements_by_key_root();
    k.extend_from_slice(pubkey);
    k
}

/// `entitlements_by_key/{pubkey}/{cid}` (index space).
pub fn entitlement_by_key_key(pubkey: &[u8; 32], cid: &[u8]) -> Vec<u8> {
    let mut k = entitlements_by_key_prefix(pubkey);
    k.extend_from_slice(&cid_segment(cid));
    k
}

/// `entitlement_owners/{cid}`: how many OWNER records the cid has
/// (verifiable state; the last-owner rule reads it).
pub fn owner_count_key(cid: &[u8]) -> Vec<u8> {
    let mut k = OWNERS.to_vec();
    k.extend_from_slice(cid);
    k
}

/// `entitlement_counts/{cid}`: how many entitlement records the cid has
/// (verifiable state; `max_entitlements_per_cid` reads it).
pub fn entitlement_count_key(cid: &[u8]) -> Vec<u8> {
    let mut k = COUNTS.to_vec();
    k.extend_from_slice(cid);
    k
}

/// The cid of a key segment that is exactly one cid segment.
pub fn split_cid_segment(seg: &[u8]) -> Option<&[u8]> {
    let (len, cid) = seg.split_first()?;
    (cid.len() == usize::from(*len)).then_some(cid)
}

/// The (cid, pubkey) of an `entitlements/{cid}/{pubkey}` key.
pub fn split_entitlement_key(k: &[u8]) -> Option<(&[u8], [u8; 32])> {
    let rest = k.strip_prefix(PREFIX)?;
    let (len, rest) = rest.split_first()?;
    let (cid, pubkey) = rest.split_at_checked(usize::from(*len))?;
    Some((cid, pubkey.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn entitlement_keys_split_back(cid in proptest::collection::vec(any::<u8>(), 1..80),
                                       pk in any::<[u8; 32]>()) {
            let k = entitlement_key(&cid, &pk);
            prop_assert_eq!(split_entitlement_key(&k), Some((&cid[..], pk)));
            prop_assert_eq!(split_entitlement_key(&k[..k.len() - 1]), None);
        }

        #[test]
        fn cids_never_share_a_prefix(a in proptest::collection::vec(any::<u8>(), 1..60),
            b in proptest::collection::vec(any::<u8>(), 1..60), k in any::<[u8; 32]>()) {
            prop_assume!(a != b);
            prop_assert!(!entitlement_key(&a, &k).starts_with(&entitlements_cid_prefix(&b)));
            prop_assert!(!entitlement_by_key_key(&k, &a).starts_with(&entitlement_by_key_key(&k, &b)));
        }

        #[test]
        fn pubkeys_of_one_cid_sort_by_pubkey(c in proptest::collection::vec(any::<u8>(), 1..60),
            k1 in any::<[u8; 32]>(), k2 in any::<[u8; 32]>()) {
            prop_assert_eq!(k1.cmp(&k2), entitlement_key(&c, &k1).cmp(&entitlement_key(&c, &k2)));
            prop_assert!(entitlement_key(&c, &k1).starts_with(&entitlements_cid_prefix(&c)));
            prop_assert!(entitlement_by_key_key(&k1, &c).starts_with(&entitlements_by_key_prefix(&k1)));
        }
    }
}
