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

/// Checks a served token (a Lookup, Tuple or History `TokenView`) on its
/// own: rebuilds its sign bytes from the token, `op`, `generation` and
/// `replaces` under `chain_id`, and verifies the controller's signature.
/// The node is not trusted for any of it.
///
/// # Errors
/// `BadField` for a malformed view (no token, an op other than create or
/// update, a `replaces` that is not 32 bytes or is missing on an update),
/// `BadController` or `TokenForged` when the signature does not hold.
pub fn verify_token(
    chain_id: &str,
    view: &crate::proto::kv::TokenView,
) -> Result<(), super::super::KvError> {
    use super::super::KvError;
    let pb = view
        .token
        .clone()
        .ok_or_else(|| KvError::BadField("token view without token".into()))?;
    let token = KvToken::try_from(pb)?;
    let op = match (view.op, view.replaces.len()) {
        (1, 0) => super::Op::Create,
        (2, 32) => super::Op::Update,
        (op, n) => {
            return Err(KvError::BadField(format!(
                "token view op {op} with a {n}-byte replaces: not a create (1, none) or an update (2, 32 bytes)"
            )))
        }
    };
    let fields = SignFields {
        chain_id,
        op,
        protocol_id: &token.protocol_id,
        key: &token.key,
        value: &token.value,
        controller: &token.controller,
        tags: &token.tags,
        generation: view.generation,
        replaces: &view.replaces,
    };
    super::verify(&fields, &token.signature)
}
