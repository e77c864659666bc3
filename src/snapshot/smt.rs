//! Self-verifying state-sync chunks: the jmt state root re-derived as a binary
//! sparse Merkle tree, with proofs that a chunk holds *all* leaves in a key
//! hash interval.
//!
//! # Why
//!
//! A snapshot is restored from chunks fetched from untrusted peers. Each chunk
//! carries an interval `[lo, hi]` of key hashes, every leaf of the state tree
//! whose key hash lies in it (sorted), and a [`RangeProof`]. [`verify`] checks a
//! chunk against the app hash *on its own*, so a bad chunk is refused before
//! anything is written to the restore state, and the peer that sent it can be
//! blamed: no chunk depends on another having been applied.
//!
//! # The tree
//!
//! The app hash is the root of a jmt 0.12 `JellyfishMerkleTree<_, Sha256>`.
//! jmt's 16-ary nodes hash their children as a binary tree, so the root equals
//! that of a binary trie over the 256 bits of the key hashes (bit `d` is
//! `(h[d / 8] >> (7 - d % 8)) & 1`, 0 = left, the root is at depth 0) where a
//! subtree with no leaf is [`Node::Empty`] ([`PLACEHOLDER`]), a subtree with
//! one leaf is that leaf (collapsed, whatever its depth), and any other
//! subtree is `sha256(INTERNAL_DOMAIN ‖ left ‖ right)`. A leaf hashes as
//! `sha256(LEAF_DOMAIN ‖ key_hash ‖ value_hash)`, with `key_hash =
//! sha256(key)` and `value_hash = sha256(value)`.
//!
//! # The proof
//!
//! Walking down from the root, a node whose key range lies inside `[lo, hi]` is
//! computed from the chunk's leaves, and a node that straddles `lo` or `hi` from
//! its two children. The remaining nodes lie wholly outside the interval; they
//! are the children of the straddling nodes that branch off the path of `lo`
//! (to the left) or of `hi` (to the right). The proof lists the non-empty ones,
//! each side by ascending depth; unlisted ones are empty.
//!
//! A listed leaf carries its key and value hashes, not just its hash, and its
//! key hash must lie in the subtree it stands for. Otherwise, because a lone
//! leaf hashes the same at any depth, a peer could drop the chunk's last leaf
//! and list it as an (empty-looking) right sibling below it, and the root would
//! still match.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

/// A SHA-256 digest: a key hash, a value hash or a node hash.
pub type Hash = [u8; 32];

/// The depth of the deepest node: a key hash has 256 bits. The root is at 0.
pub const MAX_DEPTH: u16 = 256;

/// Domain separator of a leaf hash (jmt `LEAF_DOMAIN_SEPARATOR`).
pub const LEAF_DOMAIN: &[u8] = b"JMT::LeafNode";

/// Domain separator of an internal node hash (jmt `INTERNAL_DOMAIN_SEPARATOR`).
pub const INTERNAL_DOMAIN: &[u8] = b"JMT::IntrnalNode";

/// The hash of an empty subtree, and so the root of an empty tree (jmt
/// `SPARSE_MERKLE_PLACEHOLDER_HASH`).
pub const PLACEHOLDER: Hash = *b"SPARSE_MERKLE_PLACEHOLDER_HASH__";

/// Subtrees with at least this many leaves are memoised by [`Prover`].
const MEMO_MIN_LEAVES: usize = 32;

/// A leaf of the tree: the hashes of a key and of its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Leaf {
    /// `sha256(key)`: the leaf's position in the tree.
    pub key_hash: Hash,
    /// `sha256(value)`.
    pub value_hash: Hash,
}

impl Leaf {
    /// The leaf's node hash: `sha256(LEAF_DOMAIN ‖ key_hash ‖ value_hash)`.
    pub fn hash(&self) -> Hash {
        sha256(&[LEAF_DOMAIN, &self.key_hash, &self.value_hash])
    }
}

/// The leaf of a key and its value, as jmt stores it.
pub fn leaf(key: &[u8], value: &[u8]) -> Leaf {
    Leaf {
        key_hash: sha256(&[key]),
        value_hash: sha256(&[value]),
    }
}

/// A subtree, summarised by what its parent needs: its kind and hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// No leaf: hashes as [`PLACEHOLDER`].
    Empty,
    /// Exactly one leaf, which stands for the whole subtree.
    Leaf(Leaf),
    /// Two or more leaves: the hash of the subtree's root.
    Internal(Hash),
}

impl Node {
    /// The node's hash, as its parent hashes it.
    pub fn hash(&self) -> Hash {
        match self {
            Node::Empty => PLACEHOLDER,
            Node::Leaf(leaf) => leaf.hash(),
            Node::Internal(hash) => *hash,
        }
    }
}

/// A non-empty subtree lying wholly outside a proof's interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sibling {
    /// The subtree's own depth, in `1..=MAX_DEPTH`. Its position follows from
    /// the depth and the side: it branches off the path of `lo` (left side)
    /// or of `hi` (right side) there.
    pub depth: u16,
    /// The subtree; never [`Node::Empty`].
    pub node: Node,
}

