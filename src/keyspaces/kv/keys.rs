//! Key builders of the `kv/` keyspace.

const PREFIX: &[u8] = b"kv/";

/// `kv/{signer}/`: the prefix of one signer's entries.
pub fn kv_prefix(signer: &[u8; 32]) -> Vec<u8> {
    let mut k = Vec::with_capacity(PREFIX.len() + 33);
    k.extend_from_slice(PREFIX);
    k.extend_from_slice(signer);
    k.push(b'/');
    k
}

/// `kv/{signer}/{key}`. The signer is fixed-width, so no key can collide
/// with another signer's.
pub fn kv_key(signer: &[u8; 32], key: &[u8]) -> Vec<u8> {
    let mut k = kv_prefix(signer);
    k.extend_from_slice(key);
    k
}

/// The user key inside a `kv/{signer}/{key}` key, if it is one of `signer`'s.
pub fn split_kv_key<'a>(signer: &[u8; 32], full: &'a [u8]) -> Option<&'a [u8]> {
    let prefix = kv_prefix(signer);
    full.strip_prefix(prefix.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn kv_keys_round_trip_and_keep_key_order(s in any::<[u8; 32]>(),
            a in proptest::collection::vec(any::<u8>(), 1..40),
            b in proptest::collection::vec(any::<u8>(), 1..40)) {
            let ka = kv_key(&s, &a);
            prop_assert_eq!(split_kv_key(&s, &ka), Some(a.as_slice()));
            prop_assert_eq!(a.cmp(&b), ka.cmp(&kv_key(&s, &b)));
        }

        #[test]
        fn signers_never_share_a_prefix(s in any::<[u8; 32]>(), t in any::<[u8; 32]>(),
            a in proptest::collection::vec(any::<u8>(), 1..40)) {
            prop_assume!(s != t);
            prop_assert!(!kv_key(&s, &a).starts_with(&kv_prefix(&t)));
        }
    }
}
