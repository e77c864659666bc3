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
//! the room left is taken in steps. The order of increases and decreases
//! (see [`plan`]) keeps the total at 4 or more, so the queue drains while
//! an ACTIVE validator of full power remains, which governance guarantees
//! (the last ACTIVE validator cannot leave).

use std::collections::{BTreeMap, BTreeSet};

use super::params::{MAX_TOTAL_POWER, MIN_VALIDATOR_POWER};

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

/// One block's planning state.
struct Step {
    working: BTreeMap<[u8; 32], u64>,
    total: u64,
    budget: u64,
    changed: u64,
    touched: BTreeSet<[u8; 32]>,
    full: bool,
    updates: Vec<Wanted>,
}

/// What [`Step::take`] did with a wanted power.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Took {
    /// Fully applied, or nothing to do.
    Done,
    /// Waits for room in a later block.
    Waiting,
    /// An increase that would pass CometBFT's power limit: it waits for
    /// decreases to make room.
    Capped,
}

impl Step {
    /// Takes as much of `w` as fits.
    fn take(&mut self, w: &Wanted) -> Took {
        if self.full || self.touched.contains(&w.key) {
            return Took::Waiting;
        }
        let old = self.working.get(&w.key).copied().unwrap_or(0);
        if old == w.power {
            return Took::Done; // nothing to do, including power 0 for a key not in the set
        }
        if w.power == 0 && self.working.len() == 1 {
            return Took::Waiting; // would empty the set
        }
        let delta = old.abs_diff(w.power);
        let mut step = delta.min(self.budget - self.changed);
        if step == 0 {
            self.full = true;
            return Took::Waiting;
        }
        if w.power > old {
            // CometBFT halts on a total over its limit: wait instead
            step = step.min(MAX_TOTAL_POWER.saturating_sub(self.total));
            if step == 0 {
                return Took::Capped;
            }
        } else {
            // never below MIN_VALIDATOR_POWER in all: under it no step fits,
            // not even the increase that would set things moving again
            step = step.min(self.total.saturating_sub(MIN_VALIDATOR_POWER));
            if step == 0 {
                return Took::Waiting;
            }
        }
        let power = if w.power > old {
            old + step
        } else {
            old - step
        };
        self.changed += step;
        self.total = if w.power > old {
            self.total + step
        } else {
            self.total - step
        };
        self.touched.insert(w.key);
        if power == 0 {
            self.working.remove(&w.key);
        } else {
            self.working.insert(w.key, power);
        }
        self.updates.push(Wanted { key: w.key, power });
        if step < delta {
            self.full = true;
            return Took::Waiting;
        }
        Took::Done
    }
}

