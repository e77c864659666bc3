//! Tests of the binary view of the jmt root and of range proofs.

use super::*;

use std::collections::BTreeMap;

use jmt::storage::{LeafNode, Node as JmtNode, NodeKey, TreeReader};
use jmt::{JellyfishMerkleTree, KeyHash, OwnedValue, Version};
use proptest::prelude::*;

const ZERO: Hash = [0; 32];
const MAX: Hash = [0xff; 32];

/// A reader of an empty tree: enough for jmt to build version 0 in memory.
struct EmptyReader;

impl TreeReader for EmptyReader {
    fn get_node_option(&self, _: &NodeKey) -> anyhow::Result<Option<JmtNode>> {
        Ok(None)
    }
    fn get_value_option(&self, _: Version, _: KeyHash) -> anyhow::Result<Option<OwnedValue>> {
        Ok(None)
    }
    fn get_rightmost_leaf(&self) -> anyhow::Result<Option<(NodeKey, LeafNode)>> {
        Ok(None)
    }
}

/// The root jmt computes for a fresh tree holding `kvs`.
fn jmt_root(kvs: &BTreeMap<Vec<u8>, Vec<u8>>) -> Hash {
    let tree = JellyfishMerkleTree::<_, Sha256>::new(&EmptyReader);
    let set = kvs
        .iter()
        .map(|(k, v)| (KeyHash::with::<Sha256>(k), Some(v.clone())));
    tree.put_value_set(set, 0).unwrap().0 .0
}

/// The leaves of `kvs`, sorted by key hash.
fn leaves_of(kvs: &BTreeMap<Vec<u8>, Vec<u8>>) -> Vec<Leaf> {
    let mut leaves: Vec<Leaf> = kvs.iter().map(|(k, v)| leaf(k, v)).collect();
    leaves.sort_by_key(|l| l.key_hash);
    leaves
}

/// SHA-256 of the concatenation of `parts`, without the module's helper.
fn digest(parts: &[&[u8]]) -> Hash {
    let hasher = parts.iter().fold(Sha256::new(), |h, p| h.chain_update(p));
    hasher.finalize().into()
}

/// The root hash straight from the definition, sharing no code with the module.
fn reference_root(leaves: &[Leaf], depth: usize) -> Hash {
    match leaves {
        [] => *b"SPARSE_MERKLE_PLACEHOLDER_HASH__",
        [one] => digest(&[b"JMT::LeafNode", &one.key_hash, &one.value_hash]),
        _ => {
            let side = |b: u8| -> Vec<Leaf> {
                leaves
                    .iter()
                    .filter(|l| (l.key_hash[depth / 8] >> (7 - depth % 8)) & 1 == b)
                    .copied()
                    .collect()
            };
            let (l, r) = (
                reference_root(&side(0), depth + 1),
                reference_root(&side(1), depth + 1),
            );
            digest(&[b"JMT::IntrnalNode", &l, &r])
        }
    }
}

/// Key hashes sharing a long prefix with `base`: each keeps the first
/// `keep` bits of `base` and takes the rest from `noise`.
fn clustered(base: Hash, tails: Vec<(usize, Hash, Hash)>) -> Vec<Leaf> {
    let mut map = BTreeMap::new();
    for (keep, noise, value_hash) in tails {
        let mut key_hash = ZERO;
        for d in 0..256 {
            let b = if d < keep {
                bit(&base, d)
            } else {
                bit(&noise, d)
            };
            key_hash[d / 8] |= b << (7 - d % 8);
        }
        map.insert(key_hash, value_hash);
    }
    map.into_iter()
        .map(|(key_hash, value_hash)| Leaf {
            key_hash,
            value_hash,
        })
        .collect()
}

/// Up to `max` random keys and values.
fn kv_map(max: usize) -> impl Strategy<Value = BTreeMap<Vec<u8>, Vec<u8>>> {
    let bytes = |n| prop::collection::vec(any::<u8>(), 0..n);
    prop::collection::btree_map(bytes(12), bytes(8), 0..max)
}

