//! DEK wrapping: X25519 ECDH with a fresh ephemeral key, HKDF-SHA256 whose
//! info names the cid and both public keys, then ChaCha20-Poly1305.
//!
//! ```
//! use stave::crypto::{generate_dek, wrap};
//! let holder = x25519_dalek::StaticSecret::random_from_rng(rand::rngs::OsRng);
//! let public = x25519_dalek::PublicKey::from(&holder).to_bytes();
//! let dek = generate_dek();
//! let w = wrap::wrap_dek(&dek, &public, b"cid").unwrap();
//! assert_eq!(*wrap::unwrap_dek(&holder, &w, b"cid").unwrap(), *dek);
//! assert!(wrap::unwrap_dek(&holder, &w, b"other cid").is_err());
//! ```

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use hkdf::Hkdf;
use sha2::Sha256;
use x25519_dalek::{PublicKey, StaticSecret};
use zeroize::Zeroizing;

use super::{check_x25519_public, CryptoError, Dek};

/// HKDF info prefix; the cid and both public keys follow.
const INFO_TAG: &[u8] = b"stave/dek-wrap/v1";
/// A wrapped DEK: 32 bytes of key plus the 16-byte tag.
pub const WRAPPED_LEN: usize = 48;

/// A DEK wrapped to one X25519 key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrappedDek {
    pub ephemeral_pubkey: [u8; 32],
    pub ciphertext: Vec<u8>,
}

fn wrapping_key(
    shared: &[u8; 32],
    cid: &[u8],
    ephemeral: &[u8; 32],
    recipient: &[u8; 32],
) -> Zeroizing<[u8; 32]> {
    let hk = Hkdf::<Sha256>::new(None, shared);
    let mut info = Vec::with_capacity(INFO_TAG.len() + 4 + cid.len() + 64);
    info.extend_from_slice(INFO_TAG);
    info.extend_from_slice(&(cid.len() as u32).to_be_bytes());
    info.extend_from_slice(cid);
    info.extend_from_slice(ephemeral);
    info.extend_from_slice(recipient);
    let mut okm = Zeroizing::new([0u8; 32]);
    hk.expand(&info, okm.as_mut())
        .expect("32 bytes is a valid HKDF-SHA256 output length");
    okm
}

/// Wraps `dek` to `recipient` for `cid` with a fresh ephemeral key.
///
/// # Errors
/// [`CryptoError::LowOrderKey`] when `recipient` is a low-order point.
pub fn wrap_dek(dek: &Dek, recipient: &[u8; 32], cid: &[u8]) -> Result<WrappedDek, CryptoError> {
    let ephemeral = StaticSecret::random_from_rng(rand::rngs::OsRng);
    wrap_with_ephemeral(dek, recipient, cid, &ephemeral)
}

/// [`wrap_dek`] with a given ephemeral secret (test vectors).
pub fn wrap_with_ephemeral(
    dek: &Dek,
    recipient: &[u8; 32],
    cid: &[u8],
    ephemeral: &StaticSecret,
) -> Result<WrappedDek, CryptoError> {
    check_x25519_public(recipient)?;
    let eph_pub = PublicKey::from(ephemeral).to_bytes();
    let shared = ephemeral.diffie_hellman(&PublicKey::from(*recipient));
    if !shared.was_contributory() {
        return Err(CryptoError::LowOrderKey {
            key: hex::encode(recipient),
        });
    }
    let key = wrapping_key(shared.as_bytes(), cid, &eph_pub, recipient);
    let aead = ChaCha20Poly1305::new(Key::from_slice(key.as_ref()));
    // The key is unique to this ephemeral secret, so a fixed nonce is safe.
    let ciphertext = aead
        .encrypt(
            Nonce::from_slice(&[0u8; 12]),
            Payload {
                msg: dek.as_ref(),
                aad: cid,
            },
        )
        .map_err(|_| CryptoError::Unwrap {
            cid: hex::encode(cid),
        })?;
    Ok(WrappedDek {
        ephemeral_pubkey: eph_pub,
        ciphertext,
    })
}

