//! The chain store's side of a state-sync restore: a marker that makes a
//! restore cut short start over, staging of verified entries, and the
//! final write of the tree, flat values, indexes and meta in one synced
//! batch.

use std::collections::BTreeMap;

use jmt::storage::{HasPreimage, LeafNode, Node, NodeKey, TreeReader};
use jmt::{JellyfishMerkleTree, KeyHash, OwnedValue, Version};
use rocksdb::{IteratorMode, WriteBatch, WriteOptions};

use super::tree::Hasher;
use super::{cf, db::handle, ChainStore, Changes, MemState, StoreError, SCHEMA_VERSION};

/// An empty tree at version `before` (a null root and nothing else): the
/// restore builds version `before + 1` on it.
struct EmptyTree {
    before: Version,
}

impl TreeReader for EmptyTree {
    fn get_node_option(&self, k: &NodeKey) -> anyhow::Result<Option<Node>> {
        let root = borsh::to_vec(k)? == cf::root_node_key(self.before);
        Ok(root.then_some(Node::Null))
    }
    fn get_value_option(&self, _: Version, _: KeyHash) -> anyhow::Result<Option<OwnedValue>> {
        Ok(None)
    }
    fn get_rightmost_leaf(&self) -> anyhow::Result<Option<(NodeKey, LeafNode)>> {
        Ok(None)
    }
}

impl HasPreimage for EmptyTree {
    fn preimage(&self, _: KeyHash) -> anyhow::Result<Option<Vec<u8>>> {
        Ok(None)
    }
}

/// What the keyspaces derive from the restored state: the index space and
/// the chain facts meta keeps (chain id, evidence max age).
pub struct Derived {
    pub index: BTreeMap<Vec<u8>, Vec<u8>>,
    pub chain_id: String,
    pub evidence_age: u64,
}

fn staged_row(key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + key.len() + value.len());
    out.extend_from_slice(&(key.len() as u32).to_be_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(value);
    out
}

fn split_staged(raw: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = raw.split_at_checked(4)?;
    let len = u32::from_be_bytes(len.try_into().ok()?) as usize;
    rest.split_at_checked(len)
}

impl ChainStore {
    /// The height of a restore under way, if one is.
    pub fn restoring(&self) -> Result<Option<u64>, StoreError> {
        self.meta_u64(cf::meta::RESTORING)
    }

    /// The height of a finished restore that no Commit has followed yet:
    /// CometBFT may have died before recording it, and offer it again.
    pub fn restored_unconfirmed(&self) -> Result<Option<u64>, StoreError> {
        self.meta_u64(cf::meta::RESTORED)
    }

    /// Starts a restore of `height`: wipes the store and sets the marker.
    pub fn begin_restore(&self, height: u64) -> Result<(), StoreError> {
        self.wipe()?;
        self.put_meta_u64(cf::meta::RESTORING, height)
    }

    /// Wipes a restore cut short (the marker is set): called at open.
    pub(super) fn drop_unfinished_restore(&self) -> Result<(), StoreError> {
        if let Some(h) = self.restoring()? {
            tracing::warn!(height = h, "a state-sync restore was cut short; wiping it");
            self.wipe()?;
        }
        Ok(())
    }

    /// Stages verified entries `(key_hash, key, value)`. Not synced: a
    /// crash loses them together with the marker's meaning (start over).
    pub fn stage_restore(&self, rows: &[([u8; 32], Vec<u8>, Vec<u8>)]) -> Result<(), StoreError> {
        let mut batch = WriteBatch::default();
        let h = handle(&self.db, cf::RESTORE);
        for (kh, k, v) in rows {
            batch.put_cf(h, kh, staged_row(k, v));
        }
        self.db.write(batch)?;
        Ok(())
    }

