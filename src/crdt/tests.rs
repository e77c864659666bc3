//! The lattice laws over arbitrary states, writes as inflations, a
//! single-node model the reads must match, convergence of three replicas
//! under random interleavings, and collection that changes no read.

mod model;
mod owners;

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

const REPLICAS: [[u8; 32]; 3] = [[1; 32], [2; 32], [3; 32]];

fn stamp() -> impl Strategy<Value = Stamp> {
    (0u64..12, 0usize..3).prop_map(|(ms, r)| Stamp::new(ms, REPLICAS[r]))
}

fn small_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::sample::select(vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()])
}

fn whole() -> impl Strategy<Value = Whole> {
    prop_oneof![
        Just(Whole::Tombstone),
        small_bytes().prop_map(Whole::Value),
        prop::collection::vec(small_bytes(), 0..3).prop_map(Whole::List),
    ]
}

fn part<E: std::fmt::Debug + Clone>(
    elem: impl Strategy<Value = E>,
) -> impl Strategy<Value = Part<Vec<u8>, E>> {
    (
        prop::option::of(stamp()),
        prop::collection::btree_map(small_bytes(), elem, 0..3),
    )
        .prop_map(|(last, elems)| Part { last, elems })
}

fn member() -> impl Strategy<Value = Member> {
    (prop::option::of(stamp()), prop::option::of(stamp()))
        .prop_map(|(add, remove)| Member { add, remove })
}

fn zmember() -> impl Strategy<Value = ZMember> {
    (
        prop::option::of((stamp(), -2i64..3).prop_map(|(s, v)| Lww::new(s, v))),
        prop::option::of(stamp()),
    )
        .prop_map(|(add, remove)| ZMember { add, remove })
}

fn counter() -> impl Strategy<Value = Part<[u8; 32], Pn>> {
    let pn = (prop::option::of(stamp()), 0u64..4, 0u64..4).prop_map(|(epoch, pos, neg)| Pn {
        epoch,
        pos,
        neg,
    });
    (
        prop::option::of(stamp()),
        prop::collection::btree_map(prop::sample::select(REPLICAS.to_vec()), pn, 0..3),
    )
        .prop_map(|(last, elems)| Part { last, elems })
}

/// Any state, including ones no sequence of writes makes (but every
/// deadline lies after the write that set it, as `expire` and `set` ensure).
fn entry() -> impl Strategy<Value = Entry> {
    let field = (stamp(), prop::option::of(small_bytes())).prop_map(|(s, v)| Lww::new(s, v));
    (
        prop::option::of((stamp(), whole()).prop_map(|(s, w)| Lww::new(s, w))),
        part(field),
        part(member()),
        part(zmember()),
        counter(),
        // A deadline after its own write, as every write makes one.
        prop::option::of(
            (stamp(), prop::option::of(0u64..14))
                .prop_map(|(s, d)| Lww::new(s, d.map(|d| s.ms + 1 + d))),
        ),
    )
        .prop_map(|(reg, hash, set, zset, counter, expiry)| Entry {
            reg,
            hash,
            set,
            zset,
            counter,
            expiry,
        })
}

/// One write, as a test script names it.
#[derive(Clone, Debug)]
pub(super) enum Op {
    Set(Vec<u8>, Option<u64>),
    SetList(Vec<Vec<u8>>),
    Del,
    HSet(Vec<u8>, Vec<u8>),
    HDel(Vec<u8>),
    SAdd(Vec<Vec<u8>>),
    SRem(Vec<Vec<u8>>),
    ZAdd(Vec<u8>, i64),
    ZRem(Vec<Vec<u8>>),
    Incr(i64),
    Expire(Option<u64>),
}

