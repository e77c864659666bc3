//! A block's tree update, split by the root's sixteen children and run on
//! several cores, giving exactly the nodes, values, stale rows and root that
//! jmt's own batch insertion gives.
//!
//! jmt's batch insertion at an internal root walks each touched child on its
//! own: the new subtree under nibble `n` depends only on the old child `n`
//! and the keys whose hash starts with `n`. So each nibble's keys run
//! through jmt against a *virtual root*: the old root's child `n` plus one
//! placeholder child at a nibble no key visits (it keeps jmt's rule that an
//! internal node never has a lone leaf child). The placeholder is never
//! read. Each run gives its subtree's nodes and stale rows, and its virtual
//! new root records the new child `n`; the real new root is the old root
//! with those children replaced, built through borsh, the format jmt stores.
//!
//! Only insert-and-update blocks take this path (deletes can collapse a
//! subtree into its parent, which the split cannot see), and only on a tree
//! whose root is an internal node. The result never depends on the thread
//! count: every nibble runs alone, and the parts merge into ordered maps.

use borsh::BorshDeserialize;
use jmt::storage::{Node, NodeKey, NodeStats, TreeReader, TreeUpdateBatch};
use jmt::{JellyfishMerkleTree, KeyHash, OwnedValue, RootHash, Version};
use parking_lot::Mutex;

use super::cf;
use super::tree::Hasher;

/// One child of an internal node, as jmt stores it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ChildRef {
    hash: [u8; 32],
    version: Version,
    /// `None` for a leaf, else the leaves under the internal node.
    leaf_count: Option<u64>,
}

impl ChildRef {
    fn leaves(&self) -> u64 {
        self.leaf_count.unwrap_or(1)
    }
}

type Children = [Option<ChildRef>; 16];

/// The children of an internal node (`None` for a leaf or null node).
fn children_of(node: &Node) -> Option<Children> {
    let Node::Internal(n) = node else {
        return None;
    };
    let mut out: Children = [None; 16];
    for (nibble, c) in n.children_sorted() {
        let i = usize::from(u8::from(nibble));
        let leaf_count = (!c.is_leaf()).then_some(c.leaf_count() as u64);
        *out.get_mut(i)? = Some(ChildRef {
            hash: c.hash,
            version: c.version,
            leaf_count,
        });
    }
    Some(out)
}

/// jmt's borsh encoding of `Node::Internal` with these children.
fn internal_node_bytes(children: &Children) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + 16 * 50 + 16);
    out.push(1); // Node::Internal
    let mut count = 0u64;
    let mut leaves = 0u64;
    for c in children {
        match c {
            None => out.push(0),
            Some(c) => {
                count += 1;
                leaves = leaves.saturating_add(c.leaves());
                out.push(1);
                out.extend_from_slice(&c.hash);
                out.extend_from_slice(&c.version.to_le_bytes());
                match c.leaf_count {
                    None => out.push(0), // NodeType::Leaf
                    Some(n) => {
                        out.push(1); // NodeType::Internal { leaf_count }
                        out.extend_from_slice(&n.to_le_bytes());
                    }
                }
            }
        }
    }
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&leaves.to_le_bytes());
    out
}

fn internal_node(children: &Children) -> anyhow::Result<Node> {
    Ok(Node::try_from_slice(&internal_node_bytes(children))?)
}

fn root_key(version: Version) -> anyhow::Result<NodeKey> {
    Ok(NodeKey::try_from_slice(&cf::root_node_key(version))?)
}

/// The tree as jmt sees it for one nibble: the real one, except that the
/// root of `root` is the virtual root.
struct Sub<'a, R> {
    inner: &'a R,
    root: NodeKey,
    virtual_root: Node,
}

impl<R: TreeReader> TreeReader for Sub<'_, R> {
    fn get_node_option(&self, key: &NodeKey) -> anyhow::Result<Option<Node>> {
        if *key == self.root {
            return Ok(Some(self.virtual_root.clone()));
        }
        self.inner.get_node_option(key)
    }

    fn get_value_option(
        &self,
        max_version: Version,
        key_hash: KeyHash,
    ) -> anyhow::Result<Option<OwnedValue>> {
        self.inner.get_value_option(max_version, key_hash)
    }

    fn get_rightmost_leaf(&self) -> anyhow::Result<Option<(NodeKey, jmt::storage::LeafNode)>> {
        self.inner.get_rightmost_leaf()
    }
}

/// What one nibble's run gives: its new child and its part of the batch.
struct Part {
    nibble: usize,
    child: ChildRef,
    batch: TreeUpdateBatch,
}

/// Runs the keys of one nibble through jmt against the virtual root.
fn run_nibble<R: TreeReader>(
    reader: &R,
    old: &Children,
    nibble: usize,
    kvs: Vec<(KeyHash, OwnedValue)>,
    version: Version,
) -> anyhow::Result<Part> {
    let prev = version
        .checked_sub(1)
        .ok_or_else(|| anyhow::anyhow!("no tree before version {version}"))?;
    let nibble = nibble & 0xf;
    let mut virtual_children: Children = [None; 16];
    let placeholder = ChildRef {
        hash: [0; 32],
        version: 0,
        leaf_count: Some(2),
    };
    for (i, slot) in virtual_children.iter_mut().enumerate() {
        if i == nibble {
            *slot = old.get(i).copied().flatten();
        } else if i == (nibble + 8) & 0xf {
            // A placeholder no key visits: never read, only hashed into the
            // virtual root.
            *slot = Some(placeholder);
        }
    }
    let sub = Sub {
        inner: reader,
        root: root_key(prev)?,
        virtual_root: internal_node(&virtual_children)?,
    };
    let (_, batch) = JellyfishMerkleTree::<_, Hasher>::new(&sub).batch_put_value_sets(
        vec![kvs],
        None,
        version,
    )?;
    let new_root = batch
        .node_batch
        .get_node(&root_key(version)?)
        .and_then(children_of)
        .ok_or_else(|| anyhow::anyhow!("nibble {nibble}: jmt wrote no internal root"))?;
    let child = new_root
        .get(nibble)
        .copied()
        .flatten()
        .ok_or_else(|| anyhow::anyhow!("nibble {nibble}: the new root lost its child"))?;
    Ok(Part {
        nibble,
        child,
        batch,
    })
}

