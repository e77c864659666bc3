//! The split run against jmt's own: the same nodes, values, stale rows and
//! root, on trees from empty to thousands of keys, after deletes, and at
//! every thread count.

use std::collections::BTreeSet;

use borsh::BorshDeserialize;
use jmt::storage::{Node, TreeUpdateBatch};
use jmt::JellyfishMerkleTree;
use proptest::prelude::*;

use super::{batch_put, children_of, internal_node_bytes, old_children, split_put};
use crate::store::tree::{key_hash, DbTreeReader, Hasher};
use crate::store::{ChainStore, Changes, PruneConfig};

/// A block: keys written (`Some`) or deleted (`None`).
type Block = Vec<(u32, Option<u8>)>;

fn key(k: u32) -> Vec<u8> {
    format!("k{k}").into_bytes()
}

fn kvs(block: &Block) -> Vec<(jmt::KeyHash, Vec<u8>)> {
    block
        .iter()
        .filter_map(|(k, v)| v.map(|v| (key_hash(&key(*k)), vec![v; 5])))
        .collect()
}

fn changes(block: &Block) -> Changes {
    let mut c = Changes::default();
    for (k, v) in block {
        c.state.insert(key(*k), v.map(|v| vec![v; 5]));
    }
    c
}

fn inserts(keys: impl IntoIterator<Item = u32>, v: u8) -> Block {
    keys.into_iter().map(|k| (k, Some(v))).collect()
}

/// Encoded rows, in order.
type Rows = Vec<Vec<u8>>;

/// The parts of a batch that reach disk (nodes, values, stale rows), for
/// comparison.
fn rows(b: &TreeUpdateBatch) -> (Rows, Rows, Rows) {
    let nodes = b
        .node_batch
        .nodes()
        .iter()
        .map(|(k, n)| [borsh::to_vec(k).unwrap(), borsh::to_vec(n).unwrap()].concat())
        .collect();
    let values = b
        .node_batch
        .values()
        .iter()
        .map(|(k, v)| borsh::to_vec(&(k, v)).unwrap())
        .collect();
    let stale = b
        .stale_node_index_batch
        .iter()
        .map(|s| borsh::to_vec(s).unwrap())
        .collect();
    (nodes, values, stale)
}

/// Checks the split run of every insert-only block against jmt's, commits
/// every block (a block with a delete through the store's sequential
/// path), and returns how many blocks took the split.
fn check_blocks(blocks: &[Block], parallel_from: u64, threads: usize) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let store = ChainStore::open(dir.path()).unwrap();
    store.commit_genesis("c", 0, Changes::default()).unwrap();
    let _threads = crate::par::Override::hold(threads, false);
    let mut live = BTreeSet::new();
    let mut splits = 0;
    for (i, block) in blocks.iter().enumerate() {
        let h = i as u64 + 1;
        let insert_only = !block.is_empty() && block.iter().all(|(_, v)| v.is_some());
        if insert_only {
            let reader = DbTreeReader::live(&store.db);
            let (want_root, want) = JellyfishMerkleTree::<_, Hasher>::new(&reader)
                .batch_put_value_sets(vec![kvs(block)], None, h)
                .unwrap();
            let (root, got) = batch_put(&reader, kvs(block), h, parallel_from).unwrap();
            assert_eq!(root, want_root[0], "root at {h}");
            assert_eq!(rows(&got), rows(&want), "rows at {h}");
            let leaves =
                |b: &TreeUpdateBatch| (b.node_stats[0].new_leaves, b.node_stats[0].stale_leaves);
            assert_eq!(leaves(&got), leaves(&want), "leaf stats at {h}");
            // The split itself, whatever the block's size, whenever the
            // root is an internal node (two live keys or more).
            match old_children(&reader, h).unwrap() {
                Some(old) => {
                    let (root, got) =
                        split_put(&reader, old, kvs(block), h, parallel_from).unwrap();
                    assert_eq!(root, want_root[0], "split root at {h}");
                    assert_eq!(rows(&got), rows(&want), "split rows at {h}");
                    splits += 1;
                }
                None => assert!(live.len() < 2, "no internal root at {h}"),
            }
        }
        let pending = store.prepare(h, 0, changes(block)).unwrap();
        store.commit(pending, PruneConfig::default()).unwrap();
        for (k, v) in block {
            match v {
                Some(_) => live.insert(*k),
                None => live.remove(k),
            };
        }
    }
    splits
}