/// Deadlines are relative to the write's time in scripts: `Some(d)` is
/// `ms + d - 2`, so some are already past.
fn op() -> impl Strategy<Value = Op> {
    let members = || prop::collection::vec(small_bytes(), 1..3);
    prop_oneof![
        (small_bytes(), prop::option::of(0u64..6)).prop_map(|(v, t)| Op::Set(v, t)),
        prop::collection::vec(small_bytes(), 0..3).prop_map(Op::SetList),
        Just(Op::Del),
        (small_bytes(), small_bytes()).prop_map(|(f, v)| Op::HSet(f, v)),
        small_bytes().prop_map(Op::HDel),
        members().prop_map(Op::SAdd),
        members().prop_map(Op::SRem),
        (small_bytes(), -3i64..4).prop_map(|(m, s)| Op::ZAdd(m, s)),
        members().prop_map(Op::ZRem),
        (-3i64..4).prop_map(Op::Incr),
        prop::option::of(0u64..6).prop_map(Op::Expire),
    ]
}

pub(super) fn deadline(s: Stamp, d: Option<u64>) -> Option<u64> {
    d.map(|d| (s.ms + d).saturating_sub(2))
}

/// Applies `op` at `s`; a refused write (wrong type) changes nothing.
pub(super) fn apply(e: &mut Entry, s: Stamp, op: &Op) {
    let before = e.clone();
    let ok = match op {
        Op::Set(v, t) => {
            e.set(s, v.clone(), deadline(s, *t));
            true
        }
        Op::SetList(l) => {
            e.set_list(s, l.clone());
            true
        }
        Op::Del => {
            e.del(s);
            true
        }
        Op::HSet(f, v) => e.hset(s, f.clone(), v.clone()).is_ok(),
        Op::HDel(f) => e.hdel(s, f).is_ok(),
        Op::SAdd(m) => e.sadd(s, m).is_ok(),
        Op::SRem(m) => e.srem(s, m).is_ok(),
        Op::ZAdd(m, sc) => e.zadd(s, m.clone(), *sc).is_ok(),
        Op::ZRem(m) => e.zrem(s, m).is_ok(),
        Op::Incr(n) => e.incr_by(s, *n).is_ok(),
        Op::Expire(t) => {
            e.expire(s, deadline(s, *t));
            true
        }
    };
    if !ok {
        // A refused write may still have settled a passed deadline, which
        // reads the same; keep the state as the write left it only then.
        assert_eq!(
            before.read(s.ms),
            e.read(s.ms),
            "a refused write changed a read"
        );
    }
}

/// A write replica `r` makes to its own element: a set member, a hash
/// field, or an increment of its own accumulators.
fn own_op(kind: u8, r: usize, choice: u8) -> Op {
    let own = |tag: u8| vec![tag, r as u8, choice % 2];
    match (kind, choice) {
        (0, 0 | 1) => Op::SAdd(vec![own(b'm')]),
        (0, _) => Op::SRem(vec![own(b'm')]),
        (1, 0 | 1) => Op::HSet(own(b'f'), vec![choice, r as u8]),
        (1, _) => Op::HDel(own(b'f')),
        _ => Op::Incr(i64::from(choice) - 1),
    }
}