/// Plans one block's updates. `set` maps each key in CometBFT's set to its
/// (non-zero) power. An empty `set` (an unknown genesis set) plans nothing.
///
/// Which go first depends on the keys that are not going down (in effect
/// the ACTIVE validators). When they hold at least [`MIN_VALIDATOR_POWER`]
/// between them, decreases (removals) go first, in queue order, then
/// increases: a removed validator stops signing as soon as the budget
/// allows, and the total cannot fall below what stays. Otherwise (a set
/// still being built up) increases go first and decreases only in a block
/// that leaves no increase waiting for room. Either way the total stays at
/// 4 or more while anything goes down, so there is always room for a step.
/// An increase held back only by CometBFT's power limit never holds back
/// the decreases that would make room for it.
///
/// The queue drains as long as every wanted power is 0 or at least
/// [`MIN_VALIDATOR_POWER`] (governance only asks for those) and one key in
/// the set is never removed (the last ACTIVE validator cannot leave).
pub fn plan(set: &BTreeMap<[u8; 32], u64>, queue: &[Wanted]) -> Plan {
    let total: u64 = set.values().fold(0u64, |a, p| a.saturating_add(*p));
    if total == 0 {
        return Plan {
            updates: Vec::new(),
            remaining: queue.to_vec(),
        };
    }
    let mut st = Step {
        working: set.clone(),
        total,
        // Largest d with 3d < total.
        budget: (total - 1) / 3,
        changed: 0,
        touched: BTreeSet::new(),
        full: false,
        updates: Vec::new(),
    };
    let up = |w: &Wanted| w.power >= set.get(&w.key).copied().unwrap_or(0);
    let going_down: BTreeSet<[u8; 32]> = queue.iter().filter(|w| !up(w)).map(|w| w.key).collect();
    let staying: u64 = set
        .iter()
        .filter(|(k, _)| !going_down.contains(*k))
        .fold(0u64, |a, (_, p)| a.saturating_add(*p));
    let mut took = vec![Took::Waiting; queue.len()];
    let pass = |st: &mut Step, took: &mut [Took], ups: bool| {
        for (i, w) in queue.iter().enumerate().filter(|(_, w)| up(w) == ups) {
            took[i] = st.take(w);
        }
    };
    if staying >= MIN_VALIDATOR_POWER {
        // decreases cannot take the total below what stays: removals first
        pass(&mut st, &mut took, false);
        pass(&mut st, &mut took, true);
    } else {
        pass(&mut st, &mut took, true);
        let increases_left = queue
            .iter()
            .zip(&took)
            .any(|(w, t)| up(w) && *t == Took::Waiting);
        if !increases_left {
            pass(&mut st, &mut took, false);
        }
    }
    Plan {
        updates: st.updates,
        remaining: queue
            .iter()
            .zip(&took)
            .filter(|(_, t)| **t != Took::Done)
            .map(|(w, _)| *w)
            .collect(),
    }
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

    /// Runs blocks until the queue drains (asserting it does, within 100
    /// blocks), checking the total never falls below 4.
    fn drain(set: &mut BTreeMap<[u8; 32], u64>, queue: &mut Vec<Wanted>) {
        for _ in 0..100 {
            if queue.is_empty() {
                break;
            }
            let p = plan(set, queue);
            apply(set, &p.updates);
            assert!(set.values().sum::<u64>() >= 4, "{set:?}");
            *queue = p.remaining;
        }
        assert!(queue.is_empty(), "{queue:?}");
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

    /// A removal queued before a join waits for the join: the planner
    /// never lets the total fall to 3 or less (where no step fits).
    #[test]
    fn a_removal_before_a_join_waits_for_it_and_the_queue_drains() {
        let mut set: BTreeMap<_, _> = [(k(1), 4)].into();
        let mut queue = vec![
            Wanted {
                key: k(1),
                power: 0,
            },
            Wanted {
                key: k(2),
                power: 10,
            },
            Wanted {
                key: k(3),
                power: 0,
            },
        ];
        drain(&mut set, &mut queue);
        assert_eq!(set, [(k(2), 10)].into());
    }

    /// An increase held back by CometBFT's power limit does not hold back
    /// the removal that makes room for it.
    #[test]
    fn a_join_at_the_power_limit_waits_for_the_removal_that_makes_room() {
        let big = MAX_TOTAL_POWER / 2;
        let set: BTreeMap<_, _> = [(k(1), big), (k(2), big)].into();
        let queue = [
            Wanted {
                key: k(3),
                power: big,
            },
            Wanted {
                key: k(2),
                power: 0,
            },
        ];
        let p = plan(&set, &queue);
        // no room under the limit for k3 yet; k2 steps down
        assert_eq!(p.updates.len(), 1);
        assert_eq!(p.updates[0].key, k(2));
        assert!(p.updates[0].power < big);
        let mut set = set;
        let mut queue = queue.to_vec();
        for _ in 0..100 {
            if queue.is_empty() {
                break;
            }
            let p = plan(&set, &queue);
            apply(&mut set, &p.updates);
            assert!(set.values().sum::<u64>() <= MAX_TOTAL_POWER);
            queue = p.remaining;
        }
        assert!(queue.is_empty(), "{queue:?}");
        assert_eq!(set, [(k(1), big), (k(3), big)].into());
    }

    /// A removed validator steps down first, while a join waits for room.
    #[test]
    fn a_removal_does_not_wait_for_a_join() {
        let mut set: BTreeMap<_, _> = [(k(1), 10), (k(2), 10), (k(3), 10)].into();
        let mut queue = vec![
            Wanted {
                key: k(4),
                power: 100,
            },
            Wanted {
                key: k(3),
                power: 0,
            },
        ];
        // budget 9: k3 10 -> 1; then budget 6: k3 1 -> 0 and k4 0 -> 5
        let p = plan(&set, &queue);
        assert_eq!(
            p.updates,
            vec![Wanted {
                key: k(3),
                power: 1
            }]
        );
        apply(&mut set, &p.updates);
        let p = plan(&set, &p.remaining);
        assert_eq!(
            p.updates,
            vec![
                Wanted {
                    key: k(3),
                    power: 0
                },
                Wanted {
                    key: k(4),
                    power: 5
                }
            ]
        );
        apply(&mut set, &p.updates);
        queue = p.remaining;
        for _ in 0..100 {
            if queue.is_empty() {
                break;
            }
            let p = plan(&set, &queue);
            apply(&mut set, &p.updates);
            queue = p.remaining;
        }
        assert!(queue.is_empty());
        assert_eq!(set, [(k(1), 10), (k(2), 10), (k(4), 100)].into());
    }

    /// Decreases alone never take the total below MIN_VALIDATOR_POWER, so
    /// an increase queued later still fits, and then the removals finish.
    #[test]
    fn decreases_stop_at_the_minimum_total_and_a_later_join_frees_them() {
        let mut set: BTreeMap<_, _> = [(k(2), 2), (k(3), 4)].into();
        let w = |i: u8, power: u64| Wanted { key: k(i), power };
        let mut queue = vec![w(3, 0), w(2, 0)];
        for _ in 0..20 {
            let p = plan(&set, &queue);
            apply(&mut set, &p.updates);
            assert!(set.values().sum::<u64>() >= 4, "{set:?}");
            queue = p.remaining;
        }
        assert!(!queue.is_empty(), "the removals wait for a join");
        queue.push(w(1, 10));
        drain(&mut set, &mut queue);
        assert_eq!(set, [(k(1), 10)].into());
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

    /// A queue as `enqueue_update` keeps it: at most one wanted power per
    /// key (the newest), each 0 or at least MIN_VALIDATOR_POWER.
    fn arb_queue() -> impl Strategy<Value = Vec<Wanted>> {
        proptest::collection::vec(
            (1u8..9, prop_oneof![Just(0u64), 4u64..60])
                .prop_map(|(i, power)| Wanted { key: k(i), power }),
            0..24,
        )
        .prop_map(|ws| {
            let mut q: Vec<Wanted> = Vec::new();
            for w in ws {
                q.retain(|x| x.key != w.key);
                q.push(w);
            }
            q
        })
    }

    fn arb_set() -> impl Strategy<Value = BTreeMap<[u8; 32], u64>> {
        proptest::collection::btree_map((1u8..9).prop_map(k), 4u64..60, 1..6)
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
                    // stuck only on the removal of the last validator
                    let last_only = set.len() == 1
                        && queue.iter().all(|w| w.power == 0 && set.contains_key(&w.key));
                    prop_assert!(last_only, "stuck: {:?} {:?}", set, queue);
                    queue.clear();
                    break;
                }
                queue = p.remaining;
            }
            prop_assert!(queue.is_empty(), "the queue never drained");
        }

        /// Wanted powers keep arriving between blocks (replacing the one
        /// queued for the same key, as `enqueue_update` does): every block
        /// stays safe and the total never falls below 4; a join queued at
        /// the end lets everything drain.
        #[test]
        fn arrivals_between_blocks_never_freeze_the_set(
            set in arb_set(),
            arrivals in proptest::collection::vec(
                proptest::option::of((1u8..9, prop_oneof![Just(0u64), 4u64..60])),
                1..60,
            ),
        ) {
            let mut set = set;
            let mut queue: Vec<Wanted> = Vec::new();
            let enqueue = |q: &mut Vec<Wanted>, key, power| {
                q.retain(|w: &Wanted| w.key != key);
                q.push(Wanted { key, power });
            };
            let step = |set: &mut BTreeMap<[u8; 32], u64>, queue: &mut Vec<Wanted>| {
                let total: u64 = set.values().sum();
                let p = plan(set, queue);
                let changed: u64 = p
                    .updates
                    .iter()
                    .map(|u| set.get(&u.key).copied().unwrap_or(0).abs_diff(u.power))
                    .sum();
                assert!(3 * changed < total, "changed {changed} of {total}");
                apply(set, &p.updates);
                assert!(!set.is_empty());
                assert!(set.values().sum::<u64>() >= 4, "total under 4: {set:?}");
                *queue = p.remaining;
            };
            for a in arrivals {
                if let Some((i, power)) = a {
                    enqueue(&mut queue, k(i), power);
                }
                step(&mut set, &mut queue);
            }
            enqueue(&mut queue, k(20), 10);
            for _ in 0..10_000 {
                if queue.is_empty() {
                    break;
                }
                step(&mut set, &mut queue);
            }
            prop_assert!(queue.iter().all(|w| w.power == 0 && set.len() == 1), "stuck: {:?} {:?}", set, queue);
        }

        #[test]
        fn the_plan_is_deterministic(set in arb_set(), queue in arb_queue()) {
            prop_assert_eq!(plan(&set, &queue), plan(&set.clone(), &queue.clone()));
        }
    }
}
