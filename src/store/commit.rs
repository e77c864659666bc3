//! Computing a height's root in memory, and writing it in one synced batch.

use jmt::storage::TreeUpdateBatch;
use jmt::JellyfishMerkleTree;
use rocksdb::{IteratorMode, WriteBatch, WriteOptions};

use super::tree::{encode_value, key_hash, DbTreeReader, Hasher};
use super::tree_par;
use super::StateRead;
use super::{cf, db::handle, ChainStore, Changes, StoreError, SCHEMA_VERSION};

/// Blocks writing this many keys or more update the tree on several cores.
const TREE_PARALLEL_FROM: u64 = 256;

/// A height whose root is computed but not yet on disk.
pub struct PendingCommit {
    pub height: u64,
    pub app_hash: [u8; 32],
    pub block_time_ns: i64,
    changes: Changes,
    tree: TreeUpdateBatch,
}

impl std::fmt::Debug for PendingCommit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingCommit")
            .field("height", &self.height)
            .field("app_hash", &hex::encode(self.app_hash))
            .field("writes", &self.changes.state.len())
            .finish()
    }
}

/// Retention of old JMT versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PruneConfig {
    /// Versions to keep, counting the latest. 0 keeps everything.
    pub keep_recent: u64,
    /// Prune once every this many heights.
    pub interval: u64,
}

impl Default for PruneConfig {
    fn default() -> Self {
        PruneConfig {
            keep_recent: 1000,
            interval: 10,
        }
    }
}

impl ChainStore {
    /// Computes the root of `height` from the committed tree plus `changes`,
    /// touching nothing on disk. Calling it again for the same height and
    /// changes gives the same root.
    pub fn prepare(
        &self,
        height: u64,
        block_time_ns: i64,
        changes: Changes,
    ) -> Result<PendingCommit, StoreError> {
        self.prepare_with(height, block_time_ns, changes, false)
    }

    /// As [`Self::prepare`]; `sequential` forces jmt's one-key-at-a-time
    /// path (tests compare it with the batch path).
    pub fn prepare_with(
        &self,
        height: u64,
        block_time_ns: i64,
        changes: Changes,
        sequential: bool,
    ) -> Result<PendingCommit, StoreError> {
        let mut changes = changes;
        let committed = self.committed();
        changes.resolve_counters(|k| committed.get_index_raw(k))?;
        let reader = DbTreeReader::live(&self.db);
        let tree = JellyfishMerkleTree::<_, Hasher>::new(&reader);
        let has_delete = changes.state.values().any(|v| v.is_none());
        let (root, batch) = if sequential || changes.state.is_empty() || has_delete {
            let value_set: Vec<_> = changes
                .state
                .iter()
                .map(|(k, v)| (key_hash(k), v.clone()))
                .collect();
            tree.put_value_set(value_set, height)
        } else {
            // Insert-only blocks take jmt's sorted batch insertion, which builds
            // each touched subtree once, split by the root's children over the
            // cores; the root is the same (tests check both against jmt).
            let value_set: Vec<_> = changes
                .state
                .iter()
                .filter_map(|(k, v)| v.clone().map(|v| (key_hash(k), v)))
                .collect();
            tree_par::batch_put(&reader, value_set, height, TREE_PARALLEL_FROM)
        }
        .map_err(|e| StoreError::Tree(format!("put_value_set at {height}: {e:#}")))?;
        Ok(PendingCommit {
            height,
            app_hash: root.0,
            block_time_ns,
            changes,
            tree: batch,
        })
    }

    /// Writes a prepared height in one synced batch: flat values, indexes,
    /// tree nodes, versioned values, stale index, meta, and pruning.
    pub fn commit(&self, pending: PendingCommit, prune: PruneConfig) -> Result<(), StoreError> {
        self.commit_with(pending, prune, None)
    }

