//! `local/kv/{context}/{key}`: the node's private key-value store, the
//! BRC-35 local profile (`000_140cf90c8625513b.txt` §4), served on the
//! admin socket (`LocalKvService`, `stave local kv`).
//!
//! - **One row per (context, key).** `set` replaces the row, so the
//!   duplicate live outputs a wallet can hold never arise, and `get` has one
//!   value to return: the newest.
//! - **Encrypted by default.** ChaCha20-Poly1305 with a random nonce per
//!   value, under a key derived from the node KEK and the context (HKDF),
//!   with AAD `context ‖ "/" ‖ key`: a value moved to another row no longer
//!   opens. Plaintext only when the caller asks for it.
//! - **What it protects against.** The KEK is a 0600 file in
//!   `<home>/config`, beside the data: encryption keeps values out of a
//!   copy of `<home>/data` alone (a backup, a snapshot of the volume, a
//!   shipped SST file). It does not protect against anyone who can read
//!   the config directory or act as the node's user.
//! - **Corrupt rows** (a record that does not decode or decrypt) are never
//!   returned as values: `get` refuses them (`DATA_LOSS` over gRPC), `list` marks them,
//!   `relinquish` removes them and `set` replaces them.

#[cfg(test)]
mod tests;

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use prost::Message;

use super::{keys, LocalError, LocalRaw};
use crate::crypto::kek::Kek;
use crate::proto::local::{LocalKvEntry, LocalKvRecord};

/// Longest context, in bytes.
pub const MAX_CONTEXT: usize = 128;
/// Longest key, in bytes.
pub const MAX_KEY: usize = 1024;
/// Largest value, in bytes.
pub const MAX_VALUE: usize = 1 << 20;
/// Most entries one `list` call returns.
pub const MAX_LIST: usize = 1000;
/// Entries a `list` call returns when it names no limit.
pub const DEFAULT_LIST: usize = 100;
/// Stored bytes a `list` page reads at most (one entry whatever its size),
/// so a page of values stays under the transport's 4 MiB message limit.
pub const MAX_LIST_BYTES: usize = 2 << 20;

const FORMAT: u32 = 1;
const PURPOSE: &[u8] = b"stave/local-kv/v1";
const NONCE: usize = 12;

/// Why a local KV call failed.
#[derive(Debug, thiserror::Error)]
pub enum KvError {
    #[error("context {0:?}: 1 to 128 bytes of letters, digits and . _ : -")]
    BadContext(String),
    #[error("key of {0} bytes: a key is 1 to {MAX_KEY} bytes")]
    BadKey(usize),
    #[error("value of {0} bytes is over the {MAX_VALUE}-byte limit")]
    TooLarge(usize),
    #[error("entry {context}/{key} is corrupt ({reason}): relinquish removes it, set replaces it")]
    Corrupt {
        context: String,
        key: String,
        reason: String,
    },
    #[error(
        "entry {context}/{key} is healthy: relinquish removes corrupt entries only (use remove)"
    )]
    Healthy { context: String, key: String },
    #[error(transparent)]
    Local(#[from] LocalError),
}

/// A healthy entry's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub value: Vec<u8>,
    pub encrypted: bool,
    pub updated_ms: u64,
}

/// Checks a context: no `/`, so `local/kv/{context}/` names it alone.
pub fn check_context(context: &str) -> Result<(), KvError> {
    let ok = !context.is_empty()
        && context.len() <= MAX_CONTEXT
        && context
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(&b));
    ok.then_some(())
        .ok_or_else(|| KvError::BadContext(context.to_owned()))
}

fn check_key(key: &[u8]) -> Result<(), KvError> {
    (!key.is_empty() && key.len() <= MAX_KEY)
        .then_some(())
        .ok_or(KvError::BadKey(key.len()))
}

fn aad(context: &str, key: &[u8]) -> Vec<u8> {
    [context.as_bytes(), b"/", key].concat()
}

fn cipher(kek: &Kek, context: &str) -> ChaCha20Poly1305 {
    ChaCha20Poly1305::new(Key::from_slice(
        kek.derive(PURPOSE, context.as_bytes()).as_ref(),
    ))
}

/// The record of `value` under (context, key), sealed unless `plaintext`.
pub fn seal(
    kek: &Kek,
    context: &str,
    key: &[u8],
    value: &[u8],
    plaintext: bool,
    now_ms: u64,
) -> LocalKvRecord {
    let mut rec = LocalKvRecord {
        version: FORMAT,
        encrypted: !plaintext,
        nonce: Vec::new(),
        body: value.to_vec(),
        updated_ms: now_ms,
    };
    if !plaintext {
        use rand::RngCore;
        let mut nonce = [0u8; NONCE];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let msg = Payload {
            msg: value,
            aad: &aad(context, key),
        };
        rec.body = cipher(kek, context)
            .encrypt(Nonce::from_slice(&nonce), msg)
            .expect("ChaCha20-Poly1305 encrypts any message under 256 GiB");
        rec.nonce = nonce.to_vec();
    }
    rec
}

