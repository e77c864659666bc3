//! Key builders of `releases/`, `releases_by_cid/`, `release_versions/`
//! (verifiable state) and `releases_by_party/` (index space).
//!
//! A release id is the ICPN as a 14-digit GTIN or the 18-character GRid,
//! written as one length byte and the id ([`id_segment`]) wherever another
//! segment follows it; a `{cid}` segment is [`cid_segment`].

use crate::keyspaces::rights::cid_segment;

const RELEASES: &[u8] = b"releases/";
const BY_CID: &[u8] = b"releases_by_cid/";
const VERSIONS: &[u8] = b"release_versions/";
const BY_PARTY: &[u8] = b"releases_by_party/";

/// One length byte, then the id (ids are at most 18 bytes; longer input is
/// cut at 255, which no valid id reaches).
pub fn id_segment(id: &str) -> Vec<u8> {
    let b = id.as_bytes();
    let len = u8::try_from(b.len()).unwrap_or(u8::MAX);
    let mut out = Vec::with_capacity(b.len() + 1);
    out.push(len);
    out.extend_from_slice(b.get(..usize::from(len)).unwrap_or(b));
    out
}

/// `releases/{release_id}`: the current version.
pub fn release_key(id: &str) -> Vec<u8> {
    let mut k = RELEASES.to_vec();
    k.extend_from_slice(id.as_bytes());
    k
}

/// `releases_by_cid/{cid}/`: the releases one cid is in.
pub fn by_cid_prefix(cid: &[u8]) -> Vec<u8> {
    let mut k = BY_CID.to_vec();
    k.extend_from_slice(&cid_segment(cid));
    k
}

/// `releases_by_cid/{cid}/{release_id}`: the deals of that release that
/// cover the cid (`stave.ddex.v1.CidDeals`).
pub fn by_cid_key(cid: &[u8], id: &str) -> Vec<u8> {
    let mut k = by_cid_prefix(cid);
    k.extend_from_slice(id.as_bytes());
    k
}

/// `release_versions/{release_id}/`: the earlier versions of one id.
pub fn versions_prefix(id: &str) -> Vec<u8> {
    let mut k = VERSIONS.to_vec();
    k.extend_from_slice(&id_segment(id));
    k
}

/// `release_versions/{release_id}/{version u32be}`.
pub fn version_key(id: &str, version: u32) -> Vec<u8> {
    let mut k = versions_prefix(id);
    k.extend_from_slice(&version.to_be_bytes());
    k
}

/// Party keys longer than this are indexed by their SHA-256.
const MAX_PARTY_SEGMENT: usize = 250;

/// `releases_by_party/{party}/` (index space). A party key over 250 bytes
/// (a long `name:`) is written as `sha256:` and its hex digest, so two long
/// names never share a segment.
pub fn by_party_prefix(party: &str) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    let mut k = BY_PARTY.to_vec();
    if party.len() > MAX_PARTY_SEGMENT {
        let digest = hex::encode(Sha256::digest(party.as_bytes()));
        k.extend_from_slice(&id_segment(&format!("sha256:{digest}")));
    } else {
        k.extend_from_slice(&id_segment(party));
    }
    k
}

/// `releases_by_party/{party}/{release_id}` (index space).
pub fn by_party_key(party: &str, id: &str) -> Vec<u8> {
    let mut k = by_party_prefix(party);
    k.extend_from_slice(id.as_bytes());
    k
}

/// `releases/`: every release's current version (verifiable state).
pub fn releases_root() -> &'static [u8] {
    RELEASES
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn versions_sort_in_numeric_order_and_long_parties_do_not_collide() {
        let keys: Vec<Vec<u8>> = [0u32, 1, 255, 256, 65_536, u32::MAX]
            .iter()
            .map(|v| version_key("00036000291452", *v))
            .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        let a = format!("name:{}", "x".repeat(300));
        let b = format!("name:{}", "x".repeat(301));
        assert_ne!(by_party_prefix(&a), by_party_prefix(&b));
        assert!(!by_party_key(&a, "1").starts_with(&by_party_prefix(&b)));
    }

    proptest! {
        #[test]
        fn segments_never_share_a_prefix(a in "[A-Z0-9]{1,20}", b in "[A-Z0-9]{1,20}",
            c in proptest::collection::vec(any::<u8>(), 1..40), d in proptest::collection::vec(any::<u8>(), 1..40)) {
            prop_assume!(a != b);
            prop_assert!(!version_key(&a, 1).starts_with(&versions_prefix(&b)));
            prop_assert!(!by_party_key(&a, "X").starts_with(&by_party_prefix(&b)));
            if c != d {
                prop_assert!(!by_cid_key(&c, &a).starts_with(&by_cid_prefix(&d)));
            }
        }
    }
}
