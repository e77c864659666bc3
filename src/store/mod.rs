//! The chain store: a RocksDB owned by Stave (CometBFT never opens it).
//!
//! Layout (column families in [`cf`]):
//! - flat latest values for fast reads and prefix listings;
//! - Jellyfish Merkle Tree nodes and versioned values; the root at version
//!   `h` is the app hash of height `h`;
//! - non-verifiable secondary indexes, derived from the flat values;
//! - meta: height, app hash, chain id, schema version, earliest version.
//!
//! # Invariants
//! - Nothing reaches disk during block execution. [`ChainStore::prepare`]
//!   computes the new root and keeps the tree batch in memory;
//!   [`ChainStore::commit`] writes values, nodes, indexes, meta and pruning in
//!   one synced `WriteBatch`.
//! - Every height writes a JMT version, empty blocks included.

pub mod cf;
mod commit;
pub mod db;
mod error;
mod overlay;
mod query;
mod state;
pub mod tree;

use std::path::Path;
use std::sync::Arc;

use rocksdb::{Direction, IteratorMode, DB};

pub use commit::{PendingCommit, PruneConfig};
pub use error::StoreError;
pub use overlay::{Changes, MemState, Overlay};
pub use query::ProvenValue;
pub use state::{StateRead, StateWrite};

/// The version of the state layout written by this build.
pub const SCHEMA_VERSION: u32 = 1;

/// What the store says about the last commit.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CommitInfo {
    /// `None` before genesis; `Some(0)` after InitChain.
    pub height: Option<u64>,
    pub app_hash: Vec<u8>,
    pub chain_id: String,
    pub earliest_version: u64,
    pub last_block_time_ns: i64,
}

/// Handle to the chain store. Cheap to clone; all clones share one RocksDB.
#[derive(Clone)]
pub struct ChainStore {
    db: Arc<DB>,
}

impl ChainStore {
    /// Opens or creates the chain store at `path`.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Self::open_with_cache(path, 256 << 20)
    }

    pub fn open_with_cache(path: &Path, cache_bytes: usize) -> Result<Self, StoreError> {
        let db = db::open(path, cache_bytes)?;
        let store = ChainStore { db };
        store.check_schema()?;
        Ok(store)
    }

    fn check_schema(&self) -> Result<(), StoreError> {
        if let Some(raw) = self.meta_raw(cf::meta::SCHEMA)? {
            let v = u32::from_be_bytes(
                raw.as_slice()
                    .try_into()
                    .map_err(|_| StoreError::corrupt(cf::meta::SCHEMA, "not 4 bytes"))?,
            );
            if v != SCHEMA_VERSION {
                return Err(StoreError::Corrupt {
                    key: "meta/schema_version".into(),
                    reason: format!("store schema {v}, this build reads {SCHEMA_VERSION}"),
                });
            }
        }
        Ok(())
    }

    pub fn db(&self) -> &Arc<DB> {
        &self.db
    }

    fn meta_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.db.get_cf(db::handle(&self.db, cf::META), key)?)
    }

    fn meta_u64(&self, key: &[u8]) -> Result<Option<u64>, StoreError> {
        match self.meta_raw(key)? {
            None => Ok(None),
            Some(raw) => {
                let arr: [u8; 8] = raw
                    .as_slice()
                    .try_into()
                    .map_err(|_| StoreError::corrupt(key, "not 8 bytes"))?;
                Ok(Some(u64::from_be_bytes(arr)))
            }
        }
    }

    /// Height, app hash and chain id of the last commit.
    pub fn commit_info(&self) -> Result<CommitInfo, StoreError> {
        let height = self.meta_u64(cf::meta::HEIGHT)?;
        let app_hash = self.meta_raw(cf::meta::APP_HASH)?.unwrap_or_default();
        let chain_id = self
            .meta_raw(cf::meta::CHAIN_ID)?
            .map(|raw| String::from_utf8_lossy(&raw).into_owned())
            .unwrap_or_default();
        let earliest_version = self.meta_u64(cf::meta::EARLIEST)?.unwrap_or(0);
        let last_block_time_ns = self.meta_u64(cf::meta::LAST_BLOCK_TIME)?.unwrap_or(0) as i64;
        Ok(CommitInfo {
            height,
            app_hash,
            chain_id,
            earliest_version,
            last_block_time_ns,
        })
    }

    /// A read view of the latest committed state.
    pub fn committed(&self) -> CommittedState {
        CommittedState {
            db: self.db.clone(),
        }
    }

    /// Flat latest values under `prefix`, strictly after `start_after` when
    /// given, at most `limit` of them, in key order.
    pub fn prefix_list(
        &self,
        prefix: &[u8],
        start_after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>, StoreError> {
        list_cf(&self.db, cf::STATE, prefix, start_after, limit)
    }

    /// Index entries under `prefix`, as [`Self::prefix_list`].
    pub fn index_list(
        &self,
        prefix: &[u8],
        start_after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>, StoreError> {
        list_cf(&self.db, cf::INDEX, prefix, start_after, limit)
    }
}

fn list_cf(
    db: &DB,
    cf_name: &str,
    prefix: &[u8],
    start_after: Option<&[u8]>,
    limit: usize,
) -> Result<Vec<(Vec<u8>, Vec<u8>)>, StoreError> {
    let start: Vec<u8> = match start_after {
        Some(after) if after.starts_with(prefix) => {
            let mut s = after.to_vec();
            s.push(0);
            s
        }
        _ => prefix.to_vec(),
    };
    let iter = db.iterator_cf(
        db::handle(db, cf_name),
        IteratorMode::From(&start, Direction::Forward),
    );
    let mut out = Vec::new();
    for item in iter {
        let (k, v) = item?;
        if !k.starts_with(prefix) || out.len() >= limit {
            break;
        }
        out.push((k.to_vec(), v.to_vec()));
    }
    Ok(out)
}

/// The latest committed state, readable from any thread.
#[derive(Clone)]
pub struct CommittedState {
    db: Arc<DB>,
}

impl StateRead for CommittedState {
    fn get_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.db.get_cf(db::handle(&self.db, cf::STATE), key)?)
    }
    fn get_index_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.db.get_cf(db::handle(&self.db, cf::INDEX), key)?)
    }
}
