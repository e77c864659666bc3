//! Column families of the chain store and the meta keys.

/// Flat latest values of the verifiable state: key → value.
pub const STATE: &str = "state";
/// Non-verifiable secondary indexes, derived from `state`.
pub const INDEX: &str = "index";
/// JMT nodes: borsh(NodeKey) → borsh(Node).
pub const JMT_NODES: &str = "jmt_nodes";
/// JMT values by version: key_hash ‖ version(BE) → tag ‖ value.
pub const JMT_VALUES: &str = "jmt_values";
/// Stale-node index: stale_since_version(BE) ‖ borsh(NodeKey) → ().
pub const STALE: &str = "stale";
/// Key preimages: key_hash → state key (for non-existence proofs).
pub const JMT_KEYS: &str = "jmt_keys";
/// Meta: height, app hash, chain id, schema version, earliest version.
pub const META: &str = "meta";
/// A state-sync restore's verified entries: key_hash → key length (u32
/// BE) ‖ key ‖ value. Empty outside a restore.
pub const RESTORE: &str = "restore";

pub const ALL: [&str; 8] = [
    STATE, INDEX, JMT_NODES, JMT_VALUES, JMT_KEYS, STALE, META, RESTORE,
];

/// borsh(NodeKey) of the root of `version`: the version (u64 LE), then an
/// empty nibble path (num_nibbles as u64 LE, then a u32 LE byte count).
pub fn root_node_key(version: u64) -> Vec<u8> {
    let mut k = Vec::with_capacity(20);
    k.extend_from_slice(&version.to_le_bytes());
    k.extend_from_slice(&0u64.to_le_bytes());
    k.extend_from_slice(&0u32.to_le_bytes());
    k
}

/// Meta keys. Built only here.
pub mod meta {
    pub const HEIGHT: &[u8] = b"height";
    pub const APP_HASH: &[u8] = b"app_hash";
    pub const CHAIN_ID: &[u8] = b"chain_id";
    pub const EARLIEST: &[u8] = b"earliest_version";
    pub const SCHEMA: &[u8] = b"schema_version";
    pub const LAST_BLOCK_TIME: &[u8] = b"last_block_time";
    /// CometBFT's evidence `max_age_num_blocks` from genesis.
    pub const EVIDENCE_AGE: &[u8] = b"evidence_max_age_blocks";
    /// Set (to the height) while a state-sync restore is under way: a
    /// store opened with it is wiped, so a restore cut short starts over.
    pub const RESTORING: &[u8] = b"restoring";
    /// Set (to the height) by a finished restore and cleared by the first
    /// Commit after it: until then CometBFT may not have recorded the
    /// restore, and a new offer may replace it.
    pub const RESTORED: &[u8] = b"restored_unconfirmed";
}

/// Key of a versioned JMT value.
pub fn jmt_value_key(key_hash: &[u8; 32], version: u64) -> [u8; 40] {
    let mut k = [0u8; 40];
    k[..32].copy_from_slice(key_hash);
    k[32..].copy_from_slice(&version.to_be_bytes());
    k
}

/// The key hash and version of a versioned-value key (`None` if it is not
/// 40 bytes).
pub fn split_jmt_value_key(k: &[u8]) -> Option<([u8; 32], u64)> {
    let (kh, ver) = k.split_at_checked(32)?;
    Some((
        kh.try_into().ok()?,
        u64::from_be_bytes(ver.try_into().ok()?),
    ))
}

/// Prefix of the stale-node index for one version.
pub fn stale_key(stale_since: u64, node_key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(8 + node_key.len());
    k.extend_from_slice(&stale_since.to_be_bytes());
    k.extend_from_slice(node_key);
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn root_node_key_is_the_borsh_encoding_of_an_empty_path_key() {
        use borsh::BorshDeserialize;
        let raw = root_node_key(42);
        let nk = jmt::storage::NodeKey::try_from_slice(&raw).unwrap();
        assert_eq!(nk.version(), 42);
        assert_eq!(nk.nibble_path().num_nibbles(), 0);
        assert_eq!(borsh::to_vec(&nk).unwrap(), raw);
    }

    proptest! {
        #[test]
        fn versioned_value_keys_split_back(h in any::<[u8; 32]>(), v in any::<u64>()) {
            prop_assert_eq!(split_jmt_value_key(&jmt_value_key(&h, v)), Some((h, v)));
            prop_assert_eq!(split_jmt_value_key(&h), None);
        }

        #[test]
        fn versioned_value_keys_sort_by_version(h in any::<[u8; 32]>(), a in any::<u64>(), b in any::<u64>()) {
            prop_assert_eq!(a.cmp(&b), jmt_value_key(&h, a).cmp(&jmt_value_key(&h, b)));
        }

        #[test]
        fn stale_keys_sort_by_version(a in any::<u64>(), b in any::<u64>(), n in proptest::collection::vec(any::<u8>(), 0..20)) {
            prop_assume!(a != b);
            prop_assert_eq!(a.cmp(&b), stale_key(a, &n).cmp(&stale_key(b, &n)));
        }
    }
}
