//! Building every tx before the timed phase, so signing costs nothing while
//! the load runs.
//!
//! Tx `i` belongs to lane `i % lanes`; a lane is one account (Stave) or one
//! sequential sender (kvstore), and always talks to the same RPC endpoint.
//! For Stave, tx `i` carries nonce `i / lanes` of its lane's key, so a lane
//! that sends its txs in order sends nonces 0, 1, 2, ...

use std::collections::HashMap;

use base64::Engine;
use ed25519_dalek::SigningKey;
use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::keyspaces::kv::KvSet;
use crate::tx::{build::sign_tx_with_gas, Action};

use super::AppKind;

/// The gas limit a natural load tx declares (see [`load_gas`]): a one-key `kv.Set` uses
/// about 253,500 under the default schedule, each further byte of value
/// about 55 (the load tool reports any OUT_OF_GAS result). CometBFT reaps
/// by declared gas, so a block holds at most `max_block_gas / LOAD_TX_GAS`
/// (4,687) of them.
pub const LOAD_TX_GAS: u64 = 256_000;

/// The gas a load tx with a value of `value_len` bytes declares: the base
/// covers a natural tx, and each further byte is charged about 55 (read,
/// write and tx bytes); 64 leaves room.
fn load_gas(value_len: usize) -> u64 {
    let extra = value_len.saturating_sub(NATURAL_VALUE_BYTES) as u64;
    LOAD_TX_GAS.saturating_add(extra.saturating_mul(64))
}

/// Value size of a "natural" tx (`--tx-bytes 0`).
pub const NATURAL_VALUE_BYTES: usize = 32;

/// One prepared tx.
pub struct Planned {
    pub lane: usize,
    /// Stave: the nonce this tx was signed with. kvstore: 0.
    pub nonce: u64,
    pub bytes: Vec<u8>,
    /// The JSON-RPC request body of `broadcast_tx_sync`.
    pub body: bytes::Bytes,
    /// sha256 of `bytes` (CometBFT's tx hash).
    pub hash: [u8; 32],
}

/// Everything a lane needs to re-sign a Stave tx with another nonce.
pub struct Plan {
    pub txs: Vec<Planned>,
    /// Stave signing keys, one per lane; empty for kvstore.
    pub keys: Vec<SigningKey>,
    pub chain_id: String,
    /// Stave: value length per nonce varint length (calibrated for the target size).
    value_len: HashMap<usize, usize>,
}

pub fn sha256(b: &[u8]) -> [u8; 32] {
    Sha256::digest(b).into()
}

/// The JSON-RPC body for `broadcast_tx_sync` of `tx`.
pub fn rpc_body(tx: &[u8], id: usize) -> bytes::Bytes {
    let b64 = base64::engine::general_purpose::STANDARD.encode(tx);
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"broadcast_tx_sync","params":{{"tx":"{b64}"}}}}"#
    )
    .into_bytes()
    .into()
}

/// Length of the protobuf varint encoding of `n` (0 for 0: proto3 omits it).
fn nonce_class(n: u64) -> usize {
    if n == 0 {
        0
    } else {
        (64 - n.leading_zeros() as usize).div_ceil(7)
    }
}

fn stave_key(idx: usize) -> Vec<u8> {
    format!("lt/{idx:010}").into_bytes()
}

fn stave_tx(key: &SigningKey, chain_id: &str, nonce: u64, idx: usize, value_len: usize) -> Vec<u8> {
    let action = Action::KvSet(KvSet {
        key: stave_key(idx),
        value: vec![b'v'; value_len],
    });
    sign_tx_with_gas(key, chain_id, nonce, vec![action], "", load_gas(value_len))
}

/// The value length that makes a Stave tx with a nonce of this class as close
/// to `target` bytes as possible (never over `target + 2` unless impossible).
fn calibrate(chain_id: &str, target: usize, class: usize) -> usize {
    if target == 0 {
        return NATURAL_VALUE_BYTES;
    }
    let key = SigningKey::from_bytes(&[1u8; 32]);
    let nonce = if class == 0 {
        0
    } else {
        1u64 << (7 * (class - 1))
    };
    let size = |v: usize| stave_tx(&key, chain_id, nonce, 0, v).len();
    let base = size(0);
    let mut v = target.saturating_sub(base);
    let mut best = (usize::MAX, 0usize);
    for _ in 0..16 {
        let s = size(v);
        let diff = s.abs_diff(target);
        if diff < best.0 {
            best = (diff, v);
        }
        if s == target {
            break;
        }
        if s > target {
            if v == 0 {
                break;
            }
            v = v.saturating_sub((s - target).max(1));
        } else {
            v += (target - s).max(1);
        }
    }
    best.1
}

impl Plan {
    /// Builds `count` txs over `lanes` lanes. `tx_bytes` 0 means a natural
    /// tx (a 32-byte value).
    pub fn build(
        app: AppKind,
        chain_id: &str,
        count: usize,
        lanes: usize,
        tx_bytes: usize,
    ) -> anyhow::Result<Plan> {
        anyhow::ensure!(lanes >= 1, "--accounts must be at least 1");
        match app {
            AppKind::Stave => Self::build_stave(chain_id, count, lanes, tx_bytes),
            AppKind::Kvstore => Self::build_kvstore(count, lanes, tx_bytes),
        }
    }

