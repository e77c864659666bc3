//! Key builders of the `accounts/` keyspace and the sponsorship keyspaces.

const PREFIX: &[u8] = b"accounts/";
const SPONSORSHIPS: &[u8] = b"sponsorships/";
const POOLS: &[u8] = b"sponsor_pools/";

/// `accounts/{pubkey}`.
pub fn account_key(pubkey: &[u8; 32]) -> Vec<u8> {
    let mut k = Vec::with_capacity(PREFIX.len() + 32);
    k.extend_from_slice(PREFIX);
    k.extend_from_slice(pubkey);
    k
}

/// `sponsorships/{account:32}{pool id}` → the amount, fixed-width
/// big-endian u64. The account is fixed width, so one account's sponsors
/// list under `sponsorships/{account}`.
pub fn sponsorship_key(account: &[u8; 32], pool_id: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(SPONSORSHIPS.len() + 32 + pool_id.len());
    k.extend_from_slice(SPONSORSHIPS);
    k.extend_from_slice(account);
    k.extend_from_slice(pool_id);
    k
}

/// `sponsor_pools/{pool id}` → `SponsorPool`.
pub fn pool_key(pool_id: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(POOLS.len() + pool_id.len());
    k.extend_from_slice(POOLS);
    k.extend_from_slice(pool_id);
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_keys_are_prefixed_and_fixed_width() {
        let k = account_key(&[9; 32]);
        assert!(k.starts_with(b"accounts/"));
        assert_eq!(k.len(), 9 + 32);
    }

    #[test]
    fn sponsorship_keys_put_the_fixed_width_account_first() {
        let a = sponsorship_key(&[1; 32], b"v\x02");
        assert!(a.starts_with(b"sponsorships/"));
        assert_eq!(&a[13..45], &[1; 32]);
        assert_eq!(&a[45..], b"v\x02");
        assert_ne!(pool_key(b"gx"), pool_key(b"gy"));
    }
}
