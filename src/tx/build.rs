//! Building and signing transactions: the client side, used by the CLI,
//! the load tool, tests and benchmarks.

use ed25519_dalek::{Signer, SigningKey};
use prost::Message;

use super::{envelope::sign_bytes, Action};
use crate::proto::tx as pb;

/// The `gas_limit` [`sign_tx`] declares: enough for any one action of
/// ordinary size under the default schedule. Clients that know better
/// (the CLI simulates first) use [`sign_tx_with_gas`]; a block holds
/// `max_block_gas / gas_limit` txs, so a tight limit packs more.
pub const DEFAULT_GAS_LIMIT: u64 = 5_000_000;

/// Encodes and signs a tx declaring [`DEFAULT_GAS_LIMIT`]. Returns the
/// encoded `Tx` bytes.
///
/// # Examples
/// ```
/// use stave::tx::{build::sign_tx, Action, DecodedTx};
/// use stave::keyspaces::{kv::KvSet, params::Params};
/// let key = ed25519_dalek::SigningKey::from_bytes(&[7u8; 32]);
/// let action = Action::KvSet(KvSet { key: b"hello".to_vec(), value: b"world".to_vec() });
/// let raw = sign_tx(&key, "stave-localnet", 0, vec![action], "");
/// let tx = DecodedTx::decode(&raw, &Params::default()).unwrap();
/// assert!(tx.verify_signature().is_ok());
/// assert_eq!(tx.nonce, 0);
/// ```
pub fn sign_tx(
    key: &SigningKey,
    chain_id: &str,
    nonce: u64,
    actions: Vec<Action>,
    memo: &str,
) -> Vec<u8> {
    sign_tx_with_gas(key, chain_id, nonce, actions, memo, DEFAULT_GAS_LIMIT)
}

/// Encodes and signs a tx declaring `gas_limit`. A `PublishRelease` left
/// unsigned ([`crate::keyspaces::releases::PublishRelease::unsigned`]) is
/// signed here by `key` as its publisher, on `chain_id`.
pub fn sign_tx_with_gas(
    key: &SigningKey,
    chain_id: &str,
    nonce: u64,
    actions: Vec<Action>,
    memo: &str,
    gas_limit: u64,
) -> Vec<u8> {
    let actions = actions.into_iter().map(|a| match a {
        Action::PublishRelease(mut p) if p.publisher_signature == [0; 64] => {
            p.publisher_signature =
                crate::keyspaces::releases::sign::sign(key, chain_id, &p.message);
            Action::PublishRelease(p)
        }
        a => a,
    });
    let body = pb::TxBody {
        chain_id: chain_id.to_string(),
        signer: key.verifying_key().to_bytes().to_vec(),
        nonce,
        actions: actions.map(pb::Action::from).collect(),
        memo: memo.to_string(),
        gas_limit,
    };
    let body_bytes = body.encode_to_vec();
    let signature = key.sign(&sign_bytes(&body_bytes)).to_bytes().to_vec();
    pb::Tx {
        body_bytes,
        signature,
        pow_nonce: 0,
    }
    .encode_to_vec()
}

/// Proof-of-work tries a client makes before it gives up (the CLI, the
/// operator-key submitter).
pub const MAX_POW_TRIES: u64 = 1 << 28;

/// `raw` with its proof of work mined under `storage` (an unsponsored
/// signer's tx), or `None` if `raw` is not a `Tx` or no nonce below
/// `max_tries` meets the target.
pub fn with_pow(
    raw: &[u8],
    storage: &crate::keyspaces::accounts::StorageParams,
    max_tries: u64,
) -> Option<Vec<u8>> {
    use sha2::{Digest, Sha256};
    let mut tx = pb::Tx::decode(raw).ok()?;
    let id: [u8; 32] = Sha256::digest(&tx.body_bytes).into();
    let size = tx.body_bytes.len() as u64;
    tx.pow_nonce = crate::keyspaces::accounts::pow::mine(storage, &id, size, 0, max_tries)?;
    Some(tx.encode_to_vec())
}

/// The tx id of encoded tx bytes, if they decode as a `Tx`.
pub fn tx_id_of(raw: &[u8]) -> Option<[u8; 32]> {
    use sha2::{Digest, Sha256};
    pb::Tx::decode(raw)
        .ok()
        .map(|t| Sha256::digest(&t.body_bytes).into())
}