    fn commit_with(
        &self,
        pending: PendingCommit,
        prune: PruneConfig,
        chain_id: Option<&str>,
    ) -> Result<(), StoreError> {
        let info = self.commit_info()?;
        let expected = info.height.map(|h| h + 1).unwrap_or(0);
        if pending.height != expected {
            return Err(StoreError::OutOfOrder {
                committed: info.height,
                got: pending.height,
            });
        }
        let mut batch = WriteBatch::default();
        tracing::debug!(
            height = pending.height,
            state = pending.changes.state.len(),
            index = pending.changes.index.len(),
            nodes = pending.tree.node_batch.nodes().len(),
            values = pending.tree.node_batch.values().len(),
            stale = pending.tree.stale_node_index_batch.len(),
            "commit rows"
        );
        self.write_changes(&mut batch, &pending.changes);
        self.write_tree(&mut batch, &pending.tree)?;
        let earliest = self.prune_into(&mut batch, pending.height, info.earliest_version, prune)?;
        let meta = handle(&self.db, cf::META);
        batch.put_cf(meta, cf::meta::HEIGHT, pending.height.to_be_bytes());
        batch.put_cf(meta, cf::meta::APP_HASH, pending.app_hash);
        batch.put_cf(meta, cf::meta::EARLIEST, earliest.to_be_bytes());
        batch.put_cf(meta, cf::meta::SCHEMA, SCHEMA_VERSION.to_be_bytes());
        if let Some(id) = chain_id {
            batch.put_cf(meta, cf::meta::CHAIN_ID, id.as_bytes());
        }
        if info.height.is_some() && info.height == self.restored_unconfirmed()? {
            // The first block after a restore: CometBFT has recorded it.
            batch.delete_cf(meta, cf::meta::RESTORED);
        }
        batch.put_cf(
            meta,
            cf::meta::LAST_BLOCK_TIME,
            (pending.block_time_ns as u64).to_be_bytes(),
        );
        let mut opts = WriteOptions::default();
        opts.set_sync(true);
        self.db.write_opt(batch, &opts)?;
        // Freeing a large block's changes and tree batch takes milliseconds;
        // do it off the consensus path. If the OS refuses a thread, the
        // closure (and so `pending`) is dropped here instead: no panic after
        // the durable write (review m10).
        if pending.changes.state.len() + pending.changes.index.len() > 10_000 {
            let _ = std::thread::Builder::new()
                .name("stave-free-block".into())
                .spawn(move || drop(pending));
        }
        Ok(())
    }

    /// Genesis: wipes whatever a previous, uncommitted InitChain left, then
    /// writes version 0 and the chain id at once (no Commit follows InitChain).
    pub fn commit_genesis(
        &self,
        chain_id: &str,
        genesis_time_ns: i64,
        changes: Changes,
    ) -> Result<[u8; 32], StoreError> {
        if let Some(h) = self.commit_info()?.height {
            if h > 0 {
                return Err(StoreError::OutOfOrder {
                    committed: Some(h),
                    got: 0,
                });
            }
            self.wipe()?;
        }
        let pending = self.prepare(0, genesis_time_ns, changes)?;
        let app_hash = pending.app_hash;
        self.commit_with(pending, PruneConfig::default(), Some(chain_id))?;
        Ok(app_hash)
    }

    /// Deletes every record of every column family (a genesis retried
    /// before block 1, or a state-sync restore starting over): one range
    /// tombstone per column family, written synced.
    pub fn wipe(&self) -> Result<(), StoreError> {
        let mut batch = WriteBatch::default();
        let end = [0xffu8; 256];
        for name in cf::ALL {
            batch.delete_range_cf(handle(&self.db, name), [].as_slice(), end.as_slice());
        }
        let mut opts = WriteOptions::default();
        opts.set_sync(true);
        self.db.write_opt(batch, &opts)?;
        Ok(())
    }

    pub(super) fn write_changes(&self, batch: &mut WriteBatch, changes: &Changes) {
        debug_assert!(changes.counters.is_empty(), "counters resolve in prepare");
        let state = handle(&self.db, cf::STATE);
        for (k, v) in &changes.state {
            match v {
                Some(v) => batch.put_cf(state, k, v),
                None => batch.delete_cf(state, k),
            }
        }
        let keys = handle(&self.db, cf::JMT_KEYS);
        for (k, v) in &changes.state {
            if v.is_some() {
                batch.put_cf(keys, key_hash(k).0, k);
            }
        }
        let index = handle(&self.db, cf::INDEX);
        for (k, v) in &changes.index {
            match v {
                Some(v) => batch.put_cf(index, k, v),
                None => batch.delete_cf(index, k),
            }
        }
    }

