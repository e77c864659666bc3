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
mod restore;
mod state;
pub mod tree;
mod tree_par;
mod view;

use std::path::Path;
use std::sync::Arc;

use rocksdb::DB;

pub use commit::{PendingCommit, PruneConfig};
pub use error::{decode_row, StoreError};
pub use overlay::{Changes, MemState, Overlay};
pub use query::ProvenValue;
pub use restore::Derived;
pub use state::{QueryRead, Space, StateRead, StateWrite};
pub use view::View;

/// Key-value rows, in key order.
pub type Rows = Vec<(Vec<u8>, Vec<u8>)>;

/// The version of the state layout written by this build. 2:
/// `uploads_by_content/` moved into verifiable state; `entitlement_counts/`,
/// `grant_rate/`, `validator_meta` candidate counts and
/// `group_meta/open_applications` added. 3: KV token history entries moved
/// to index space (under `kvtok/hist/`), and a token replaced by an update
/// is no longer rewritten with spent marks. 4: history entries moved to
/// `kvtokh/`. 5: the kvdb expiry queue `kvdbx/` moved into verifiable state,
/// `kvdbgc/` entries became `KvdbOrphans` records (owner and bytes still
/// charged), and `kvdbzgc/` (index) queues deleted sorted sets' score rows.
/// 6: `params/current` carries the gas schedule (`gas`), which a store of
/// an earlier version lacks. 7: `params/current` carries `storage`, account
/// records count their own bytes, and `sponsorships/` and `sponsor_pools/`
/// exist. 9: `grants/` records are one per (cid, consumer, grant period)
/// keyed by the period's start, `params/current` carries
/// `rights.grant_period_secs` and `reassignments_per_block`, and
/// `assignments/`, `churn/`, `under_replicated/` and `grant_seq/` exist.
/// 10: `releases/` is keyed by release id and holds DDEX ERN 4.3
/// `ReleaseRecord`s (was `releases/{flac_cid}`), with `release_versions/`,
/// `releases_by_cid/` and the `releases_by_party/` index; `params/current`
/// carries the release caps. Old releases are not migrated: a new chain.
/// 11: `chain/id` and `chain/evidence_max_age_blocks` are in verifiable
/// state (a store without them cannot be snapshotted for state sync), and
/// the `restore` column family exists.
/// 12: KV token records keep `replaces` and release records keep the
/// publisher signature (consensus changes: a new chain).
/// 13: genesis records CometBFT's consensus params (`chain/consensus_params`),
/// which a coordinated upgrade sends back with the new `version.app`, and
/// `upgrades/` exists.
/// A store of another version is refused at open,
/// never read under the wrong layout. A new protobuf field is not a layout
/// change (validator records' `client_endpoint`: a record without it reads
/// as empty, and an empty one encodes to the same bytes as before).
pub const SCHEMA_VERSION: u32 = 13;

/// What the store says about the last commit.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CommitInfo {
    /// `None` before genesis; `Some(0)` after InitChain.
    pub height: Option<u64>,
    pub app_hash: Vec<u8>,
    pub chain_id: String,
    pub earliest_version: u64,
    /// The time of the last committed block. `None` on a node restored
    /// from a snapshot until it commits its first block (a snapshot carries
    /// state, not the header's time): time-based answers are refused then.
    pub last_block_time_ns: Option<i64>,
}

impl CommitInfo {
    /// The last block's time, or [`StoreError::NoBlockTime`] when this node
    /// has not committed a block since it was restored from a snapshot.
    pub fn block_time_ns(&self) -> Result<i64, StoreError> {
        self.last_block_time_ns.ok_or(StoreError::NoBlockTime {
            height: self.height,
        })
    }
}

/// Handle to the chain store. Cheap to clone; all clones share one RocksDB.
#[derive(Clone)]
pub struct ChainStore {
    db: Arc<DB>,
    /// The oldest height pruning must keep (a snapshot being built reads
    /// it); `u64::MAX` when nothing is pinned.
    pinned: Arc<std::sync::atomic::AtomicU64>,
}

