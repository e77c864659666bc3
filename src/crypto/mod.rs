//! Cryptography of the local store (BRIEF §5):
//! - [`wrap`]: DEK wrapping to a validator's X25519 key (ephemeral ECDH →
//!   HKDF-SHA256 bound to the cid and both public keys → ChaCha20-Poly1305);
//! - [`stream`]: content encryption with the STREAM construction over
//!   ChaCha20-Poly1305 (constant memory, any size), and [`chunks`], opening
//!   any one chunk of it (ranged, resumable downloads);
//! - [`kek`]: the node-local key-encryption key that seals a processing
//!   job's DEK in scratch.
//!
//! Raw DEKs are [`Dek`]s: `Zeroizing` buffers, never written in plaintext.

pub mod chunks;
pub mod kek;
pub mod stream;
pub mod wrap;

use thiserror::Error;
use zeroize::Zeroizing;

/// A raw data-encryption key; zeroed when dropped.
pub type Dek = Zeroizing<[u8; 32]>;

/// The domain tag of a DEK commitment.
pub const DEK_COMMIT_DOMAIN: &[u8] = b"stave/dek-commit/v1";

/// `SHA-256("stave/dek-commit/v1" ‖ DEK ‖ encrypted_cid)`: the manifest's
/// commitment to the DEK of the blob `encrypted_cid`. A DEK holder checks an
/// unwrapped DEK against it without downloading the blob.
pub fn dek_commitment(dek: &Dek, encrypted_cid: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(DEK_COMMIT_DOMAIN);
    h.update(dek.as_slice());
    h.update(encrypted_cid);
    h.finalize().into()
}

/// A fresh random DEK.
pub fn generate_dek() -> Dek {
    use rand::RngCore;
    let mut dek = Zeroizing::new([0u8; 32]);
    rand::rngs::OsRng.fill_bytes(dek.as_mut());
    dek
}

/// Why a cryptographic operation failed. Messages carry the values involved.
#[derive(Debug, Error)]
pub enum CryptoError {
    #[error("X25519 public key {key} is a low-order point (non-contributory shared secret)")]
    LowOrderKey { key: String },
    #[error("wrapped DEK for cid {cid} does not unwrap: wrong key or tampered ciphertext")]
    Unwrap { cid: String },
    #[error("wrapped DEK for cid {cid} is {len} bytes, expected {expected}")]
    WrappedLength {
        cid: String,
        len: usize,
        expected: usize,
    },
    #[error("encrypted stream: chunk {chunk} does not authenticate (wrong key, tampered, reordered or truncated)")]
    Chunk { chunk: u64 },
    #[error("encrypted stream: {0}")]
    Format(String),
    #[error("sealed DEK of {context} does not open: wrong key-encryption key or tampered")]
    Sealed { context: String },
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
}

/// Rejects an X25519 public key whose Diffie-Hellman with any clamped
/// scalar is not contributory (every low-order point maps to zero).
pub fn check_x25519_public(key: &[u8; 32]) -> Result<(), CryptoError> {
    let probe = x25519_dalek::StaticSecret::from([0x5a; 32]);
    if probe
        .diffie_hellman(&x25519_dalek::PublicKey::from(*key))
        .was_contributory()
    {
        Ok(())
    } else {
        Err(CryptoError::LowOrderKey {
            key: hex::encode(key),
        })
    }
}