/// Up to `max` leaves sharing the first 200 or more bits of their key hashes.
fn cluster(max: usize) -> impl Strategy<Value = Vec<Leaf>> {
    (
        any::<Hash>(),
        prop::collection::vec((200usize..=256, any::<Hash>(), any::<Hash>()), 0..max),
    )
        .prop_map(|(base, tails)| clustered(base, tails))
}

/// Up to `max` sha-keyed leaves, or leaves clustered under a long prefix.
fn leaf_set(max: usize) -> impl Strategy<Value = Vec<Leaf>> {
    prop_oneof![kv_map(max).prop_map(|kvs| leaves_of(&kvs)), cluster(max)]
}

/// Consecutive intervals covering all key hashes, cut after the leaves at
/// `cuts` and at the hashes `extra`: `(lo, hi, leaves in [lo, hi])`.
fn chunks(
    leaves: &[Leaf],
    cuts: &[prop::sample::Index],
    extra: &[Hash],
) -> Vec<(Hash, Hash, Vec<Leaf>)> {
    let mut his: Vec<Hash> = extra.to_vec();
    if !leaves.is_empty() {
        his.extend(cuts.iter().map(|i| leaves[i.index(leaves.len())].key_hash));
    }
    his.push(MAX);
    his.sort();
    his.dedup();
    let mut out = Vec::new();
    let mut lo = Some(ZERO);
    for hi in his {
        let Some(l) = lo else { break };
        let inside = leaves
            .iter()
            .filter(|x| x.key_hash >= l && x.key_hash <= hi)
            .copied()
            .collect();
        out.push((l, hi, inside));
        lo = add_one(&hi);
    }
    out
}

/// The honest chunk for `[lo, hi]`.
fn chunk(all: &[Leaf], lo: Hash, hi: Hash) -> (Vec<Leaf>, RangeProof) {
    let inside = all
        .iter()
        .filter(|x| x.key_hash >= lo && x.key_hash <= hi)
        .copied()
        .collect();
    (inside, Prover::new(all).prove(&lo, &hi))
}

/// A hash near the leaves: one of them, just below or above one, or anything.
fn near(leaves: &[Leaf], (pick, how, any): (prop::sample::Index, u8, Hash)) -> Hash {
    let Some(l) = leaves.get(pick.index(leaves.len().max(1))) else {
        return any;
    };
    match how % 5 {
        0 => l.key_hash,
        1 => add_one(&l.key_hash).unwrap_or(MAX),
        2 => sub_one(&l.key_hash).unwrap_or(ZERO),
        3 => fill_from(&l.key_hash, usize::from(any[0]), any[1] & 1 == 1),
        _ => any,
    }
}

/// The makings of a [`near`] hash.
fn end() -> impl Strategy<Value = (prop::sample::Index, u8, Hash)> {
    (any::<prop::sample::Index>(), any::<u8>(), any::<Hash>())
}

/// Arbitrary siblings: depth, kind (empty, leaf, internal) and hashes.
fn raw_siblings() -> impl Strategy<Value = Vec<(u16, u8, Hash, Hash)>> {
    prop::collection::vec((0u16..300, 0u8..3, any::<Hash>(), any::<Hash>()), 0..20)
}

/// The 256-bit predecessor of `h`, or `None` for zero.
fn sub_one(h: &Hash) -> Option<Hash> {
    let mut out = *h;
    for byte in out.iter_mut().rev() {
        let (v, borrow) = byte.overflowing_sub(1);
        *byte = v;
        if !borrow {
            return Some(out);
        }
    }
    None
}

