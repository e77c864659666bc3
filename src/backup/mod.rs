//! `stave backup` / `stave restore`: what a validator cannot get back from
//! peers or the chain — its config and its operator and X25519 keys — and,
//! optionally, its local store (wrapped DEKs, replicas, its private KV).
//!
//! - The KEK is never copied in the clear: with a passphrase it is sealed
//!   under a key derived by Argon2id ([`seal`]); without one it stays out,
//!   and what it protects (the private KV, upload jobs' DEKs) is lost.
//! - A manifest names the chain (id and height), the operator key, and the
//!   SHA-256 of every file; a restore checks all of them and refuses a
//!   backup of another chain.
//! - The chain store is not backed up: a restored node replays blocks or
//!   state-syncs (README, "Back up and restore").
//!
//! The manifest and the sealing are pure; [`files`] does the I/O.

pub mod files;

use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

/// The format this build writes and reads.
pub const FORMAT: &str = "stave-backup/1";

/// What a backup holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    /// The chain the validator belongs to, and the height it had committed.
    pub chain_id: String,
    pub height: u64,
    /// Hex of the operator public key.
    pub operator: String,
    /// RFC 3339, for the operator's eyes only.
    pub created: String,
    /// Every file, relative to the backup's root, with its SHA-256 (hex).
    pub files: Vec<FileEntry>,
    /// Whether `local/` (a RocksDB checkpoint of the local store) is in it.
    pub local: bool,
    /// Whether `kek.sealed.json` is in it.
    pub kek_sealed: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    pub path: String,
    pub sha256: String,
}

/// Why a backup could not be made or restored.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("{0} is not a Stave home (no config/stave.toml)")]
    NotAHome(String),
    #[error("{0} already holds a Stave config or keys: restore into an empty home")]
    HomeInUse(String),
    #[error("{0} exists and is not empty: back up into a new directory")]
    OutInUse(String),
    #[error("no chain store at {0}: nothing says which chain this validator is on")]
    NoChain(String),
    #[error("the local store at {0} is in use: stop the node to back it up (--local)")]
    LocalBusy(String),
    #[error("this backup is of chain {found:?}, not {want:?}")]
    OtherChain { found: String, want: String },
    #[error("backup format {0:?} is not {FORMAT:?}")]
    Format(String),
    #[error("{path} does not match the manifest (sha256 {found}, manifest {want})")]
    Damaged {
        path: String,
        found: String,
        want: String,
    },
    #[error("manifest names {0:?}, which leaves the backup")]
    BadPath(String),
    #[error("the backup holds a sealed KEK: give --kek-passphrase-file to restore it")]
    PassphraseNeeded,
    #[error("the KEK does not open: a wrong passphrase, or a damaged kek.sealed.json")]
    WrongPassphrase,
    #[error("a passphrase must be at least {MIN_PASSPHRASE} characters ({0} given)")]
    ShortPassphrase(usize),
    #[error("{0}")]
    Io(String),
}

/// The shortest passphrase [`seal`] accepts.
pub const MIN_PASSPHRASE: usize = 12;

/// A secret sealed under a passphrase: Argon2id (the parameters are kept,
/// so stronger ones can come later) and ChaCha20-Poly1305.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sealed {
    pub kdf: String,
    pub m_cost_kib: u32,
    pub t_cost: u32,
    pub p_cost: u32,
    pub salt: String,
    pub nonce: String,
    pub ciphertext: String,
}

const M_COST_KIB: u32 = 64 * 1024;
const T_COST: u32 = 3;

fn derive(passphrase: &[u8], salt: &[u8], s: &Sealed) -> Result<Zeroizing<[u8; 32]>, BackupError> {
    let params = argon2::Params::new(s.m_cost_kib, s.t_cost, s.p_cost, Some(32))
        .map_err(|_| BackupError::WrongPassphrase)?;
    let a = argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params);
    let mut key = Zeroizing::new([0u8; 32]);
    a.hash_password_into(passphrase, salt, key.as_mut())
        .map_err(|_| BackupError::WrongPassphrase)?;
    Ok(key)
}

/// Seals `secret` under `passphrase`, with the salt and nonce given (random
/// in use; fixed in tests).
pub fn seal(
    passphrase: &str,
    secret: &[u8],
    salt: [u8; 16],
    nonce: [u8; 12],
) -> Result<Sealed, BackupError> {
    let chars = passphrase.chars().count();
    if chars < MIN_PASSPHRASE {
        return Err(BackupError::ShortPassphrase(chars));
    }
    let mut s = Sealed {
        kdf: "argon2id".into(),
        m_cost_kib: M_COST_KIB,
        t_cost: T_COST,
        p_cost: 1,
        salt: hex::encode(salt),
        nonce: hex::encode(nonce),
        ciphertext: String::new(),
    };
    let key = derive(passphrase.as_bytes(), &salt, &s)?;
    let aead = ChaCha20Poly1305::new(Key::from_slice(key.as_ref()));
    let ct = aead
        .encrypt(Nonce::from_slice(&nonce), secret)
        .map_err(|_| BackupError::Io("sealing the KEK failed".into()))?;
    s.ciphertext = hex::encode(ct);
    Ok(s)
}

/// Opens what [`seal`] sealed; a wrong passphrase or any changed byte is
/// [`BackupError::WrongPassphrase`].
pub fn open(passphrase: &str, s: &Sealed) -> Result<Zeroizing<Vec<u8>>, BackupError> {
    let bad = |_| BackupError::WrongPassphrase;
    if s.kdf != "argon2id" || s.m_cost_kib > 4 * 1024 * 1024 || s.t_cost > 64 || s.p_cost > 16 {
        return Err(BackupError::WrongPassphrase);
    }
    let salt = hex::decode(&s.salt).map_err(bad)?;
    let nonce: [u8; 12] = hex::decode(&s.nonce)
        .map_err(bad)?
        .try_into()
        .map_err(|_| BackupError::WrongPassphrase)?;
    let ct = hex::decode(&s.ciphertext).map_err(bad)?;
    let key = derive(passphrase.as_bytes(), &salt, s)?;
    let aead = ChaCha20Poly1305::new(Key::from_slice(key.as_ref()));
    aead.decrypt(Nonce::from_slice(&nonce), ct.as_slice())
        .map(Zeroizing::new)
        .map_err(|_| BackupError::WrongPassphrase)
}

/// Checks a manifest against the chain a restore is for.
pub fn check(m: &Manifest, chain_id: &str) -> Result<(), BackupError> {
    if m.format != FORMAT {
        return Err(BackupError::Format(m.format.clone()));
    }
    if m.chain_id != chain_id {
        return Err(BackupError::OtherChain {
            found: m.chain_id.clone(),
            want: chain_id.into(),
        });
    }
    for f in &m.files {
        let p = std::path::Path::new(&f.path);
        let inside = p
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if !inside || f.path.is_empty() {
            return Err(BackupError::BadPath(f.path.clone()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