proptest! {
    // Cheap cases, and the single-node model needs many to reach its
    // rarer paths (a deadline passing between two writes of a structure).
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn merge_commutes(a in entry(), b in entry()) {
        prop_assert_eq!(a.merge(&b), b.merge(&a));
    }

    #[test]
    fn merge_associates(a in entry(), b in entry(), c in entry()) {
        prop_assert_eq!(a.merge(&b).merge(&c), a.merge(&b.merge(&c)));
    }

    #[test]
    fn merge_is_idempotent_with_the_empty_entry_as_identity(a in entry()) {
        prop_assert_eq!(a.merge(&a), a.clone());
        prop_assert_eq!(a.merge(&Entry::default()), a.clone());
        prop_assert_eq!(Entry::default().merge(&a), a);
    }

    /// A write only moves a state up the lattice, so applying it at one
    /// replica and merging the result anywhere agree.
    #[test]
    fn every_write_is_an_inflation(a in entry(), s in stamp(), op in op()) {
        let mut after = a.clone();
        apply(&mut after, s, &op);
        prop_assert_eq!(a.merge(&after), after);
    }

    /// Writes with rising stamps, from any replica, read as one
    /// Redis-like node would after the same writes.
    #[test]
    fn reads_match_a_single_node(script in prop::collection::vec((0usize..3, op()), 1..24)) {
        let mut e = Entry::default();
        let mut m = model::Model::default();
        for (i, (r, op)) in script.iter().enumerate() {
            let s = Stamp::new(10 + i as u64 * 2, REPLICAS[*r]);
            apply(&mut e, s, op);
            m.apply(s, op);
            for now in [s.ms, s.ms + 1] {
                prop_assert_eq!(e.read(now), m.read(now), "after {:?} at {}", &script[..=i], now);
            }
        }
    }

    /// Three replicas write concurrently, each to its own elements of one
    /// structure (set members, hash fields, or its counter accumulators),
    /// and exchange states in any order. Merged, the key reads as one node
    /// would after every write in stamp order.
    #[test]
    fn concurrent_writes_to_separate_elements_read_in_stamp_order(
        kind in 0u8..3,
        script in prop::collection::vec((0usize..3, prop::option::of(0usize..3), 0u8..4), 1..40),
    ) {
        let mut reps = vec![Entry::default(); 3];
        let mut last: Vec<Option<Stamp>> = vec![None; 3];
        let mut m = model::Model::default();
        for (t, (r, from, choice)) in script.iter().enumerate() {
            match from {
                Some(f) if f != r => {
                    let got = reps[*f].clone();
                    reps[*r] = reps[*r].merge(&got);
                }
                _ => {
                    let op = own_op(kind, *r, *choice);
                    let s = Stamp::next(last[*r], t as u64, REPLICAS[*r]);
                    last[*r] = Some(s);
                    apply(&mut reps[*r], s, &op);
                    m.apply(s, &op);
                }
            }
        }
        let all = reps.iter().fold(Entry::default(), |acc, e| acc.merge(e));
        prop_assert_eq!(all.read(1_000), m.read(1_000));
    }

    /// Pruning what a reset superseded changes no read, whatever the
    /// pruned state is later merged with.
    #[test]
    fn pruning_changes_no_read(a in entry(), b in entry(), now in 0u64..16) {
        let mut pruned = a.clone();
        let _ = pruned.collect(now, 0);
        prop_assert_eq!(pruned.merge(&b).read(now), a.merge(&b).read(now));
    }

    /// Two replicas that shared a history older than the horizon, then
    /// wrote on: collecting below the horizon changes no read of their merge.
    #[test]
    fn collecting_below_the_horizon_changes_no_read(
        old in prop::collection::vec((0usize..3, op()), 0..12),
        x in prop::collection::vec(op(), 0..6),
        y in prop::collection::vec(op(), 0..6),
    ) {
        let mut shared = Entry::default();
        for (i, (r, op)) in old.iter().enumerate() {
            apply(&mut shared, Stamp::new(i as u64, REPLICAS[*r]), op);
        }
        let horizon = 20;
        let write = |ops: &[Op], r: usize| {
            let mut e = shared.clone();
            for (i, op) in ops.iter().enumerate() {
                apply(&mut e, Stamp::new(horizon + i as u64, REPLICAS[r]), op);
            }
            e
        };
        let (a, b) = (write(&x, 0), write(&y, 1));
        let now = horizon + 8;
        let (mut ca, mut cb) = (a.clone(), b.clone());
        let gone_a = ca.collect(now, horizon);
        let gone_b = cb.collect(now, horizon);
        let ca = if gone_a { Entry::default() } else { ca };
        let cb = if gone_b { Entry::default() } else { cb };
        prop_assert_eq!(ca.merge(&cb).read(now), a.merge(&b).read(now));
    }
}

#[test]
fn the_cad037_counter_example_sums_per_replica() {
    // Replica "node-0": [3, 1]; replica "node-1": [5, 0]; value 7.
    let (r0, r1) = (REPLICAS[0], REPLICAS[1]);
    let mut a = Entry::default();
    a.incr_by(Stamp::new(1, r0), 3).unwrap();
    a.incr_by(Stamp::new(2, r0), -1).unwrap();
    let mut b = Entry::default();
    b.incr_by(Stamp::new(3, r1), 5).unwrap();
    let m = a.merge(&b);
    assert_eq!(m.read(9).unwrap().value, Visible::Counter(7));
    assert_eq!(m.merge(&a).merge(&b), m, "re-merging counts nothing twice");
}