/// `kvs` grouped by the first nibble of the key hash, sorted and deduplicated
/// (the last value of a key wins, as in jmt).
fn by_nibble(kvs: Vec<(KeyHash, OwnedValue)>) -> Vec<(usize, Vec<(KeyHash, OwnedValue)>)> {
    let sorted: std::collections::BTreeMap<KeyHash, OwnedValue> = kvs.into_iter().collect();
    let mut groups: Vec<(usize, Vec<(KeyHash, OwnedValue)>)> = Vec::new();
    for (k, v) in sorted {
        let nibble = usize::from(k.0[0] >> 4);
        match groups.last_mut() {
            Some((n, g)) if *n == nibble => g.push((k, v)),
            _ => groups.push((nibble, vec![(k, v)])),
        }
    }
    groups
}

/// Merges the parts into one batch under the real new root.
fn merge(
    old: Children,
    parts: Vec<Part>,
    version: Version,
) -> anyhow::Result<(RootHash, TreeUpdateBatch)> {
    let mut children = old;
    let mut out = TreeUpdateBatch::default();
    let mut stats = NodeStats::default();
    for part in parts {
        if let Some(slot) = children.get_mut(part.nibble) {
            *slot = Some(part.child);
        }
        for s in &part.batch.node_stats {
            stats.new_leaves += s.new_leaves;
            stats.stale_leaves += s.stale_leaves;
        }
        out.node_batch.merge(part.batch.node_batch);
        out.stale_node_index_batch
            .extend(part.batch.stale_node_index_batch);
    }
    let root = internal_node(&children)?;
    let hash = match &root {
        Node::Internal(n) => n.hash::<Hasher>(),
        _ => anyhow::bail!("the new root at {version} is not an internal node"),
    };
    // Each part wrote its virtual root and marked the old root stale; the
    // real root replaces the virtual ones, and the stale set holds the old
    // root once, as in jmt's own run.
    out.node_batch.insert_node(root_key(version)?, root);
    stats.new_nodes = out.node_batch.nodes().len();
    stats.stale_nodes = out.stale_node_index_batch.len();
    out.node_stats = vec![stats];
    Ok((RootHash(hash), out))
}

/// jmt's batch insertion of `kvs` at `version`, split by nibble over
/// [`crate::par`]'s threads when there are `parallel_from` keys or more and
/// the tree at `version - 1` has an internal root; otherwise jmt's own run.
/// Both give the same batch and root.
pub fn batch_put<R: TreeReader + Sync>(
    reader: &R,
    kvs: Vec<(KeyHash, OwnedValue)>,
    version: Version,
    parallel_from: u64,
) -> anyhow::Result<(RootHash, TreeUpdateBatch)> {
    anyhow::ensure!(!kvs.is_empty(), "no keys to insert at version {version}");
    let old = if kvs.len() as u64 >= parallel_from.max(1) {
        old_children(reader, version)?
    } else {
        None
    };
    match old {
        Some(old) => split_put(reader, old, kvs, version, parallel_from),
        None => {
            let (roots, batch) = JellyfishMerkleTree::<_, Hasher>::new(reader)
                .batch_put_value_sets(vec![kvs], None, version)?;
            let root = roots
                .first()
                .copied()
                .ok_or_else(|| anyhow::anyhow!("jmt gave no root at {version}"))?;
            Ok((root, batch))
        }
    }
}

/// The children of the root before `version`, when it is an internal node.
fn old_children<R: TreeReader>(reader: &R, version: Version) -> anyhow::Result<Option<Children>> {
    let Some(prev) = version.checked_sub(1) else {
        return Ok(None);
    };
    Ok(reader
        .get_node_option(&root_key(prev)?)?
        .as_ref()
        .and_then(children_of))
}

/// The split run over the old root's children `old`.
fn split_put<R: TreeReader + Sync>(
    reader: &R,
    old: Children,
    kvs: Vec<(KeyHash, OwnedValue)>,
    version: Version,
    parallel_from: u64,
) -> anyhow::Result<(RootHash, TreeUpdateBatch)> {
    // Each group is moved out by the one run that takes it.
    let groups: Vec<(usize, u64, Mutex<Option<Vec<_>>>)> = by_nibble(kvs)
        .into_iter()
        .map(|(n, g)| (n, g.len() as u64, Mutex::new(Some(g))))
        .collect();
    let parts = crate::par::map_weighted(
        &groups,
        |(_, len, _)| *len,
        parallel_from,
        |(nibble, _, g)| match g.lock().take() {
            Some(kvs) => run_nibble(reader, &old, *nibble, kvs, version),
            None => Err(anyhow::anyhow!("nibble {nibble}'s keys were taken twice")),
        },
    );
    let parts = parts.into_iter().collect::<anyhow::Result<Vec<_>>>()?;
    merge(old, parts, version)
}

#[cfg(test)]
mod tests;