    /// Builds the tree of `height` from the staged entries, checks its root
    /// against `app_hash`, and writes everything at once: flat values,
    /// preimages, tree nodes and values, the index space `derive` returns,
    /// and meta (height, app hash, earliest = `height`, chain facts). The
    /// marker and the staging go in the same batch.
    pub fn finish_restore(
        &self,
        height: u64,
        app_hash: [u8; 32],
        derive: impl FnOnce(&MemState) -> Result<Derived, StoreError>,
    ) -> Result<(), StoreError> {
        let mut mem = MemState::default();
        let mut values: Vec<(KeyHash, OwnedValue)> = Vec::new();
        let staging = handle(&self.db, cf::RESTORE);
        for item in self.db.iterator_cf(staging, IteratorMode::Start) {
            let (kh, raw) = item?;
            let (k, v) =
                split_staged(&raw).ok_or_else(|| StoreError::corrupt(&kh, "bad staged row"))?;
            let kh: [u8; 32] = kh
                .as_ref()
                .try_into()
                .map_err(|_| StoreError::corrupt(&kh, "staged key is not 32 bytes"))?;
            values.push((KeyHash(kh), v.to_vec()));
            mem.state.insert(k.to_vec(), v.to_vec());
        }
        if values.is_empty() {
            return Err(StoreError::Tree(format!(
                "restore at {height} has no entries"
            )));
        }
        let empty = EmptyTree {
            before: height.saturating_sub(1),
        };
        let tree = JellyfishMerkleTree::<_, Hasher>::new(&empty);
        let (roots, batch) = tree
            .batch_put_value_sets(vec![values], None, height)
            .map_err(|e| StoreError::Tree(format!("restore at {height}: {e:#}")))?;
        let root = roots.first().map(|r| r.0).unwrap_or_default();
        if root != app_hash {
            return Err(StoreError::Tree(format!(
                "restored tree at {height} has root {}, the snapshot's app hash is {}",
                hex::encode(root),
                hex::encode(app_hash)
            )));
        }
        let derived = derive(&mem)?;
        let changes = Changes {
            state: mem.state.into_iter().map(|(k, v)| (k, Some(v))).collect(),
            index: derived
                .index
                .into_iter()
                .map(|(k, v)| (k, Some(v)))
                .collect(),
            counters: BTreeMap::new(),
        };
        let mut wb = WriteBatch::default();
        self.write_changes(&mut wb, &changes);
        drop(changes);
        self.write_tree(&mut wb, &batch)?;
        drop(batch);
        let meta = handle(&self.db, cf::META);
        wb.put_cf(meta, cf::meta::HEIGHT, height.to_be_bytes());
        wb.put_cf(meta, cf::meta::APP_HASH, app_hash);
        wb.put_cf(meta, cf::meta::EARLIEST, height.to_be_bytes());
        wb.put_cf(meta, cf::meta::SCHEMA, SCHEMA_VERSION.to_be_bytes());
        wb.put_cf(meta, cf::meta::CHAIN_ID, derived.chain_id.as_bytes());
        if derived.evidence_age > 0 {
            wb.put_cf(
                meta,
                cf::meta::EVIDENCE_AGE,
                derived.evidence_age.to_be_bytes(),
            );
        }
        wb.delete_cf(meta, cf::meta::LAST_BLOCK_TIME);
        wb.delete_cf(meta, cf::meta::RESTORING);
        wb.put_cf(meta, cf::meta::RESTORED, height.to_be_bytes());
        wb.delete_range_cf(staging, [].as_slice(), [0xffu8; 64].as_slice());
        let mut opts = WriteOptions::default();
        opts.set_sync(true);
        self.db.write_opt(wb, &opts)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staged_rows_split_back_and_short_rows_are_refused() {
        let row = staged_row(b"key", b"value");
        assert_eq!(split_staged(&row), Some((&b"key"[..], &b"value"[..])));
        assert_eq!(split_staged(&row[..5]), None);
        assert_eq!(split_staged(&[0, 0]), None);
    }
}