impl ChainStore {
    /// Opens or creates the chain store at `path`.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Self::open_with(path, db::Memory::default())
    }

    /// Opens the chain store with the given memory budget.
    pub fn open_with(path: &Path, memory: db::Memory) -> Result<Self, StoreError> {
        let db = db::open(path, memory)?;
        let store = ChainStore {
            db,
            pinned: Arc::new(std::sync::atomic::AtomicU64::new(u64::MAX)),
        };
        store.check_schema()?;
        store.drop_unfinished_restore()?;
        Ok(store)
    }

    /// The commit info of the store at `path`, read without taking its
    /// lock (`stave backup` beside a running node).
    pub fn peek(path: &Path) -> Result<CommitInfo, StoreError> {
        let store = ChainStore {
            db: db::open_read_only(path)?,
            pinned: Arc::new(std::sync::atomic::AtomicU64::new(u64::MAX)),
        };
        store.commit_info()
    }

    fn check_schema(&self) -> Result<(), StoreError> {
        if let Some(raw) = self.meta_raw(cf::meta::SCHEMA)? {
            let v = u32::from_be_bytes(
                raw.as_slice()
                    .try_into()
                    .map_err(|_| StoreError::corrupt(cf::meta::SCHEMA, "not 4 bytes"))?,
            );
            if v != SCHEMA_VERSION {
                return Err(StoreError::SchemaMismatch {
                    found: v,
                    want: SCHEMA_VERSION,
                });
            }
        }
        Ok(())
    }

    pub fn db(&self) -> &Arc<DB> {
        &self.db
    }

    /// Keeps `height` from being pruned until [`Self::unpin`]: pruning then
    /// stops at the pinned height whatever `keep_recent` says.
    pub fn pin(&self, height: u64) {
        self.pinned
            .store(height, std::sync::atomic::Ordering::SeqCst);
    }

    /// Releases the pin of [`Self::pin`].
    pub fn unpin(&self) {
        self.pinned
            .store(u64::MAX, std::sync::atomic::Ordering::SeqCst);
    }

    pub(crate) fn pinned(&self) -> u64 {
        self.pinned.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn meta_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.view().meta_raw(key)
    }

    /// A node-local meta number (not part of the app hash), written synced.
    pub fn put_meta_u64(&self, key: &[u8], value: u64) -> Result<(), StoreError> {
        let mut opts = rocksdb::WriteOptions::default();
        opts.set_sync(true);
        self.db.put_cf_opt(
            db::handle(&self.db, cf::META),
            key,
            value.to_be_bytes(),
            &opts,
        )?;
        Ok(())
    }

    /// A node-local meta number written by [`Self::put_meta_u64`].
    pub fn meta_u64(&self, key: &[u8]) -> Result<Option<u64>, StoreError> {
        self.view().meta_u64(key)
    }

    /// A consistent view of the latest commit (one RocksDB snapshot).
    pub fn view(&self) -> View<'_> {
        View::new(&self.db)
    }

    /// Height, app hash and chain id of the last commit, read from one snapshot.
    pub fn commit_info(&self) -> Result<CommitInfo, StoreError> {
        self.view().commit_info()
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
    ) -> Result<Rows, StoreError> {
        self.view().prefix_list(prefix, start_after, limit)
    }
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
    fn prefix_raw(
        &self,
        space: Space,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Rows, StoreError> {
        View::new(&self.db).prefix_raw(space, prefix, after, limit)
    }
}

#[cfg(test)]
mod schema_tests {
    use super::*;

    #[test]
    fn a_store_of_another_schema_is_refused_with_both_versions() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = ChainStore::open(dir.path()).unwrap();
            let meta = db::handle(&store.db, cf::META);
            let old = SCHEMA_VERSION - 1;
            store
                .db
                .put_cf(meta, cf::meta::SCHEMA, old.to_be_bytes())
                .unwrap();
        }
        match ChainStore::open(dir.path()) {
            Err(StoreError::SchemaMismatch { found, want }) => {
                assert_eq!((found, want), (SCHEMA_VERSION - 1, SCHEMA_VERSION));
            }
            Err(other) => panic!("expected SchemaMismatch, got {other}"),
            Ok(_) => panic!("a store of another schema opened"),
        }
        let msg = StoreError::SchemaMismatch { found: 3, want: 4 }.to_string();
        assert!(
            msg.contains("schema 3") && msg.contains("schema 4") && msg.contains("stave reset")
        );
    }

    #[test]
    fn a_store_of_this_schema_reopens() {
        let dir = tempfile::tempdir().unwrap();
        drop(ChainStore::open(dir.path()).unwrap());
        let store = ChainStore::open(dir.path()).unwrap();
        let meta = db::handle(&store.db, cf::META);
        store
            .db
            .put_cf(meta, cf::meta::SCHEMA, SCHEMA_VERSION.to_be_bytes())
            .unwrap();
        drop(store);
        assert!(ChainStore::open(dir.path()).is_ok());
    }
}