    pub(super) fn write_tree(
        &self,
        batch: &mut WriteBatch,
        tree: &TreeUpdateBatch,
    ) -> Result<(), StoreError> {
        let nodes = handle(&self.db, cf::JMT_NODES);
        for (node_key, node) in tree.node_batch.nodes() {
            let k = borsh::to_vec(node_key)?;
            let v = borsh::to_vec(node)?;
            batch.put_cf(nodes, k, v);
        }
        let values = handle(&self.db, cf::JMT_VALUES);
        for ((version, kh), value) in tree.node_batch.values() {
            batch.put_cf(
                values,
                cf::jmt_value_key(&kh.0, *version),
                encode_value(value),
            );
        }
        let stale = handle(&self.db, cf::STALE);
        for s in &tree.stale_node_index_batch {
            let nk = borsh::to_vec(&s.node_key)?;
            batch.put_cf(stale, cf::stale_key(s.stale_since_version, &nk), []);
        }
        Ok(())
    }

    /// Adds the deletions of versions that fell out of the retention window.
    /// Returns the new earliest retained version.
    fn prune_into(
        &self,
        batch: &mut WriteBatch,
        height: u64,
        earliest: u64,
        prune: PruneConfig,
    ) -> Result<u64, StoreError> {
        if prune.keep_recent == 0 || prune.interval == 0 || !height.is_multiple_of(prune.interval) {
            return Ok(earliest);
        }
        let new_earliest = height
            .saturating_sub(prune.keep_recent - 1)
            .min(self.pinned());
        if new_earliest <= earliest {
            return Ok(earliest);
        }
        let nodes = handle(&self.db, cf::JMT_NODES);
        let stale = handle(&self.db, cf::STALE);
        let upper = (new_earliest + 1).to_be_bytes();
        for item in self.db.iterator_cf(stale, IteratorMode::Start) {
            let (k, _) = item?;
            if k.len() < 8 || k[..8] >= upper[..] {
                break;
            }
            let since = u64::from_be_bytes(k[..8].try_into().unwrap_or([0; 8]));
            self.prune_replaced_value(batch, &k[8..], since)?;
            batch.delete_cf(nodes, &k[8..]);
            batch.delete_cf(stale, &k);
        }
        // Roots copied forward by empty blocks are never marked stale.
        for v in earliest..new_earliest {
            batch.delete_cf(nodes, cf::root_node_key(v));
        }
        Ok(new_earliest)
    }
}

impl ChainStore {
    /// When a stale node is a leaf whose value was replaced or deleted by
    /// `since`, the versioned value it pointed to serves no retained version
    /// any more: delete it. A leaf that only moved (a neighbour split its
    /// subtree) still points at the live value, which is kept.
    fn prune_replaced_value(
        &self,
        batch: &mut WriteBatch,
        node_key: &[u8],
        since: u64,
    ) -> Result<(), StoreError> {
        use borsh::BorshDeserialize;
        use jmt::storage::{Node, NodeKey};
        let Some(raw) = self.db.get_cf(handle(&self.db, cf::JMT_NODES), node_key)? else {
            return Ok(());
        };
        let Ok(Node::Leaf(leaf)) = Node::try_from_slice(&raw) else {
            return Ok(());
        };
        let nk = NodeKey::try_from_slice(node_key)?;
        let kh = leaf.key_hash().0;
        let Some(value_version) = self.value_version_at(&kh, nk.version())? else {
            return Ok(());
        };
        match self.value_version_at(&kh, since)? {
            Some(newer) if newer > value_version => {
                batch.delete_cf(
                    handle(&self.db, cf::JMT_VALUES),
                    cf::jmt_value_key(&kh, value_version),
                );
            }
            _ => {}
        }
        Ok(())
    }

