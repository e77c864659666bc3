//! The `kv/` keyspace: values stored under `kv/{signer}/{key}`, written by
//! `kv.Set` and removed by `kv.Delete`. Shaped to grow into signed KV tokens:
//! the key builders, typed accessors and handlers are separate files.

pub mod actions;
mod keys;
pub mod query;
mod state;

pub use actions::{KvDelete, KvSet};
pub use keys::{kv_key, kv_prefix, split_kv_key};
pub use state::{KvRead, KvWrite};

use crate::proto::kv as pb;

/// A stored value (domain type of `stave.kv.v1.KvEntry`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvEntry {
    pub value: Vec<u8>,
    pub updated_height: u64,
    pub updated_at: i64,
}

impl From<pb::KvEntry> for KvEntry {
    fn from(e: pb::KvEntry) -> Self {
        KvEntry {
            value: e.value,
            updated_height: e.updated_height,
            updated_at: e.updated_at,
        }
    }
}

impl From<KvEntry> for pb::KvEntry {
    fn from(e: KvEntry) -> Self {
        pb::KvEntry {
            value: e.value,
            updated_height: e.updated_height,
            updated_at: e.updated_at,
        }
    }
}

/// Bytes an entry counts against its owner's quota.
pub fn stored_size(key: &[u8], value: &[u8]) -> u64 {
    (key.len() + value.len()) as u64
}