/// Unwraps a DEK wrapped to `secret`'s public key for `cid`.
///
/// # Errors
/// A low-order ephemeral key, a wrong length, a wrong key, another cid or a
/// tampered ciphertext.
pub fn unwrap_dek(
    secret: &StaticSecret,
    wrapped: &WrappedDek,
    cid: &[u8],
) -> Result<Dek, CryptoError> {
    if wrapped.ciphertext.len() != WRAPPED_LEN {
        return Err(CryptoError::WrappedLength {
            cid: hex::encode(cid),
            len: wrapped.ciphertext.len(),
            expected: WRAPPED_LEN,
        });
    }
    check_x25519_public(&wrapped.ephemeral_pubkey)?;
    let shared = secret.diffie_hellman(&PublicKey::from(wrapped.ephemeral_pubkey));
    if !shared.was_contributory() {
        return Err(CryptoError::LowOrderKey {
            key: hex::encode(wrapped.ephemeral_pubkey),
        });
    }
    let me = PublicKey::from(secret).to_bytes();
    let key = wrapping_key(shared.as_bytes(), cid, &wrapped.ephemeral_pubkey, &me);
    let aead = ChaCha20Poly1305::new(Key::from_slice(key.as_ref()));
    let plain = Zeroizing::new(
        aead.decrypt(
            Nonce::from_slice(&[0u8; 12]),
            Payload {
                msg: &wrapped.ciphertext,
                aad: cid,
            },
        )
        .map_err(|_| CryptoError::Unwrap {
            cid: hex::encode(cid),
        })?,
    );
    let mut dek = Zeroizing::new([0u8; 32]);
    dek.copy_from_slice(&plain);
    Ok(dek)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(b: u8) -> StaticSecret {
        StaticSecret::from([b; 32])
    }

    #[test]
    fn rfc7748_x25519_vector_holds() {
        // RFC 7748 §6.1: Alice's private key and public key.
        let a: [u8; 32] =
            hex::decode("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
                .unwrap()
                .try_into()
                .unwrap();
        let public = PublicKey::from(&StaticSecret::from(a));
        assert_eq!(
            hex::encode(public.as_bytes()),
            "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"
        );
    }

    #[test]
    fn wrap_vector_is_stable() {
        let dek = Zeroizing::new([7u8; 32]);
        let holder = PublicKey::from(&secret(1)).to_bytes();
        let w = wrap_with_ephemeral(&dek, &holder, b"cid-1", &secret(2)).unwrap();
        assert_eq!(
            hex::encode(w.ephemeral_pubkey),
            hex::encode(PublicKey::from(&secret(2)).to_bytes())
        );
        assert_eq!(hex::encode(&w.ciphertext), WRAP_VECTOR);
        assert_eq!(*unwrap_dek(&secret(1), &w, b"cid-1").unwrap(), [7u8; 32]);
    }

    /// `wrap_with_ephemeral([7;32], pub([1;32]), "cid-1", [2;32])`.
    const WRAP_VECTOR: &str = include_str!("wrap_vector.hex");

    #[test]
    fn wrong_key_other_cid_and_tampering_are_refused() {
        let dek = Zeroizing::new([9u8; 32]);
        let holder = PublicKey::from(&secret(1)).to_bytes();
        let w = wrap_dek(&dek, &holder, b"cid").unwrap();
        assert!(matches!(
            unwrap_dek(&secret(3), &w, b"cid"),
            Err(CryptoError::Unwrap { .. })
        ));
        assert!(unwrap_dek(&secret(1), &w, b"cie").is_err());
        for i in 0..w.ciphertext.len() {
            let mut t = w.clone();
            t.ciphertext[i] ^= 1;
            assert!(unwrap_dek(&secret(1), &t, b"cid").is_err(), "byte {i}");
        }
        let mut t = w.clone();
        t.ephemeral_pubkey[3] ^= 1;
        assert!(unwrap_dek(&secret(1), &t, b"cid").is_err());
        let mut t = w.clone();
        t.ciphertext.pop();
        assert!(matches!(
            unwrap_dek(&secret(1), &t, b"cid"),
            Err(CryptoError::WrappedLength { .. })
        ));
    }

    #[test]
    fn low_order_keys_are_refused() {
        let dek = Zeroizing::new([9u8; 32]);
        let mut one = [0u8; 32];
        one[0] = 1;
        for bad in [[0u8; 32], one] {
            assert!(matches!(
                wrap_dek(&dek, &bad, b"cid"),
                Err(CryptoError::LowOrderKey { .. })
            ));
            let w = WrappedDek {
                ephemeral_pubkey: bad,
                ciphertext: vec![0; WRAPPED_LEN],
            };
            assert!(matches!(
                unwrap_dek(&secret(1), &w, b"cid"),
                Err(CryptoError::LowOrderKey { .. })
            ));
        }
    }

    #[test]
    fn every_wrap_uses_a_fresh_ephemeral_key() {
        let dek = Zeroizing::new([9u8; 32]);
        let holder = PublicKey::from(&secret(1)).to_bytes();
        let a = wrap_dek(&dek, &holder, b"cid").unwrap();
        let b = wrap_dek(&dek, &holder, b"cid").unwrap();
        assert_ne!(a.ephemeral_pubkey, b.ephemeral_pubkey);
        assert_ne!(a.ciphertext, b.ciphertext);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// The re-wrap to a consumer: for any DEK, cid and consumer key,
        /// the consumer's key unwraps it; any other key, or the same key
        /// with another cid, does not.
        #[test]
        fn only_the_recipient_unwraps_and_only_for_its_cid(
            dek in proptest::prelude::any::<[u8; 32]>(),
            me in proptest::prelude::any::<[u8; 32]>(),
            other in proptest::prelude::any::<[u8; 32]>(),
            cid in proptest::collection::vec(proptest::prelude::any::<u8>(), 1..64),
        ) {
            let (me, other) = (StaticSecret::from(me), StaticSecret::from(other));
            let to = PublicKey::from(&me).to_bytes();
            proptest::prop_assume!(PublicKey::from(&other).to_bytes() != to);
            let dek = Zeroizing::new(dek);
            let w = wrap_dek(&dek, &to, &cid).unwrap();
            proptest::prop_assert_eq!(*unwrap_dek(&me, &w, &cid).unwrap(), *dek);
            proptest::prop_assert!(unwrap_dek(&other, &w, &cid).is_err());
            let mut cid2 = cid.clone();
            cid2[0] ^= 1;
            proptest::prop_assert!(unwrap_dek(&me, &w, &cid2).is_err());
        }
    }
}
