//! Key builders of the `accounts/` keyspace.

const PREFIX: &[u8] = b"accounts/";

/// `accounts/{pubkey}`.
pub fn account_key(pubkey: &[u8; 32]) -> Vec<u8> {
    let mut k = Vec::with_capacity(PREFIX.len() + 32);
    k.extend_from_slice(PREFIX);
    k.extend_from_slice(pubkey);
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
}