/// The reference merge's type conflict: a set, an older set and a value
/// between them. Here every order keeps the newer set's members and drops
/// the older set's, which the value overwrote.
#[test]
fn a_type_conflict_resolves_the_same_in_every_order() {
    let [r0, r1, r2] = REPLICAS;
    let mut older = Entry::default();
    older.sadd(Stamp::new(3, r0), &[b"old".to_vec()]).unwrap();
    let mut value = Entry::default();
    value.set(Stamp::new(4, r1), b"v".to_vec(), None);
    let mut newer = Entry::default();
    newer.sadd(Stamp::new(5, r2), &[b"new".to_vec()]).unwrap();
    let orders = [
        newer.merge(&older).merge(&value),
        newer.merge(&older.merge(&value)),
        value.merge(&newer).merge(&older),
    ];
    let want = Visible::Set([b"new".to_vec()].into());
    for m in &orders {
        assert_eq!(m.read(9).unwrap().value, want);
    }
}

/// Equal stamps (one replica, one millisecond, two values) resolve by the
/// value hash, so both orders agree.
#[test]
fn equal_stamps_break_by_value_hash() {
    let s = Stamp::new(7, REPLICAS[0]);
    let (mut a, mut b) = (Entry::default(), Entry::default());
    a.set(s, b"x".to_vec(), None);
    b.set(s, b"y".to_vec(), None);
    assert_eq!(a.merge(&b), b.merge(&a));
    let x_wins = Whole::Value(b"x".to_vec()).digest() > Whole::Value(b"y".to_vec()).digest();
    let want = if x_wins { b"x".to_vec() } else { b"y".to_vec() };
    assert_eq!(a.merge(&b).read(9).unwrap().value, Visible::Value(want));
}

/// A deadline ends the key's life; a write after it starts a new one,
/// without the deadline, holding none of the old members.
#[test]
fn a_passed_deadline_ends_a_life() {
    let r = REPLICAS[0];
    let mut e = Entry::default();
    e.sadd(Stamp::new(1, r), &[b"a".to_vec()]).unwrap();
    assert!(e.expire(Stamp::new(2, r), Some(5)));
    assert_eq!(e.read(4).unwrap().expire_at, Some(5));
    assert_eq!(e.read(5), None);
    e.sadd(Stamp::new(6, r), &[b"b".to_vec()]).unwrap();
    let v = e.read(7).unwrap();
    assert_eq!(v.value, Visible::Set([b"b".to_vec()].into()));
    assert_eq!(v.expire_at, None);
    // A later deadline replaces the first in its register, and still
    // cannot bring "a" back: the first was written down as a tombstone.
    assert!(e.expire(Stamp::new(8, r), Some(100)));
    assert_eq!(
        e.read(9).unwrap().value,
        Visible::Set([b"b".to_vec()].into())
    );
}

#[test]
fn a_write_of_another_type_is_refused() {
    let r = REPLICAS[0];
    let mut e = Entry::default();
    e.set(Stamp::new(1, r), b"v".to_vec(), None);
    let err = e.sadd(Stamp::new(2, r), &[b"m".to_vec()]).unwrap_err();
    assert_eq!((err.found, err.wanted), (Kind::Whole, Kind::Set));
    assert_eq!(e.read(3).unwrap().value, Visible::Value(b"v".to_vec()));
}

