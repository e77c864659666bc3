//! The Jellyfish Merkle Tree over RocksDB: a `TreeReader` for jmt, and the
//! encoding of its nodes and versioned values.

use borsh::BorshDeserialize;
use jmt::storage::{HasPreimage, LeafNode, Node, NodeKey, TreeReader};
use jmt::{KeyHash, OwnedValue, Version};
use rocksdb::{Direction, IteratorMode, DB};

use super::{cf, db::handle};

/// The hasher of the tree and of its keys.
pub type Hasher = sha2::Sha256;

/// The JMT key hash of a state key.
pub fn key_hash(key: &[u8]) -> KeyHash {
    KeyHash::with::<Hasher>(key)
}

/// Reads JMT nodes and versioned values from committed RocksDB: live (for
/// the consensus actor, the only writer) or through a snapshot (for queries,
/// so a concurrent Commit that prunes cannot pull nodes from under a walk).
pub struct DbTreeReader<'a> {
    pub db: &'a DB,
    pub snap: Option<&'a rocksdb::SnapshotWithThreadMode<'a, DB>>,
}

impl<'a> DbTreeReader<'a> {
    pub fn live(db: &'a DB) -> Self {
        DbTreeReader { db, snap: None }
    }

    fn get(&self, cf_name: &str, key: &[u8]) -> Result<Option<Vec<u8>>, rocksdb::Error> {
        match self.snap {
            Some(s) => s.get_cf(handle(self.db, cf_name), key),
            None => self.db.get_cf(handle(self.db, cf_name), key),
        }
    }
}

/// Encodes a versioned value: a tag byte (1 present, 0 deleted) then the value.
pub fn encode_value(v: &Option<OwnedValue>) -> Vec<u8> {
    match v {
        Some(bytes) => {
            let mut out = Vec::with_capacity(bytes.len() + 1);
            out.push(1);
            out.extend_from_slice(bytes);
            out
        }
        None => vec![0],
    }
}

fn decode_value(raw: &[u8]) -> anyhow::Result<Option<OwnedValue>> {
    match raw.split_first() {
        Some((1, rest)) => Ok(Some(rest.to_vec())),
        Some((0, _)) => Ok(None),
        _ => anyhow::bail!("bad versioned value tag"),
    }
}

impl TreeReader for DbTreeReader<'_> {
    fn get_node_option(&self, node_key: &NodeKey) -> anyhow::Result<Option<Node>> {
        let key = borsh::to_vec(node_key)?;
        match self.get(cf::JMT_NODES, &key)? {
            Some(raw) => Ok(Some(Node::try_from_slice(&raw)?)),
            None => Ok(None),
        }
    }

    fn get_value_option(
        &self,
        max_version: Version,
        key_hash: KeyHash,
    ) -> anyhow::Result<Option<OwnedValue>> {
        let seek = cf::jmt_value_key(&key_hash.0, max_version);
        let mode = IteratorMode::From(&seek, Direction::Reverse);
        let cf = handle(self.db, cf::JMT_VALUES);
        let mut iter = match self.snap {
            Some(s) => s.iterator_cf(cf, mode),
            None => self.db.iterator_cf(cf, mode),
        };
        match iter.next() {
            Some(item) => {
                let (k, v) = item?;
                if k.len() == 40 && k[..32] == key_hash.0 {
                    decode_value(&v)
                } else {
                    Ok(None)
                }
            }
            None => Ok(None),
        }
    }

    fn get_rightmost_leaf(&self) -> anyhow::Result<Option<(NodeKey, LeafNode)>> {
        // Only state-sync restore asks for this; snapshots are not served yet.
        anyhow::bail!("get_rightmost_leaf is only used by snapshot restore, which is not enabled")
    }
}

impl HasPreimage for DbTreeReader<'_> {
    fn preimage(&self, key_hash: KeyHash) -> anyhow::Result<Option<Vec<u8>>> {
        Ok(self.get(cf::JMT_KEYS, &key_hash.0)?)
    }
}