/// Every tampering of an honest chunk for `[lo, hi]`, each with its name.
fn tamperings(
    all: &[Leaf],
    lo: Hash,
    hi: Hash,
    seed: Hash,
) -> Vec<(String, Hash, Hash, Vec<Leaf>, RangeProof)> {
    let (leaves, proof) = chunk(all, lo, hi);
    let mut out = Vec::new();
    let mut push = |name: String, lo, hi, leaves, proof| out.push((name, lo, hi, leaves, proof));
    for i in 0..leaves.len() {
        let mut l = leaves.clone();
        l.remove(i);
        push(format!("leaf {i} removed"), lo, hi, l, proof.clone());
        let mut l = leaves.clone();
        l[i].value_hash[0] ^= 1;
        push(format!("leaf {i} value changed"), lo, hi, l, proof.clone());
        for new in [
            add_one(&leaves[i].key_hash),
            sub_one(&leaves[i].key_hash),
            Some(seed),
        ]
        .into_iter()
        .flatten()
        {
            let mut l = leaves.clone();
            l[i].key_hash = new;
            l.sort_by_key(|x| x.key_hash);
            push(
                format!("leaf {i} key hash changed"),
                lo,
                hi,
                l,
                proof.clone(),
            );
        }
    }
    if let Some(first) = leaves.first() {
        let mut l = leaves.clone();
        l.insert(0, *first);
        push("leaf duplicated".into(), lo, hi, l, proof.clone());
    }
    for extra in [lo, hi, seed] {
        if (lo..=hi).contains(&extra) && !all.iter().any(|x| x.key_hash == extra) {
            let mut l = leaves.clone();
            l.push(Leaf {
                key_hash: extra,
                value_hash: seed,
            });
            l.sort_by_key(|x| x.key_hash);
            push("leaf added".into(), lo, hi, l, proof.clone());
        }
    }
    if let (Some(first), Some(last)) = (leaves.first(), leaves.last()) {
        if let Some(l2) = add_one(&first.key_hash) {
            push(
                "lo above first leaf".into(),
                l2,
                hi.max(l2),
                leaves.clone(),
                proof.clone(),
            );
        }
        if let Some(h2) = sub_one(&last.key_hash) {
            push(
                "hi below last leaf".into(),
                lo.min(h2),
                h2,
                leaves.clone(),
                proof.clone(),
            );
        }
    }
    // Widen the interval over the neighbouring leaves, with or without them.
    if let Some(prev) = all.iter().rev().find(|x| x.key_hash < lo) {
        push(
            "lo widened".into(),
            prev.key_hash,
            hi,
            leaves.clone(),
            proof.clone(),
        );
        let mut l = vec![*prev];
        l.extend(leaves.iter().copied());
        push("neighbour leaf added".into(), lo, hi, l, proof.clone());
        push(
            "proof of the widened range".into(),
            lo,
            hi,
            leaves.clone(),
            chunk(all, prev.key_hash, hi).1,
        );
    }
    if let Some(after) = add_one(&hi) {
        let other = chunk(all, after, MAX).1;
        push(
            "proof of the next chunk".into(),
            lo,
            hi,
            leaves.clone(),
            other,
        );
    }
    if let Some(next) = all.iter().find(|x| x.key_hash > hi) {
        push(
            "hi widened".into(),
            lo,
            next.key_hash,
            leaves.clone(),
            proof.clone(),
        );
        push(
            "leaves of the next range".into(),
            lo,
            hi,
            vec![*next],
            proof.clone(),
        );
    }
    for side in [Side::Left, Side::Right] {
        let list = |p: &RangeProof| match side {
            Side::Left => p.left.clone(),
            Side::Right => p.right.clone(),
        };
        let with = |s: Vec<Sibling>| match side {
            Side::Left => RangeProof {
                left: s,
                right: proof.right.clone(),
            },
            Side::Right => RangeProof {
                left: proof.left.clone(),
                right: s,
            },
        };
        let sibs = list(&proof);
        for i in 0..sibs.len() {
            let mut s = sibs.clone();
            s.remove(i);
            push(
                format!("{side:?} sibling {i} dropped"),
                lo,
                hi,
                leaves.clone(),
                with(s),
            );
            // A leaf relabelled as an internal node of the same hash hashes the
            // same unless it would have collapsed: harmless malleability, so only
            // the relabelling of internal nodes as leaves is listed.
            if let Node::Internal(h) = sibs[i].node {
                let mut s = sibs.clone();
                for key_hash in [lo, hi, fill_from(&lo, usize::from(sibs[i].depth), false)] {
                    s[i].node = Node::Leaf(Leaf {
                        key_hash,
                        value_hash: h,
                    });
                    push(
                        format!("{side:?} sibling {i} kind changed"),
                        lo,
                        hi,
                        leaves.clone(),
                        with(s.clone()),
                    );
                }
            }
            let mut s = sibs.clone();
            match &mut s[i].node {
                Node::Leaf(l) => l.value_hash[31] ^= 0x80,
                Node::Internal(h) => h[31] ^= 0x80,
                Node::Empty => {}
            }
            push(
                format!("{side:?} sibling {i} hash changed"),
                lo,
                hi,
                leaves.clone(),
                with(s.clone()),
            );
            if let Node::Leaf(l) = &mut s[i].node {
                l.value_hash[31] ^= 0x80;
                l.key_hash[31] ^= 1;
                push(
                    format!("{side:?} sibling {i} key hash changed"),
                    lo,
                    hi,
                    leaves.clone(),
                    with(s),
                );
            }
            for d in [sibs[i].depth.wrapping_sub(1), sibs[i].depth + 1] {
                let mut s = sibs.clone();
                s[i].depth = d;
                push(
                    format!("{side:?} sibling {i} depth {d}"),
                    lo,
                    hi,
                    leaves.clone(),
                    with(s),
                );
            }
        }
        for d in [1, u16::from(seed[0]) + 1, 256] {
            if sibs.iter().all(|s| s.depth != d) {
                let mut s = sibs.clone();
                s.push(Sibling {
                    depth: d,
                    node: Node::Internal(seed),
                });
                s.sort_by_key(|x| x.depth);
                push(
                    format!("extra {side:?} sibling at {d}"),
                    lo,
                    hi,
                    leaves.clone(),
                    with(s),
                );
            }
        }
    }
    if !proof.left.is_empty() || !proof.right.is_empty() {
        let swapped = RangeProof {
            left: proof.right.clone(),
            right: proof.left.clone(),
        };
        push("sides swapped".into(), lo, hi, leaves.clone(), swapped);
    }
    push("wrong root".into(), lo, hi, leaves.clone(), proof.clone());
    out
}

