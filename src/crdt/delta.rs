//! Deltas and per-owner states: what a replication layer needs to keep
//! one replica's own writes apart from everyone else's.
//!
//! A write is checked against the merged state of every replica (so it
//! sees what a reader sees), and [`Entry::delta`] takes out what it
//! changed; joining that into the writer's own state records the write.
//! The delta of an element the write changed is the element after the
//! write, which may carry stamps another replica wrote to the same element
//! (the add a removal overrides): they are below the write, and joining
//! them again changes nothing.
//!
//! [`Entry::drop_dominated`] forgets the parts of an owner's state that
//! others' writes have superseded, so that once a remover collects its
//! tombstone, the owner's older add is gone too (the horizon rule of
//! `crate::replica`).

use super::entry::{Entry, Join, Member, Part};

impl<K: Ord + Clone, E: Join + PartialEq> Part<K, E> {
    fn delta(before: &Self, after: &Self) -> Self {
        Part {
            last: if after.last != before.last {
                after.last
            } else {
                None
            },
            elems: after
                .elems
                .iter()
                .filter(|(k, e)| before.elems.get(*k) != Some(*e))
                .map(|(k, e)| (k.clone(), e.clone()))
                .collect(),
        }
    }
}

/// `after` where it differs from `before`.
fn changed<T: Clone + PartialEq>(before: &Option<T>, after: &Option<T>) -> Option<T> {
    if before != after {
        after.clone()
    } else {
        None
    }
}

impl Entry {
    /// What `after` (a state reached from `before` by local writes, which
    /// only join) holds that `before` does not: `before.merge(delta)` is
    /// `after`.
    pub fn delta(before: &Entry, after: &Entry) -> Entry {
        Entry {
            reg: changed(&before.reg, &after.reg),
            hash: Part::delta(&before.hash, &after.hash),
            set: Part::delta(&before.set, &after.set),
            zset: Part::delta(&before.zset, &after.zset),
            counter: Part::delta(&before.counter, &after.counter),
            expiry: changed(&before.expiry, &after.expiry),
        }
    }

    /// Drops from this (one owner's) state what `merged` (the join of every
    /// owner's state, this one included) shows was superseded by another
    /// owner's write: a register or field a newer write replaced, a member
    /// whose every stamp here lies below a removal made elsewhere. While
    /// the other owners' states are kept, every read of `merged` is the
    /// same after.
    pub fn drop_dominated(&mut self, merged: &Entry) {
        if let (Some(mine), Some(top)) = (&self.reg, &merged.reg) {
            if top != mine {
                self.reg = None;
            }
        }
        if let (Some(mine), Some(top)) = (&self.expiry, &merged.expiry) {
            if top != mine {
                self.expiry = None;
            }
        }
        self.hash
            .elems
            .retain(|f, mine| merged.hash.elems.get(f) == Some(mine));
        self.set.elems.retain(|m, mine| {
            let top = merged.set.elems.get(m).cloned().unwrap_or_default();
            !set_dominated(mine, &top)
        });
        self.zset.elems.retain(|m, mine| {
            let top = merged.zset.elems.get(m).cloned().unwrap_or_default();
            let add = mine.add.as_ref().map(|a| a.stamp);
            !(add <= top.remove && mine.remove < top.remove)
        });
    }
}

/// A member whose add lies at or below a removal another owner made, and
/// whose own removal (if any) is not the newest.
fn set_dominated(mine: &Member, top: &Member) -> bool {
    mine.add <= top.remove && mine.remove < top.remove
}