#[test]
fn databases_merge_key_by_key() {
    let [r0, r1, _] = REPLICAS;
    let mut a: Db = BTreeMap::new();
    let mut b: Db = BTreeMap::new();
    a.entry(b"k".to_vec())
        .or_default()
        .set(Stamp::new(1, r0), b"1".to_vec(), None);
    b.entry(b"k".to_vec())
        .or_default()
        .set(Stamp::new(2, r1), b"2".to_vec(), None);
    b.entry(b"j".to_vec())
        .or_default()
        .incr_by(Stamp::new(2, r1), 4)
        .unwrap();
    let m = merge_db(&a, &b);
    assert_eq!(m, merge_db(&b, &a));
    assert_eq!(
        m[b"k".as_slice()].read(5).unwrap().value,
        Visible::Value(b"2".to_vec())
    );
    assert_eq!(
        m[b"j".as_slice()].read(5).unwrap().value,
        Visible::Counter(4)
    );
}

/// A removal that empties a replica's view does not delete a member another
/// replica added concurrently.
#[test]
fn emptying_a_set_keeps_a_concurrent_add() {
    let [r0, r1, _] = REPLICAS;
    let mut a = Entry::default();
    a.sadd(Stamp::new(1, r0), &[b"x".to_vec()]).unwrap();
    let mut b = a.clone();
    b.sadd(Stamp::new(9, r1), &[b"y".to_vec()]).unwrap();
    assert_eq!(a.srem(Stamp::new(10, r0), &[b"x".to_vec()]).unwrap(), 1);
    assert_eq!(a.read(11), None, "empty reads as absent");
    let m = a.merge(&b);
    assert_eq!(
        m.read(11).unwrap().value,
        Visible::Set([b"y".to_vec()].into())
    );
}

/// An EXPIRE of a key already gone at the writer changes nothing, so it
/// cannot delete a value another replica kept by clearing its deadline.
#[test]
fn an_expire_that_finds_no_key_writes_nothing() {
    let [r0, r1, _] = REPLICAS;
    let mut a = Entry::default();
    a.set(Stamp::new(1, r0), b"v".to_vec(), Some(5));
    let mut b = a.clone();
    assert!(
        b.expire(Stamp::new(4, r1), None),
        "PERSIST before the deadline"
    );
    let before = a.clone();
    assert!(
        !a.expire(Stamp::new(6, r0), Some(50)),
        "the key is gone at r0"
    );
    assert_eq!(a, before);
    assert_eq!(
        a.merge(&b).read(7).unwrap().value,
        Visible::Value(b"v".to_vec())
    );
}

/// Increments count in the life they were made in: a delete restarts the
/// counter, and an increment stamped before that delete adds nothing to
/// the next life.
#[test]
fn increments_count_in_their_own_life() {
    let [r0, r1, r2] = REPLICAS;
    let mut a = Entry::default();
    a.incr_by(Stamp::new(10, r0), 1).unwrap();
    let mut b = a.clone();
    b.del(Stamp::new(20, r1));
    let mut c = b.clone();
    assert_eq!(c.incr_by(Stamp::new(30, r2), 1).unwrap(), 1);
    let mut late = b.clone();
    let before = late.clone();
    assert_eq!(
        late.incr_by(Stamp::new(15, r0), 5).unwrap(),
        0,
        "behind the delete"
    );
    assert_eq!(late, before);
    let all = a.merge(&b).merge(&c).merge(&late);
    assert_eq!(all.read(40).unwrap().value, Visible::Counter(1));
}

/// The documented rule for an emptying removal concurrent with an add: the
/// added member survives, and the deadline is cleared with the emptied
/// view (stamp order would keep it).
#[test]
fn an_emptying_removal_clears_the_deadline_of_a_concurrent_add() {
    let [r0, r1, _] = REPLICAS;
    let mut a = Entry::default();
    a.sadd(Stamp::new(1, r0), &[b"x".to_vec()]).unwrap();
    assert!(a.expire(Stamp::new(2, r0), Some(100)));
    let mut b = a.clone();
    b.sadd(Stamp::new(3, r1), &[b"y".to_vec()]).unwrap();
    a.srem(Stamp::new(4, r0), &[b"x".to_vec()]).unwrap();
    let m = a.merge(&b);
    let v = m.read(200).unwrap();
    assert_eq!(v.value, Visible::Set([b"y".to_vec()].into()));
    assert_eq!(v.expire_at, None);
}