/// The lone-leaf attack: drop the first (last) leaf of the chunk and list it
/// as a left (right) leaf sibling inside the subtree where it sits alone, at
/// the shallowest positions outside the interval there. Without the check of
/// leaf siblings' key hashes the root would match.
fn lone_leaf_attacks(all: &[Leaf], lo: Hash, hi: Hash) -> Vec<(Vec<Leaf>, RangeProof, SmtError)> {
    let (leaves, proof) = chunk(all, lo, hi);
    let mut out = Vec::new();
    for (side, victim) in [(Side::Left, leaves.first()), (Side::Right, leaves.last())] {
        let Some(victim) = victim else { continue };
        let rest: Vec<Leaf> = leaves.iter().filter(|l| l != &victim).copied().collect();
        let (path, turn) = match side {
            Side::Left => (lo, 1),
            Side::Right => (hi, 0),
        };
        let common = |a: &Hash| {
            (0..256)
                .find(|&d| bit(a, d) != bit(&victim.key_hash, d))
                .unwrap_or(256)
        };
        // The victim's lone subtree is at depth `alone_from`; `path` must enter it.
        let alone_from = all
            .iter()
            .filter(|l| l != &victim)
            .map(|l| common(&l.key_hash) + 1)
            .max()
            .unwrap_or(0);
        if common(&path) < alone_from {
            continue;
        }
        let straddles =
            |d: usize| !(fill_from(&path, d, false) >= lo && fill_from(&path, d, true) <= hi);
        let outside = (alone_from..256)
            .take_while(|&d| straddles(d))
            .filter(|&d| bit(&path, d) == turn);
        for parent in outside.take(4) {
            let depth = parent as u16 + 1;
            let mut p = proof.clone();
            let list = match side {
                Side::Left => &mut p.left,
                Side::Right => &mut p.right,
            };
            assert!(
                list.iter().all(|s| s.depth != depth),
                "the victim's subtree has no other leaf"
            );
            list.push(Sibling {
                depth,
                node: Node::Leaf(*victim),
            });
            list.sort_by_key(|s| s.depth);
            let err = SmtError::LeafSiblingOutOfSubtree {
                side,
                depth,
                key_hash: victim.key_hash,
            };
            out.push((rest.clone(), p, err));
        }
    }
    out
}

