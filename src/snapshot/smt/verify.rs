//! Verifying a range proof: untrusted input, so nothing here panics,
//! allocates, or recurses deeper than `MAX_DEPTH + 1`.

use std::cmp::Ordering;

use super::{
    combine, fill_from, in_range, subtree, with_bit, Hash, Leaf, Node, RangeProof, Sibling, Side,
    SmtError, MAX_DEPTH,
};

/// Checks that `leaves` are all the leaves with key hashes in `[lo, hi]` of the
/// tree with root hash `root`, given `proof`. Safe on untrusted input: it never
/// panics, allocates nothing, and recurses at most `MAX_DEPTH + 1` deep.
pub fn verify(
    root: &Hash,
    lo: &Hash,
    hi: &Hash,
    leaves: &[Leaf],
    proof: &RangeProof,
) -> Result<(), SmtError> {
    if lo > hi {
        return Err(SmtError::EmptyInterval { lo: *lo, hi: *hi });
    }
    check_leaves(lo, hi, leaves)?;
    check_siblings(Side::Left, &proof.left)?;
    check_siblings(Side::Right, &proof.right)?;
    let mut walk = Walk {
        lo,
        hi,
        leaves,
        left: &proof.left,
        right: &proof.right,
    };
    let computed = walk.node(0, &[0; 32])?.hash();
    let unused = walk
        .left
        .first()
        .map(|s| (Side::Left, s))
        .or(walk.right.last().map(|s| (Side::Right, s)));
    if let Some((side, s)) = unused {
        return Err(SmtError::UnusedSibling(side, s.depth));
    }
    if computed != *root {
        return Err(SmtError::RootMismatch {
            expected: *root,
            computed,
        });
    }
    Ok(())
}

/// Leaves must be strictly ascending and inside `[lo, hi]`.
fn check_leaves(lo: &Hash, hi: &Hash, leaves: &[Leaf]) -> Result<(), SmtError> {
    for (index, pair) in leaves.windows(2).enumerate() {
        if let [a, b] = pair {
            if a.key_hash >= b.key_hash {
                return Err(SmtError::LeavesNotAscending {
                    index,
                    prev: a.key_hash,
                    next: b.key_hash,
                });
            }
        }
    }
    match leaves.iter().find(|l| l.key_hash < *lo || l.key_hash > *hi) {
        Some(l) => Err(SmtError::LeafOutsideInterval {
            key_hash: l.key_hash,
            lo: *lo,
            hi: *hi,
        }),
        None => Ok(()),
    }
}

/// Siblings must be non-empty, at depths in `1..=MAX_DEPTH`, strictly ascending.
fn check_siblings(side: Side, siblings: &[Sibling]) -> Result<(), SmtError> {
    for s in siblings {
        if s.depth == 0 || s.depth > MAX_DEPTH {
            return Err(SmtError::SiblingDepthOutOfRange(side, s.depth));
        }
        if s.node == Node::Empty {
            return Err(SmtError::EmptySibling(side, s.depth));
        }
    }
    for pair in siblings.windows(2) {
        if let [a, b] = pair {
            if a.depth >= b.depth {
                return Err(SmtError::SiblingsNotAscending(side, a.depth, b.depth));
            }
        }
    }
    Ok(())
}

/// The state of [`verify`]'s walk down the tree. Outside subtrees are met
/// left ones by ascending depth and right ones by descending depth, so the
/// unconsumed siblings are `left` from its front and `right` from its back.
struct Walk<'a> {
    lo: &'a Hash,
    hi: &'a Hash,
    leaves: &'a [Leaf],
    left: &'a [Sibling],
    right: &'a [Sibling],
}

impl Walk<'_> {
    /// The node at `depth` whose smallest key hash is `min`.
    fn node(&mut self, depth: usize, min: &Hash) -> Result<Node, SmtError> {
        let max = fill_from(min, depth, true);
        if max < *self.lo {
            return self.outside(Side::Left, depth, min, &max);
        }
        if min > self.hi {
            return self.outside(Side::Right, depth, min, &max);
        }
        // At MAX_DEPTH, min == max, so one of the cases above or this one holds.
        if depth >= usize::from(MAX_DEPTH) || (min >= self.lo && max <= *self.hi) {
            return Ok(subtree(in_range(self.leaves, min, &max).1, depth));
        }
        let left = self.node(depth + 1, min)?;
        let right = self.node(depth + 1, &with_bit(min, depth))?;
        Ok(combine(left, right))
    }

    /// The outside node at `depth` spanning `[min, max]` on `side`: the next
    /// sibling of that side if it is at this depth, else empty.
    fn outside(
        &mut self,
        side: Side,
        depth: usize,
        min: &Hash,
        max: &Hash,
    ) -> Result<Node, SmtError> {
        let next = match side {
            Side::Left => self.left.first(),
            Side::Right => self.right.last(),
        };
        let Some(&Sibling { depth: at, node }) = next else {
            return Ok(Node::Empty);
        };
        match (side, usize::from(at).cmp(&depth)) {
            (_, Ordering::Equal) => {}
            (Side::Left, Ordering::Less) | (Side::Right, Ordering::Greater) => {
                return Err(SmtError::MisplacedSibling(side, at)); // a position we have passed
            }
            _ => return Ok(Node::Empty), // a position still to come
        }
        if let Node::Leaf(leaf) = node {
            if leaf.key_hash < *min || leaf.key_hash > *max {
                let key_hash = leaf.key_hash;
                return Err(SmtError::LeafSiblingOutOfSubtree {
                    side,
                    depth: at,
                    key_hash,
                });
            }
        }
        match side {
            Side::Left => self.left = self.left.get(1..).unwrap_or(&[]),
            Side::Right => self.right = self.right.split_last().map_or(&[], |(_, rest)| rest),
        }
        Ok(node)
    }
}