    /// The newest version ≤ `max` at which `kh` was written.
    fn value_version_at(&self, kh: &[u8; 32], max: u64) -> Result<Option<u64>, StoreError> {
        let seek = cf::jmt_value_key(kh, max);
        let mut iter = self.db.iterator_cf(
            handle(&self.db, cf::JMT_VALUES),
            IteratorMode::From(&seek, rocksdb::Direction::Reverse),
        );
        match iter.next() {
            Some(item) => {
                let (k, _) = item?;
                if k.len() == 40 && k[..32] == kh[..] {
                    Ok(k[32..].try_into().ok().map(u64::from_be_bytes))
                } else {
                    Ok(None)
                }
            }
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn changes(keys: &[(u16, Option<u8>)]) -> Changes {
        let mut c = Changes::default();
        for (k, v) in keys {
            c.state
                .insert(format!("k{k}").into_bytes(), v.map(|v| vec![v; 3]));
        }
        c
    }

    /// Two fresh stores after an empty genesis (keep the dirs alive).
    fn two_stores() -> (
        (tempfile::TempDir, tempfile::TempDir),
        ChainStore,
        ChainStore,
    ) {
        let dirs = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let a = ChainStore::open(dirs.0.path()).unwrap();
        let b = ChainStore::open(dirs.1.path()).unwrap();
        a.commit_genesis("c", 0, Changes::default()).unwrap();
        b.commit_genesis("c", 0, Changes::default()).unwrap();
        (dirs, a, b)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]
        #[test]
        fn batch_and_sequential_tree_updates_agree(
            blocks in proptest::collection::vec(
                proptest::collection::vec((0u16..300, proptest::option::weighted(0.8, any::<u8>())), 0..60), 1..6)
        ) {
            let (_dirs, a, b) = two_stores();
            for (i, blk) in blocks.iter().enumerate() {
                let h = i as u64 + 1;
                let pa = a.prepare_with(h, 0, changes(blk), false).unwrap();
                let pb = b.prepare_with(h, 0, changes(blk), true).unwrap();
                prop_assert_eq!(pa.app_hash, pb.app_hash);
                a.commit(pa, PruneConfig::default()).unwrap();
                b.commit(pb, PruneConfig::default()).unwrap();
            }
        }

        #[test]
        fn insert_only_batches_match_the_sequential_path(
            blocks in proptest::collection::vec(
                proptest::collection::vec((0u16..2000, any::<u8>()), 1..400), 1..5)
        ) {
            let (_dirs, a, b) = two_stores();
            for (i, blk) in blocks.iter().enumerate() {
                let h = i as u64 + 1;
                let c: Vec<(u16, Option<u8>)> = blk.iter().map(|(k, v)| (*k, Some(*v))).collect();
                let pa = a.prepare_with(h, 0, changes(&c), false).unwrap();
                let pb = b.prepare_with(h, 0, changes(&c), true).unwrap();
                prop_assert_eq!(pa.app_hash, pb.app_hash, "block {}", h);
                a.commit(pa, PruneConfig::default()).unwrap();
                b.commit(pb, PruneConfig::default()).unwrap();
            }
        }

        #[test]
        fn pruned_and_unpruned_stores_read_alike_at_every_retained_height(
            blocks in proptest::collection::vec(
                proptest::collection::vec((0u16..40, proptest::option::weighted(0.75, any::<u8>())), 0..25), 4..14)
        ) {
            let (_dirs, a, b) = two_stores();
            let keep = PruneConfig { keep_recent: 3, interval: 1 };
            let all = PruneConfig { keep_recent: 0, interval: 1 };
            for (i, blk) in blocks.iter().enumerate() {
                let h = i as u64 + 1;
                let pa = a.prepare(h, 0, changes(blk)).unwrap();
                let pb = b.prepare(h, 0, changes(blk)).unwrap();
                prop_assert_eq!(pa.app_hash, pb.app_hash);
                a.commit(pa, keep).unwrap();
                b.commit(pb, all).unwrap();
                let earliest = a.commit_info().unwrap().earliest_version;
                prop_assert_eq!(earliest, h.saturating_sub(2));
                for v in earliest..=h {
                    for k in 0u16..40 {
                        let key = format!("k{k}").into_bytes();
                        let x = a.get_at(&key, Some(v)).unwrap().value;
                        let y = b.get_at(&key, Some(v)).unwrap().value;
                        prop_assert_eq!(x, y, "key k{} at {} (latest {})", k, v, h);
                    }
                }
            }
        }
    }
}