#[test]
fn constants_match_jmt() {
    assert_eq!(
        PLACEHOLDER,
        JellyfishMerkleTree::<EmptyReader, Sha256>::EMPTY_ROOT.0
    );
    assert_eq!(LEAF_DOMAIN, jmt::proof::LEAF_DOMAIN_SEPARATOR);
    assert_eq!(INTERNAL_DOMAIN, jmt::proof::INTERNAL_DOMAIN_SEPARATOR);
}

#[test]
fn small_roots_match_jmt() {
    for n in 0..=3u8 {
        let kvs: BTreeMap<Vec<u8>, Vec<u8>> = (0..n).map(|i| (vec![i], vec![i, i])).collect();
        let leaves = leaves_of(&kvs);
        assert_eq!(root(&leaves).hash(), jmt_root(&kvs), "{n} leaves");
        assert_eq!(Prover::new(&leaves).root(), root(&leaves));
    }
    assert_eq!(root(&[]), Node::Empty);
    let one = leaf(b"k", b"v");
    assert_eq!(root(&[one]), Node::Leaf(one));
}

#[test]
fn add_one_edges() {
    assert_eq!(add_one(&ZERO).map(|h| h[31]), Some(1));
    assert_eq!(add_one(&MAX), None);
    let mut h = ZERO;
    h[31] = 0xff;
    h[30] = 0x01;
    let mut want = ZERO;
    want[30] = 0x02;
    assert_eq!(add_one(&h), Some(want));
    let mut h = MAX;
    h[0] = 0x7f;
    let mut want = ZERO;
    want[0] = 0x80;
    assert_eq!(add_one(&h), Some(want));
}

#[test]
fn empty_tree_and_whole_range() {
    let proof = Prover::new(&[]).prove(&ZERO, &MAX);
    assert_eq!(proof, RangeProof::default());
    assert_eq!(verify(&PLACEHOLDER, &ZERO, &MAX, &[], &proof), Ok(()));
    assert!(verify(&PLACEHOLDER, &MAX, &ZERO, &[], &proof).is_err());
}

#[test]
fn error_messages_name_the_values() {
    let err = verify(&ZERO, &ZERO, &ZERO, &[], &RangeProof::default()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&hex::encode(PLACEHOLDER)) && text.contains(&hex::encode(ZERO)),
        "{text}"
    );
    let err = verify(&ZERO, &MAX, &ZERO, &[], &RangeProof::default()).unwrap_err();
    assert!(err.to_string().contains(&hex::encode(MAX)), "{err}");
}

/// A leaf from its two hashes.
fn as_leaf(key_hash: Hash, value_hash: Hash) -> Leaf {
    Leaf {
        key_hash,
        value_hash,
    }
}

