//! Per-owner states (`delta.rs`): a write checked against the merged state
//! and recorded in the writer's own state gives the merged state the write
//! would, and dropping what others superseded changes no read.

use proptest::prelude::*;

use super::super::*;
use super::{apply, entry, op, stamp};

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
    fn dropping_what_others_superseded_changes_no_read(o in entry(), w in entry()) {
        let merged = o.merge(&w);
        let mut pruned = w.clone();
        pruned.drop_dominated(&merged);
        let after = o.merge(&pruned);
        for now in 0..16 {
            prop_assert_eq!(after.read(now), merged.read(now), "at {}", now);
        }
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
    adder.drop_dominated(&merged);
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