/// The value a stored row holds, or why it is corrupt.
pub fn open(kek: &Kek, context: &str, key: &[u8], raw: &[u8]) -> Result<Found, String> {
    let rec = LocalKvRecord::decode(raw).map_err(|e| format!("does not decode: {e}"))?;
    if rec.version != FORMAT {
        return Err(format!("format {} is not {FORMAT}", rec.version));
    }
    let value = if rec.encrypted {
        let nonce: [u8; NONCE] = rec
            .nonce
            .as_slice()
            .try_into()
            .map_err(|_| format!("nonce of {} bytes", rec.nonce.len()))?;
        let msg = Payload {
            msg: &rec.body,
            aad: &aad(context, key),
        };
        cipher(kek, context)
            .decrypt(Nonce::from_slice(&nonce), msg)
            .map_err(|_| {
                "does not decrypt under this node's KEK for this context and key".to_owned()
            })?
    } else {
        rec.body
    };
    Ok(Found {
        value,
        encrypted: rec.encrypted,
        updated_ms: rec.updated_ms,
    })
}

fn corrupt(context: &str, key: &[u8], reason: String) -> KvError {
    KvError::Corrupt {
        context: context.to_owned(),
        key: String::from_utf8_lossy(key).into_owned(),
        reason,
    }
}

/// The local KV over a local store and the node KEK.
pub struct LocalKv<'a, S: LocalRaw + ?Sized> {
    pub store: &'a S,
    pub kek: &'a Kek,
}

impl<S: LocalRaw + ?Sized> LocalKv<'_, S> {
    /// The newest value of (context, key); a corrupt row is an error, never
    /// a value.
    pub fn get(&self, context: &str, key: &[u8]) -> Result<Option<Found>, KvError> {
        check_context(context)?;
        check_key(key)?;
        let Some(raw) = self.store.get_raw(&keys::kv(context, key))? else {
            return Ok(None);
        };
        open(self.kek, context, key, &raw)
            .map(Some)
            .map_err(|r| corrupt(context, key, r))
    }

    /// Writes the value, replacing whatever row was there (corrupt or
    /// not); whether one was.
    pub fn set(
        &self,
        context: &str,
        key: &[u8],
        value: &[u8],
        plaintext: bool,
        now_ms: u64,
    ) -> Result<bool, KvError> {
        check_context(context)?;
        check_key(key)?;
        if value.len() > MAX_VALUE {
            return Err(KvError::TooLarge(value.len()));
        }
        let row = keys::kv(context, key);
        let replaced = self.store.get_raw(&row)?.is_some();
        let rec = seal(self.kek, context, key, value, plaintext, now_ms);
        self.store.put_raw(&row, &rec.encode_to_vec())?;
        Ok(replaced)
    }

    /// Deletes the row, corrupt or not; whether there was one.
    pub fn remove(&self, context: &str, key: &[u8]) -> Result<bool, KvError> {
        check_context(context)?;
        check_key(key)?;
        let row = keys::kv(context, key);
        let had = self.store.get_raw(&row)?.is_some();
        if had {
            self.store.delete_raw(&row)?;
        }
        Ok(had)
    }

    /// Deletes a corrupt row; refuses a healthy one.
    pub fn relinquish(&self, context: &str, key: &[u8]) -> Result<bool, KvError> {
        match self.get(context, key) {
            Ok(None) => Ok(false),
            Ok(Some(_)) => Err(KvError::Healthy {
                context: context.to_owned(),
                key: String::from_utf8_lossy(key).into_owned(),
            }),
            Err(KvError::Corrupt { .. }) => {
                self.store.delete_raw(&keys::kv(context, key))?;
                Ok(true)
            }
            Err(e) => Err(e),
        }
    }

    /// Up to `limit` entries whose key starts with `prefix`, after
    /// `start_after`, in key order, reading at most [`MAX_LIST_BYTES`] of
    /// stored values; and whether more follow.
    pub fn list(
        &self,
        context: &str,
        prefix: &[u8],
        start_after: &[u8],
        limit: usize,
        values: bool,
    ) -> Result<(Vec<LocalKvEntry>, bool), KvError> {
        check_context(context)?;
        let limit = match limit {
            0 => DEFAULT_LIST,
            n => n.min(MAX_LIST),
        };
        let scope = keys::kv(context, prefix);
        let base = keys::kv_prefix(context);
        let from = if start_after.is_empty() {
            scope.clone()
        } else {
            // The first key after `start_after`: itself with a zero byte.
            [keys::kv(context, start_after).as_slice(), &[0]].concat()
        };
        let (rows, more) = self
            .store
            .scan_raw_page(&scope, &from, limit, MAX_LIST_BYTES)?;
        let entries = rows
            .into_iter()
            .filter_map(|(k, raw)| {
                let key = keys::id_of(&base, &k)?.to_vec();
                Some(entry(self.kek, context, key, &raw, values))
            })
            .collect();
        Ok((entries, more))
    }
}

fn entry(kek: &Kek, context: &str, key: Vec<u8>, raw: &[u8], values: bool) -> LocalKvEntry {
    match open(kek, context, &key, raw) {
        Ok(f) => LocalKvEntry {
            key,
            encrypted: f.encrypted,
            updated_ms: f.updated_ms,
            value: if values { f.value } else { Vec::new() },
            corrupt: String::new(),
        },
        Err(reason) => LocalKvEntry {
            key,
            corrupt: reason,
            ..Default::default()
        },
    }
}