/// Siblings from [`raw_siblings`], sorted and deduplicated by depth if `sorted`.
fn raw_sibling_list(raw: Vec<(u16, u8, Hash, Hash)>, sorted: bool) -> Vec<Sibling> {
    let mut list: Vec<Sibling> = raw
        .into_iter()
        .map(|(depth, kind, a, b)| {
            let node = match kind {
                0 => Node::Empty,
                1 => Node::Leaf(as_leaf(a, b)),
                _ => Node::Internal(a),
            };
            Sibling { depth, node }
        })
        .collect();
    if sorted {
        list.sort_by_key(|s| s.depth);
        list.dedup_by_key(|s| s.depth);
    }
    list
}

/// An edit of a chunk: operation, position, depth and a hash.
type Edit = (u8, prop::sample::Index, u16, Hash);

fn edit() -> impl Strategy<Value = Edit> {
    (
        0u8..6,
        any::<prop::sample::Index>(),
        0u16..=257,
        any::<Hash>(),
    )
}

/// Applies `edit` to a chunk's `leaves` and `proof`; `all` supplies leaves.
fn apply_edit(
    (op, at, depth, h): Edit,
    all: &[Leaf],
    leaves: &mut Vec<Leaf>,
    proof: &mut RangeProof,
) {
    let side = if h[0] & 1 == 0 {
        &mut proof.left
    } else {
        &mut proof.right
    };
    match op {
        0 if !leaves.is_empty() => {
            leaves.remove(at.index(leaves.len()));
        }
        1 => leaves.push(as_leaf(h, h)),
        2 if !side.is_empty() => {
            side.remove(at.index(side.len()));
        }
        3 => side.push(Sibling {
            depth,
            node: Node::Internal(h),
        }),
        4 => {
            let pick = all.get(at.index(all.len().max(1))).copied();
            let node = Node::Leaf(pick.unwrap_or(as_leaf(h, h)));
            side.push(Sibling { depth, node });
        }
        _ if !side.is_empty() => {
            let i = at.index(side.len());
            side[i].depth = depth;
        }
        _ => {}
    }
    leaves.sort_by_key(|x| x.key_hash);
    side.sort_by_key(|s| s.depth);
}

/// `x` as two big-endian halves.
fn halves(x: &Hash) -> (u128, u128) {
    let (hi, lo) = x.split_at(16);
    (
        u128::from_be_bytes(hi.try_into().unwrap()),
        u128::from_be_bytes(lo.try_into().unwrap()),
    )
}