#[test]
fn a_one_leaf_root_and_lone_leaf_children_take_the_split_path_safely() {
    // height 1: one leaf (no split); 2: two leaves under the root; then
    // updates of a lone leaf child and a first key under an empty nibble.
    let blocks = vec![
        inserts([1], 1),
        inserts([2], 2),
        inserts([2], 3),
        inserts([1, 3], 4),
        inserts(0..40, 6),
    ];
    for threads in [1, 2, 4] {
        assert_eq!(check_blocks(&blocks, 1, threads), 3);
    }
}

#[test]
fn a_root_with_one_internal_child_splits() {
    // Keys whose hash starts with nibble 0: the root has one child, internal.
    let zero: Vec<u32> = (0..20_000)
        .filter(|k| key_hash(&key(*k)).0[0] >> 4 == 0)
        .take(300)
        .collect();
    let (first, rest) = zero.split_at(100);
    let blocks = vec![
        inserts(first.iter().copied(), 1),
        inserts(rest.iter().copied(), 2),
        inserts(0..500, 3),
    ];
    assert_eq!(check_blocks(&blocks, 1, 2), 2);
}

#[test]
fn after_deletes_collapse_subtrees_the_split_still_matches() {
    let mut blocks = vec![inserts(0..3000, 1)];
    // Delete most keys (leaves move up as subtrees collapse), delete absent
    // keys only (the root is copied forward), then large insert blocks.
    blocks.push((0..2990).map(|k| (k, None)).collect());
    blocks.push((50_000..50_010).map(|k| (k, None)).collect());
    blocks.push(inserts((0..3000).step_by(3), 2));
    blocks.push(inserts(3000..4000, 3));
    assert_eq!(check_blocks(&blocks, 256, 2), 2);
}

#[test]
fn large_blocks_on_a_deeper_tree_agree_with_jmt() {
    let blocks: Vec<Block> = (0..4u32)
        .map(|b| inserts((0..5000).map(|k| k * 7 + b * 3), b as u8))
        .collect();
    assert_eq!(check_blocks(&blocks, 256, 2), 3);
}

#[test]
fn the_internal_node_encoding_is_jmts() {
    let dir = tempfile::tempdir().unwrap();
    let store = ChainStore::open(dir.path()).unwrap();
    store.commit_genesis("c", 0, Changes::default()).unwrap();
    let block = inserts(0..3000, 1);
    let reader = DbTreeReader::live(&store.db);
    let (_, batch) = JellyfishMerkleTree::<_, Hasher>::new(&reader)
        .batch_put_value_sets(vec![kvs(&block)], None, 1)
        .unwrap();
    let mut internal = 0;
    for node in batch.node_batch.nodes().values() {
        if let Some(children) = children_of(node) {
            internal += 1;
            let bytes = internal_node_bytes(&children);
            assert_eq!(bytes, borsh::to_vec(node).unwrap());
            assert_eq!(&Node::try_from_slice(&bytes).unwrap(), node);
        }
    }
    assert!(internal > 16, "only {internal} internal nodes");
}

#[test]
fn an_empty_insert_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let store = ChainStore::open(dir.path()).unwrap();
    store.commit_genesis("c", 0, Changes::default()).unwrap();
    let reader = DbTreeReader::live(&store.db);
    assert!(batch_put(&reader, Vec::new(), 1, 1).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn split_runs_give_jmts_batch_and_root(
        blocks in proptest::collection::vec(
            (any::<bool>(), proptest::collection::vec(
                (0u32..3000, proptest::option::weighted(0.8, any::<u8>())), 1..600)),
            1..7),
        threads in 1usize..4,
        parallel_from in prop_oneof![Just(1u64), Just(64u64), Just(10_000u64)],
    ) {
        // Half the blocks insert only (the split's case), half also delete.
        let blocks: Vec<Block> = blocks
            .into_iter()
            .map(|(only_inserts, b)| {
                b.into_iter()
                    .map(|(k, v)| (k, if only_inserts { Some(v.unwrap_or(0)) } else { v }))
                    .collect()
            })
            .collect();
        check_blocks(&blocks, parallel_from, threads);
    }
}