/// The subtrees outside an interval `[lo, hi]`, which with the leaves inside it
/// determine the root.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeProof {
    /// Subtrees left of `lo`, by strictly ascending depth.
    pub left: Vec<Sibling>,
    /// Subtrees right of `hi`, by strictly ascending depth.
    pub right: Vec<Sibling>,
}

/// Which side of the interval a sibling is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Key hashes below `lo`.
    Left,
    /// Key hashes above `hi`.
    Right,
}

/// Why a chunk was refused by [`verify`]. Sibling errors name the side and
/// the sibling's depth.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SmtError {
    /// `lo > hi`.
    #[error("empty interval: lo {} > hi {}", hex::encode(.lo), hex::encode(.hi))]
    EmptyInterval { lo: Hash, hi: Hash },
    /// Two consecutive leaves out of order, or with the same key hash.
    #[error(
        "leaves {index} and {} not strictly ascending: {} then {}",
        .index + 1, hex::encode(.prev), hex::encode(.next)
    )]
    LeavesNotAscending {
        index: usize,
        prev: Hash,
        next: Hash,
    },
    /// A leaf whose key hash is outside `[lo, hi]`.
    #[error(
        "leaf {} outside [{}, {}]",
        hex::encode(.key_hash), hex::encode(.lo), hex::encode(.hi)
    )]
    LeafOutsideInterval { key_hash: Hash, lo: Hash, hi: Hash },
    /// A sibling at depth 0 or deeper than [`MAX_DEPTH`].
    #[error("{0:?} sibling depth {1} is not in 1..=256")]
    SiblingDepthOutOfRange(Side, u16),
    /// Two consecutive siblings of one side not by strictly ascending depth.
    #[error("{0:?} sibling depths not strictly ascending: {1} then {2}")]
    SiblingsNotAscending(Side, u16, u16),
    /// A sibling listed as [`Node::Empty`] (empty subtrees go unlisted).
    #[error("{0:?} sibling at depth {1} is empty")]
    EmptySibling(Side, u16),
    /// A sibling at a depth where that side has no subtree outside the interval.
    #[error("{0:?} sibling at depth {1} is not at a subtree outside the interval")]
    MisplacedSibling(Side, u16),
    /// A leaf sibling whose key hash is not in the subtree it stands for.
    #[error(
        "{side:?} leaf sibling at depth {depth} has key hash {} outside its subtree",
        hex::encode(.key_hash)
    )]
    LeafSiblingOutOfSubtree {
        side: Side,
        depth: u16,
        key_hash: Hash,
    },
    /// A sibling deeper than every subtree outside the interval on its side.
    #[error("{0:?} sibling at depth {1} is unused")]
    UnusedSibling(Side, u16),
    /// The chunk and its proof do not hash to the expected root.
    #[error(
        "root mismatch: expected {}, computed {}",
        hex::encode(.expected), hex::encode(.computed)
    )]
    RootMismatch { expected: Hash, computed: Hash },
}

/// The 256-bit big-endian successor of `h`, or `None` for `0xff…ff`: the `lo`
/// of the chunk after one ending at `h`.
pub fn add_one(h: &Hash) -> Option<Hash> {
    let mut out = *h;
    for byte in out.iter_mut().rev() {
        let (sum, carry) = byte.overflowing_add(1);
        *byte = sum;
        if !carry {
            return Some(out);
        }
    }
    None
}

/// The root of the tree holding exactly `leaves`, which must be sorted by
/// strictly ascending key hash (debug-asserted; of equal key hashes, only the
/// first counts).
pub fn root(leaves: &[Leaf]) -> Node {
    debug_assert!(strictly_ascending(leaves));
    subtree(leaves, 0)
}

/// Builds range proofs over all the leaves of a tree, memoising large subtrees
/// so that proving many ranges costs about one pass over the tree.
pub struct Prover<'a> {
    leaves: &'a [Leaf],
    memo: HashMap<(usize, usize), Node>,
}

impl<'a> Prover<'a> {
    /// A prover over `all` the leaves of the tree, sorted by strictly
    /// ascending key hash (debug-asserted).
    pub fn new(all: &'a [Leaf]) -> Self {
        debug_assert!(strictly_ascending(all));
        Prover {
            leaves: all,
            memo: HashMap::new(),
        }
    }

    /// The root of the tree.
    pub fn root(&mut self) -> Node {
        self.node(0, 0, self.leaves)
    }

    /// The proof that the leaves with key hashes in `[lo, hi]` are all of them.
    pub fn prove(&mut self, lo: &Hash, hi: &Hash) -> RangeProof {
        debug_assert!(lo <= hi);
        RangeProof {
            left: self.side(lo, hi, Side::Left),
            right: self.side(lo, hi, Side::Right),
        }
    }

