//! The node-local key-encryption key (KEK): a random 32-byte key in a 0600
//! file (`config/local_kek.json`), never in RocksDB. It seals a processing
//! job's DEK in scratch, so the raw DEK never reaches disk, and
//! [`Kek::derive`] gives the local KV its per-context keys.

use std::path::Path;

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use zeroize::Zeroizing;

use super::{CryptoError, Dek};
use crate::keyfile;

const SEAL_TAG: &[u8] = b"stave/job-dek/v1";
const NONCE: usize = 12;

/// The node-local key-encryption key.
pub struct Kek(Zeroizing<[u8; 32]>);

impl Kek {
    /// Loads the KEK file, creating it (mode 0600) when missing.
    pub fn load_or_create(path: &Path) -> anyhow::Result<Self> {
        if path.exists() {
            Ok(Kek(keyfile::load_symmetric(path, "kek")?))
        } else {
            Ok(Kek(keyfile::create_symmetric(path, "kek")?))
        }
    }

    /// A KEK from bytes (tests).
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Kek(Zeroizing::new(bytes))
    }

    /// A 32-byte key for `info`, derived from the KEK by HKDF-SHA256 with
    /// `purpose` as the salt, so each use of the KEK has keys of its own.
    pub fn derive(&self, purpose: &[u8], info: &[u8]) -> Zeroizing<[u8; 32]> {
        let hk = hkdf::Hkdf::<sha2::Sha256>::new(Some(purpose), self.0.as_ref());
        let mut out = Zeroizing::new([0u8; 32]);
        hk.expand(info, out.as_mut())
            .expect("32 bytes is within HKDF-SHA256's output limit (8,160)");
        out
    }

    fn aead(&self) -> ChaCha20Poly1305 {
        ChaCha20Poly1305::new(Key::from_slice(self.0.as_ref()))
    }

    fn aad(context: &[u8]) -> Vec<u8> {
        [SEAL_TAG, context].concat()
    }

    /// Seals `dek` for `context` (the job id): random nonce ‖ ciphertext.
    pub fn seal(&self, context: &[u8], dek: &Dek) -> Vec<u8> {
        use rand::RngCore;
        let mut nonce = [0u8; NONCE];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let ct = self
            .aead()
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: dek.as_ref(),
                    aad: &Self::aad(context),
                },
            )
            .expect("ChaCha20-Poly1305 encrypts a 32-byte message");
        [nonce.as_slice(), &ct].concat()
    }

    /// Opens a sealed DEK of `context`.
    pub fn open(&self, context: &[u8], sealed: &[u8]) -> Result<Dek, CryptoError> {
        let err = || CryptoError::Sealed {
            context: hex::encode(context),
        };
        let nonce = sealed.get(..NONCE).ok_or_else(err)?;
        let ct = sealed.get(NONCE..).ok_or_else(err)?;
        let plain = Zeroizing::new(
            self.aead()
                .decrypt(
                    Nonce::from_slice(nonce),
                    Payload {
                        msg: ct,
                        aad: &Self::aad(context),
                    },
                )
                .map_err(|_| err())?,
        );
        let arr: [u8; 32] = plain.as_slice().try_into().map_err(|_| err())?;
        Ok(Zeroizing::new(arr))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn kek_file_is_0600_and_seals_per_context() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config/local_kek.json");
        let k = Kek::load_or_create(&p).unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dek = Zeroizing::new([4u8; 32]);
        let sealed = k.seal(b"job-1", &dek);
        assert!(!sealed.windows(32).any(|w| w == [4u8; 32]));
        let again = Kek::load_or_create(&p).unwrap();
        assert_eq!(*again.open(b"job-1", &sealed).unwrap(), [4u8; 32]);
        assert!(again.open(b"job-2", &sealed).is_err(), "bound to the job");
        assert!(Kek::from_bytes([1; 32]).open(b"job-1", &sealed).is_err());
        let mut t = sealed.clone();
        t[20] ^= 1;
        assert!(k.open(b"job-1", &t).is_err());
        assert!(k.open(b"job-1", &sealed[..5]).is_err());
    }
}
