//! Client side: build and sign KV tokens. The CLI uses this module.
//!
//! # Examples
//! ```
//! use stave::keyspaces::kv::token::client;
//! let sk = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
//! let pid = client::protocol_id(1, "profile data");
//! let tags = client::tags_json(&["music", "jazz"]);
//! let create = client::create(&sk, "my-chain", &pid, "name", b"Ada", &tags, 1);
//! assert!(create.verify("my-chain").is_ok());
//! assert!(create.verify("other-chain").is_err());
//! ```

use ed25519_dalek::{Signer, SigningKey};

use super::{sign_bytes, KvToken, KvTokenCreate, KvTokenDelete, KvTokenUpdate, SignFields};

/// The canonical protocol id JSON `[level,"name"]`.
pub fn protocol_id(level: u8, name: &str) -> String {
    serde_json::to_string(&(level, name)).unwrap_or_default()
}

/// The canonical tags JSON; empty for no tags.
pub fn tags_json<S: AsRef<str>>(tags: &[S]) -> String {
    if tags.is_empty() {
        return String::new();
    }
    let v: Vec<&str> = tags.iter().map(|t| t.as_ref()).collect();
    serde_json::to_string(&v).unwrap_or_default()
}

/// The controller field of a key: lowercase hex of its public key.
pub fn controller_hex(sk: &SigningKey) -> String {
    hex::encode(sk.verifying_key().to_bytes())
}

/// Signs the sign bytes of `f`.
pub fn sign(sk: &SigningKey, f: &SignFields<'_>) -> [u8; 64] {
    sk.sign(&sign_bytes(f)).to_bytes()
}

fn token(sk: &SigningKey, pid: &str, key: &str, value: &[u8], tags: &str) -> KvToken {
    KvToken {
        protocol_id: pid.to_string(),
        key: key.to_string(),
        value: value.to_vec(),
        controller: controller_hex(sk),
        tags: tags.to_string(),
        signature: [0; 64],
    }
}

/// A signed create of generation `generation` (the tuple's next one; 1 for a new tuple).
pub fn create(
    sk: &SigningKey,
    chain_id: &str,
    pid: &str,
    key: &str,
    value: &[u8],
    tags: &str,
    generation: u64,
) -> KvTokenCreate {
    let mut a = KvTokenCreate {
        token: token(sk, pid, key, value, tags),
        generation,
    };
    a.token.signature = sign(sk, &a.sign_fields(chain_id));
    a
}

/// A signed update replacing the live token `replaces`.
#[allow(clippy::too_many_arguments)]
pub fn update(
    sk: &SigningKey,
    chain_id: &str,
    pid: &str,
    key: &str,
    value: &[u8],
    tags: &str,
    generation: u64,
    replaces: [u8; 32],
) -> KvTokenUpdate {
    let mut a = KvTokenUpdate {
        token: token(sk, pid, key, value, tags),
        generation,
        replaces,
    };
    a.token.signature = sign(sk, &a.sign_fields(chain_id));
    a
}

/// A signed delete of the live token `token_id`.
pub fn delete(
    sk: &SigningKey,
    chain_id: &str,
    pid: &str,
    key: &str,
    generation: u64,
    token_id: [u8; 32],
) -> KvTokenDelete {
    let mut a = KvTokenDelete {
        protocol_id: pid.to_string(),
        key: key.to_string(),
        controller: controller_hex(sk),
        generation,
        token_id,
        signature: [0; 64],
    };
    a.signature = sign(sk, &a.sign_fields(chain_id));
    a
}
