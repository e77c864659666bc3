//! Per-owner states (`delta.rs`): a write checked against the merged state
//! and recorded in the writer's own state gives the merged state the write
//! would, and dropping what others superseded changes no read.

use proptest::prelude::*;

use super::super::*;
use super::{apply, entry, op, stamp, Op};

#[test]
fn a_delete_by_another_owner_stays_after_it_is_collected() {
    let (a, b) = ([1u8; 32], [2u8; 32]);
    let mut adder = Entry::default();
    adder.sadd(Stamp::new(1, a), &[b"m".to_vec()]).unwrap();
    let mut after = adder.clone();
    after.del(Stamp::new(2, b));
    let mut remover = Entry::delta(&adder, &after);
    let merged = adder.merge(&remover);
    assert!(merged.read(5).is_none());
    adder.drop_dominated(&merged, 5);
    // past the horizon the remover collects its tombstone and its state empties
    assert!(remover.collect(100, 50));
    remover = Entry::default();
    assert!(
        adder.merge(&remover).read(100).is_none(),
        "the deleted member stays deleted"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn a_delta_joined_back_is_the_write(a in entry(), s in stamp(), op in op()) {
        let mut after = a.clone();
        apply(&mut after, s, &op);
        let d = Entry::delta(&a, &after);
        prop_assert_eq!(a.merge(&d), after);
    }

    /// Owner `w` writes against the merged view of itself and others `o`;
    /// its own state gains the delta, and `o ⊔ w'` is the merged view
    /// after the write.
    #[test]
    fn an_owner_records_its_write_as_a_delta(
        o in entry(), w in entry(), s in stamp(), op in op(),
    ) {
        let merged = o.merge(&w);
        let mut after = merged.clone();
        apply(&mut after, s, &op);
        let own = w.merge(&Entry::delta(&merged, &after));
        prop_assert_eq!(o.merge(&own), after);
    }

    #[test]
    fn dropping_what_others_superseded_changes_no_read(o in entry(), w in entry(), now in 0u64..16) {
        let merged = o.merge(&w);
        let mut pruned = w.clone();
        pruned.drop_dominated(&merged, now);
        let after = o.merge(&pruned);
        for t in now..now + 16 {
            prop_assert_eq!(after.read(t), merged.read(t), "at {} (dropped at {})", t, now);
        }
    }

    /// The horizon law: three owners write against the merged view, each
    /// into its own state; every owner then neutralises what others
    /// superseded and collects its own removals past the horizon. After
    /// that no read changes, and dropping any owners' states whole (their
    /// records aged out, in any order) never shows what was not shown: a
    /// delete is never undone.
    #[test]
    fn collecting_past_the_horizon_brings_nothing_back(
        script in prop::collection::vec((0usize..3, op()), 1..24),
        gone in prop::collection::vec(proptest::bool::ANY, 3),
    ) {
        let script: Vec<_> = script.into_iter().map(|(w, o)| (w, o, false)).collect();
        horizon_law(&script, &gone)?;
    }

    /// The same with a forger: an op marked reuses the previous op's stamp
    /// (its time and replica) for another write, so registers tie.
    #[test]
    fn the_horizon_law_holds_with_forged_ties(
        script in prop::collection::vec((0usize..3, op(), proptest::bool::ANY), 1..24),
        gone in prop::collection::vec(proptest::bool::ANY, 3),
    ) {
        horizon_law(&script, &gone)?;
    }
}

fn horizon_law(script: &[(usize, Op, bool)], gone: &[bool]) -> Result<(), TestCaseError> {
    let mut owners = vec![Entry::default(); 3];
    let mut last = Stamp::new(10, super::REPLICAS[0]);
    for (i, (who, op, forged)) in script.iter().enumerate() {
        let s = if *forged && i > 0 {
            last
        } else {
            Stamp::new(10 + i as u64 * 2, super::REPLICAS[*who])
        };
        last = s;
        let merged = owners.iter().fold(Entry::default(), |a, e| a.merge(e));
        let mut after = merged.clone();
        apply(&mut after, s, op);
        owners[*who] = owners[*who].merge(&Entry::delta(&merged, &after));
    }
    let now = 10_000;
    let all = |o: &[Entry]| o.iter().fold(Entry::default(), |a, e| a.merge(e));
    let before = all(&owners).read(now).map(|v| v.value);
    let merged = all(&owners);
    for o in owners.iter_mut() {
        o.drop_dominated(&merged, now);
        o.collect(now, now - 1);
    }
    prop_assert_eq!(all(&owners).read(now).map(|v| v.value), before.clone());
    let kept: Vec<Entry> = owners
        .iter()
        .zip(gone)
        .filter(|(_, g)| !**g)
        .map(|(o, _)| o.clone())
        .collect();
    let after = all(&kept).read(now).map(|v| v.value);
    prop_assert!(
        shows_nothing_new(&before, &after),
        "{:?} became {:?}",
        before,
        after
    );
    Ok(())
}

/// Whether `after` shows only what `before` showed: absent stays absent,
/// a structure keeps a subset of its elements, a value stays or goes.
fn shows_nothing_new(before: &Option<Visible>, after: &Option<Visible>) -> bool {
    match (before, after) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some(Visible::Set(b)), Some(Visible::Set(a))) => a.is_subset(b),
        (Some(Visible::Hash(b)), Some(Visible::Hash(a))) => {
            a.iter().all(|(k, v)| b.get(k) == Some(v))
        }
        (Some(Visible::ZSet(b)), Some(Visible::ZSet(a))) => {
            a.iter().all(|(k, v)| b.get(k) == Some(v))
        }
        // a counter's columns are its owners': dropping one changes the sum
        (Some(Visible::Counter(_)), Some(Visible::Counter(_))) => true,
        (Some(b), Some(a)) => a == b,
    }
}

#[test]
fn an_add_another_owner_removed_is_dropped_from_the_adder() {
    let (a, b) = ([1u8; 32], [2u8; 32]);
    let m = vec![b"m".to_vec()];
    let mut adder = Entry::default();
    adder.sadd(Stamp::new(1, a), &m).unwrap();
    adder.sadd(Stamp::new(2, a), &[b"n".to_vec()]).unwrap();
    // The remover writes against the merged view, into its own state.
    let mut after = adder.clone();
    after.srem(Stamp::new(3, b), &m).unwrap();
    let remover = Entry::delta(&adder, &after);
    let merged = adder.merge(&remover);
    adder.drop_dominated(&merged, 10);
    assert!(
        !adder.set.elems.contains_key(&m[0]),
        "the superseded add is gone"
    );
    assert!(adder.set.elems.contains_key(b"n".as_slice()));
    // Once the remover forgets its removal, m stays gone.
    let mut forgot = remover.clone();
    forgot.set.elems.clear();
    let view = adder.merge(&forgot);
    assert_eq!(
        view.read(10).map(|v| v.value),
        Some(Visible::Set([b"n".to_vec()].into()))
    );
}