    /// The non-empty subtrees branching off the path of `lo` (left) or `hi`
    /// (right) outside the interval, by ascending depth.
    fn side(&mut self, lo: &Hash, hi: &Hash, side: Side) -> Vec<Sibling> {
        let path = match side {
            Side::Left => lo,
            Side::Right => hi,
        };
        let mut out = Vec::new();
        for parent in 0..MAX_DEPTH {
            let d = usize::from(parent);
            let min = fill_from(path, d, false);
            if min >= *lo && fill_from(path, d, true) <= *hi {
                break; // the path's node is inside the interval: nothing below is outside
            }
            let child_min = match (side, bit(path, d)) {
                (Side::Left, 1) => min,
                (Side::Right, 0) => with_bit(&min, d),
                _ => continue,
            };
            let node = self.node_at(d + 1, &child_min);
            if node != Node::Empty {
                out.push(Sibling {
                    depth: parent + 1,
                    node,
                });
            }
        }
        out
    }

    /// The node at `depth` whose smallest key hash is `min`.
    fn node_at(&mut self, depth: usize, min: &Hash) -> Node {
        let (start, slice) = in_range(self.leaves, min, &fill_from(min, depth, true));
        self.node(depth, start, slice)
    }

    /// The node at `depth` holding `leaves`, the first of which is at `offset`.
    fn node(&mut self, depth: usize, offset: usize, leaves: &'a [Leaf]) -> Node {
        if leaves.len() < MEMO_MIN_LEAVES || depth >= usize::from(MAX_DEPTH) {
            return subtree(leaves, depth);
        }
        if let Some(node) = self.memo.get(&(depth, offset)) {
            return *node;
        }
        let (left, right) = split(leaves, depth);
        let l = self.node(depth + 1, offset, left);
        let r = self.node(depth + 1, offset + left.len(), right);
        let node = combine(l, r);
        self.memo.insert((depth, offset), node);
        node
    }
}

/// The node at `depth` holding exactly `leaves` (sorted, sharing the node's
/// prefix). Recursion stops at `MAX_DEPTH`, where distinct key hashes are alone.
fn subtree(leaves: &[Leaf], depth: usize) -> Node {
    match leaves {
        [] => Node::Empty,
        [leaf] => Node::Leaf(*leaf),
        [first, ..] if depth >= usize::from(MAX_DEPTH) => Node::Leaf(*first),
        _ => {
            let (left, right) = split(leaves, depth);
            combine(subtree(left, depth + 1), subtree(right, depth + 1))
        }
    }
}

/// Whether `leaves` are sorted by strictly ascending key hash.
fn strictly_ascending(leaves: &[Leaf]) -> bool {
    leaves
        .windows(2)
        .all(|w| matches!(w, [a, b] if a.key_hash < b.key_hash))
}

/// A parent from its children: empty and lone leaves collapse upwards.
fn combine(left: Node, right: Node) -> Node {
    match (left, right) {
        (Node::Empty, Node::Empty) => Node::Empty,
        (Node::Empty, Node::Leaf(leaf)) | (Node::Leaf(leaf), Node::Empty) => Node::Leaf(leaf),
        (l, r) => Node::Internal(sha256(&[INTERNAL_DOMAIN, &l.hash(), &r.hash()])),
    }
}

/// Sorted `leaves` split by the bit at `depth`: (0 bits, 1 bits).
fn split(leaves: &[Leaf], depth: usize) -> (&[Leaf], &[Leaf]) {
    leaves.split_at(leaves.partition_point(|l| bit(&l.key_hash, depth) == 0))
}

/// The index of the first of sorted `leaves` in `[min, max]`, and those leaves.
fn in_range<'l>(leaves: &'l [Leaf], min: &Hash, max: &Hash) -> (usize, &'l [Leaf]) {
    let start = leaves.partition_point(|l| l.key_hash < *min);
    let end = leaves.partition_point(|l| l.key_hash <= *max);
    (start, leaves.get(start..end).unwrap_or(&[]))
}

/// The bit of `h` at `depth` (0 for depths past the end).
fn bit(h: &Hash, depth: usize) -> u8 {
    h.get(depth / 8).map_or(0, |b| (b >> (7 - depth % 8)) & 1)
}

/// `h` with the bit at `depth` set.
fn with_bit(h: &Hash, depth: usize) -> Hash {
    let mut out = *h;
    if let Some(b) = out.get_mut(depth / 8) {
        *b |= 0x80 >> (depth % 8);
    }
    out
}

/// `h` with every bit from `depth` on set to one (`ones`) or zero: the largest
/// or smallest key hash in the node at `depth` on the path of `h`.
fn fill_from(h: &Hash, depth: usize, ones: bool) -> Hash {
    let mut out = *h;
    for (i, b) in out.iter_mut().enumerate() {
        let kept = depth.saturating_sub(i * 8).min(8);
        let keep = (0xff00u16 >> kept) as u8;
        *b = if ones { *b | !keep } else { *b & keep };
    }
    out
}

/// SHA-256 of the concatenation of `parts`.
fn sha256(parts: &[&[u8]]) -> Hash {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part);
    }
    hasher.finalize().into()
}

#[path = "smt/verify.rs"]
mod verify;
pub use verify::verify;

#[cfg(test)]
#[path = "smt/tests.rs"]
mod tests;