    fn build_stave(
        chain_id: &str,
        count: usize,
        lanes: usize,
        tx_bytes: usize,
    ) -> anyhow::Result<Plan> {
        let mut rng = rand::rngs::OsRng;
        let keys: Vec<SigningKey> = (0..lanes).map(|_| SigningKey::generate(&mut rng)).collect();
        let max_nonce = (count / lanes) as u64 + 1;
        let value_len: HashMap<usize, usize> = (0..=nonce_class(max_nonce))
            .map(|c| (c, calibrate(chain_id, tx_bytes, c)))
            .collect();
        let txs = (0..count)
            .into_par_iter()
            .map(|i| {
                let lane = i % lanes;
                let nonce = (i / lanes) as u64;
                let bytes = stave_tx(
                    &keys[lane],
                    chain_id,
                    nonce,
                    i,
                    value_len[&nonce_class(nonce)],
                );
                Planned {
                    lane,
                    nonce,
                    body: rpc_body(&bytes, i),
                    hash: sha256(&bytes),
                    bytes,
                }
            })
            .collect();
        Ok(Plan {
            txs,
            keys,
            chain_id: chain_id.to_string(),
            value_len,
        })
    }

    fn build_kvstore(count: usize, lanes: usize, tx_bytes: usize) -> anyhow::Result<Plan> {
        // A random run tag keeps keys (and so tx bytes) unique across runs,
        // so CometBFT's mempool cache never refuses a tx as a duplicate.
        let run: u32 = rand::random();
        let txs = (0..count)
            .into_par_iter()
            .map(|i| {
                let key = format!("lt{run:08x}{i:010}");
                let value_len = if tx_bytes == 0 {
                    NATURAL_VALUE_BYTES
                } else {
                    tx_bytes.saturating_sub(key.len() + 1)
                };
                anyhow::ensure!(
                    value_len >= 1,
                    "--tx-bytes {tx_bytes} is too small for a kvstore tx (min {})",
                    key.len() + 2
                );
                let mut bytes = Vec::with_capacity(key.len() + 1 + value_len);
                bytes.extend_from_slice(key.as_bytes());
                bytes.push(b'=');
                bytes.resize(key.len() + 1 + value_len, b'v');
                Ok(Planned {
                    lane: i % lanes,
                    nonce: 0,
                    body: rpc_body(&bytes, i),
                    hash: sha256(&bytes),
                    bytes,
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Plan {
            txs,
            keys: Vec::new(),
            chain_id: String::new(),
            value_len: HashMap::new(),
        })
    }

    /// Re-signs Stave tx `idx` with `nonce` (after an earlier tx of its lane
    /// was refused, the node expects a lower nonce than planned).
    pub fn resign(&self, idx: usize, nonce: u64) -> Vec<u8> {
        let lane = self.txs[idx].lane;
        let class = nonce_class(nonce);
        let v = self.value_len.get(&class).copied().unwrap_or_else(|| {
            self.value_len
                .values()
                .copied()
                .max()
                .unwrap_or(NATURAL_VALUE_BYTES)
        });
        stave_tx(&self.keys[lane], &self.chain_id, nonce, idx, v)
    }

    /// (min, max) encoded tx size.
    pub fn size_range(&self) -> (usize, usize) {
        let min = self.txs.iter().map(|t| t.bytes.len()).min().unwrap_or(0);
        let max = self.txs.iter().map(|t| t.bytes.len()).max().unwrap_or(0);
        (min, max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stave_txs_hit_the_target_size() {
        for target in [180usize, 250, 1000] {
            let p = Plan::build(AppKind::Stave, "stave-localnet", 300, 2, target).unwrap();
            let (min, max) = p.size_range();
            assert!(
                min + 2 >= target && max <= target + 2,
                "target {target}: {min}..{max}"
            );
            let r = p.resign(299, 3);
            assert!(r.len().abs_diff(target) <= 2);
        }
    }

    #[test]
    fn kvstore_txs_are_exact_and_unique() {
        let p = Plan::build(AppKind::Kvstore, "", 100, 3, 180).unwrap();
        assert_eq!(p.size_range(), (180, 180));
        let mut hashes: Vec<_> = p.txs.iter().map(|t| t.hash).collect();
        hashes.sort();
        hashes.dedup();
        assert_eq!(hashes.len(), 100);
        assert!(p
            .txs
            .iter()
            .all(|t| t.bytes.iter().filter(|&&b| b == b'=').count() == 1));
    }

    #[test]
    fn nonce_classes() {
        assert_eq!(nonce_class(0), 0);
        assert_eq!(nonce_class(1), 1);
        assert_eq!(nonce_class(127), 1);
        assert_eq!(nonce_class(128), 2);
        assert_eq!(nonce_class(16383), 2);
        assert_eq!(nonce_class(16384), 3);
    }
}
