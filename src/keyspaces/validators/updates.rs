//! The validator updates FinalizeBlock returns: a pure function of the set
//! CometBFT runs with (as Stave's earlier updates made it) and a FIFO queue
//! of wanted powers.
//!
//! # Invariants
//! Whatever the queue holds, one block's updates:
//! - never name the same key twice;
//! - never give power 0 to a key that is not in the set;
//! - never empty the set;
//! - change less than 1/3 of the set's total power (the sum of |Δpower|).
//!
//! What does not fit waits in the queue, in order; an update larger than
//! the room left is taken in steps, so the queue always drains.

use std::collections::{BTreeMap, BTreeSet};

/// One wanted power for a consensus key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wanted {
    pub key: [u8; 32],
    pub power: u64,
}

/// The result of [`plan`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    /// The updates to return, in queue order.
    pub updates: Vec<Wanted>,
    /// The queue for the next block.
    pub remaining: Vec<Wanted>,
}

/// Plans one block's updates. `set` maps each key in CometBFT's set to its
/// (non-zero) power. An empty `set` (an unknown genesis set) plans nothing.
pub fn plan(set: &BTreeMap<[u8; 32], u64>, queue: &[Wanted]) -> Plan {
    let total: u64 = set.values().fold(0u64, |a, p| a.saturating_add(*p));
    if total == 0 {
        return Plan {
            updates: Vec::new(),
            remaining: queue.to_vec(),
        };
    }
    // Largest d with 3d < total.
    let budget = (total - 1) / 3;
    let mut changed = 0u64;
    let mut working = set.clone();
    let mut touched = BTreeSet::new();
    let mut out = Plan::default();
    let mut full = false;
    for w in queue {
        if full || touched.contains(&w.key) {
            out.remaining.push(*w);
            continue;
        }
        let old = working.get(&w.key).copied().unwrap_or(0);
        if old == w.power {
            continue; // nothing to do, including power 0 for a key not in the set
        }
        if w.power == 0 && working.len() == 1 {
            out.remaining.push(*w); // would empty the set
            continue;
        }
        let delta = old.abs_diff(w.power);
        let room = budget - changed;
        let step = delta.min(room);
        if step == 0 {
            full = true;
            out.remaining.push(*w);
            continue;
        }
        let power = if w.power > old {
            old + step
        } else {
            old - step
        };
        changed += step;
        touched.insert(w.key);
        if power == 0 {
            working.remove(&w.key);
        } else {
            working.insert(w.key, power);
        }
        out.updates.push(Wanted { key: w.key, power });
        if step < delta {
            full = true;
            out.remaining.push(*w);
        }
    }
    out
}

/// Applies updates to a set, as CometBFT does.
pub fn apply(set: &mut BTreeMap<[u8; 32], u64>, updates: &[Wanted]) {
    for u in updates {
        if u.power == 0 {
            set.remove(&u.key);
        } else {
            set.insert(u.key, u.power);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn k(i: u8) -> [u8; 32] {
        [i; 32]
    }

    fn four() -> BTreeMap<[u8; 32], u64> {
        (1..=4).map(|i| (k(i), 10)).collect()
    }

    #[test]
    fn a_fifth_validator_of_equal_power_joins_in_one_block() {
        let p = plan(
            &four(),
            &[Wanted {
                key: k(5),
                power: 10,
            }],
        );
        assert_eq!(
            p.updates,
            vec![Wanted {
                key: k(5),
                power: 10
            }]
        );
        assert!(p.remaining.is_empty());
    }

    #[test]
    fn an_update_over_a_third_is_taken_in_steps() {
        // total 40: room 13 per block
        let p = plan(
            &four(),
            &[Wanted {
                key: k(5),
                power: 30,
            }],
        );
        assert_eq!(
            p.updates,
            vec![Wanted {
                key: k(5),
                power: 13
            }]
        );
        assert_eq!(
            p.remaining,
            vec![Wanted {
                key: k(5),
                power: 30
            }]
        );
    }

    #[test]
    fn one_key_once_per_block_and_the_rest_waits_in_order() {
        let q = [
            Wanted {
                key: k(5),
                power: 5,
            },
            Wanted {
                key: k(5),
                power: 0,
            },
            Wanted {
                key: k(6),
                power: 3,
            },
        ];
        let p = plan(&four(), &q);
        assert_eq!(
            p.updates,
            vec![
                Wanted {
                    key: k(5),
                    power: 5
                },
                Wanted {
                    key: k(6),
                    power: 3
                }
            ]
        );
        assert_eq!(
            p.remaining,
            vec![Wanted {
                key: k(5),
                power: 0
            }]
        );
    }

    #[test]
    fn power_zero_for_a_key_outside_the_set_is_dropped() {
        let p = plan(
            &four(),
            &[Wanted {
                key: k(9),
                power: 0,
            }],
        );
        assert!(p.updates.is_empty() && p.remaining.is_empty());
    }

    #[test]
    fn the_last_validator_is_never_removed() {
        let set: BTreeMap<_, _> = [(k(1), 1)].into();
        let p = plan(
            &set,
            &[Wanted {
                key: k(1),
                power: 0,
            }],
        );
        assert!(p.updates.is_empty());
        assert_eq!(p.remaining.len(), 1);
    }

    fn arb_queue() -> impl Strategy<Value = Vec<Wanted>> {
        proptest::collection::vec(
            (1u8..9, prop_oneof![Just(0u64), 1u64..60])
                .prop_map(|(i, power)| Wanted { key: k(i), power }),
            0..24,
        )
    }

    fn arb_set() -> impl Strategy<Value = BTreeMap<[u8; 32], u64>> {
        proptest::collection::btree_map((1u8..9).prop_map(k), 1u64..60, 1..6)
    }

    proptest! {
        #[test]
        fn every_block_is_safe_and_the_queue_drains(set in arb_set(), queue in arb_queue()) {
            let mut set = set;
            let mut queue = queue;
            for _ in 0..10_000 {
                if queue.is_empty() { break; }
                let total: u64 = set.values().sum();
                let p = plan(&set, &queue);
                let mut seen = BTreeSet::new();
                let mut changed = 0u64;
                for u in &p.updates {
                    prop_assert!(seen.insert(u.key), "key twice in one block");
                    let old = set.get(&u.key).copied();
                    prop_assert!(!(u.power == 0 && old.is_none()), "power 0 for a key outside the set");
                    changed += old.unwrap_or(0).abs_diff(u.power);
                }
                prop_assert!(3 * changed < total, "changed {} of {}", changed, total);
                apply(&mut set, &p.updates);
                prop_assert!(!set.is_empty(), "set emptied");
                prop_assert!(set.values().all(|p| *p > 0));
                if p.updates.is_empty() && p.remaining == queue {
                    // stuck only with no room at all (total <= 3), or on the
                    // removal of the last validator
                    let last_only = set.len() == 1
                        && queue.iter().all(|w| w.power == 0 && set.contains_key(&w.key));
                    prop_assert!((total - 1) / 3 == 0 || last_only, "stuck: {:?} {:?}", set, queue);
                    queue.clear();
                    break;
                }
                queue = p.remaining;
            }
            prop_assert!(queue.is_empty(), "the queue never drained");
        }

        #[test]
        fn the_plan_is_deterministic(set in arb_set(), queue in arb_queue()) {
            prop_assert_eq!(plan(&set, &queue), plan(&set.clone(), &queue.clone()));
        }
    }
}
