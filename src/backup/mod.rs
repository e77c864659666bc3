//! `stave backup` / `stave restore`: what a validator cannot get back from
//! peers or the chain — its config and its operator and X25519 keys — and,
//! optionally, its local store (wrapped DEKs, replicas, its private KV).
//!
//! - The KEK is never copied in the clear: with a passphrase it is sealed
//!   under a key derived by Argon2id ([`seal`]); without one it stays out,
//!   and what it protects (the private KV, upload jobs' DEKs) is lost.
//! - A manifest names the chain (id and height), the operator key, and the
//!   SHA-256 of every file; a restore checks all of them and refuses a
//!   backup of another chain. The hashes catch damage, not tampering: the
//!   manifest carries no MAC, and the operator and X25519 key files are in
//!   the clear (mode 0600), so a backup is kept where only the operator can
//!   read or write it.
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

/// The config files a backup carries (relative to the home), if present;
/// those in [`REQUIRED`] must be.
pub const CONFIG: [&str; 6] = [
    "config/stave.toml",
    // as for the X25519 key below: an operator-key rotation finishing
    // between the reads leaves the new key in the backup
    "config/operator_key.next.json",
    "config/operator_key.json",
    // the next key before the current one: a rotation that finishes
    // between the two reads leaves the new key in both, never in neither
    "config/x25519_key.next.json",
    "config/x25519_key.json",
    "config/genesis-fragment.json",
];
/// The config files every backup holds.
pub const REQUIRED: [&str; 2] = ["config/stave.toml", "config/operator_key.json"];
/// The sealed KEK, at the backup's root.
pub const SEALED_KEK: &str = "kek.sealed.json";

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
    #[error("manifest names {0:?}, which is not a file a backup holds")]
    BadPath(String),
    #[error("manifest names {0:?} twice")]
    Duplicate(String),
    #[error("the backup has no {0}")]
    Missing(String),
    #[error("the manifest's {0} flag and its files disagree about {1}")]
    Flag(&'static str, &'static str),
    #[error("the manifest's operator {manifest} is not the key file's {key}")]
    OperatorMismatch { manifest: String, key: String },
    #[error("{0} is not a regular file")]
    NotAFile(String),
    #[error(
        "KDF parameters m_cost_kib={m_cost_kib} t_cost={t_cost} p_cost={p_cost} are out of bounds"
    )]
    KdfParams {
        m_cost_kib: u32,
        t_cost: u32,
        p_cost: u32,
    },
    #[error("kek.sealed.json is malformed: {0}")]
    SealedFormat(String),
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
    let params = argon2::Params::new(s.m_cost_kib, s.t_cost, s.p_cost, Some(32)).map_err(|_| {
        BackupError::KdfParams {
            m_cost_kib: s.m_cost_kib,
            t_cost: s.t_cost,
            p_cost: s.p_cost,
        }
    })?;
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

/// The largest KDF costs [`open`] runs: a hostile file cannot make a restore
/// allocate gigabytes or spin for minutes.
const MAX_M_COST_KIB: u32 = 256 * 1024;
const MAX_T_COST: u32 = 10;
const MAX_P_COST: u32 = 4;

/// Opens what [`seal`] sealed; a wrong passphrase or any changed byte is
/// [`BackupError::WrongPassphrase`].
pub fn open(passphrase: &str, s: &Sealed) -> Result<Zeroizing<Vec<u8>>, BackupError> {
    if s.kdf != "argon2id" {
        return Err(BackupError::SealedFormat(format!("kdf {:?}", s.kdf)));
    }
    if s.m_cost_kib > MAX_M_COST_KIB || s.t_cost > MAX_T_COST || s.p_cost > MAX_P_COST {
        return Err(BackupError::KdfParams {
            m_cost_kib: s.m_cost_kib,
            t_cost: s.t_cost,
            p_cost: s.p_cost,
        });
    }
    let unhex = |what: &str, h: &str| {
        hex::decode(h).map_err(|e| BackupError::SealedFormat(format!("{what}: {e}")))
    };
    let salt = unhex("salt", &s.salt)?;
    let nonce: [u8; 12] = unhex("nonce", &s.nonce)?
        .try_into()
        .map_err(|_| BackupError::SealedFormat("nonce: not 12 bytes".into()))?;
    let ct = unhex("ciphertext", &s.ciphertext)?;
    let key = derive(passphrase.as_bytes(), &salt, s)?;
    let aead = ChaCha20Poly1305::new(Key::from_slice(key.as_ref()));
    aead.decrypt(Nonce::from_slice(&nonce), ct.as_slice())
        .map(Zeroizing::new)
        .map_err(|_| BackupError::WrongPassphrase)
}

/// Checks a manifest against the chain a restore is for: the format, the
/// chain, and that it names exactly files a backup holds, each once,
/// with the config and operator key present.
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
    let mut seen = std::collections::BTreeSet::new();
    for f in &m.files {
        if !allowed(&f.path) {
            return Err(BackupError::BadPath(f.path.clone()));
        }
        if !seen.insert(f.path.as_str()) {
            return Err(BackupError::Duplicate(f.path.clone()));
        }
    }
    let has = |p: &str| seen.contains(p);
    for required in &REQUIRED {
        if !has(required) {
            return Err(BackupError::Missing((*required).into()));
        }
    }
    if m.kek_sealed != has(SEALED_KEK) {
        return Err(BackupError::Flag("kek_sealed", SEALED_KEK));
    }
    if m.local != seen.iter().any(|p| p.starts_with("local/")) {
        return Err(BackupError::Flag("local", "local/"));
    }
    Ok(())
}

/// A config file, the sealed KEK, or `local/<one plain file name>`.
fn allowed(path: &str) -> bool {
    if CONFIG.contains(&path) || path == SEALED_KEK {
        return true;
    }
    let mut parts = std::path::Path::new(path).components();
    matches!(
        (parts.next(), parts.next(), parts.next()),
        (Some(std::path::Component::Normal(d)), Some(std::path::Component::Normal(_)), None)
            if d == "local"
    )
}

#[cfg(test)]
mod tests;