/// Each check of `verify` reports its own error.
#[test]
fn each_check_has_its_error() {
    let kvs: BTreeMap<Vec<u8>, Vec<u8>> = (0..200u32)
        .map(|i| (i.to_be_bytes().to_vec(), vec![1]))
        .collect();
    let all = leaves_of(&kvs);
    let root_hash = root(&all).hash();
    // Ends with 192 trailing zero / one bits: no outside subtree below depth 64.
    let lo = fill_from(&all[60].key_hash, 64, false);
    let hi = fill_from(&all[140].key_hash, 64, true);
    let (leaves, proof) = chunk(&all, lo, hi);
    assert_eq!(verify(&root_hash, &lo, &hi, &leaves, &proof), Ok(()));
    let check = |lo: &Hash, hi: &Hash, l: &[Leaf], p: &RangeProof| {
        verify(&root_hash, lo, hi, l, p).unwrap_err()
    };
    let with_left = |f: &dyn Fn(&mut Vec<Sibling>)| {
        let mut p = proof.clone();
        f(&mut p.left);
        p
    };
    let (first, last) = (proof.left[0], *proof.left.last().unwrap());

    assert_eq!(
        check(&hi, &lo, &leaves, &proof),
        SmtError::EmptyInterval { lo: hi, hi: lo }
    );
    let mut dup = leaves.clone();
    dup.insert(1, leaves[1]);
    let k = leaves[1].key_hash;
    assert_eq!(
        check(&lo, &hi, &dup, &proof),
        SmtError::LeavesNotAscending {
            index: 1,
            prev: k,
            next: k
        }
    );
    let k = leaves[0].key_hash;
    let err = check(&add_one(&k).unwrap(), &hi, &leaves, &proof);
    assert_eq!(
        err,
        SmtError::LeafOutsideInterval {
            key_hash: k,
            lo: add_one(&k).unwrap(),
            hi
        }
    );
    for depth in [0, 257] {
        let p = with_left(&|s| {
            s.insert(
                0,
                Sibling {
                    depth,
                    node: first.node,
                },
            )
        });
        let err = check(&lo, &hi, &leaves, &p);
        assert_eq!(err, SmtError::SiblingDepthOutOfRange(Side::Left, depth));
    }
    let p = with_left(&|s| s.insert(0, first));
    let err = check(&lo, &hi, &leaves, &p);
    assert_eq!(
        err,
        SmtError::SiblingsNotAscending(Side::Left, first.depth, first.depth)
    );
    let p = with_left(&|s| s[0].node = Node::Empty);
    assert_eq!(
        check(&lo, &hi, &leaves, &p),
        SmtError::EmptySibling(Side::Left, first.depth)
    );
    let depth = (1..last.depth)
        .find(|d| bit(&lo, usize::from(d - 1)) == 0)
        .unwrap();
    let p = with_left(&|s| {
        s.push(Sibling {
            depth,
            node: Node::Internal(ZERO),
        });
        s.sort_by_key(|x| x.depth);
    });
    assert_eq!(
        check(&lo, &hi, &leaves, &p),
        SmtError::MisplacedSibling(Side::Left, depth)
    );
    let p = with_left(&|s| {
        s.push(Sibling {
            depth: 200,
            node: Node::Internal(ZERO),
        })
    });
    assert_eq!(
        check(&lo, &hi, &leaves, &p),
        SmtError::UnusedSibling(Side::Left, 200)
    );
    let p = with_left(&|s| {
        s[0].node = Node::Leaf(Leaf {
            key_hash: hi,
            value_hash: ZERO,
        })
    });
    let err = check(&lo, &hi, &leaves, &p);
    assert_eq!(
        err,
        SmtError::LeafSiblingOutOfSubtree {
            side: Side::Left,
            depth: first.depth,
            key_hash: hi
        }
    );
    let err = verify(&ZERO, &lo, &hi, &leaves, &proof).unwrap_err();
    assert_eq!(
        err,
        SmtError::RootMismatch {
            expected: ZERO,
            computed: root_hash
        }
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn root_matches_jmt(kvs in kv_map(300)) {
        let leaves = leaves_of(&kvs);
        prop_assert_eq!(root(&leaves).hash(), jmt_root(&kvs));
        prop_assert_eq!(Prover::new(&leaves).root(), root(&leaves));
    }

    #[test]
    fn root_matches_definition(leaves in leaf_set(300)) {
        prop_assert_eq!(root(&leaves).hash(), reference_root(&leaves, 0));
        prop_assert_eq!(Prover::new(&leaves).root(), root(&leaves));
    }

    #[test]
    fn every_chunk_verifies(
        leaves in leaf_set(300),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
        extra in prop::collection::vec(any::<Hash>(), 0..3),
        root_at in any::<prop::sample::Index>(),
    ) {
        let root_hash = root(&leaves).hash();
        let mut prover = Prover::new(&leaves);
        let mut seen = Vec::new();
        let chunks = chunks(&leaves, &cuts, &extra);
        let root_at = root_at.index(chunks.len() + 1);
        for (i, (lo, hi, inside)) in chunks.into_iter().enumerate() {
            if i == root_at {
                prop_assert_eq!(prover.root().hash(), root_hash);
            }
            let proof = prover.prove(&lo, &hi);
            prop_assert_eq!(&proof, &Prover::new(&leaves).prove(&lo, &hi));
            prop_assert_eq!(verify(&root_hash, &lo, &hi, &inside, &proof), Ok(()));
            seen.extend(inside);
        }
        prop_assert_eq!(prover.root().hash(), root_hash);
        prop_assert_eq!(seen, leaves);
    }

    #[test]
    fn any_interval_verifies(
        leaves in leaf_set(64),
        ends in (end(), end()),
    ) {
        let (a, b) = (near(&leaves, ends.0), near(&leaves, ends.1));
        let (lo, hi) = (a.min(b), a.max(b));
        let (inside, proof) = chunk(&leaves, lo, hi);
        prop_assert_eq!(verify(&root(&leaves).hash(), &lo, &hi, &inside, &proof), Ok(()));
    }

    #[test]
    fn tampered_chunks_fail(
        leaves in leaf_set(64),
        ends in (end(), end()),
        seed in any::<Hash>(),
    ) {
        let (a, b) = (near(&leaves, ends.0), near(&leaves, ends.1));
        let (lo, hi) = (a.min(b), a.max(b));
        let root_hash = root(&leaves).hash();
        for (name, lo2, hi2, l, p) in tamperings(&leaves, lo, hi, seed) {
            let claimed = if name == "wrong root" { seed } else { root_hash };
            if verify(&claimed, &lo2, &hi2, &l, &p).is_ok() {
                // Only a tampering that happened to give an honest chunk may pass.
                let honest = claimed == root_hash && chunk(&leaves, lo2, hi2) == (l, p);
                prop_assert!(honest, "{} accepted", name);
            }
        }
        for (l, p, err) in lone_leaf_attacks(&leaves, lo, hi) {
            prop_assert_eq!(verify(&root_hash, &lo, &hi, &l, &p), Err(err));
        }
    }

    #[test]
    fn verify_never_panics(
        root_hash in any::<Hash>(),
        lo in any::<Hash>(),
        hi in any::<Hash>(),
        leaves in prop::collection::vec(any::<(Hash, Hash)>(), 0..20),
        sides in (raw_siblings(), raw_siblings()),
        sorted in any::<bool>(),
    ) {
        let mut leaves: Vec<Leaf> = leaves.into_iter().map(|(k, v)| as_leaf(k, v)).collect();
        let [left, right] = [sides.0, sides.1].map(|list| raw_sibling_list(list, sorted));
        let (lo, hi) = if sorted { (lo.min(hi), lo.max(hi)) } else { (lo, hi) };
        if sorted {
            leaves.sort_by_key(|l| l.key_hash);
            leaves.retain(|l| (lo..=hi).contains(&l.key_hash));
        }
        let _ = verify(&root_hash, &lo, &hi, &leaves, &RangeProof { left, right });
    }

    /// Random edits of honest chunks: never a panic, and whatever verifies
    /// is exactly the honest set of leaves.
    #[test]
    fn accepted_chunks_are_complete(
        leaves in leaf_set(64),
        ends in (end(), end()),
        edits in prop::collection::vec(edit(), 1..4),
    ) {
        let (a, b) = (near(&leaves, ends.0), near(&leaves, ends.1));
        let (lo, hi) = (a.min(b), a.max(b));
        let root_hash = root(&leaves).hash();
        let (honest, mut proof) = chunk(&leaves, lo, hi);
        let mut l = honest.clone();
        for e in edits {
            apply_edit(e, &leaves, &mut l, &mut proof);
        }
        if verify(&root_hash, &lo, &hi, &l, &proof).is_ok() {
            prop_assert_eq!(l, honest);
        }
    }

    #[test]
    fn add_one_is_the_successor(h in any::<Hash>()) {
        let (hi, lo) = halves(&h);
        let want = match lo.checked_add(1) {
            Some(lo) => Some((hi, lo)),
            None => hi.checked_add(1).map(|hi| (hi, 0)),
        };
        prop_assert_eq!(add_one(&h).map(|x| halves(&x)), want);
    }
}
